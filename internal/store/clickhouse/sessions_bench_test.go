package clickhouse

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/storetest"
)

// BenchmarkSessions is the DuckDB store's BenchmarkSessions on one real
// server: the sessions query beside a two-line trend over the same events,
// and beside the same statement reading the session id from a column
// (MATERIALIZED from the property arrays, then written by OPTIMIZE FINAL)
// instead of prop_values[indexOf(prop_keys, …)]: what a session_id column
// filled at ingest would give. Fastest of five interleaved runs, as ms.
func BenchmarkSessions(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, chtest.Shared(b).URL("strata_sessions_bench_"+strconv.FormatInt(time.Now().UnixNano(), 36), ""))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	q, tq := storetest.SessionsBench(b, s)
	var stmt string
	var args []any
	s.traceSQL = func(q string, a []any) { stmt, args = q, a }
	if _, err := s.Sessions(ctx, q); err != nil {
		b.Fatal(err)
	}
	s.traceSQL = nil
	if err := s.conn.Exec(ctx, "ALTER TABLE "+s.table+" ADD COLUMN bench_sid String MATERIALIZED prop_values[indexOf(prop_keys, '$session_id')]"); err != nil {
		b.Fatal(err)
	}
	if err := s.conn.Exec(ctx, "OPTIMIZE TABLE "+s.table+" FINAL"); err != nil {
		b.Fatal(err)
	}
	i := strings.Index(stmt, "prop_values[indexOf(prop_keys, ")
	j := -1
	if i >= 0 {
		j = strings.Index(stmt[i:], ")]")
	}
	if j < 0 {
		b.Fatal("no session id expression in ", stmt)
	}
	column := stmt[:i] + "bench_sid" + stmt[i+j+2:]
	// The key's placeholder goes with the expression (they are positional).
	k := strings.Count(stmt[:i], "?")
	columnArgs := append(append([]any{}, args[:k]...), args[k+1:]...)
	storetest.TimeSessions(b, s, q, tq, func() error {
		rows, err := s.conn.Query(ctx, column, columnArgs...)
		if err != nil {
			return err
		}
		return storetest.Drain(rows)
	})
}
