package duckdb

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query/querytest"
	"strata/internal/store/storetest"
)

// TestDropEventsKeptVisits drops every event, then the error occurrences,
// before instants inside kept visits (a cut through the middle of a day,
// so that visits straddle it): the sessions answers equal the reference
// over the events left at once, and again after the next refresh, which
// reads the kept visits again. The drop of every event keeps the table
// exact in place: the answer reads it at once and the refresh after it
// builds no visit. A product dropped before its first refresh too.
func TestDropEventsKeptVisits(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	for seed := int64(1); seed <= 12; seed++ {
		ds := querytest.GenerateSessions(seed)
		product := 1500 + seed
		events := slices.Clone(ds.Events)
		for i, e := range ds.Events {
			// An error a minute after an event, and now and then one 20
			// minutes after, which may bridge a gap of 30 minutes or more:
			// dropping it splits the visit.
			if i%3 == 0 {
				events = append(events, querytest.Event{Name: analytics.ExceptionEvent, DistinctID: e.DistinctID, Time: e.Time.Add(time.Minute), Test: e.Test})
			}
			if i%4 == 1 {
				events = append(events, querytest.Event{Name: analytics.ExceptionEvent, DistinctID: e.DistinctID, Time: e.Time.Add(20 * time.Minute), Test: e.Test,
					Properties: e.Properties})
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
		if _, err := s.DropEventsBefore(ctx, product, "", cut); err != nil {
			t.Fatal(err)
		}
		left := slices.DeleteFunc(slices.Clone(events), func(e querytest.Event) bool { return e.Time.Before(cut) })
		// The visits through the cut were made exact in place: the answer
		// reads the table at once, and the next refresh builds nothing.
		if !checkSessions(t, s, product, left, from, to, ds.Interval, ds.Limit, "after dropping events") {
			t.Errorf("seed %d: the answer after the drop did not read kept visits", seed)
		}
		if n, err := s.RefreshVisits(ctx, ds.To.AddDate(0, 0, 3)); err != nil || n != 0 {
			t.Errorf("seed %d: the refresh after the drop built %d visits, %v; want none", seed, n, err)
		}
		if _, err := s.DropEventsBefore(ctx, product, analytics.ExceptionEvent, errCut); err != nil {
			t.Fatal(err)
		}
		left = slices.DeleteFunc(left, func(e querytest.Event) bool {
			return e.Name == analytics.ExceptionEvent && e.Time.Before(errCut)
		})
		// The visits that lost one were built again in place, as above.
		if !checkSessions(t, s, product, left, from, to, ds.Interval, ds.Limit, "after dropping errors") {
			t.Errorf("seed %d: the answer after dropping errors did not read kept visits", seed)
		}
		if n, err := s.RefreshVisits(ctx, ds.To.AddDate(0, 0, 3)); err != nil || n != 0 {
			t.Errorf("seed %d: the refresh after dropping errors built %d visits, %v; want none", seed, n, err)
		}
		if !checkSessions(t, s, product, left, from, to, ds.Interval, ds.Limit, "after the next refresh") {
			t.Errorf("seed %d: the answer did not read kept visits after the refresh", seed)
		}
		// A scope whose visits are not kept yet: the drop marks, and the
		// first refresh builds them from what is left.
		fresh := product + 100
		if err := s.AppendEvents(ctx, storetest.StoreEvents(fresh, events)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DropEventsBefore(ctx, fresh, "", cut); err != nil {
			t.Fatal(err)
		}
		left = slices.DeleteFunc(slices.Clone(events), func(e querytest.Event) bool { return e.Time.Before(cut) })
		checkSessions(t, s, fresh, left, from, to, ds.Interval, ds.Limit, "a drop before any refresh")
		if _, err := s.RefreshVisits(ctx, ds.To.AddDate(0, 0, 3)); err != nil {
			t.Fatal(err)
		}
		if !checkSessions(t, s, fresh, left, from, to, ds.Interval, ds.Limit, "a drop before any refresh, refreshed") {
			t.Errorf("seed %d: the answer did not read kept visits after the first refresh", seed)
		}
	}
}

// TestDropEventsPastHorizon cuts through a kept visit at a time past the
// horizon, which an open visit holds back: the table cannot be cut in
// place, so the drop marks the cut, and the answer leaves the kept visit
// to the statement until the next refresh builds it again.
func TestDropEventsPastHorizon(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	const product = 1700
	var events []querytest.Event
	for m := 60; m <= 11*60; m += 20 {
		events = append(events, pageview("a", at(0, m), "/a")) // 01:00–11:00: closed by 11:50
	}
	for m := 3 * 60; m <= 11*60+40; m += 20 {
		events = append(events, pageview("b", at(0, m), "/b")) // 03:00–11:40: still open at 11:50
	}
	if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, at(11, 50)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, events, visitDay, visitDay, "hour", 5, "kept") {
		t.Fatal("the answer did not read kept visits")
	}
	cut := at(6, 0) // past the horizon, 03:00, through a's kept visit
	if _, err := s.DropEventsBefore(ctx, product, "", cut); err != nil {
		t.Fatal(err)
	}
	left := slices.DeleteFunc(slices.Clone(events), func(e querytest.Event) bool { return e.Time.Before(cut) })
	checkSessions(t, s, product, left, visitDay, visitDay, "hour", 5, "after the drop")
	if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, left, visitDay, visitDay, "hour", 5, "after the next refresh") {
		t.Error("the answer did not read kept visits after the refresh")
	}
}

// TestDropEventsMeasure measures a retention drop on a copy of a large
// data directory named by RETENTION_DIR (it is changed: pass a copy):
// the visits kept first, as a running server has them, then the drop of
// the first 30 days (RETENTION_DROP_DAYS) of the product with the most
// events, the refresh
// after it, and a checkpoint. It checks that exactly the events before the
// cut went. Without RETENTION_DIR it measures nothing.
func TestDropEventsMeasure(t *testing.T) {
	dir := os.Getenv("RETENTION_DIR")
	if dir == "" {
		t.Skip("RETENTION_DIR names no copy of a data directory to drop events from")
	}
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var product, total int64
	var first, last time.Time
	if err := s.DB().QueryRow(`SELECT product_id, count(*), min(ts), max(ts) FROM events GROUP BY product_id ORDER BY count(*) DESC LIMIT 1`).
		Scan(&product, &total, &first, &last); err != nil {
		t.Fatal(err)
	}
	days := 30
	if v := os.Getenv("RETENTION_DROP_DAYS"); v != "" {
		if days, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	cut := first.UTC().Truncate(24*time.Hour).AddDate(0, 0, days)
	var before int64
	s.DB().QueryRow(`SELECT count(*) FROM events WHERE product_id = $1 AND ts < $2`, product, cut).Scan(&before)
	settled := last.UTC().Add(time.Hour)
	start := time.Now()
	if _, err := s.RefreshVisits(ctx, settled); err != nil {
		t.Fatal(err)
	}
	t.Logf("product %d: %d events from %s to %s; visits kept in %v", product, total, first.Format(time.DateOnly), last.Format(time.DateOnly), time.Since(start))
	start = time.Now()
	n, err := s.DropEventsBefore(ctx, product, "", cut)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dropped %d events before %s in %v", n, cut.Format(time.DateOnly), time.Since(start))
	if n != before {
		t.Errorf("dropped %d events; want the %d before the cut", n, before)
	}
	start = time.Now()
	added, err := s.RefreshVisits(ctx, settled)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the next refresh kept %d visits again in %v", added, time.Since(start))
	// Then the error occurrences of the first days left, when
	// RETENTION_ERRORS_DAYS names how many.
	if v := os.Getenv("RETENTION_ERRORS_DAYS"); v != "" {
		errDays, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		errCut := cut.AddDate(0, 0, errDays)
		start = time.Now()
		n, err := s.DropEventsBefore(ctx, product, analytics.ExceptionEvent, errCut)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("dropped %d error occurrences before %s in %v", n, errCut.Format(time.DateOnly), time.Since(start))
		total -= n
		start = time.Now()
		added, err := s.RefreshVisits(ctx, settled)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the next refresh kept %d visits again in %v", added, time.Since(start))
	}
	start = time.Now()
	if _, err := s.DB().Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	t.Logf("checkpoint in %v", time.Since(start))
	var left int64
	s.DB().QueryRow(`SELECT count(*) FROM events WHERE product_id = $1`, product).Scan(&left)
	if left != total-before {
		t.Errorf("%d events left; want %d", left, total-before)
	}
}
