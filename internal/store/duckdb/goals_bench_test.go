package duckdb

import (
	"context"
	"testing"

	"strata/internal/store/storetest"
)

// BenchmarkGoals times the Overview's goals query and a goal's breakdown
// beside a two-line trend over the same events (storetest.TimeGoals;
// STRATA_SESSIONS_BENCH_EVENTS, default 1 M). Fastest of five interleaved
// runs, as ms.
func BenchmarkGoals(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir(), Options{MemoryLimit: "2GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.TimeGoals(b, s)
}
