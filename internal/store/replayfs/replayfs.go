// Package replayfs keeps session replay chunks in segment files in the data
// directory: the embedded server's analytics.ReplayStore (docs/replay.md,
// "Storage").
//
// Each product has a directory of segment files, appended to in turn:
//
//	DATA/replay/<product>/<seq>.seg
//
// A segment is a sequence of records (segment.go): a chunk (its metadata
// as JSON, then its data as the SDK sent it) or a tombstone (every chunk of
// a session before it is deleted). Chunks are appended to the product's
// last segment and fdatasync'd before AppendReplayChunks returns; once a
// segment passes Options.SegmentBytes the next one is started. So a
// session costs no file, directory or inode of its own: a product's
// sessions share a few segment files however many they are (one directory
// and one file per chunk, before, ran a small disk out of inodes).
//
// The index, which chunks a session has and where each record is, lives in
// memory and is rebuilt at Open by reading the segments' records (only the
// headers of sealed segments; the last one whole, to cut off a record a
// crash tore). It keeps each session's summary (analytics.ReplaySession),
// so that a list reads no file, and about 20 bytes per chunk.
//
// Deleting a session appends a tombstone and drops it from the index; its
// records stay until CompactReplays (the retention job, every round)
// rewrites the segments that hold them without the deleted records
// (compact.go). Directories of the layout before segments, one per
// session with a file per chunk, are moved into segments at Open
// (legacy.go).
//
// Why not DuckDB: chunks are large, written once, read whole and deleted by
// session; in DuckDB they would go through its write-ahead log and
// checkpoints, which ingest's events already keep busy, and a deleted
// session's space would not be given back to the file system.
package replayfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"strata/internal/analytics"
)

// DefaultSegmentBytes is the size past which a product's segment is sealed
// and the next one started. Compaction rewrites a segment at a time while
// the product's appends wait, and merges small neighbours up to this size:
// 32 MiB is a fraction of a second's work, and 320 files for 10 GB.
const DefaultSegmentBytes = 32 << 20

// maxSegmentBytes keeps record offsets within the index's 32 bits.
const maxSegmentBytes = 1 << 30

// Options tune a Store.
type Options struct {
	// SegmentBytes is the size past which a segment is sealed;
	// DefaultSegmentBytes when 0.
	SegmentBytes int64
	// Log receives what Open repaired or moved, and compaction's
	// progress; none when nil.
	Log *slog.Logger
}

// Store is a directory of products' replay segments. It is safe for
// concurrent use.
type Store struct {
	dir          string
	segmentBytes int64
	log          *slog.Logger

	// mu guards products and closed.
	mu       sync.Mutex
	products map[int64]*product
	closed   bool
}

var (
	_ analytics.ReplayStore     = (*Store)(nil)
	_ analytics.ReplayCompactor = (*Store)(nil)
)

// product is one product's segments and index.
type product struct {
	id    int64
	dir   string
	store *Store

	// cmu is held by the product's compaction round, which takes wmu a
	// run at a time (compact.go): one round at a time, since a round's
	// runs rely on what it found live at the start of its pass.
	cmu sync.Mutex
	// wmu serializes what writes the product's files (appends,
	// tombstones, a compaction's run), so that the index a writer checks
	// (is the chunk stored already, is the session full) is the one it
	// updates; it is taken before mu.
	wmu sync.Mutex
	// broken, when set, refuses writes and compaction: a failed write
	// whose torn tail could not be cut off (Open cuts it off at the next
	// start), a compaction that could not finish (Open finishes it), or a
	// segment Open could not read (the next start reads it again).
	broken error

	// mu guards everything below. Readers hold it while they read
	// records, so that compaction does not close a segment under them.
	mu sync.RWMutex
	// segs are the product's segments by sequence number, order their
	// numbers in order; active is the one appended to (the last), or nil
	// when the next append starts one.
	segs    map[uint32]*segment
	order   []uint32
	active  *segment
	lastSeq uint32
	// sessions is the index; tombs the deleted sessions whose records
	// some segment still holds.
	sessions map[string]*session
	tombs    map[string]*tomb
}

