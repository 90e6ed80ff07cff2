package messages

import (
	"context"
	"time"

	"strata/internal/analytics"
)

// loader reads the states of the users that requests wait for from the
// store, many users a statement: while one statement runs, the users
// asked for meanwhile gather, and the next statement reads them all.
// DuckDB spends about half a millisecond on any statement, so one lookup a
// request would cap a server at about 2,000 requests/s; 32 users a
// statement read about 20,000 users/s (docs/benchmarks.md). Two workers
// keep both of a small machine's cores busy.
type loader struct {
	store analytics.CampaignStore
	reqs  chan *loadReq
}

type loadReq struct {
	product int64
	id      string
	done    chan loadResult
}

type loadResult struct {
	states []analytics.MessageState
	err    error
}

const (
	loadWorkers  = 2
	maxLoadBatch = 64
	// loadTimeout bounds one statement, whoever asked.
	loadTimeout = 10 * time.Second
)

func newLoader(store analytics.CampaignStore) *loader {
	l := &loader{store: store, reqs: make(chan *loadReq, 4096)}
	for range loadWorkers {
		go l.work()
	}
	return l
}

// load returns one user's states, read in a statement shared with the
// other users asked for at the time.
func (l *loader) load(ctx context.Context, productID int64, id string) ([]analytics.MessageState, error) {
	r := &loadReq{product: productID, id: id, done: make(chan loadResult, 1)}
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-r.done:
		return res.states, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// work takes the first waiting request and every other one queued behind
// it, up to maxLoadBatch, and answers them with one statement a product.
func (l *loader) work() {
	batch := make([]*loadReq, 0, maxLoadBatch)
	for first := range l.reqs {
		batch = append(batch[:0], first)
	gather:
		for len(batch) < maxLoadBatch {
			select {
			case r := <-l.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		byProduct := map[int64][]*loadReq{}
		for _, r := range batch {
			byProduct[r.product] = append(byProduct[r.product], r)
		}
		for product, reqs := range byProduct {
			ids := make([]string, 0, len(reqs))
			seen := make(map[string]bool, len(reqs))
			for _, r := range reqs {
				if !seen[r.id] {
					seen[r.id] = true
					ids = append(ids, r.id)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
			users, err := l.store.MessageStates(ctx, product, ids)
			cancel()
			for _, r := range reqs {
				r.done <- loadResult{states: users[r.id], err: err}
			}
		}
	}
}
