package cohorts

import (
	"context"
	"sync"
	"time"

	"strata/internal/analytics"
)

// Bounds of the person sets (docs/queries.md, "Person filters").
const (
	// PersonSetFresh is how long a person set answers queries before the
	// next query of its filter computes it again.
	PersonSetFresh = 5 * time.Minute
	// PersonSetKeep is how old a set's generation grows before the next
	// computation of one of its product's sets deletes it: long enough
	// that no node still reads it (a node reads a set for PersonSetFresh
	// after computing it).
	PersonSetKeep = 3 * PersonSetFresh
	// maxPersonSets is how many sets a node remembers; past it the
	// oldest is forgotten (its rows go with its product's next
	// computation past PersonSetKeep).
	maxPersonSets = 256
)

// PersonSets turns a query's person-property filter ("plan is pro") into
// the member set of an unsaved cohort in the event store, where the events
// are: the persons that pass the filter, streamed from the metadata store
// in batches (as a cohort's computation), under the cohort id
// analytics.PersonSetID of the filter and a generation that is the
// computation's time in nanoseconds. A set answers the queries of its
// filter for PersonSetFresh; the queries then filter events as by a cohort
// (analytics.CohortRef). Each node computes its own sets; two nodes that
// compute one filter write two generations, each reading its own.
type PersonSets struct {
	Persons analytics.PersonIDStore
	Events  analytics.CohortMemberStore
	Now     func() time.Time

	mu   sync.Mutex
	sets map[personSetKey]*personSet
}

type personSetKey struct {
	product int64
	filter  analytics.PersonFilter
}

// personSet is one computed (or computing: done open) set.
type personSet struct {
	done chan struct{}
	ref  analytics.CohortRef
	at   time.Time
	err  error
}

func (p *PersonSets) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Set returns the member set of the product's persons that pass f, fresh
// within PersonSetFresh, computing it if it must. Queries of one filter
// wait for one computation.
func (p *PersonSets) Set(ctx context.Context, productID int64, f analytics.PersonFilter) (analytics.CohortRef, error) {
	k := personSetKey{productID, f}
	now := p.now()
	p.mu.Lock()
	if p.sets == nil {
		p.sets = map[personSetKey]*personSet{}
	}
	s := p.sets[k]
	if s != nil {
		select {
		case <-s.done:
			if s.err != nil || now.Sub(s.at) >= PersonSetFresh {
				s = nil // computed again below
			}
		default: // computing: wait for it
		}
	}
	if s == nil {
		s = &personSet{done: make(chan struct{}), at: now}
		if len(p.sets) >= maxPersonSets {
			p.forgetOldest()
		}
		p.sets[k] = s
		p.mu.Unlock()
		s.ref, s.err = p.compute(context.WithoutCancel(ctx), productID, f, now)
		close(s.done)
	} else {
		p.mu.Unlock()
	}
	select {
	case <-s.done:
		return s.ref, s.err
	case <-ctx.Done():
		return analytics.CohortRef{}, ctx.Err()
	}
}

// forgetOldest drops the set computed longest ago; p.mu is held.
func (p *PersonSets) forgetOldest() {
	var oldest personSetKey
	var at time.Time
	for k, s := range p.sets {
		if at.IsZero() || s.at.Before(at) {
			oldest, at = k, s.at
		}
	}
	delete(p.sets, oldest)
}

// compute writes a new generation of f's set, then deletes the product's
// sets older than PersonSetKeep.
func (p *PersonSets) compute(ctx context.Context, productID int64, f analytics.PersonFilter, now time.Time) (analytics.CohortRef, error) {
	ref := analytics.CohortRef{ProductID: productID, ID: analytics.PersonSetID(f), Generation: now.UnixNano()}
	w := &writer{ctx: ctx, store: p.Events, product: productID, cohort: ref.ID, gen: ref.Generation, batch: make([]string, 0, batchIDs)}
	err := p.Persons.EachPersonID(ctx, productID, []analytics.PersonFilter{f}, w.add)
	if err == nil {
		err = w.flush()
	}
	if err != nil {
		// What was written is never read: the next computation's sweep
		// deletes it.
		return analytics.CohortRef{}, err
	}
	if err := p.Events.DropPersonSets(ctx, productID, now.Add(-PersonSetKeep).UnixNano()); err != nil {
		return analytics.CohortRef{}, err
	}
	return ref, nil
}