// segment is one segment file.
type segment struct {
	seq uint32
	f   *os.File
	// size is the length of its whole records: where the next is
	// appended. dead counts the bytes of records no longer needed
	// (deleted chunks, tombstones whose chunks are gone), which
	// compaction drops.
	size int64
	dead int64
}

// loc is where a record is: its segment, offset and length, and for a
// chunk its index in its window and its data's length, which a read pages
// by (analytics.PageReplayChunks).
type loc struct {
	seg, off, n, index, size uint32
}

// session is one session in the index: its summary and its chunks'
// locations, by window in playing order, then by index.
type session struct {
	sum     analytics.ReplaySession
	windows []*window
	// byID finds a window once a session has many of them.
	byID map[string]*window
}

// window is one window's chunks, by index.
type window struct {
	id     string
	first  time.Time
	chunks []loc
}

// tomb is a deleted session whose records are still in segments: where
// its latest tombstone is, and the segments that hold the chunks it
// deleted. Once compaction has rewritten those, the tombstone has nothing
// left to delete and goes too.
type tomb struct {
	at      loc
	pending []uint32
}

// Open opens the store rooted at dir (DATA/replay), creating it: it
// finishes a compaction a crash interrupted, cuts a torn record off each
// product's last segment, reads the segments into the index, and moves the
// chunk files of the layout before segments into them.
func Open(dir string, opt Options) (*Store, error) {
	if opt.SegmentBytes <= 0 {
		opt.SegmentBytes = DefaultSegmentBytes
	}
	if opt.SegmentBytes > maxSegmentBytes {
		return nil, fmt.Errorf("replay segment size %d: at most %d", opt.SegmentBytes, maxSegmentBytes)
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the replay directory: %w", err)
	}
	s := &Store{dir: dir, segmentBytes: opt.SegmentBytes, log: opt.Log, products: map[int64]*product{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the replay directory: %w", err)
	}
	for _, e := range entries {
		id, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || !e.IsDir() {
			continue
		}
		p, err := s.openProduct(id)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.products[id] = p
	}
	for _, p := range s.products {
		p.migrate()
	}
	return s, nil
}

func (s *Store) newProduct(id int64) *product {
	return &product{id: id, dir: filepath.Join(s.dir, strconv.FormatInt(id, 10)), store: s,
		segs: map[uint32]*segment{}, sessions: map[string]*session{}, tombs: map[string]*tomb{}}
}

// segmentName is the file name of segment seq.
func segmentName(seq uint32) string { return fmt.Sprintf("%08d.seg", seq) }

func (p *product) path(name string) string { return filepath.Join(p.dir, name) }

// openProduct reads one product's segments into its index.
func (s *Store) openProduct(id int64) (*product, error) {
	p := s.newProduct(id)
	if err := p.recover(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, fmt.Errorf("reading replay product %d: %w", id, err)
	}
	var seqs []uint32
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			// A compaction's output that was never renamed into place.
			os.Remove(p.path(name))
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, ".seg"), 10, 32)
		if err == nil && strings.HasSuffix(name, ".seg") && !e.IsDir() {
			seqs = append(seqs, uint32(seq))
		}
	}
	slices.Sort(seqs)
	for i, seq := range seqs {
		if err := p.load(seq, i == len(seqs)-1); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// load opens segment seq and puts its records into the index. The last
// segment is read whole, every record's CRC checked, and a torn tail cut
// off; the others only by their headers.
func (p *product) load(seq uint32, last bool) error {
	name := p.path(segmentName(seq))
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("opening replay segment: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening replay segment: %w", err)
	}
	seg := &segment{seq: seq, f: f, size: st.Size()}
	p.segs[seq], p.order, p.lastSeq = seg, append(p.order, seq), seq
	src := segmentReader(f)
	skipped := 0
	end, err := scanSegment(src, st.Size(), last, func(r record) error {
		skip, err := p.loadRecord(src, seg, r)
		if skip && err == nil {
			skipped++
		}
		return err
	})
	if skipped > 0 {
		p.store.log.Warn("skipped replay records whose header is not a chunk's or a tombstone's; compaction drops them",
			"segment", name, "records", skipped)
	}
	if err != nil {
		// The disk failed to read what it holds: not a torn tail, which
		// only a read that works can tell from acknowledged records. The
		// records read so far are in the index; the product takes no
		// writes and no compaction, so that its files stay as they are
		// until a start reads them whole.
		p.broken = fmt.Errorf("replay segment %s could not be read (%w); the product takes no replay writes until a start reads it", name, err)
		p.store.log.Error("replay writes stopped for the product", "product", p.id, "err", p.broken)
		return nil
	}
	if end < st.Size() {
		if last {
			// What a crash left of records never acknowledged.
			if err := f.Truncate(end); err != nil {
				return fmt.Errorf("cutting a torn record off replay segment %s: %w", name, err)
			}
			if err := syscall.Fdatasync(int(f.Fd())); err != nil {
				return fmt.Errorf("syncing replay segment %s: %w", name, err)
			}
			p.store.log.Warn("cut a torn record off a replay segment", "segment", name, "offset", end, "bytes", st.Size()-end)
			seg.size = end
		} else {
			// A sealed segment was synced whole: this is damage, not a
			// crash. What follows it cannot be read; compaction drops it.
			p.store.log.Error("replay segment is corrupt; the records after the offset are skipped", "segment", name,
				"offset", end, "bytes", st.Size()-end)
			seg.dead += st.Size() - end
		}
	}
	if last && seg.size < p.store.segmentBytes {
		p.active = seg
	}
	return nil
}

