// Package spool puts a write-ahead log in front of an event store. An
// append is durable once it is in the log (written and fdatasync'ed), and a
// loader moves logged events into the store behind it in large commits.
//
// Why: DuckDB's commit has a fixed cost of about a millisecond of CPU, and
// its checkpoints stall commits for hundreds of milliseconds under heavy
// ingest. Answering 202 after a log append instead keeps ingest latency at
// the cost of one sequential write, while DuckDB sees few, large commits and
// its stalls only delay when events become visible to queries. Sync is the
// read-your-writes barrier: it returns once everything appended before it is
// in the store.
//
// After a crash the log is replayed at Open into the store, skipping events
// the store already has (matched by product and uuid), so every event is
// stored exactly once. When the Gate refuses at Open (the disk is full),
// the log is left in place and replayed once it allows, and the spool
// starts anyway: a full disk must not keep the server from starting.
package spool

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"strata/internal/analytics"
)

// Inner is the store behind the spool. AppendMissing is AppendEvents that
// skips events whose (product, uuid) the store already holds; replay uses it.
type Inner interface {
	analytics.EventStore
	AppendMissing(ctx context.Context, events []analytics.Event) error
}

// Options tunes the spool.
type Options struct {
	// Dir holds the log segments; it is created if missing.
	Dir string
	// MaxBacklog bounds how many logged events may wait for the loader;
	// zero means DefaultMaxBacklog. Past it appends block, so that a store
	// that cannot keep up slows ingest down instead of hiding it, and the
	// log's size and how long a Sync may wait stay bounded.
	MaxBacklog int
	// SegmentBytes is the size at which the log starts a new file; loaded
	// segments are deleted.
	SegmentBytes int64
	// Loaders is how many batches are loaded into the inner store at once;
	// zero means two. More than one pays only if the inner store commits
	// in parallel (the DuckDB store does, with as many appenders).
	Loaders int
	// LoadLinger is how long a small backlog waits for more before it is
	// loaded (see load); zero means DefaultLoadLinger.
	LoadLinger time.Duration
	// Gate, when set, is asked before each load whether the inner store
	// may be written now; while it refuses (a nearly full disk), the
	// loaders wait and the events stay in the log, and Sync answers its
	// error instead of waiting. The replay of a log left by an unclean
	// stop waits for it too (Open).
	Gate   func() error
	Logger *slog.Logger
}

// Store implements analytics.EventStore over an Inner store.
type Store struct {
	inner Inner
	opt   Options
	log   *slog.Logger

	// appendMu serialises appends, and guards the open segment's file,
	// segSize, segAlloc and buf: the write and its fdatasync run under it
	// alone, so that loaders and Sync calls, which need mu, do not wait for
	// the disk. segSeq and seg change under both.
	appendMu sync.Mutex

	mu      sync.Mutex
	cond    *sync.Cond
	seg     *os.File
	segSeq  uint64
	segSize int64 // where the next record is written
	// segAlloc is how much of the segment is allocated ahead of segSize
	// (preallocate): a record written inside it is an overwrite, whose
	// fdatasync is cheaper than an append's.
	segAlloc int64
	remain   map[uint64]int // events of each segment not yet loaded
	// pending holds where the logged records not yet loaded are; the
	// loaders read them back from their segments (the page cache, as a
	// rule), so that the backlog costs no memory and no allocation.
	pending []pendingRecord
	backlog int // events in pending
	// oldest is when the first record now in pending was appended.
	oldest   time.Time
	appended uint64 // events appended since Open
	taken    uint64 // of those, events handed to a loader
	// loading holds where each batch being loaded starts, counted in
	// events appended (see loaded).
	loading map[uint64]bool
	// syncing counts Sync calls waiting; while any waits the loaders do
	// not linger.
	syncing int
	// paused is the Gate's refusal while the loaders wait for it.
	paused error
	// appending is set while an append that found the spool open writes
	// its record: the loaders do not stop before it is queued.
	appending bool
	closed    bool
	// left holds the segments an unclean stop left, oldest first, while
	// they wait to be replayed (replayLeft); the spool neither writes nor
	// deletes them otherwise.
	left []string
	// stop is closed by Close, ending the wait of a deferred replay.
	stop chan struct{}
	done chan struct{}
	buf  []byte
}

