package storetest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query/querytest"
)

// testProductRetention checks a product's retention periods: zeros until
// set, the last set kept, on that product only, through a change of zone.
func testProductRetention(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	if a.Retention != (analytics.DataRetention{}) {
		t.Errorf("a new product's retention is %+v; want zeros", a.Retention)
	}
	for _, r := range []analytics.DataRetention{{EventsDays: 400, ErrorsDays: 90, ReplaysDays: 7}, {EventsDays: 30, ErrorsDays: 0, ReplaysDays: 14}} {
		if err := s.SetProductRetention(ctx, a.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetProductTimeZone(ctx, a.ID, "Asia/Tokyo"); err != nil {
		t.Fatal(err)
	}
	want := analytics.DataRetention{EventsDays: 30, ReplaysDays: 14}
	if got, err := s.Product(ctx, a.ID); err != nil || got.Retention != want || got.TimeZone != "Asia/Tokyo" {
		t.Errorf("Product after SetProductRetention = %+v, %v; want retention %+v", got, err, want)
	}
	if got, _ := s.Product(ctx, b.ID); got.Retention != (analytics.DataRetention{}) {
		t.Errorf("another product's retention: %+v", got.Retention)
	}
	list, err := s.ListProducts(ctx, a.WorkspaceID)
	if err != nil || !slices.ContainsFunc(list, func(p analytics.Product) bool { return p.ID == a.ID && p.Retention == want }) {
		t.Errorf("ListProducts = %+v, %v", list, err)
	}
	if err := s.SetProductRetention(ctx, a.ID+b.ID+100, want); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("SetProductRetention(unknown) = %v; want ErrNotFound", err)
	}
}

// testDropEvents drops a product's error occurrences, then all its events,
// before two instants: exactly those go (the stored events and the
// sessions answers equal the reference's on what is left), the same
// events of another product stay, and a second drop finds nothing.
func testDropEvents(ctx context.Context, t *testing.T, s Events) {
	rs, ok := s.(analytics.RetentionStore)
	if !ok {
		t.Fatal("the events store has no DropEventsBefore")
	}
	for seed := int64(1); seed <= 4; seed++ {
		ds := querytest.GenerateSessions(seed)
		all := slices.Clone(ds.Events)
		for i, e := range ds.Events {
			if i%4 == 0 {
				all = append(all, querytest.Event{Name: analytics.ExceptionEvent, DistinctID: e.DistinctID, Time: e.Time.Add(time.Second), Test: e.Test})
			}
		}
		product, other := 1200+seed, 1300+seed
		for _, p := range []int64{product, other} {
			if err := s.AppendEvents(ctx, storeEvents(p, all)); err != nil {
				t.Fatal(err)
			}
		}
		cut, errCut := ds.From.Add(6*time.Hour), ds.From.Add(30*time.Hour)
		var want []int
		var errs, olds int64
		for i, e := range all {
			switch {
			case e.Time.Before(cut):
				olds++
			case e.Name == analytics.ExceptionEvent && e.Time.Before(errCut):
				errs++
			default:
				want = append(want, i)
			}
		}
		if olds == 0 || errs == 0 {
			t.Fatalf("seed %d: the dataset has %d events before the cut and %d error occurrences after; want some of each", seed, olds, errs)
		}
		if n, err := rs.DropEventsBefore(ctx, product, analytics.ExceptionEvent, errCut); err != nil {
			t.Fatal(err)
		} else if oldErrs := countBefore(all, analytics.ExceptionEvent, cut); n != errs+oldErrs {
			t.Errorf("seed %d: dropped %d error occurrences; want %d", seed, n, errs+oldErrs)
		}
		if n, err := rs.DropEventsBefore(ctx, product, "", cut); err != nil {
			t.Fatal(err)
		} else if oldErrs := countBefore(all, analytics.ExceptionEvent, cut); n != olds-oldErrs {
			t.Errorf("seed %d: dropped %d events; want %d", seed, n, olds-oldErrs)
		}
		if n, err := rs.DropEventsBefore(ctx, product, "", cut); err != nil || n != 0 {
			t.Errorf("seed %d: a second drop = %d, %v; want 0", seed, n, err)
		}
		stored := storedIndexes(ctx, t, s, len(all))
		if !reflect.DeepEqual(stored[product], want) {
			t.Errorf("seed %d: %d events left; want %d", seed, len(stored[product]), len(want))
		}
		if len(stored[other]) != len(all) {
			t.Errorf("seed %d: another product has %d events; want %d", seed, len(stored[other]), len(all))
		}
		left := make([]querytest.Event, len(want))
		for i, w := range want {
			left[i] = all[w]
		}
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			got := sessionsOf(t, s, product, env, ds.From, ds.To, ds.Interval, nil, ds.Limit)
			ref := querytest.Sessions(left, env == analytics.EnvTest, nil, ds.From, ds.To, ds.Interval, ds.Limit)
			if !reflect.DeepEqual(got, ref) {
				t.Errorf("seed %d %s sessions after the drops:\n got %+v\nwant %+v", seed, env, got, ref)
			}
		}
	}
}

// countBefore counts the events named name before t.
func countBefore(events []querytest.Event, name string, t time.Time) (n int64) {
	for _, e := range events {
		if e.Name == name && e.Time.Before(t) {
			n++
		}
	}
	return n
}

// storedIndexes reads back every stored event and returns, per product,
// the indexes storeEvents gave them (in its UUIDs), in order.
func storedIndexes(ctx context.Context, t *testing.T, s Events, n int) map[int64][]int {
	t.Helper()
	out := map[int64][]int{}
	err := s.RecentUUIDs(ctx, time.Time{}, 1<<20, func(productID int64, id [16]byte) error {
		out[productID] = append(out[productID], int(id[0])<<8|int(id[1]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range out {
		slices.Sort(out[p])
	}
	return out
}
