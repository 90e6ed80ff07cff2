package duckdb

import (
	"context"
	"strings"
	"testing"

	"strata/internal/store/storetest"
)

// BenchmarkSessions times the sessions query beside a two-line trend over
// the same events (STRATA_SESSIONS_BENCH_EVENTS, default 1 M; see
// storetest.SessionsBenchEvents), and beside the same sessions statement
// reading the session id from a column instead of the JSON properties: the
// gain a session_id column filled at ingest would give. Each is run five
// times, interleaved; the fastest run is reported, as ms.
func BenchmarkSessions(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, b.TempDir(), Options{MemoryLimit: "2GB"})
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
	// The estimate's column, filled as ingest would fill it.
	if _, err := s.db.ExecContext(ctx, "ALTER TABLE events ADD COLUMN bench_sid VARCHAR"); err != nil {
		b.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "UPDATE events SET bench_sid = json_extract_string(properties, $1)", args[0]); err != nil {
		b.Fatal(err)
	}
	// ($1, the JSON pointer, stays in the statement, so that the arguments
	// bound are still those it reads.)
	column := strings.Replace(stmt, "json_extract_string(properties, $1)", "CASE WHEN $1 = '' THEN NULL ELSE bench_sid END", 1)
	storetest.TimeSessions(b, s, q, tq, func() error {
		rows, err := s.db.QueryContext(ctx, column, args...)
		if err != nil {
			return err
		}
		return storetest.Drain(rows)
	})
}
