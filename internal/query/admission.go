package query

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"strata/internal/analytics"
)

// Admission decides when a query may read events. At most Slots queries run
// at once; the next Queue wait in arrival order, each for at most MaxWait;
// any more are refused at once. A refusal is a 503 server_busy with a
// Retry-After.
//
// It exists because running more queries at once does not answer them
// sooner: DuckDB already spreads one query over every core, so fifty at once
// took as long in total as fifty in a row, and they shared one buffer pool,
// which they overflowed: of fifty month-long funnels sent at once on a
// million events, 13 to 19 failed out of memory, and each query running
// added its own memory outside the pool (docs/benchmarks.md, "Heavy
// queries"). A queue turns a burst into a short wait, and its bound keeps
// a flood from holding thousands of requests.
//
// It sits in the engine rather than in the HTTP handlers because every read
// of events passes through the engine whichever store answers it, and the
// engine admits after waiting for the spool (Sync), so that a slot is held
// only while the store works.
type Admission struct {
	slots, queue int
	maxWait      time.Duration

	mu      sync.Mutex
	running int
	waiting list.List // of *waiter, oldest first
	// held is a moving average of how long a query holds its slot, for the
	// Retry-After estimate.
	held time.Duration
	// refused counts the queries refused server_busy, for the metrics.
	refused uint64
}

// waiter is one query in the queue. ready is closed when a finishing query
// hands it its slot.
type waiter struct{ ready chan struct{} }

// NewAdmission returns an admission control running at most slots queries
// at once (at least one), with at most queue more waiting (zero: none wait),
// each for at most maxWait.
func NewAdmission(slots, queue int, maxWait time.Duration) *Admission {
	return &Admission{slots: max(1, slots), queue: max(0, queue), maxWait: maxWait}
}

// Acquire returns when the caller may run its query, with the function that
// gives the slot back (call it once, when the store has answered). It
// returns a server_busy error when the queue is full or the wait reached
// MaxWait, and ctx's error when ctx ended while waiting; a query that gives
// up this way leaves the queue at once.
func (a *Admission) Acquire(ctx context.Context) (release func(), err error) {
	a.mu.Lock()
	if a.running < a.slots && a.waiting.Len() == 0 {
		a.running++
		a.mu.Unlock()
		return a.releaser(), nil
	}
	if a.waiting.Len() >= a.queue {
		retry := a.retryAfter()
		a.refused++
		a.mu.Unlock()
		return nil, busy(retry, "The server is running all the queries it can (%d) and %d more are waiting; retry after the number of seconds in Retry-After.", a.slots, a.queue)
	}
	w := &waiter{ready: make(chan struct{})}
	el := a.waiting.PushBack(w)
	a.mu.Unlock()

	timer := time.NewTimer(a.maxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return a.releaser(), nil
	case <-timer.C:
	case <-ctx.Done():
	}
	a.mu.Lock()
	select {
	case <-w.ready:
		// A slot was handed over as the wait ended: take it rather than
		// waste it.
		a.mu.Unlock()
		return a.releaser(), nil
	default:
	}
	a.waiting.Remove(el)
	retry := a.retryAfter()
	if ctx.Err() == nil {
		a.refused++
	}
	a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, busy(retry, "The query waited %s for one of the %d queries running to finish; retry after the number of seconds in Retry-After.", a.maxWait, a.slots)
}

// releaser returns the function that gives back a slot taken now. Calling
// it more than once gives it back once.
func (a *Admission) releaser() func() {
	start := time.Now()
	var once sync.Once
	return func() { once.Do(func() { a.release(time.Since(start)) }) }
}

// release hands the slot to the oldest waiting query, or frees it.
func (a *Admission) release(held time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.held == 0 {
		a.held = held
	} else {
		a.held = (7*a.held + held) / 8
	}
	if front := a.waiting.Front(); front != nil {
		close(a.waiting.Remove(front).(*waiter).ready)
		return
	}
	a.running--
}

// retryAfter estimates, under a.mu, when a query sent again would find a
// place: the time the queries now waiting take to get through the slots at
// the recent pace, between one second and MaxWait (at least one second).
func (a *Admission) retryAfter() time.Duration {
	est := time.Duration(float64(a.held) * float64(a.waiting.Len()+1) / float64(a.slots))
	return min(max(est, time.Second), max(a.maxWait, time.Second))
}

// Load reports how many queries are running and how many wait.
// Refused is how many queries Acquire refused server_busy (a full queue, a
// wait that reached MaxWait) since the admission was made.
func (a *Admission) Refused() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused
}

func (a *Admission) Load() (running, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running, a.waiting.Len()
}

// busy is a server_busy refusal. Retry-After is sent in whole seconds,
// rounded up.
func busy(retry time.Duration, format string, args ...any) error {
	retry = time.Duration(math.Ceil(retry.Seconds())) * time.Second
	return &analytics.Error{Kind: analytics.KindUnavailable, Code: "server_busy",
		Message: fmt.Sprintf(format, args...), RetryAfter: retry}
}
