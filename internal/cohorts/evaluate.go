package cohorts

import (
	"context"
	"errors"
	"iter"
	"time"

	"strata/internal/analytics"
)

// Evaluate streams the members of a dynamic definition at time now to
// emit, in byte order of the ids, each once. Memory stays bounded: every
// group's persons (those passing its property conditions) come from the
// metadata store and every behaviour condition's persons from the event
// store, each a stream sorted by id; a merge walk advances them together
// and decides one person at a time. No set is held in Go.
//
// A person is a member when, for some group, it is one of the group's
// persons and, for each of the group's behaviour conditions, it is in
// that condition's stream (performed) or not (not performed). Behaviour
// conditions count the human events of the product's live environment
// since now minus Days days.
func Evaluate(ctx context.Context, persons analytics.PersonIDStore, events analytics.CohortMemberStore, productID int64,
	def analytics.CohortDefinition, now time.Time, emit func(string) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type behavior struct {
		cond analytics.CohortCondition
		s    *stream
	}
	type group struct {
		s         *stream
		behaviors []behavior
	}
	var groups []group
	var all []*stream
	defer func() {
		for _, s := range all {
			s.stop()
		}
	}()
	for _, g := range def.Groups {
		var filters []analytics.PersonFilter
		var gr group
		for _, c := range g.Conditions {
			switch c.Type {
			case analytics.CohortProperty:
				filters = append(filters, c.Filter())
			case analytics.CohortBehavior:
				q := analytics.BehaviorQuery{ProductID: productID, Event: c.Event, AtLeast: max(c.AtLeast, 1),
					Since: now.Add(-time.Duration(c.Days) * 24 * time.Hour)}
				s := open(func(fn func(string) error) error { return events.EachBehaviorPerson(ctx, q, fn) })
				all = append(all, s)
				gr.behaviors = append(gr.behaviors, behavior{c, s})
			}
		}
		gr.s = open(func(fn func(string) error) error { return persons.EachPersonID(ctx, productID, filters, fn) })
		all = append(all, gr.s)
		groups = append(groups, gr)
	}
	for _, s := range all {
		if err := s.next(); err != nil {
			return err
		}
	}
	for {
		// The least id at the head of a group's persons.
		var cur string
		found := false
		for _, g := range groups {
			if g.s.ok && (!found || g.s.id < cur) {
				cur, found = g.s.id, true
			}
		}
		if !found {
			return nil
		}
		member := false
		for _, g := range groups {
			if !g.s.ok || g.s.id != cur {
				continue
			}
			pass := !member
			for _, b := range g.behaviors {
				if !pass {
					break
				}
				if err := b.s.seek(cur); err != nil {
					return err
				}
				did := b.s.ok && b.s.id == cur
				pass = did == b.cond.Did()
			}
			member = member || pass
			if err := g.s.next(); err != nil {
				return err
			}
		}
		if member {
			if err := emit(cur); err != nil {
				return err
			}
		}
	}
}

// stream is a sorted stream of ids pulled one at a time: id is its head
// while ok.
type stream struct {
	pull func() (string, bool)
	stop func()
	err  *error
	id   string
	ok   bool
	last string
	seen bool
}

// errUnsorted says a store streamed ids out of byte order, which would
// make the merge walk wrong.
var errUnsorted = errors.New("a stream of persons is not in byte order")

// open turns a store's push stream into a pull stream.
func open(each func(fn func(string) error) error) *stream {
	var err error
	seq := iter.Seq[string](func(yield func(string) bool) {
		stop := errors.New("stopped")
		e := each(func(id string) error {
			if !yield(id) {
				return stop
			}
			return nil
		})
		if e != nil && e != stop {
			err = e
		}
	})
	pull, stop := iter.Pull(seq)
	return &stream{pull: pull, stop: stop, err: &err}
}

// next moves to the following id.
func (s *stream) next() error {
	s.id, s.ok = s.pull()
	if !s.ok {
		return *s.err
	}
	if s.seen && s.id <= s.last {
		return errUnsorted
	}
	s.last, s.seen = s.id, true
	return nil
}

// seek moves to the first id not less than id.
func (s *stream) seek(id string) error {
	for s.ok && s.id < id {
		if err := s.next(); err != nil {
			return err
		}
	}
	return nil
}
