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

// pathsRequest is a dataset's paths query as the endpoint takes it.
func pathsRequest(from, to time.Time, p querytest.PathsParams) query.PathsRequest {
	return query.PathsRequest{DateFrom: from.Format("2006-01-02"), DateTo: to.Format("2006-01-02"), Kind: p.Kind,
		Start: p.Start, End: p.End, Depth: p.Depth, Branches: p.Branches, Filters: filterRequests(p.Filters)}
}

// pathsAnswer runs a paths query on the store and returns the answer in
// the reference's terms, sorted as the reference sorts it.
func pathsAnswer(t *testing.T, s Events, q analytics.PathsQuery) querytest.PathsResult {
	t.Helper()
	a, err := s.Paths(context.Background(), q)
	if err != nil {
		t.Fatalf("Paths: %v", err)
	}
	var res querytest.PathsResult
	for _, n := range a.Nodes {
		res.Nodes = append(res.Nodes, querytest.PathNode(n))
	}
	for _, e := range a.Edges {
		res.Edges = append(res.Edges, querytest.PathEdge(e))
	}
	querytest.SortPaths(&res)
	return res
}

// pathUsersAnswer pages through a node's users on the store, limit at a
// time, and returns them all in the reference's terms.
func pathUsersAnswer(t *testing.T, s Events, q analytics.PathUsersQuery, limit int) []querytest.PathUser {
	t.Helper()
	var out []querytest.PathUser
	q.Limit = limit
	for range 100 {
		page, err := s.PathUsers(context.Background(), q)
		if err != nil {
			t.Fatalf("PathUsers: %v", err)
		}
		for _, u := range page {
			out = append(out, querytest.PathUser{DistinctID: u.DistinctID, Time: time.UnixMicro(u.Micros).UTC()})
		}
		if len(page) < limit {
			return out
		}
		last := page[len(page)-1]
		q.BeforeMicros, q.BeforeID = last.Micros, last.DistinctID
	}
	t.Fatal("PathUsers did not reach the last page in 100 pages")
	return nil
}

// RunPaths runs the paths conformance cases of the first seeds datasets
// alone on a fresh store, for a store that computes paths in ways a
// tunable of its own chooses between (DuckDB's horizon, TestPathsHorizons).
func RunPaths(t *testing.T, s Events, seeds int) { comparePaths(context.Background(), t, s, seeds) }

// pathSeeds is how many random datasets the conformance suite asks for
// paths: each is two queries and then every node's users, a page at a
// time, so they cost more than the other queries' datasets.
const pathSeeds = 24

func testPaths(ctx context.Context, t *testing.T, s Events) {
	comparePaths(ctx, t, s, int(datasets(pathSeeds)))
}

// comparePaths runs the paths query on the store for seeded random datasets,
// live and test, some in a time zone other than UTC, and compares each answer with the reference in
// querytest; then pages through the users of every node and compares them
// too. Every dataset is its own product.
func comparePaths(ctx context.Context, t *testing.T, s Events, seeds int) {
	for seed := int64(1); seed <= int64(seeds); seed++ {
		ds := querytest.GeneratePaths(seed)
		p := analytics.Product{ID: 900 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		// Every fourth dataset is asked in a zone whose days are not UTC's:
		// the range's edges move with it.
		zone := "UTC"
		if seed%4 == 0 {
			zone = []string{"America/New_York", "Asia/Kolkata", "Pacific/Chatham"}[seed/4%3]
		}
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			test := env == analytics.EnvTest
			scope := zoneScope(t, p.ID, env, zone)
			q, err := pathsRequest(ds.From, ds.To, ds.Params).Query(scope, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got := pathsAnswer(t, s, q)
			want := querytest.Paths(scope.Location(), ds.Events, test, ds.Params, ds.From, ds.To)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d %s, %+v:\n got %+v\nwant %+v", seed, env, ds.Params, got, want)
				continue
			}
			for _, n := range want.Nodes {
				uq := analytics.PathUsersQuery{PathsQuery: q, Step: n.Step, Name: n.Name, Other: n.Other}
				gotUsers := pathUsersAnswer(t, s, uq, 1+int(seed%3))
				wantUsers := querytest.PathUsers(scope.Location(), ds.Events, test, ds.Params, ds.From, ds.To, n.Step, n.Name, n.Other)
				if !reflect.DeepEqual(gotUsers, wantUsers) {
					t.Errorf("seed %d %s, users of %+v:\n got %+v\nwant %+v", seed, env, n, gotUsers, wantUsers)
				}
			}
		}
	}
}