// loadRecord puts one record read at Open into the index. A record that
// frames and whose CRC is good but whose header the index does not take
// (it does not parse, or names an id or index ingest refuses) is no torn
// end: it is counted dead, for compaction to drop, and skipped, and the
// records after it are read. It reports whether it skipped the record.
func (p *product) loadRecord(src io.ReaderAt, seg *segment, r record) (bool, error) {
	at := loc{seg: seg.seq, off: uint32(r.off), n: uint32(r.n)}
	switch r.magic {
	case magicChunk:
		var h header
		if err := json.Unmarshal(r.head, &h); err != nil || !analytics.ValidReplayID(h.Session) ||
			!analytics.ValidReplayID(h.Window) || h.Index < 0 || h.Index > analytics.MaxReplayChunkIndex {
			return true, p.skip(src, seg, r)
		}
		at.index = uint32(h.Index)
		at.size = uint32(r.n - recordHead - int64(len(r.head)) - recordTail)
		if !p.add(h.chunk(p.id), at) {
			seg.dead += r.n // a second copy: the first stays
		}
	case magicTomb:
		var h tombHeader
		if err := json.Unmarshal(r.head, &h); err != nil || !analytics.ValidReplayID(h.Session) {
			return true, p.skip(src, seg, r)
		}
		p.kill(h.Session, at)
	}
	return false, nil
}

// skip counts a record whose header the index does not take as dead,
// once its CRC shows that it is whole (a sealed segment's records are read
// by their headers alone); errTorn when it is not, which ends the scan.
func (p *product) skip(src io.ReaderAt, seg *segment, r record) error {
	if r.data == nil {
		buf := make([]byte, r.n)
		if _, err := src.ReadAt(buf, r.off); err != nil {
			return fmt.Errorf("reading the record at %d: %w", r.off, err)
		}
		if _, _, err := parseRecord(buf); err != nil {
			return err
		}
	}
	seg.dead += r.n
	return nil
}

