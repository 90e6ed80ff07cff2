package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// sessionsOf asks the store for the visits of a range (its first and last
// day), the request parsed as the endpoint parses it, and returns the
// answer in the reference's terms.
func sessionsOf(t *testing.T, s Events, productID int64, env analytics.Env, from, to time.Time, interval string,
	filters []querytest.Filter, limit int) querytest.SessionsResult {
	t.Helper()
	req := query.SessionsRequest{DateFrom: from.Format("2006-01-02"), DateTo: to.Format("2006-01-02"),
		Interval: interval, Filters: filterRequests(filters), Limit: limit}
	q, err := req.Query(analytics.EventRange{ProductID: productID, Env: env}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return sessionsAnswer(t, s, q)
}

// sessionsAnswer runs a sessions query on the store and returns the
// answer in the reference's terms.
func sessionsAnswer(t *testing.T, s Events, q analytics.SessionsQuery) querytest.SessionsResult {
	t.Helper()
	a, err := s.Sessions(context.Background(), q)
	if err != nil {
		t.Fatalf("Sessions: %v", err)
	}
	res := querytest.SessionsResult{Totals: querytest.SessionStats(a.Totals), Visitors: a.Visitors}
	for _, b := range a.Buckets {
		res.Buckets = append(res.Buckets, querytest.SessionBucket{Date: b.Bucket, SessionStats: querytest.SessionStats(b.SessionStats)})
	}
	for _, p := range a.Entry {
		res.Entry = append(res.Entry, querytest.SessionPage{Path: p.Path, SessionStats: querytest.SessionStats(p.SessionStats)})
	}
	for _, p := range a.Exit {
		res.Exit = append(res.Exit, querytest.SessionPage{Path: p.Path, SessionStats: querytest.SessionStats(p.SessionStats)})
	}
	return res
}

// testSessions runs the sessions query on the store for seeded random
// datasets, live and test, and compares each answer with the reference in
// querytest. Every dataset is its own product, so the answers also show
// that no product's visits reach another's.
func testSessions(ctx context.Context, t *testing.T, s Events) {
	for seed := int64(1); seed <= datasets(40); seed++ {
		ds := querytest.GenerateSessions(seed)
		p := analytics.Product{ID: 700 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			got := sessionsOf(t, s, p.ID, env, ds.From, ds.To, ds.Interval, ds.Filters, ds.Limit)
			want := querytest.Sessions(ds.Events, env == analytics.EnvTest, ds.Filters, ds.From, ds.To, ds.Interval, ds.Limit)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d %s by %s, filters %v, limit %d:\n got %+v\nwant %+v", seed, env, ds.Interval, ds.Filters, ds.Limit, got, want)
			}
		}
	}
}

// testSessionCases runs the hand-counted sessions cases on the store.
func testSessionCases(ctx context.Context, t *testing.T, s Events) {
	for i, c := range querytest.SessionCases() {
		p := analytics.Product{ID: 780 + int64(i)}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, c.Events)); err != nil {
			t.Fatal(err)
		}
		if got := sessionsOf(t, s, p.ID, analytics.EnvLive, c.From, c.To, c.Interval, c.Filters, c.Limit); !reflect.DeepEqual(got, c.Want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.Name, got, c.Want)
		}
	}
}

// SessionsOf is sessionsOf for a store's own tests (the DuckDB store's
// kept visits, internal/store/duckdb, visits_test.go).
func SessionsOf(t *testing.T, s Events, productID int64, env analytics.Env, from, to time.Time, interval string,
	filters []querytest.Filter, limit int) querytest.SessionsResult {
	t.Helper()
	return sessionsOf(t, s, productID, env, from, to, interval, filters, limit)
}

// SessionsOfIn is SessionsOf with the dates and buckets of the named
// time zone.
func SessionsOfIn(t *testing.T, s Events, productID int64, env analytics.Env, zone string, from, to time.Time, interval string,
	limit int) querytest.SessionsResult {
	t.Helper()
	req := query.SessionsRequest{DateFrom: from.Format("2006-01-02"), DateTo: to.Format("2006-01-02"), Interval: interval, Limit: limit}
	q, err := req.Query(zoneScope(t, productID, env, zone), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return sessionsAnswer(t, s, q)
}

// StoreEvents is storeEvents for a store's own tests: the dataset's
// events as the store takes them.
func StoreEvents(productID int64, events []querytest.Event) []analytics.Event {
	return storeEvents(productID, events)
}
