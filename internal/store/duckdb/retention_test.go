package duckdb

import (
	"context"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query/querytest"
	"strata/internal/store/storetest"
)

// TestDropEventsKeptVisits drops error occurrences, then every event,
// before instants inside kept visits (a cut through the middle of a day,
// so that visits straddle it): the sessions answers equal the reference
// over the events left at once, and again after the next refresh, which
// reads the kept visits again.
func TestDropEventsKeptVisits(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	for seed := int64(1); seed <= 12; seed++ {
		ds := querytest.GenerateSessions(seed)
		product := 1500 + seed
		events := slices.Clone(ds.Events)
		for i, e := range ds.Events {
			if i%3 == 0 {
				events = append(events, querytest.Event{Name: analytics.ExceptionEvent, DistinctID: e.DistinctID, Time: e.Time.Add(time.Minute), Test: e.Test})
			}
		}
		if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events)); err != nil {
			t.Fatal(err)
		}
		from, to := ds.From.AddDate(0, 0, -1), ds.To.AddDate(0, 0, 1)
		if _, err := s.RefreshVisits(ctx, ds.To.AddDate(0, 0, 3)); err != nil {
			t.Fatal(err)
		}
		if !checkSessions(t, s, product, events, from, to, ds.Interval, ds.Limit, "kept") {
			t.Fatalf("seed %d: the answer did not read kept visits", seed)
		}
		cut, errCut := ds.From.Add(-9*time.Hour-17*time.Minute), ds.From.Add(20*time.Hour)
		if _, err := s.DropEventsBefore(ctx, product, analytics.ExceptionEvent, errCut); err != nil {
			t.Fatal(err)
		}
		left := slices.DeleteFunc(slices.Clone(events), func(e querytest.Event) bool {
			return e.Name == analytics.ExceptionEvent && e.Time.Before(errCut)
		})
		checkSessions(t, s, product, left, from, to, ds.Interval, ds.Limit, "after dropping errors")
		if _, err := s.DropEventsBefore(ctx, product, "", cut); err != nil {
			t.Fatal(err)
		}
		left = slices.DeleteFunc(left, func(e querytest.Event) bool { return e.Time.Before(cut) })
		checkSessions(t, s, product, left, from, to, ds.Interval, ds.Limit, "after dropping events")
		if _, err := s.RefreshVisits(ctx, ds.To.AddDate(0, 0, 3)); err != nil {
			t.Fatal(err)
		}
		if !checkSessions(t, s, product, left, from, to, ds.Interval, ds.Limit, "after the next refresh") {
			t.Errorf("seed %d: the answer did not read kept visits after the refresh", seed)
		}
	}
}