// add puts a chunk into the index at l, unless its window and index are
// there already. The caller holds mu, or owns p alone.
//
// The index keeps a copy of its own of each string it keeps, once: a
// chunk's strings may be views of a larger buffer (ingest's distinct_id
// is one of its event's bytes, data and all, which the index would
// otherwise keep alive as long as the session), and a session's chunks
// name the same user again and again.
func (p *product) add(c analytics.ReplayChunk, l loc) bool {
	s := p.sessions[c.SessionID]
	if s == nil {
		s = &session{}
		c.SessionID = strings.Clone(c.SessionID)
		p.sessions[c.SessionID] = s
	}
	w := s.window(c.WindowID)
	if w != nil {
		if _, found := w.find(l.index); found {
			return false
		}
	}
	c.DistinctID = s.user(c.DistinctID)
	switch {
	case w == nil:
		w = &window{id: strings.Clone(c.WindowID), first: c.FirstTS}
		s.insert(w)
	case c.FirstTS.Before(w.first):
		// A late chunk that starts the window earlier moves it.
		s.remove(w)
		w.first = c.FirstTS
		s.insert(w)
	}
	i, _ := w.find(l.index)
	w.chunks = slices.Insert(w.chunks, i, l)
	s.sum.Add(c)
	return true
}

// kill deletes session id from the index, for a tombstone at t, and keeps
// the tombstone while segments hold the chunks it deleted. The caller
// holds mu, or owns p alone.
func (p *product) kill(id string, t loc) {
	var pending []uint32
	mark := func(seq uint32) {
		if !slices.Contains(pending, seq) {
			pending = append(pending, seq)
		}
	}
	if old := p.tombs[id]; old != nil {
		// The older tombstone deletes nothing this one does not.
		for _, seq := range old.pending {
			mark(seq)
		}
		p.segs[old.at.seg].dead += int64(old.at.n)
	}
	if s := p.sessions[id]; s != nil {
		for _, w := range s.windows {
			for _, l := range w.chunks {
				mark(l.seg)
				p.segs[l.seg].dead += int64(l.n)
			}
		}
		delete(p.sessions, id)
	}
	if len(pending) == 0 {
		p.segs[t.seg].dead += int64(t.n)
		delete(p.tombs, id)
		return
	}
	p.tombs[id] = &tomb{at: t, pending: pending}
}

// user returns the session's copy of distinct id, or a new one when no
// chunk of the session named it yet.
func (s *session) user(id string) string {
	for _, d := range s.sum.DistinctIDs {
		if d == id {
			return d
		}
	}
	return strings.Clone(id)
}

// windowOrder is the playing order of windows: by first chunk, then id.
func windowOrder(a, b *window) bool {
	if !a.first.Equal(b.first) {
		return a.first.Before(b.first)
	}
	return a.id < b.id
}

// manyWindows is how many windows a session has before they are found by
// a map rather than one by one.
const manyWindows = 16

func (s *session) window(id string) *window {
	if s.byID != nil {
		return s.byID[id]
	}
	for _, w := range s.windows {
		if w.id == id {
			return w
		}
	}
	return nil
}

// position is where w is, or goes, in the playing order.
func (s *session) position(w *window) int {
	return sort.Search(len(s.windows), func(i int) bool { return !windowOrder(s.windows[i], w) })
}

func (s *session) insert(w *window) {
	s.windows = slices.Insert(s.windows, s.position(w), w)
	if s.byID != nil {
		s.byID[w.id] = w
	} else if len(s.windows) > manyWindows {
		s.byID = make(map[string]*window, len(s.windows))
		for _, x := range s.windows {
			s.byID[x.id] = x
		}
	}
}

func (s *session) remove(w *window) {
	if i := s.position(w); i < len(s.windows) && s.windows[i] == w {
		s.windows = slices.Delete(s.windows, i, i+1)
	}
	if s.byID != nil {
		delete(s.byID, w.id)
	}
}

// find returns where chunk index is, or goes, in w.
func (w *window) find(index uint32) (int, bool) {
	i := sort.Search(len(w.chunks), func(i int) bool { return w.chunks[i].index >= index })
	return i, i < len(w.chunks) && w.chunks[i].index == index
}

