package replayfs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"syscall"
)

// Compaction gives deleted sessions' space back. A round, per product:
//
//  1. The segment being appended to is sealed if it holds deleted records,
//     so that a deleted session leaves the disk within a round however
//     slowly the product records.
//  2. The sealed segments are walked in order and grouped into runs of
//     consecutive segments whose live records fit in one segment. A run
//     with deleted records, or of more than one segment, is rewritten as
//     one file holding its live records, in order: the chunks the index
//     points into it, and the tombstones that still delete chunks in
//     segments before the run. The file takes the run's last number, so
//     that every record keeps its place in the order Open reads them in.
//
// A run is written to <last>.seg.tmp and synced; when it replaces more
// than one segment, a manifest (compact.json: the segments it replaces) is
// written and synced before the rename, and removed once the others are
// deleted, so that Open can finish a compaction a crash interrupted
// (recover) and never reads both a run's old segments and their
// replacement, in which a dropped tombstone would bring deleted chunks
// back. A run left with nothing live is deleted, oldest segment first: a
// tombstone always comes after the chunks it deletes, so a crash half-way
// leaves no deleted chunk without its tombstone.
//
// A round takes the product's writer turn (wmu) for one run at a time:
// the turn is taken, the runs are worked out again from the segments as
// they are then, the first one not done yet is rewritten, and the turn is
// given back. So a product's appends and deletes wait at most one run's
// copying (a segment's worth), not the round. Which records are live is
// found once a pass (live), not by walking the index for every run, and
// checked against the index as it is when the run is rewritten: appends
// and deletes between runs change it.

// manifestName is the file that names the segments a compaction replaces.
const manifestName = "compact.json"

// manifest is what a compaction of several segments writes before it
// replaces them.
type manifest struct {
	Into   uint32   `json:"into"`
	Remove []uint32 `json:"remove"`
}

// CompactReplays runs a compaction round over every product (above).
func (s *Store) CompactReplays(ctx context.Context) error {
	var errs []error
	for _, p := range s.all() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.compact(ctx); err != nil {
			errs = append(errs, fmt.Errorf("compacting replay product %d: %w", p.id, err))
		}
	}
	return errors.Join(errs...)
}

func (p *product) compact(ctx context.Context) error {
	p.cmu.Lock()
	defer p.cmu.Unlock()
	// A second pass takes what the first left dead: the tombstones whose
	// chunks it dropped.
	for pass := 0; pass < 2; pass++ {
		upto, err := p.seal()
		if err != nil {
			return err
		}
		live := p.live()
		// Each run ends at the segment its compacted file takes the
		// number of; the next run starts after it.
		var from uint32
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			next, err := p.compactRun(from, upto, live)
			if err != nil {
				return err
			}
			if next == 0 {
				break
			}
			from = next
		}
	}
	return nil
}

