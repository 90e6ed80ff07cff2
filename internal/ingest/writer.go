package ingest

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"

	"strata/internal/analytics"
)

// ErrClosed is returned by Write after Close: the server is stopping and the
// client should retry elsewhere or later.
var ErrClosed = &analytics.Error{Kind: analytics.KindUnavailable, Code: "unavailable",
	Message: "The server is shutting down; retry shortly.", RetryAfter: 2 * time.Second}

// WriterOptions tunes the group-commit writer.
type WriterOptions struct {
	// MaxGroupEvents caps how many events one commit carries, which bounds
	// memory and the latency of the requests in the group.
	MaxGroupEvents int
	// Linger is how long a small group waits for more requests before it
	// commits. A commit has a fixed cost, so when many small requests
	// arrive (one beacon per event) a short wait multiplies throughput for
	// a bounded rise in latency. Zero commits at once.
	Linger time.Duration
	// DedupWindow is how long an accepted client uuid is remembered, and
	// DedupCapacity how many are remembered at most (8–32 bytes each; see
	// dedupSet).
	DedupWindow   time.Duration
	DedupCapacity int
	// Admit, when set, is asked before each commit whether the store may
	// take events now; its error (a full disk, a store being reopened)
	// answers every request of the group, and nothing is stored.
	Admit  func() error
	Now    func() time.Time
	Logger *slog.Logger
	// OnCommit, when set, is told of each group commit the store was
	// asked for: its events, how long the store took and its error. It
	// runs on the writer's goroutine, so it must be quick (the metrics'
	// histograms).
	OnCommit func(events int, took time.Duration, err error)
}

// Writer is the group-commit writer. Concurrent requests hand it their
// events; one goroutine gathers whatever is queued into one commit, so that
// under load many requests share one transaction, and answers every request
// only after that commit returned. This is what makes 202 mean "durable".
//
// It also deduplicates: an event whose client-supplied uuid was already
// committed for the same product within the window is acknowledged but not
// stored again, so a retried batch is stored once.
type Writer struct {
	store analytics.EventStore
	opt   WriterOptions
	log   *slog.Logger
	dedup *dedupSet
	// warnedAt is when the writer last warned that the dedup window was
	// cut short. It and the buffers below are the writer goroutine's own.
	warnedAt time.Time
	// events, fresh and inGroup are reused by commits of small groups: a
	// stream of single-event requests commits hundreds of groups a second.
	events  []analytics.Event
	fresh   []uint64
	inGroup map[uint64]bool

	reqs    chan *writeReq
	mu      sync.RWMutex // guards closed against sends on reqs
	closed  bool
	stopped chan struct{}
}

type writeReq struct {
	events []Pending
	done   chan error
}

// NewWriter starts a writer over store. Call LoadRecent before serving to
// carry the deduplication window over a restart, and Close to stop.
func NewWriter(store analytics.EventStore, opt WriterOptions) *Writer {
	if opt.MaxGroupEvents <= 0 {
		opt.MaxGroupEvents = 50000
	}
	if opt.DedupWindow <= 0 {
		opt.DedupWindow = 24 * time.Hour
	}
	if opt.DedupCapacity <= 0 {
		opt.DedupCapacity = 4_000_000
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	w := &Writer{
		store:   store,
		opt:     opt,
		log:     opt.Logger,
		dedup:   newDedupSet(opt.DedupWindow, opt.DedupCapacity, opt.Now()),
		reqs:    make(chan *writeReq, 1024),
		stopped: make(chan struct{}),
	}
	go w.run()
	return w
}

// LoadRecent fills the deduplication window from events already stored, so
// that a batch retried across a restart is still stored once.
func (w *Writer) LoadRecent(ctx context.Context) (int, error) {
	now := w.opt.Now()
	n := 0
	err := w.store.RecentUUIDs(ctx, now.Add(-w.opt.DedupWindow), w.opt.DedupCapacity, func(pid int64, u [16]byte) error {
		w.dedup.add(dedupKey(pid, u), now)
		n++
		return nil
	})
	return n, err
}

// Write commits events and returns once they are durable, or returns an
// error (ErrClosed, or an unavailable error when the store failed) in which
// case none of them was stored.
func (w *Writer) Write(ctx context.Context, events []Pending) error {
	if len(events) == 0 {
		return nil
	}
	req := reqPool.Get().(*writeReq)
	req.events = events
	defer func() {
		req.events = nil
		reqPool.Put(req)
	}()
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return ErrClosed
	}
	w.reqs <- req
	w.mu.RUnlock()
	// The commit is waited for even if the client goes away: the events may
	// be stored either way, and a retry is deduplicated by uuid.
	return <-req.done
}