// lookup returns a product's state, or nil when it has none; with create,
// it makes the product's directory.
func (s *Store) lookup(id int64, create bool) (*product, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the replay store is closed")
	}
	if p := s.products[id]; p != nil || !create {
		return p, nil
	}
	p := s.newProduct(id)
	if err := os.Mkdir(p.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("creating a replay directory: %w", err)
	}
	if err := syncDir(s.dir); err != nil {
		return nil, err
	}
	s.products[id] = p
	return p, nil
}

// all returns every product, in order of id.
func (s *Store) all() []*product {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*product, 0, len(s.products))
	for _, p := range s.products {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// AppendReplayChunks appends the chunks not yet stored, and within the
// caps, to their products' segments, durably, product by product: each
// product's chunks are one write and one fdatasync. A product's writers
// take turns (product.wmu), so that chunks are checked against the caps
// (how much their session holds, how many sessions the product keeps) one
// request after another, and never overshoot them.
func (s *Store) AppendReplayChunks(ctx context.Context, chunks []analytics.ReplayChunk, limits analytics.ReplayLimits) (analytics.ReplayRefused, error) {
	var refused analytics.ReplayRefused
	byProduct := map[int64][]int{}
	var ids []int64
	for i, c := range chunks {
		if !analytics.ValidReplayID(c.SessionID) || !analytics.ValidReplayID(c.WindowID) || c.Index < 0 ||
			c.Index > analytics.MaxReplayChunkIndex || len(c.Data) > analytics.MaxReplayChunkBytes {
			return refused, fmt.Errorf("replay chunk %q/%q/%d: invalid id, index or size", c.SessionID, c.WindowID, c.Index)
		}
		if byProduct[c.ProductID] == nil {
			ids = append(ids, c.ProductID)
		}
		byProduct[c.ProductID] = append(byProduct[c.ProductID], i)
	}
	for _, id := range ids {
		p, err := s.lookup(id, true)
		if err != nil {
			return analytics.ReplayRefused{}, err
		}
		r, err := p.append(chunks, byProduct[id], limits)
		if err != nil {
			return analytics.ReplayRefused{}, err
		}
		refused.SessionFull = append(refused.SessionFull, r.SessionFull...)
		refused.ProductFull = append(refused.ProductFull, r.ProductFull...)
	}
	slices.Sort(refused.SessionFull)
	slices.Sort(refused.ProductFull)
	return refused, nil
}

// verdict is what append decided for a chunk.
type verdict int

const (
	take verdict = iota
	sessionFull
	productFull
)

// append stores chunks[at...] of this product: see AppendReplayChunks.
func (p *product) append(chunks []analytics.ReplayChunk, at []int, limits analytics.ReplayLimits) (analytics.ReplayRefused, error) {
	var refused analytics.ReplayRefused
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.broken != nil {
		return refused, p.broken
	}
	// Which chunks to write: not stored yet (nor earlier in this batch),
	// and within the caps. Only this writer changes the index until wmu
	// is released.
	var write []int
	// What the batch's chunks taken so far add to their sessions; a
	// session in it and not in the index is one the batch starts.
	charged := map[string]int64{}
	sessions := len(p.sessions)
	// A batch may hold the same chunk twice: the second follows the first.
	first := map[batchKey]verdict{}
	refuse := func(v verdict, i int) {
		switch v {
		case sessionFull:
			refused.SessionFull = append(refused.SessionFull, i)
		case productFull:
			refused.ProductFull = append(refused.ProductFull, i)
		}
	}
	p.mu.RLock()
	for _, i := range at {
		c := chunks[i]
		s := p.sessions[c.SessionID]
		if s != nil {
			if w := s.window(c.WindowID); w != nil {
				if _, found := w.find(uint32(c.Index)); found {
					continue
				}
			}
		}
		k := batchKey{c.SessionID, c.WindowID, c.Index}
		if v, ok := first[k]; ok {
			refuse(v, i)
			continue
		}
		charge := analytics.ReplayChunkCharge(len(c.Data))
		var stored int64
		if s != nil {
			stored = s.sum.Bytes
		}
		_, started := charged[c.SessionID]
		v := take
		switch {
		case s == nil && !started && limits.Sessions > 0 && sessions >= limits.Sessions:
			v = productFull
		case limits.SessionBytes > 0 && stored+charged[c.SessionID]+charge > limits.SessionBytes:
			v = sessionFull
		}
		first[k] = v
		if v != take {
			refuse(v, i)
			continue
		}
		if s == nil && !started {
			sessions++
		}
		charged[c.SessionID] += charge
		write = append(write, i)
	}
	p.mu.RUnlock()
	if len(write) == 0 {
		return refused, nil
	}
	var buf []byte
	ends := make([]int, len(write))
	for j, i := range write {
		var err error
		if buf, err = appendChunk(buf, chunks[i]); err != nil {
			return analytics.ReplayRefused{}, err
		}
		ends[j] = len(buf)
	}
	seg, off, err := p.write(buf)
	if err != nil {
		return analytics.ReplayRefused{}, err
	}
	p.mu.Lock()
	start := 0
	for j, i := range write {
		c := chunks[i]
		c.Size = len(c.Data)
		p.add(c, loc{seg: seg.seq, off: uint32(off) + uint32(start), n: uint32(ends[j] - start), index: uint32(c.Index), size: uint32(c.Size)})
		start = ends[j]
	}
	p.grown(seg, off+int64(len(buf)))
	p.mu.Unlock()
	return refused, nil
}

// batchKey names a chunk within one batch.
type batchKey struct {
	session, window string
	index           int
}

// write appends buf to the active segment, starting one if none is, and
// syncs it. On failure it cuts off what the write may have left, so that
// the segment still ends with its last whole record; if that fails too,
// the product takes no more writes until Open cuts the tail off. The
// caller holds wmu.
func (p *product) write(buf []byte) (*segment, int64, error) {
	seg, err := p.start()
	if err != nil {
		return nil, 0, err
	}
	off := seg.size
	if _, err := seg.f.WriteAt(buf, off); err != nil {
		return nil, 0, p.fail(seg, off, fmt.Errorf("writing replay records: %w", err))
	}
	if err := syscall.Fdatasync(int(seg.f.Fd())); err != nil {
		return nil, 0, p.fail(seg, off, fmt.Errorf("syncing replay records: %w", err))
	}
	return seg, off, nil
}

func (p *product) fail(seg *segment, off int64, err error) error {
	if terr := seg.f.Truncate(off); terr != nil {
		p.broken = fmt.Errorf("replay segment %s has a torn tail that could not be cut off (%w); it is cut off at the next start", segmentName(seg.seq), terr)
		p.store.log.Error("replay writes stopped for the product", "product", p.id, "err", p.broken)
	}
	return err
}

// grown records that seg now ends at size, and seals it once it is past
// the segment size: the next append starts a new one. The caller holds mu.
func (p *product) grown(seg *segment, size int64) {
	seg.size = size
	if seg == p.active && size >= p.store.segmentBytes {
		p.active = nil
	}
}

// start returns the active segment, starting the next one when there is
// none. The caller holds wmu.
func (p *product) start() (*segment, error) {
	if p.active != nil {
		return p.active, nil
	}
	seq := p.lastSeq + 1
	name := p.path(segmentName(seq))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("starting a replay segment: %w", err)
	}
	if err := syncDir(p.dir); err != nil {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	seg := &segment{seq: seq, f: f}
	p.mu.Lock()
	p.segs[seq], p.order, p.active, p.lastSeq = seg, append(p.order, seq), seg, seq
	p.mu.Unlock()
	return seg, nil
}

// ListReplaySessions summarizes the product's sessions from the index.
func (s *Store) ListReplaySessions(ctx context.Context, productID int64, f analytics.ReplayFilter) ([]analytics.ReplaySession, error) {
	p, err := s.lookup(productID, false)
	if err != nil || p == nil {
		return []analytics.ReplaySession{}, err
	}
	p.mu.RLock()
	out := make([]analytics.ReplaySession, 0, len(p.sessions))
	for _, x := range p.sessions {
		sum := x.sum
		sum.DistinctIDs = slices.Clone(sum.DistinctIDs)
		out = append(out, sum)
	}
	p.mu.RUnlock()
	analytics.SortReplaySessions(out)
	return analytics.FilterReplay(out, f), nil
}

// ReplaySession returns a session's summary from the index.
func (s *Store) ReplaySession(ctx context.Context, productID int64, sessionID string) (analytics.ReplaySession, error) {
	p, err := s.lookup(productID, false)
	if err != nil {
		return analytics.ReplaySession{}, err
	}
	if p != nil {
		p.mu.RLock()
		defer p.mu.RUnlock()
		if x := p.sessions[sessionID]; x != nil {
			sum := x.sum
			sum.DistinctIDs = slices.Clone(sum.DistinctIDs)
			return sum, nil
		}
	}
	return analytics.ReplaySession{}, fmt.Errorf("replay session %q: %w", sessionID, analytics.ErrNotFound)
}

// ReadReplayChunks reads a page of a session's records from its segments.
func (s *Store) ReadReplayChunks(ctx context.Context, productID int64, sessionID string, after analytics.ReplayCursor, maxBytes int) ([]analytics.ReplayChunk, bool, error) {
	p, err := s.lookup(productID, false)
	if err != nil || p == nil {
		return nil, false, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	locs, more := p.page(sessionID, after, maxBytes)
	out := make([]analytics.ReplayChunk, 0, len(locs))
	for _, l := range locs {
		c, err := p.read(l)
		if err != nil {
			return nil, false, err
		}
		out = append(out, c)
	}
	return out, more, nil
}

// page finds the records of the next page of a session's chunks: those
// after the cursor, at most one more than a page holds, cut by the rule
// both stores page by (analytics.PageReplayChunks), on their data's
// lengths. The caller holds mu.
func (p *product) page(sessionID string, after analytics.ReplayCursor, maxBytes int) ([]loc, bool) {
	s := p.sessions[sessionID]
	if s == nil {
		return nil, false
	}
	wi, ci := 0, 0
	if after.WindowID != "" {
		w := s.window(after.WindowID)
		if w == nil {
			return nil, false
		}
		wi = s.position(w)
		// Compared as ints, as the SQL store compares them: a cursor's
		// index below 0 is before the window's first chunk.
		ci = sort.Search(len(w.chunks), func(i int) bool { return int64(w.chunks[i].index) > int64(after.Index) })
	}
	var next []loc
	for ; wi < len(s.windows) && len(next) <= analytics.MaxReplayPageChunks; wi, ci = wi+1, 0 {
		chunks := s.windows[wi].chunks[ci:]
		next = append(next, chunks[:min(len(chunks), analytics.MaxReplayPageChunks+1-len(next))]...)
	}
	n := analytics.PageReplayChunks(func(i int) int { return int(next[i].size) }, len(next), maxBytes)
	return next[:n], len(next) > n
}

// read reads one chunk record whole and checks it. The caller holds mu.
func (p *product) read(l loc) (analytics.ReplayChunk, error) {
	seg := p.segs[l.seg]
	if seg == nil {
		// Never, unless the index and the segments disagree: an error to
		// the reader rather than a crash of the server.
		return analytics.ReplayChunk{}, fmt.Errorf("reading replay segment %s: the segment is not open", segmentName(l.seg))
	}
	buf := make([]byte, l.n)
	if _, err := segmentReader(seg.f).ReadAt(buf, int64(l.off)); err != nil {
		return analytics.ReplayChunk{}, fmt.Errorf("reading replay segment %s: %w", segmentName(l.seg), err)
	}
	head, data, err := parseRecord(buf)
	if err != nil || string(buf[:4]) != magicChunk {
		return analytics.ReplayChunk{}, fmt.Errorf("reading replay segment %s at %d: %w", segmentName(l.seg), l.off, errTorn)
	}
	var h header
	if err := json.Unmarshal(head, &h); err != nil {
		return analytics.ReplayChunk{}, fmt.Errorf("reading replay segment %s at %d: %w", segmentName(l.seg), l.off, err)
	}
	c := h.chunk(p.id)
	c.Data = data
	return c, nil
}

// DeleteReplaySession appends a tombstone of the session, durably, and
// drops the session from the index. Its records are dropped from the
// segments by CompactReplays.
func (s *Store) DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error {
	notFound := fmt.Errorf("replay session %q: %w", sessionID, analytics.ErrNotFound)
	p, err := s.lookup(productID, false)
	if err != nil {
		return err
	}
	if p == nil {
		return notFound
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.broken != nil {
		return p.broken
	}
	p.mu.RLock()
	_, ok := p.sessions[sessionID]
	p.mu.RUnlock()
	if !ok {
		return notFound
	}
	buf := appendTomb(nil, sessionID)
	seg, off, err := p.write(buf)
	if err != nil {
		return fmt.Errorf("deleting replay session %s: %w", sessionID, err)
	}
	p.mu.Lock()
	p.kill(sessionID, loc{seg: seg.seq, off: uint32(off), n: uint32(len(buf))})
	p.grown(seg, off+int64(len(buf)))
	p.mu.Unlock()
	return nil
}

// DeleteReplaySessions appends a tombstone of each of the sessions the
// product has among ids, in one write and one fdatasync, and drops them
// from the index.
func (s *Store) DeleteReplaySessions(ctx context.Context, productID int64, ids []string) (int, error) {
	p, err := s.lookup(productID, false)
	if err != nil || p == nil {
		return 0, err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.broken != nil {
		return 0, p.broken
	}
	var buf []byte
	var found []string
	var ends []int
	seen := make(map[string]bool, len(ids))
	p.mu.RLock()
	for _, id := range ids {
		if _, ok := p.sessions[id]; ok && !seen[id] {
			seen[id] = true
			buf = appendTomb(buf, id)
			found = append(found, id)
			ends = append(ends, len(buf))
		}
	}
	p.mu.RUnlock()
	if len(found) == 0 {
		return 0, nil
	}
	seg, off, err := p.write(buf)
	if err != nil {
		return 0, fmt.Errorf("deleting %d replay sessions: %w", len(found), err)
	}
	p.mu.Lock()
	start := 0
	for i, id := range found {
		p.kill(id, loc{seg: seg.seq, off: uint32(off) + uint32(start), n: uint32(ends[i] - start)})
		start = ends[i]
	}
	p.grown(seg, off+int64(len(buf)))
	p.mu.Unlock()
	return len(found), nil
}

// ReplayProducts lists the products that have sessions.
func (s *Store) ReplayProducts(ctx context.Context) ([]int64, error) {
	out := []int64{}
	for _, p := range s.all() {
		p.mu.RLock()
		if len(p.sessions) > 0 {
			out = append(out, p.id)
		}
		p.mu.RUnlock()
	}
	return out, nil
}

// Close closes the segment files. Calls after it fail.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	products := s.products
	s.products = map[int64]*product{}
	s.mu.Unlock()
	var errs []error
	for _, p := range products {
		p.wmu.Lock()
		p.mu.Lock()
		errs = append(errs, p.close())
		p.mu.Unlock()
		p.wmu.Unlock()
	}
	return errors.Join(errs...)
}

func (p *product) close() error {
	var errs []error
	for _, seg := range p.segs {
		if err := seg.f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.segs, p.order, p.active = map[uint32]*segment{}, nil, nil
	if p.broken == nil {
		p.broken = errors.New("the replay store is closed")
	}
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