// seal starts a pass: it seals the segment being appended to if it holds
// deleted records, and returns the number of the last sealed segment. The
// pass leaves the segments sealed after it for the next one.
func (p *product) seal() (uint32, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.broken != nil {
		return 0, p.broken
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active != nil && p.active.dead > 0 {
		p.active = nil
	}
	var upto uint32
	for _, seq := range p.order {
		if p.segs[seq] == p.active {
			break
		}
		upto = seq
	}
	return upto, nil
}

// compactRun rewrites the first run of the sealed segments numbered from
// after from up to upto, under the product's writer turn, and returns the
// number of its last segment; 0 when no run is left.
func (p *product) compactRun(from, upto uint32, live liveRecords) (uint32, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.broken != nil {
		return 0, p.broken
	}
	run := p.firstRun(from, upto)
	if run == nil {
		return 0, nil
	}
	return run[len(run)-1].seq, p.rewrite(run, live)
}

// firstRun groups the sealed segments numbered after from, up to upto,
// into runs and returns the first one to rewrite (above); nil when none
// is. The caller holds wmu, under which the segments' table and sizes
// change only by the caller.
func (p *product) firstRun(from, upto uint32) []*segment {
	var cur []*segment
	var live int64
	dirty := false
	for _, seq := range p.order {
		seg := p.segs[seq]
		if seq <= from {
			continue
		}
		if seq > upto || seg == p.active {
			break
		}
		n := seg.size - seg.dead
		if len(cur) > 0 && live+n > p.store.segmentBytes {
			if len(cur) > 1 || dirty {
				return cur
			}
			cur, live, dirty = nil, 0, false
		}
		cur, live, dirty = append(cur, seg), live+n, dirty || seg.dead > 0
	}
	if len(cur) > 1 || dirty {
		return cur
	}
	return nil
}

// liveRecords is where a pass finds the live records of a segment: the
// windows with chunks in it (and their sessions), and the tombstones in
// it. It is a hint, found once a pass: a run checks each against the
// index as it is then (rewrite).
type liveRecords struct {
	windows map[uint32][]liveWindow
	tombs   map[uint32][]liveTomb
}

type liveWindow struct {
	s *session
	w *window
}

type liveTomb struct {
	id string
	t  *tomb
}

// live finds, for each segment, the windows that have chunks in it and
// the tombstones it holds, reading the index once.
func (p *product) live() liveRecords {
	out := liveRecords{windows: map[uint32][]liveWindow{}, tombs: map[uint32][]liveTomb{}}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, s := range p.sessions {
		for _, w := range s.windows {
			var last uint32
			for i, l := range w.chunks {
				// A window's chunks are mostly in one segment or a few,
				// one after the other: a segment is listed once for each
				// stretch of them, and a run takes each window once.
				if i == 0 || l.seg != last {
					out.windows[l.seg] = append(out.windows[l.seg], liveWindow{s, w})
					last = l.seg
				}
			}
		}
	}
	for id, t := range p.tombs {
		out.tombs[t.at.seg] = append(out.tombs[t.at.seg], liveTomb{id, t})
	}
	return out
}

// moved is a record a rewrite keeps, and where the index points at it.
type moved struct {
	at   *loc   // the index's loc of a chunk, or
	tomb string // the session of a tombstone
	off  int64  // its offset in the new file
}

// rewrite replaces a run of sealed segments by one file of their live
// records, which live locates. The caller holds wmu, so the index does not
// change meanwhile (readers only read it).
func (p *product) rewrite(run []*segment, live liveRecords) error {
	last := run[len(run)-1]
	in := map[uint32]bool{}
	for _, seg := range run {
		in[seg.seq] = true
	}
	// Where the live records are: the chunks the index points into the
	// run, and the tombstones that still delete chunks before it. A
	// session deleted since live was found is no longer the index's, and
	// a tombstone no longer needed no longer in it.
	chunks := map[[2]uint32]*loc{}
	seen := map[*window]bool{}
	for _, seg := range run {
		for _, lw := range live.windows[seg.seq] {
			if seen[lw.w] || p.sessions[lw.s.sum.SessionID] != lw.s {
				continue
			}
			seen[lw.w] = true
			for i := range lw.w.chunks {
				if l := &lw.w.chunks[i]; in[l.seg] {
					chunks[[2]uint32{l.seg, l.off}] = l
				}
			}
		}
	}
	tombs := map[[2]uint32]string{}
	for _, seg := range run {
		for _, lt := range live.tombs[seg.seq] {
			t := lt.t
			if p.tombs[lt.id] == t && in[t.at.seg] && slices.ContainsFunc(t.pending, func(seq uint32) bool { return !in[seq] }) {
				tombs[[2]uint32{t.at.seg, t.at.off}] = lt.id
			}
		}
	}

	tmpName := p.path(segmentName(last.seq) + ".tmp")
	tmp, err := os.OpenFile(tmpName, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("writing a compacted replay segment: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	var kept []moved
	var size int64
	for _, seg := range run {
		src := segmentReader(seg.f)
		_, err := scanSegment(src, seg.size, false, func(r record) error {
			key := [2]uint32{seg.seq, uint32(r.off)}
			at, live := chunks[key]
			session, tomb := tombs[key]
			if !live && !tomb {
				return nil
			}
			buf := make([]byte, r.n)
			if _, err := src.ReadAt(buf, r.off); err != nil {
				return fmt.Errorf("reading replay segment %s: %w", segmentName(seg.seq), err)
			}
			if _, _, err := parseRecord(buf); err != nil {
				// Not errTorn: scanSegment would take it for the end.
				return fmt.Errorf("replay segment %s at %d: a live record fails its check", segmentName(seg.seq), r.off)
			}
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("writing a compacted replay segment: %w", err)
			}
			kept = append(kept, moved{at: at, tomb: session, off: size})
			size += r.n
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing a compacted replay segment: %w", err)
	}
	if len(kept) != len(chunks)+len(tombs) {
		// A live record the index points at is not where it says: the
		// file lost it (or the index is wrong). Replacing the run would
		// lose it for good; it stays as it is, and its reads fail alone.
		return fmt.Errorf("compacting replay segments %s to %s: %d of their %d live records found; the segments are left as they are",
			segmentName(run[0].seq), segmentName(last.seq), len(kept), len(chunks)+len(tombs))
	}
	if size == 0 {
		tmp.Close()
		os.Remove(tmpName)
		ok = true
		return p.drop(run)
	}
	if err := syscall.Fdatasync(int(tmp.Fd())); err != nil {
		return fmt.Errorf("syncing a compacted replay segment: %w", err)
	}
	var remove []uint32
	for _, seg := range run[:len(run)-1] {
		remove = append(remove, seg.seq)
	}
	if len(remove) > 0 {
		if err := p.writeManifest(manifest{Into: last.seq, Remove: remove}); err != nil {
			return err
		}
	}
	if err := os.Rename(tmpName, p.path(segmentName(last.seq))); err != nil {
		return fmt.Errorf("renaming a compacted replay segment: %w", err)
	}
	ok = true
	if err := syncDir(p.dir); err != nil {
		return err
	}

	// The index now points into the new file.
	p.mu.Lock()
	for _, m := range kept {
		if m.at != nil {
			m.at.seg, m.at.off = last.seq, uint32(m.off)
		} else {
			p.tombs[m.tomb].at.seg, p.tombs[m.tomb].at.off = last.seq, uint32(m.off)
		}
	}
	p.forget(run, in)
	p.segs[last.seq] = &segment{seq: last.seq, f: tmp, size: size}
	p.order = append(p.order, last.seq)
	slices.Sort(p.order)
	p.mu.Unlock()

	err = p.removeFiles(remove)
	if err == nil && len(remove) > 0 {
		if rerr := os.Remove(p.path(manifestName)); rerr != nil {
			err = fmt.Errorf("removing the replay compaction manifest: %w", rerr)
		} else {
			err = syncDir(p.dir)
		}
	}
	if err != nil {
		// The replaced segments, or the manifest that names them, are
		// still there: only Open may read the directory again, after
		// finishing the compaction. Until then the product takes no
		// writes, so that no second compaction writes another manifest.
		p.broken = fmt.Errorf("a replay compaction could not finish (%w); it is finished at the next start", err)
		p.store.log.Error("replay writes stopped for the product", "product", p.id, "err", p.broken)
		return err
	}
	p.store.log.Debug("compacted replay segments", "product", p.id, "segments", len(run), "into", segmentName(last.seq), "bytes", size)
	return nil
}

// drop deletes a run that holds nothing live, oldest segment first.
func (p *product) drop(run []*segment) error {
	in := map[uint32]bool{}
	var seqs []uint32
	for _, seg := range run {
		in[seg.seq] = true
		seqs = append(seqs, seg.seq)
	}
	p.mu.Lock()
	p.forget(run, in)
	p.mu.Unlock()
	return p.removeFiles(seqs)
}

// forget takes a rewritten run out of the segments' table and closes its
// files, and takes its segments off every tombstone's pending list: a
// tombstone with none left deletes nothing more, and is dead itself. The
// caller holds mu.
func (p *product) forget(run []*segment, in map[uint32]bool) {
	for _, seg := range run {
		seg.f.Close()
		delete(p.segs, seg.seq)
	}
	p.order = slices.DeleteFunc(p.order, func(seq uint32) bool { return in[seq] })
	for id, t := range p.tombs {
		t.pending = slices.DeleteFunc(t.pending, func(seq uint32) bool { return in[seq] })
		if len(t.pending) == 0 {
			if seg := p.segs[t.at.seg]; seg != nil && !in[t.at.seg] {
				seg.dead += int64(t.at.n)
			}
			delete(p.tombs, id)
		}
	}
}

// removeFiles deletes segments, in order, and syncs the directory.
func (p *product) removeFiles(seqs []uint32) error {
	for _, seq := range seqs {
		if err := os.Remove(p.path(segmentName(seq))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing a compacted replay segment: %w", err)
		}
	}
	return syncDir(p.dir)
}

// writeManifest writes m durably, by a temporary file renamed into place.
func (p *product) writeManifest(m manifest) error {
	b, _ := json.Marshal(m)
	tmp := p.path(manifestName + ".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("writing the replay compaction manifest: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p.path(manifestName))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the replay compaction manifest: %w", err)
	}
	return syncDir(p.dir)
}

// recover finishes or undoes a compaction a crash interrupted, before
// Open reads the segments: when the compacted file was not renamed into
// place yet, the old segments are whole and the manifest goes; when it
// was, the segments it replaced are deleted.
func (p *product) recover() error {
	b, err := os.ReadFile(p.path(manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the replay compaction manifest: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("reading the replay compaction manifest of product %d: %w", p.id, err)
	}
	if _, err := os.Stat(p.path(segmentName(m.Into) + ".tmp")); err == nil {
		os.Remove(p.path(segmentName(m.Into) + ".tmp"))
	} else if err := p.removeFiles(m.Remove); err != nil {
		return err
	}
	if err := os.Remove(p.path(manifestName)); err != nil {
		return fmt.Errorf("removing the replay compaction manifest: %w", err)
	}
	p.store.log.Info("finished an interrupted replay compaction", "product", p.id, "into", segmentName(m.Into))
	return syncDir(p.dir)
}