type pendingRecord struct {
	seg  uint64
	off  int64 // where the record, header included, starts in the segment
	size int   // its length, header included
	n    int   // events in it
}

var _ analytics.EventStore = (*Store)(nil)

const segmentPattern = "segment-%020d.log"

// Open replays any log left by a crash into inner, then starts the loader.
//
// A full disk does not make it fail. While the Gate refuses, the log left
// behind is not replayed (that writes the store) but kept, and replayed in
// the background once the Gate allows; its events are not waited for by
// Sync meanwhile, so queries read what is stored, but RecentUUIDs lists
// them. And should no new segment fit (no inode is free), the first
// append that finds room starts it.
func Open(ctx context.Context, inner Inner, opt Options) (*Store, error) {
	if opt.MaxBacklog <= 0 {
		opt.MaxBacklog = DefaultMaxBacklog
	}
	if opt.SegmentBytes <= 0 {
		opt.SegmentBytes = 64 << 20
	}
	if opt.Loaders <= 0 {
		opt.Loaders = 2
	}
	if opt.LoadLinger <= 0 {
		opt.LoadLinger = DefaultLoadLinger
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	if err := os.MkdirAll(opt.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating spool directory: %w", err)
	}
	s := &Store{inner: inner, opt: opt, log: opt.Logger, remain: map[uint64]int{}, loading: map[uint64]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	last, err := s.findLeft()
	if err != nil {
		return nil, err
	}
	if deferred, err := s.replayLeft(ctx); err != nil {
		return nil, err
	} else if deferred != nil {
		s.log.Warn("the disk is too full to replay the spool left by an unclean stop; it stays on disk and is replayed once there is room",
			"segments", len(s.left), "reason", deferred)
	}
	if err := s.startSegment(last + 1); err != nil {
		if !NoSpace(err) {
			return nil, err
		}
		// write starts the segment after this one at the first append.
		s.segSeq = last + 1
		s.log.Warn("no room for a spool segment; the first append once there is room starts one", "err", err)
	}
	var loaders sync.WaitGroup
	for range opt.Loaders {
		loaders.Go(s.load)
	}
	if len(s.left) > 0 {
		loaders.Go(s.replayLater)
	}
	go func() {
		loaders.Wait()
		close(s.done)
	}()
	return s, nil
}

// NoSpace reports whether err is a filesystem out of blocks or inodes, or
// a quota reached.
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// findLeft lists the segments left on disk into s.left, oldest first, and
// returns the highest segment number among them.
func (s *Store) findLeft() (uint64, error) {
	names, err := filepath.Glob(filepath.Join(s.opt.Dir, "segment-*.log"))
	if err != nil {
		return 0, err
	}
	sort.Strings(names)
	var last uint64
	for _, name := range names {
		var seq uint64
		if _, err := fmt.Sscanf(filepath.Base(name), segmentPattern, &seq); err != nil {
			return 0, fmt.Errorf("spool segment %s: unexpected name", name)
		}
		last = max(last, seq)
	}
	s.left = names
	return last, nil
}

// replayLeft loads every segment in s.left into the inner store and
// deletes it, oldest first. While the Gate refuses it stops and returns
// the refusal as deferred, leaving what is not yet replayed in s.left;
// should a replay fail and the Gate refuse after it (the disk filled
// meanwhile), likewise. Any other failure is err.
func (s *Store) replayLeft(ctx context.Context) (deferred, err error) {
	for {
		s.mu.Lock()
		if len(s.left) == 0 {
			s.mu.Unlock()
			return nil, nil
		}
		name := s.left[0]
		s.mu.Unlock()
		if refusal := s.gate(); refusal != nil {
			return refusal, nil
		}
		if err := s.replaySegment(ctx, name); err != nil {
			if refusal := s.gate(); refusal != nil {
				return refusal, nil
			}
			return nil, err
		}
		s.mu.Lock()
		s.left = s.left[1:]
		s.mu.Unlock()
	}
}

// gate asks the Gate, if there is one.
func (s *Store) gate() error {
	if s.opt.Gate == nil {
		return nil
	}
	return s.opt.Gate()
}

// replaySegment loads one segment left on disk into the inner store and
// deletes it.
func (s *Store) replaySegment(ctx context.Context, name string) error {
	events, err := readSegment(name)
	if err != nil {
		return err
	}
	for start := 0; start < len(events); start += 50_000 {
		end := min(start+50_000, len(events))
		if err := s.inner.AppendMissing(ctx, events[start:end]); err != nil {
			return fmt.Errorf("replaying %s: %w", name, err)
		}
	}
	if len(events) > 0 {
		s.log.Info("replayed spool segment after an unclean stop", "segment", filepath.Base(name), "events", len(events))
	}
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("removing replayed segment: %w", err)
	}
	return nil
}

// replayLater replays the segments Open could not, once the Gate allows,
// until they are all stored or the spool closes; those left at Close stay
// for the next Open.
func (s *Store) replayLater() {
	for {
		wait := gateRetry
		deferred, err := s.replayLeft(context.Background())
		switch {
		case err != nil:
			s.log.Error("replaying the spool left by an unclean stop failed; retrying", "err", err)
			wait = 5 * time.Second
		case deferred == nil:
			s.log.Info("the spool left by an unclean stop is replayed")
			return
		}
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
	}
}

func (s *Store) startSegment(seq uint64) error {
	f, err := os.OpenFile(filepath.Join(s.opt.Dir, fmt.Sprintf(segmentPattern, seq)), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("starting spool segment: %w", err)
	}
	// The new name must survive a crash as surely as the records written
	// under it: a record's fdatasync covers the file, not its directory.
	if err := syncDir(s.opt.Dir); err != nil {
		f.Close()
		return fmt.Errorf("starting spool segment: %w", err)
	}
	s.seg, s.segSeq, s.segSize, s.segAlloc = f, seq, 0, 0
	return nil
}

// preallocStep is how far ahead of the records a segment is allocated.
// Small enough that the space it holds back does not matter on a small
// disk (the free-space floor counts it), large enough that its cost (one
// fallocate and one slower fdatasync) is shared by thousands of records.
const preallocStep = 4 << 20

// preallocate allocates the segment ahead of a record of n bytes about to
// be written at segSize, when it is not already. fdatasync after an append
// must also journal the file's new size; after a write into allocated
// blocks it need not: on this project's machines (ext4, virtio disk) 60 µs
// against 90 µs for a 600-byte record (docs/benchmarks.md, "Per-request
// ingest"). The allocated blocks read as zeros, and a record length of
// zero ends a segment for readSegment. Where fallocate is refused (a file
// system without it, a full disk) the record is appended as before.
func (s *Store) preallocate(n int) {
	if s.segSize+int64(n) <= s.segAlloc {
		return
	}
	size := s.segSize + int64(n) + preallocStep
	if err := syscall.Fallocate(int(s.seg.Fd()), 0, s.segAlloc, size-s.segAlloc); err != nil {
		// A partial allocation, if any, also reads as zeros.
		s.segAlloc = s.segSize + int64(n)
		return
	}
	s.segAlloc = size
}

// syncDir fsyncs a directory, making the names created in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ErrClosed is returned by AppendEvents after Close.
var ErrClosed = errors.New("spool closed")

// AppendEvents logs events durably and queues them for the loader. It
// blocks while the backlog is full.
func (s *Store) AppendEvents(ctx context.Context, events []analytics.Event) error {
	if len(events) == 0 {
		return nil
	}
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	s.mu.Lock()
	for !s.closed && s.backlog >= s.opt.MaxBacklog {
		// The loaders wait for the Gate; so would this append, for as
		// long as the disk stays full.
		if err := s.stillPaused(); err != nil {
			s.mu.Unlock()
			return err
		}
		s.cond.Wait()
	}
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.appending = true
	s.mu.Unlock()

	off, err := s.write(events)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.appending = false
	if err != nil {
		s.cond.Broadcast() // loaders waiting for this append to stop
		return err
	}
	wasEmpty := len(s.pending) == 0
	if wasEmpty {
		s.oldest = time.Now()
	}
	s.pending = append(s.pending, pendingRecord{seg: s.segSeq, off: off, size: len(s.buf), n: len(events)})
	s.backlog += len(events)
	s.remain[s.segSeq] += len(events)
	s.appended += uint64(len(events))
	// Only the loaders care about an append, and only when it gives an
	// idle one work or ends their linger; waking them on every append of
	// a stream of small requests cost more scheduling than the appends.
	if wasEmpty || s.closed || (s.backlog >= loadLingerEvents && s.backlog-len(events) < loadLingerEvents) {
		s.cond.Broadcast()
	}
	if s.segSize >= s.opt.SegmentBytes {
		if err := s.rotate(); err != nil {
			s.log.Error("rotating spool segment failed", "err", err)
		}
	}
	return nil
}

// write encodes events as one record into buf and writes it durably to
// the open segment, starting one if none is open, and returns where in
// the segment the record starts. The caller holds appendMu, not mu.
func (s *Store) write(events []analytics.Event) (int64, error) {
	if s.seg == nil {
		// A failed write could not start a fresh segment (a full disk);
		// try again now.
		s.mu.Lock()
		err := s.startSegment(s.segSeq + 1)
		s.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
	s.buf = encodeRecord(s.buf[:0], events)
	s.preallocate(len(s.buf))
	off := s.segSize
	if _, err := s.seg.WriteAt(s.buf, off); err != nil {
		return 0, s.failSegment(fmt.Errorf("writing spool: %w", err))
	}
	if err := syscall.Fdatasync(int(s.seg.Fd())); err != nil {
		return 0, s.failSegment(fmt.Errorf("syncing spool: %w", err))
	}
	s.segSize += int64(len(s.buf))
	return off, nil
}

// failSegment handles a failed write: the segment may now end in a torn
// record, so later records go to a fresh segment (replay stops reading a
// segment at its first bad record). Should the fresh segment fail to start
// too (the disk is full), the next append starts it.
func (s *Store) failSegment(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rerr := s.rotate(); rerr != nil {
		s.log.Error("rotating spool segment failed", "err", rerr)
	}
	return err
}

// rotate closes the current segment, deleting it when none of its events
// waits for the loader (which frees its space first), and starts the next.
// On error no segment is open (s.seg is nil). The caller holds appendMu
// and mu.
func (s *Store) rotate() error {
	old := s.segSeq
	if s.seg != nil {
		err := s.seg.Close()
		s.seg = nil
		if err != nil {
			s.log.Warn("closing spool segment failed", "segment", old, "err", err)
		}
	}
	if s.remain[old] == 0 {
		delete(s.remain, old)
		if err := os.Remove(filepath.Join(s.opt.Dir, fmt.Sprintf(segmentPattern, old))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("removing spool segment failed", "segment", old, "err", err)
		}
	}
	return s.startSegment(old + 1)
}

const maxLoad = 20_000

// DefaultMaxBacklog is the backlog bound unless Options says otherwise. A
// DuckDB checkpoint holds up every loader's commit for up to a few seconds;
// at 50,000, wrk -c64 (30,000 single-event requests a second) met a full
// backlog in two 20 s runs of three, blocking appends for 101 and 282 ms
// and putting p99 at 22 and 67 ms (docs/benchmarks.md, "Per-request
// ingest").
// A deeper bound absorbs that, and costs no memory (the loaders read
// records back from the log), only disk, about 600 bytes an event; but the
// deeper it is, the further ingest can outrun a store that cannot keep up
// before it slows down: at 400,000 the benchmark's 20 s closed-loop batch
// phase could end with a fifth of what it counted not yet in DuckDB.
const DefaultMaxBacklog = 100_000

// gateRetry is how often paused loaders ask the Gate again.
const gateRetry = 250 * time.Millisecond

// A small backlog waits up to LoadLinger for more before it is loaded: each
// DuckDB commit costs about a millisecond of CPU however small, and under a
// stream of single-event requests the loader would otherwise commit a few
// events at a time. Past loadLingerEvents, when a Sync waits (a query wants
// to read what was acknowledged), or when stopping, it loads at once. So
// the linger delays only when events become visible to queries that run
// without a Sync, as ingestion lag does in other analytics products.
// Measured with wrk, one event per request: at a 20 ms linger DuckDB's
// commits took 12% of the server's CPU, at 250 ms 5.5%.
const (
	DefaultLoadLinger = 250 * time.Millisecond
	loadLingerEvents  = 5_000
)

// load moves queued events into the inner store until Close. Several run
// at once, each taking the oldest records not yet taken.
func (s *Store) load() {
	// The batch read back and its events, reused from batch to batch.
	var buf []byte
	var events []analytics.Event
	for {
		s.mu.Lock()
		for len(s.pending) == 0 && (!s.closed || s.appending) {
			s.cond.Wait()
		}
		if len(s.pending) == 0 && s.closed {
			s.mu.Unlock()
			return
		}
		if wait := time.Until(s.oldest.Add(s.opt.LoadLinger)); !s.closed && s.syncing == 0 && s.backlog < loadLingerEvents && wait > 0 {
			// Wake when the linger ends; an append, a Sync or Close wakes
			// earlier and the conditions are checked again.
			t := time.AfterFunc(wait, s.wake)
			s.cond.Wait()
			t.Stop()
			s.mu.Unlock()
			continue
		}
		if err := s.gate(); err != nil {
			// Writing the store now could meet a full disk, which
			// DuckDB does not always survive intact; the events are
			// safe in the log. At a stop they stay there for the
			// next start.
			s.paused = err
			s.cond.Broadcast() // a waiting Sync answers the refusal
			if s.closed {
				s.mu.Unlock()
				return
			}
			t := time.AfterFunc(gateRetry, s.wake)
			s.cond.Wait()
			t.Stop()
			s.mu.Unlock()
			continue
		}
		s.paused = nil
		// Take records up to maxLoad events: one DuckDB transaction that
		// large already amortises the commit (5,000 do), and larger ones
		// only hold memory, decoded, in each loader.
		k, n := 0, 0
		for k < len(s.pending) && (k == 0 || n+s.pending[k].n <= maxLoad) {
			n += s.pending[k].n
			k++
		}
		batch := s.pending[:k:k]
		s.pending = s.pending[k:]
		if len(s.pending) == 0 {
			s.pending = nil
		}
		start := s.taken
		s.taken += uint64(n)
		s.loading[start] = true
		s.mu.Unlock()

		// tried says whether a failed try may have stored some of the
		// batch: a retry cannot tell whether the failed commit stored the
		// events after all (the database may have written them and then
		// failed), so it skips those the store already holds. A refusal
		// for lack of room (storage_full) came before anything was
		// written, and the next try stays on the plain append.
		tried := false
		for attempt := 0; ; attempt++ {
			var err error
			buf, events, err = s.readBatch(buf[:0], events[:0], batch)
			if err == nil && !tried {
				err = s.inner.AppendEvents(context.Background(), events)
			} else if err == nil {
				err = s.inner.AppendMissing(context.Background(), events)
			}
			if err == nil {
				break
			}
			tried = tried || !analytics.IsStorageFull(err)
			if refusal := s.gate(); refusal != nil {
				// The disk filled after this batch was taken (the store
				// refuses writes below the same floor): wait for room as
				// at the gate, Sync answering the refusal meanwhile
				// rather than waiting for this batch. At a stop the batch
				// stays in the log for the next start.
				s.mu.Lock()
				s.paused = refusal
				s.cond.Broadcast()
				stopping := s.closed
				s.mu.Unlock()
				if stopping {
					return
				}
				time.Sleep(gateRetry)
				continue
			}
			// The events are safe in the log; keep trying. Appends block
			// once the backlog fills, which surfaces the failure as
			// latency. When stopping, give up after a few tries: the log
			// stays on disk and the next start replays it.
			s.log.Error("loading spooled events failed; retrying", "events", len(events), "attempt", attempt+1, "err", err)
			s.mu.Lock()
			stopping := s.closed
			s.mu.Unlock()
			if stopping && attempt >= 2 {
				return
			}
			time.Sleep(min(time.Duration(attempt+1)*200*time.Millisecond, 5*time.Second))
		}
		s.finish(start, batch)
		// The buffers are kept for the next batch unless this one was
		// unusually large; the events point into buf, so both go or stay.
		clear(events)
		if cap(events) > keepLoadEvents {
			buf, events = nil, nil
		}
	}
}

// keepLoadEvents is the largest batch whose buffers a loader keeps for the
// next: a batch of the usual size (loadLingerEvents) is then read and
// decoded without allocating, and a rare large one does not hold its
// memory for good.
const keepLoadEvents = 2 * loadLingerEvents

// readBatch reads batch's records back from their segments into buf and
// appends their events to events. The events' strings point into buf (see
// decodeRecord). Records of one segment follow each other, so each
// segment's share is one read.
func (s *Store) readBatch(buf []byte, events []analytics.Event, batch []pendingRecord) ([]byte, []analytics.Event, error) {
	total := 0
	for _, r := range batch {
		total += r.size
	}
	buf = slices.Grow(buf[:0], total)[:total]
	pos := 0
	for i := 0; i < len(batch); {
		j, end := i, batch[i].off
		for j < len(batch) && batch[j].seg == batch[i].seg && batch[j].off == end {
			end += int64(batch[j].size)
			j++
		}
		if err := s.readAt(batch[i].seg, buf[pos:pos+int(end-batch[i].off)], batch[i].off); err != nil {
			return buf, events, err
		}
		pos += int(end - batch[i].off)
		i = j
	}
	pos = 0
	for _, r := range batch {
		rec := buf[pos : pos+r.size]
		pos += r.size
		payload := rec[8:]
		if !intact(rec[:8], payload) {
			return buf, events, fmt.Errorf("spool segment %d: the record at %d reads back corrupt", r.seg, r.off)
		}
		var err error
		if events, err = decodeRecord(events, payload); err != nil {
			return buf, events, fmt.Errorf("spool segment %d: the record at %d: %w", r.seg, r.off, err)
		}
	}
	return buf, events, nil
}

// readAt reads len(p) bytes at off from segment seq. A segment is not
// deleted while any of its records waits to be loaded (remain).
func (s *Store) readAt(seq uint64, p []byte, off int64) error {
	f, err := os.Open(filepath.Join(s.opt.Dir, fmt.Sprintf(segmentPattern, seq)))
	if err != nil {
		return fmt.Errorf("reading spool: %w", err)
	}
	defer f.Close()
	if _, err := f.ReadAt(p, off); err != nil {
		return fmt.Errorf("reading spool segment %d: %w", seq, err)
	}
	return nil
}

// wake wakes every goroutine waiting on cond.
func (s *Store) wake() {
	s.mu.Lock()
	s.cond.Broadcast()
	s.mu.Unlock()
}

// finish records a loaded batch and deletes segments that are fully loaded.
func (s *Store) finish(start uint64, batch []pendingRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.loading, start)
	total := 0
	for _, r := range batch {
		s.remain[r.seg] -= r.n
		total += r.n
	}
	for seq, n := range s.remain {
		if n == 0 && seq != s.segSeq {
			delete(s.remain, seq)
			if err := os.Remove(filepath.Join(s.opt.Dir, fmt.Sprintf(segmentPattern, seq))); err != nil {
				s.log.Warn("removing loaded spool segment failed", "err", err)
			}
		}
	}
	s.backlog -= total
	s.cond.Broadcast()
}

// stillPaused returns the Gate's refusal while the loaders wait for it,
// asking the Gate again rather than trusting the loaders' last answer, which
// may be a few hundred milliseconds old; when it allows now, the loaders are
// woken. The caller holds mu.
func (s *Store) stillPaused() error {
	if s.paused == nil {
		return nil
	}
	if err := s.opt.Gate(); err != nil {
		return err
	}
	s.paused = nil
	s.cond.Broadcast()
	return nil
}

// loaded is how many of the first events appended are all in the inner
// store. Batches can finish out of order, so it is where the oldest batch
// still loading starts, or everything taken when none is. The caller holds
// mu.
func (s *Store) loaded() uint64 {
	n := s.taken
	for start := range s.loading {
		n = min(n, start)
	}
	return n
}

// Sync waits until every event appended before the call is in the inner
// store, so that a query sees what was acknowledged before it. It does not
// wait for segments an unclean stop left that the Gate keeps from being
// replayed (Open): on a full disk, a query reads what is stored.
func (s *Store) Sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	target := s.appended
	if s.loaded() >= target {
		return nil
	}
	// Loaders lingering over a small backlog load it now.
	s.syncing++
	defer func() { s.syncing-- }()
	s.cond.Broadcast()
	for s.loaded() < target {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.stillPaused(); err != nil {
			return err
		}
		s.cond.Wait()
	}
	return nil
}

