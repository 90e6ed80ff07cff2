package duckdb

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/storetest"
)

// BenchmarkSessions times the sessions query beside a two-line trend over
// the same events (STRATA_SESSIONS_BENCH_EVENTS, default 1 M; see
// storetest.SessionsBenchEvents), and beside the same sessions statement
// reading the session id from a column instead of the JSON properties: the
// gain a session_id column filled at ingest would give. Each is run five
// times, interleaved; the fastest run is reported, as ms.
func BenchmarkSessions(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("STRATA_SESSIONS_BENCH_EVENTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	ctx := context.Background()
	s, err := Open(ctx, b.TempDir(), Options{MemoryLimit: "2GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng, err := storetest.SessionsBenchEvents(n, func(events []analytics.Event) error { return s.AppendEvents(ctx, events) })
	if err != nil {
		b.Fatal(err)
	}
	q := analytics.SessionsQuery{EventRange: rng, Interval: analytics.Day, Limit: 10}
	tq := analytics.TrendQuery{EventRange: rng, Interval: analytics.Day,
		Series: []analytics.TrendSeries{{Event: analytics.PageviewEvent}, {Event: analytics.PageviewEvent, UniqueUsers: true}}}
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
	best := storetest.Fastest{}
	for b.Loop() {
		for range 5 {
			best.Time(b, "trend", func() error { _, err := s.Trend(ctx, tq); return err })
			best.Time(b, "sessions", func() error { _, err := s.Sessions(ctx, q); return err })
			best.Time(b, "sessions-column", func() error {
				rows, err := s.db.QueryContext(ctx, column, args...)
				if err != nil {
					return err
				}
				return storetest.Drain(rows)
			})
		}
	}
	best.Report(b)
}
