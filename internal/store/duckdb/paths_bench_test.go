package duckdb

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"strata/internal/analytics"
)

// BenchmarkPaths times the paths query, five deep, over a copy of the
// queries suite's data directory (STRATA_PATHS_BENCH_DATA: a directory of
// strata-bench -query-data, opened and written to, so give it a copy):
// the product with the most events, its last 30 days of events. Each
// query runs five times; the median is reported as ms, with the answer's
// size (docs/benchmarks.md, "Paths").
func BenchmarkPaths(b *testing.B) {
	dir := os.Getenv("STRATA_PATHS_BENCH_DATA")
	if dir == "" {
		b.Skip("STRATA_PATHS_BENCH_DATA is not set: give it a copy of a strata-bench -query-data directory")
	}
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{MemoryLimit: "1GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var product int64
	var last time.Time
	var events int64
	row := s.db.QueryRowContext(ctx, "SELECT product_id, max(ts), count(*) FROM events GROUP BY product_id ORDER BY count(*) DESC LIMIT 1")
	if err := row.Scan(&product, &last, &events); err != nil {
		b.Fatal(err)
	}
	end := last.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	scope := analytics.EventRange{ProductID: product, Env: analytics.EnvLive, From: end.AddDate(0, 0, -30), To: end}
	b.Logf("product %d, %d events, range %s to %s", product, events, scope.From.Format(time.DateOnly), scope.To.Format(time.DateOnly))
	for _, c := range []struct {
		name string
		q    analytics.PathsQuery
	}{
		{"pages from the first page", analytics.PathsQuery{EventRange: scope, Kind: analytics.PathPageviews, Depth: 5, Branches: 5}},
		{"pages after /pricing", analytics.PathsQuery{EventRange: scope, Kind: analytics.PathPageviews, Start: "/pricing", Depth: 5, Branches: 5}},
		{"pages before /signup", analytics.PathsQuery{EventRange: scope, Kind: analytics.PathPageviews, End: "/signup", Depth: 5, Branches: 5}},
		{"events from the first event", analytics.PathsQuery{EventRange: scope, Kind: analytics.PathEvents, Depth: 5, Branches: 5}},
	} {
		var times []time.Duration
		var a analytics.PathsAnswer
		for range 5 {
			start := time.Now()
			if a, err = s.Paths(ctx, c.q); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		var users int64
		for _, n := range a.Nodes {
			if n.Step == 1 {
				users += n.Users
			}
		}
		b.Logf("%s: median %d ms (min %d, max %d); %d users, %d nodes, %d edges", c.name,
			times[2].Milliseconds(), times[0].Milliseconds(), times[4].Milliseconds(), users, len(a.Nodes), len(a.Edges))
	}
}