// RecentUUIDs syncs, then asks the inner store. The events of segments
// left by an unclean stop and not yet replayed (Open) come first: they are
// acknowledged, so a client that retries one across the restart must find
// it in the deduplication window the caller fills.
func (s *Store) RecentUUIDs(ctx context.Context, since time.Time, limit int, fn func(int64, [16]byte) error) error {
	if err := s.Sync(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	left := slices.Clone(s.left)
	s.mu.Unlock()
	for _, name := range left {
		events, err := readSegment(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // replayed meanwhile; the inner store has it
		} else if err != nil {
			return err
		}
		for i := range events {
			if limit <= 0 {
				return nil
			}
			if !events[i].ReceivedAt.Before(since) {
				if err := fn(events[i].ProductID, events[i].UUID); err != nil {
					return err
				}
				limit--
			}
		}
	}
	return s.inner.RecentUUIDs(ctx, since, limit, fn)
}

// Close stops appends, loads everything still queued, removes the log and
// closes the inner store.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.cond.Broadcast()
	close(s.stop)
	s.mu.Unlock()
	<-s.done
	// An append still writing holds the segment; the loaders waited for
	// its record.
	s.appendMu.Lock()
	defer s.appendMu.Unlock()

	var errs []error
	if s.seg != nil {
		errs = append(errs, s.seg.Close())
	}
	if s.loaded() == s.appended {
		// Everything appended is in the inner store; the log is no longer
		// needed, but for segments an unclean stop left that are still to
		// be replayed.
		names, _ := filepath.Glob(filepath.Join(s.opt.Dir, "segment-*.log"))
		for _, n := range names {
			if !slices.Contains(s.left, n) {
				errs = append(errs, os.Remove(n))
			}
		}
		if len(s.left) > 0 {
			s.log.Warn("the spool left by an unclean stop could not be replayed; it stays for the next start", "segments", len(s.left), "dir", s.opt.Dir)
		}
	} else {
		errs = append(errs, fmt.Errorf("%d spooled events could not be loaded; they stay in %s for the next start",
			s.appended-s.loaded(), s.opt.Dir))
	}
	errs = append(errs, s.inner.Close())
	return errors.Join(errs...)
}

