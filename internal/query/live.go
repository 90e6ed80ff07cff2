package query

import (
	"context"
	"sync"
	"time"

	"strata/internal/analytics"
)

// LiveWindow is how far back "visitors now" looks: a visitor is a user
// with a human event in the last five minutes, as in Plausible's current
// visitors (docs/queries.md, "Live visitors").
const LiveWindow = 5 * time.Minute

// liveAhead is how far past now an event's time may lie and still count
// as now. The SDKs send sent_at, so ingest corrects their clocks and their
// events are never later than their arrival; an event sent without
// sent_at keeps its own time, and a server whose clock is a little ahead
// should still count, but one stamped hours ahead should not count for
// hours.
const liveAhead = time.Minute

// The live lane's bounds (Live.lane): how many live counts may read events
// at once, how many more may wait, and for how long. They are small and
// fixed because the cache below lets at most one count per product and
// environment through per TTL, and each count reads a few minutes of
// events, so the lane is rarely full; they exist so that many products'
// dashboards opened at once cannot read without bound beside the heavy
// queries' slots.
const (
	liveSlots = 2
	liveQueue = 64
	liveWait  = 5 * time.Second
	// liveTimeout bounds one count, which runs detached from the request
	// that started it so that a closed tab does not fail the tabs waiting
	// for the same answer.
	liveTimeout = 10 * time.Second
	// liveSweepAt is the number of cached answers above which an insert
	// first drops the expired ones, so the cache holds at most the
	// products and environments asked for within one TTL, plus this many.
	liveSweepAt = 1024
)

// Live is the live visitors' own lane and cache. The count must be cheap
// enough to leave open all day in many tabs, and must neither wait behind
// a heavy funnel nor take a heavy query's place, so it does not pass
// through the engine's Admission or the credential's query budget:
//
//   - Every answer is cached for TTL per product and environment, and
//     requests that arrive while a count runs wait for that count, so a
//     hundred open dashboards cost one query per TTL.
//   - Counts run in their own small lane (liveSlots at once, liveQueue
//     waiting), beside the Admission's slots rather than in them: a count
//     reads a few minutes of events, so it adds little to the heavy
//     queries' time, and heavy queries holding every slot do not delay it.
type Live struct {
	// TTL is how long an answer is reused (--live-cache).
	TTL time.Duration

	lane    *Admission
	mu      sync.Mutex
	answers map[liveKey]*liveAnswer
}

// NewLive returns the live visitors' lane and cache, answers reused for
// ttl.
func NewLive(ttl time.Duration) *Live {
	return &Live{TTL: ttl, lane: NewAdmission(liveSlots, liveQueue, liveWait), answers: map[liveKey]*liveAnswer{}}
}

type liveKey struct {
	product int64
	env     analytics.Env
}

// liveAnswer is one count, running until done is closed.
type liveAnswer struct {
	at   time.Time
	done chan struct{}
	n    int64
	err  error
}

// LiveResult is the answer of GET /query/live.
type LiveResult struct {
	// Visitors is the number of distinct users with a human event in the
	// window.
	Visitors int64 `json:"visitors"`
	// WindowSeconds is the window's length (300).
	WindowSeconds int `json:"windowSeconds"`
	// At is the end of the window the count was taken at: the answer may
	// be up to the cache's TTL old.
	At time.Time `json:"at"`
}

// LiveVisitors counts the scope's visitors now: distinct users with a
// human event whose time is in the last LiveWindow (and at most liveAhead
// past now). It reads through the Live lane and cache when e.Live is set,
// else straight from the store.
func (e *Engine) LiveVisitors(ctx context.Context, scope analytics.EventRange) (LiveResult, error) {
	now := e.now().UTC()
	count := func(ctx context.Context, lane *Admission) (int64, error) {
		if e.Sync != nil {
			if err := e.Sync(ctx); err != nil {
				return 0, err
			}
		}
		if lane != nil {
			release, err := lane.Acquire(ctx)
			if err != nil {
				return 0, err
			}
			defer release()
		}
		sc := analytics.EventRange{ProductID: scope.ProductID, Env: scope.Env, From: now.Add(-LiveWindow), To: now.Add(liveAhead)}
		n, err := e.Store.LiveVisitors(ctx, sc)
		return n, storeError(err)
	}
	res := LiveResult{WindowSeconds: int(LiveWindow / time.Second), At: now}
	if e.Live == nil {
		n, err := count(ctx, nil)
		res.Visitors = n
		return res, err
	}
	a := e.Live.answer(liveKey{scope.ProductID, scope.Env}, now, count)
	select {
	case <-a.done:
	case <-ctx.Done():
		return LiveResult{}, ctx.Err()
	}
	if a.err != nil {
		return LiveResult{}, a.err
	}
	res.Visitors, res.At = a.n, a.at
	return res, nil
}

// answer returns the cached count of key when it was taken less than TTL
// before now, the count running for key when there is one, or else a new
// count it starts. A count that failed is not kept: the next request
// tries again.
func (l *Live) answer(key liveKey, now time.Time, count func(context.Context, *Admission) (int64, error)) *liveAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.answers[key]; ok {
		select {
		case <-a.done:
			// A clock that went back (now before at) makes the answer
			// stale too, rather than fresh for as long as it went back.
			if age := now.Sub(a.at); age >= 0 && age < l.TTL {
				return a
			}
		default:
			return a
		}
	}
	if len(l.answers) >= liveSweepAt {
		l.sweep(now)
	}
	a := &liveAnswer{at: now, done: make(chan struct{})}
	l.answers[key] = a
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), liveTimeout)
		defer cancel()
		a.n, a.err = count(ctx, l.lane)
		close(a.done)
		if a.err != nil {
			l.mu.Lock()
			if l.answers[key] == a {
				delete(l.answers, key)
			}
			l.mu.Unlock()
		}
	}()
	return a
}

// sweep drops, under l.mu, the finished answers older than TTL.
func (l *Live) sweep(now time.Time) {
	for k, a := range l.answers {
		select {
		case <-a.done:
			if now.Sub(a.at) >= l.TTL {
				delete(l.answers, k)
			}
		default:
		}
	}
}