// reqPool keeps writeReqs for reuse: Write takes one per request. Once its
// done has been received the writer no longer reads it (commit sends done
// last), and done is empty again.
var reqPool = sync.Pool{New: func() any { return &writeReq{done: make(chan error, 1)} }}

// Close stops accepting writes, commits what is queued and waits for the
// writer goroutine to finish.
func (w *Writer) Close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.reqs)
	}
	w.mu.Unlock()
	<-w.stopped
}

// lingerBelow is the group size from which a group commits without
// lingering: past it, the fixed cost of a commit is already amortised.
const lingerBelow = 1000

func (w *Writer) run() {
	defer close(w.stopped)
	var group []*writeReq
	for {
		first, ok := <-w.reqs
		if !ok {
			return
		}
		var n int
		group, n = w.gather(append(group[:0], first), len(first.events))
		w.commit(group, n)
		clear(group) // let the answered requests be collected
	}
}

// gather adds to group whatever else is already queued: requests that
// arrived during the previous commit share this one. A group smaller than
// lingerBelow waits up to Linger for more.
func (w *Writer) gather(group []*writeReq, n int) ([]*writeReq, int) {
	var linger <-chan time.Time
	if w.opt.Linger > 0 && n < lingerBelow {
		t := time.NewTimer(w.opt.Linger)
		defer t.Stop()
		linger = t.C
	}
	for n < w.opt.MaxGroupEvents {
		var r *writeReq
		var ok bool
		select {
		case r, ok = <-w.reqs:
		default:
			if linger == nil || n >= lingerBelow {
				return group, n
			}
			select {
			case r, ok = <-w.reqs:
			case <-linger:
				return group, n
			}
		}
		if !ok {
			return group, n
		}
		group = append(group, r)
		n += len(r.events)
	}
	return group, n
}

// reuseBelow is the largest group whose buffers are kept for the next
// commit; larger ones are allocated each time, so that one large batch
// does not hold its memory for good.
const reuseBelow = 4096

func (w *Writer) commit(group []*writeReq, n int) {
	if w.opt.Admit != nil {
		if err := w.opt.Admit(); err != nil {
			for _, r := range group {
				r.done <- err
			}
			return
		}
	}
	now := w.opt.Now()
	events, fresh, inGroup := w.events[:0], w.fresh[:0], w.inGroup
	if n > reuseBelow || inGroup == nil {
		events, fresh, inGroup = make([]analytics.Event, 0, n), nil, map[uint64]bool{}
	}
	defer func() {
		if n <= reuseBelow {
			clear(events) // drop the references into request bodies
			clear(inGroup)
			w.events, w.fresh, w.inGroup = events[:0], fresh[:0], inGroup
		}
	}()
	for _, r := range group {
		for i := range r.events {
			p := &r.events[i]
			if p.ClientUUID {
				k := dedupKey(p.Event.ProductID, p.Event.UUID)
				if inGroup[k] || w.dedup.has(k, now) {
					continue
				}
				inGroup[k] = true
				fresh = append(fresh, k)
			}
			events = append(events, p.Event)
		}
	}
	start := time.Now()
	err := w.store.AppendEvents(context.Background(), events)
	if w.opt.OnCommit != nil {
		w.opt.OnCommit(len(events), time.Since(start), err)
	}
	if err != nil {
		// Logged once here for the whole group; each request's answer
		// carries the cause without logging it again.
		w.log.Error("committing events failed", "events", len(events), "requests", len(group), "err", err)
		err = &analytics.Error{Kind: analytics.KindUnavailable, Code: "unavailable",
			Message:    "The events could not be stored; nothing of this batch was kept. Retry shortly.",
			RetryAfter: 5 * time.Second, Err: err, Logged: true}
	} else {
		before := w.dedup.evictedEarly
		for _, k := range fresh {
			w.dedup.add(k, now)
		}
		if w.dedup.evictedEarly > before && now.Sub(w.warnedAt) > time.Hour {
			w.warnedAt = now
			w.log.Warn("deduplication window is shorter than configured: the uuid capacity is full; raise --dedup-capacity",
				"capacity", w.opt.DedupCapacity, "window", w.opt.DedupWindow)
		}
	}
	for _, r := range group {
		r.done <- err
	}
}

// dedupSeed is fixed per process; keys only need to agree within it.
var dedupSeed = maphash.MakeSeed()

// dedupKey folds product and uuid into 64 bits. The chance that two of a few
// million uuids collide is below one in a million million.
func dedupKey(productID int64, u [16]byte) uint64 {
	var buf [24]byte
	binary.LittleEndian.PutUint64(buf[:8], uint64(productID))
	copy(buf[8:], u[:])
	return maphash.Bytes(dedupSeed, buf[:])
}