// Record format: u32 payload length, u32 CRC-32C of the payload, payload.
// A crash can leave a torn last record; its CRC (or length) fails and
// replay stops there. A torn record was never acknowledged.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

func encodeRecord(dst []byte, events []analytics.Event) []byte {
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
	dst = binary.AppendUvarint(dst, uint64(len(events)))
	for i := range events {
		dst = encodeEvent(dst, &events[i])
	}
	payload := dst[8:]
	binary.LittleEndian.PutUint32(dst[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[4:8], crc32.Checksum(payload, crcTable))
	return dst
}

// intact reports whether payload is the whole record that header heads:
// its length and CRC agree.
func intact(header, payload []byte) bool {
	return int(binary.LittleEndian.Uint32(header[0:4])) == len(payload) &&
		crc32.Checksum(payload, crcTable) == binary.LittleEndian.Uint32(header[4:8])
}

// The flags byte of an encoded event.
const (
	flagBot     = 1 // IsBot
	flagSources = 2 // the five acquisition strings follow the first 13
	flagGeo     = 4 // country, region, city and screen class follow those
)

func encodeEvent(dst []byte, e *analytics.Event) []byte {
	dst = append(dst, e.UUID[:]...)
	dst = binary.AppendVarint(dst, e.ProductID)
	dst = binary.AppendVarint(dst, e.Timestamp.UnixMicro())
	dst = binary.AppendVarint(dst, e.ReceivedAt.UnixMicro())
	dst = binary.LittleEndian.AppendUint64(dst, e.UserID)
	// Flag 2 says that the acquisition strings follow the first 13: a
	// record written before they existed has it clear, and still reads.
	// Flag 4 likewise says that the location and screen class follow them;
	// an event with none of the four leaves it clear and them out, as
	// events sent on a visitor's behalf are.
	flags := byte(flagSources)
	geo := e.Country != "" || e.Region != "" || e.City != "" || e.ScreenClass != ""
	if geo {
		flags |= flagGeo
	}
	if e.IsBot {
		flags |= flagBot
	}
	dst = append(dst, flags)
	for _, s := range [...]string{string(e.Env), e.Name, e.DistinctID, e.URL, e.Path, e.Referrer,
		e.UserAgent, e.Browser, e.OS, e.DeviceType, e.BotName, e.BotCategory, string(e.Properties),
		e.Source, e.Channel, e.UTMSource, e.UTMMedium, e.UTMCampaign} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	if geo {
		for _, s := range [...]string{e.Country, e.Region, e.City, e.ScreenClass} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst
}

// readSegment decodes the whole records of a segment file.
func readSegment(name string) ([]analytics.Event, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("opening spool segment: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var out []analytics.Event
	var head [8]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return out, nil // end of file, or a torn header
		}
		n := binary.LittleEndian.Uint32(head[0:4])
		if n == 0 || n > 1<<30 {
			// Zero: the preallocated rest of the segment, never written
			// (every record holds at least its count of events).
			return out, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil || !intact(head[:], payload) {
			return out, nil // a torn record: never acknowledged
		}
		if out, err = decodeRecord(out, payload); err != nil {
			return nil, fmt.Errorf("spool segment %s: %w", name, err)
		}
	}
}

var errCorrupt = errors.New("corrupt spool record")

// decodeRecord appends the events of a record's payload to events (or none,
// if the record is corrupt). Their strings and properties are not copies:
// they point into p, which must not change while they are used (a loader
// reuses its buffer only once the inner store has returned). Decoding
// without a copy per string halved what the loader allocates per event; a
// store that keeps one of the strings beyond the call clones it.
func decodeRecord(events []analytics.Event, p []byte) ([]analytics.Event, error) {
	start := len(events)
	count, n := binary.Uvarint(p)
	if n <= 0 || count > uint64(len(p)) {
		return events[:start], errCorrupt
	}
	p = p[n:]
	events = slices.Grow(events, int(count))
	for i := uint64(0); i < count; i++ {
		var e analytics.Event
		if len(p) < 16 {
			return events[:start], errCorrupt
		}
		copy(e.UUID[:], p[:16])
		p = p[16:]
		var ints [3]int64
		for j := range ints {
			v, n := binary.Varint(p)
			if n <= 0 {
				return events[:start], errCorrupt
			}
			ints[j], p = v, p[n:]
		}
		e.ProductID = ints[0]
		e.Timestamp = time.UnixMicro(ints[1]).UTC()
		e.ReceivedAt = time.UnixMicro(ints[2]).UTC()
		if len(p) < 9 {
			return events[:start], errCorrupt
		}
		e.UserID = binary.LittleEndian.Uint64(p)
		flags := p[8]
		e.IsBot = flags&flagBot != 0
		p = p[9:]
		var strs [22][]byte
		n := 13
		if flags&flagSources != 0 {
			n = 18
			if flags&flagGeo != 0 {
				n = len(strs)
			}
		}
		for j := range strs[:n] {
			l, n := binary.Uvarint(p)
			if n <= 0 || l > uint64(len(p)-n) {
				return events[:start], errCorrupt
			}
			end := n + int(l)
			strs[j], p = p[n:end:end], p[end:]
		}
		// The environment outlives the load in the stores' bookkeeping (the
		// kept visits' scopes are keyed by it), so it is never a view: one
		// of the two constants, or a copy.
		switch string(strs[0]) {
		case string(analytics.EnvLive):
			e.Env = analytics.EnvLive
		case string(analytics.EnvTest):
			e.Env = analytics.EnvTest
		default:
			e.Env = analytics.Env(strs[0])
		}
		e.Name, e.DistinctID, e.URL, e.Path, e.Referrer = view(strs[1]), view(strs[2]), view(strs[3]), view(strs[4]), view(strs[5])
		e.UserAgent, e.Browser, e.OS, e.DeviceType = view(strs[6]), view(strs[7]), view(strs[8]), view(strs[9])
		e.BotName, e.BotCategory, e.Properties = view(strs[10]), view(strs[11]), strs[12]
		e.Source, e.Channel, e.UTMSource, e.UTMMedium, e.UTMCampaign = view(strs[13]), view(strs[14]), view(strs[15]), view(strs[16]), view(strs[17])
		e.Country, e.Region, e.City, e.ScreenClass = view(strs[18]), view(strs[19]), view(strs[20]), view(strs[21])
		events = append(events, e)
	}
	return events, nil
}

// view is b as a string without copying it; b must never change afterwards.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Backlog is what the spool holds that the database has not loaded yet:
// events, and the bytes of their records in the log (the metrics).
func (s *Store) Backlog() (events int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pending {
		bytes += int64(p.size)
	}
	return s.backlog, bytes
}
