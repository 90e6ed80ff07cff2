package duckdb

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"strata/internal/analytics"
)

// TestProfileOverview profiles each statement of the Overview over a copy
// of a benchmark's data (STRATA_PROFILE_DIR; never the original: the store
// migrates it). It prints each statement's latency and its costliest
// operators (docs/benchmarks.md, "Reproducing a profile").
func TestProfileOverview(t *testing.T) {
	dir := os.Getenv("STRATA_PROFILE_DIR")
	if dir == "" {
		t.Skip("STRATA_PROFILE_DIR names a copy of a benchmark's data directory")
	}
	ctx := context.Background()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var product int64
	var last time.Time
	if err := s.db.QueryRowContext(ctx, `SELECT any_value(product_id), max(ts) FROM events`).Scan(&product, &last); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, time.Now().Add(-30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.db.SetMaxOpenConns(1)
	out := t.TempDir() + "/profile.json"
	for _, p := range []string{"PRAGMA enable_profiling='json'", "PRAGMA profiling_output='" + out + "'"} {
		if _, err := s.db.ExecContext(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	end := last.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	ranges := map[string]analytics.EventRange{
		"30d": {ProductID: product, Env: "live", From: end.AddDate(0, 0, -30), To: end},
		"15d": {ProductID: product, Env: "live", From: end.AddDate(0, 0, -15), To: end},
	}
	path, country, browser, source := analytics.Property{Column: "path"}, analytics.Property{Column: "country"}, analytics.Property{Column: "browser"}, analytics.Property{Column: "source"}
	for _, rn := range []string{"30d", "15d"} {
		r := ranges[rn]
		run := func(name string, f func() error) {
			for i := 0; i < 3; i++ { // the last run is reported
				start := time.Now()
				if err := f(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if i == 2 {
					fmt.Printf("%s %-28s wall %6.1f ms  %s (kept counts read %d)\n", rn, name, float64(time.Since(start).Microseconds())/1000, summary(out), s.visits.counts.answered.Load())
				}
			}
		}
		pv := analytics.TrendSeries{Event: "$pageview"}
		uv := analytics.TrendSeries{Event: "$pageview", UniqueUsers: true}
		run("trend: visitors", func() error {
			_, err := s.Trend(ctx, analytics.TrendQuery{EventRange: r, Series: []analytics.TrendSeries{uv}, Interval: analytics.Day})
			return err
		})
		run("trend: page views", func() error {
			_, err := s.Trend(ctx, analytics.TrendQuery{EventRange: r, Series: []analytics.TrendSeries{pv}, Interval: analytics.Day})
			return err
		})
		run("sessions", func() error {
			_, err := s.Sessions(ctx, analytics.SessionsQuery{EventRange: r, Interval: analytics.Month, Limit: 10})
			return err
		})
		bd := func(name string, p analytics.Property, series analytics.TrendSeries, f []analytics.Filter) {
			run(name, func() error {
				_, err := s.Trend(ctx, analytics.TrendQuery{EventRange: r, Series: []analytics.TrendSeries{series}, Interval: analytics.Month, Breakdown: &p, BreakdownLimit: 10, Filters: f})
				return err
			})
		}
		bd("top pages", path, pv, nil)
		bd("top sources", source, pv, []analytics.Filter{{Property: source, Operator: analytics.OpIsSet}})
		bd("countries", country, uv, nil)
		bd("browsers", browser, pv, nil)
		run("event names", func() error {
			_, err := s.EventNames(ctx, analytics.EventNamesQuery{EventRange: r, Limit: 100})
			return err
		})
	}
}

// summary reads DuckDB's JSON profile of the last statement: its latency
// and its five costliest operators.
func summary(file string) string {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return err.Error()
	}
	type op struct {
		name string
		sec  float64
		rows float64
	}
	var ops []op
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if name, ok := n["operator_type"].(string); ok {
			sec, _ := n["operator_timing"].(float64)
			rows, _ := n["operator_cardinality"].(float64)
			ops = append(ops, op{name, sec, rows})
		}
		for _, c := range n["children"].([]any) {
			walk(c.(map[string]any))
		}
	}
	walk(root)
	sort.Slice(ops, func(i, j int) bool { return ops[i].sec > ops[j].sec })
	res := fmt.Sprintf("latency %.1f ms cpu %.1f ms:", root["latency"].(float64)*1000, root["cpu_time"].(float64)*1000)
	for i := 0; i < len(ops) && i < 5; i++ {
		res += fmt.Sprintf(" %s %.0fms/%.0fk", ops[i].name, ops[i].sec*1000, ops[i].rows/1000)
	}
	return res
}
