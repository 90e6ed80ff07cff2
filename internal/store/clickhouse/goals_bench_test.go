package clickhouse

import (
	"context"
	"strconv"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/storetest"
)

// BenchmarkGoals is the DuckDB store's BenchmarkGoals on one real server.
func BenchmarkGoals(b *testing.B) {
	s, err := Open(context.Background(), chtest.Shared(b).URL("strata_goals_bench_"+strconv.FormatInt(time.Now().UnixNano(), 36), ""))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.TimeGoals(b, s)
}
