package duckdb

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"strata/internal/analytics"
)

func TestZZScratchSessions(t *testing.T) {
	dir := os.Getenv("OVPERF_DIR")
	if dir == "" {
		t.Skip()
	}
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var last string
	var lastArgs []any
	s.traceSQL = func(sql string, args []any) { last, lastArgs = sql, args }
	from := time.Date(2026, 10, 29, 0, 0, 0, 0, time.UTC)
	q := analytics.SessionsQuery{EventRange: analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: from, To: from.AddDate(0, 0, 30)}, Interval: analytics.Month, Limit: 10}
	for i := 0; i < 4; i++ {
		start := time.Now()
		_, err := s.Sessions(ctx, q)
		fmt.Println("sessions", time.Since(start), err, s.visits.answered.Load())
	}
	fmt.Println(last, lastArgs)
	rows, err := s.db.QueryContext(ctx, "EXPLAIN ANALYZE "+last, lastArgs...)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a, b string
		rows.Scan(&a, &b)
		fmt.Println(b)
	}
}
