package duckdb

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query/querytest"
	"strata/internal/store/storetest"
)

// TestUniqueUserPlansAgree checks that the ways the store counts unique
// users per bucket (activity masks, with a breakdown or not, bitmaps,
// count(DISTINCT)) give the same rows; the conformance suite compares the
// chosen plan with the reference, and this pins the ones it does not
// choose.
func TestUniqueUserPlansAgree(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for seed := int64(1); seed <= 20; seed++ {
		ds := querytest.Generate(seed)
		var events []analytics.Event
		for i, e := range ds.Events {
			ev := userEvent(seed, e.DistinctID, e.Time)
			ev.Name, ev.IsBot = e.Name, e.Bot
			ev.UUID[15] = byte(i)
			events = append(events, ev)
		}
		if err := s.AppendEvents(ctx, events); err != nil {
			t.Fatal(err)
		}
		for _, iv := range []analytics.Interval{analytics.Day, analytics.Week, analytics.Hour} {
			q := analytics.TrendQuery{
				EventRange: analytics.EventRange{ProductID: seed, Env: analytics.EnvLive, From: ds.From, To: ds.To.AddDate(0, 0, 1)},
				Interval:   iv,
				Series:     []analytics.TrendSeries{{Event: ds.Steps[0], UniqueUsers: true}},
			}
			series := q.Series[0]
			var plans [][]analytics.TrendRow
			if len(iv.Buckets(q.From, q.To)) <= maxMaskBuckets {
				rows, err := s.uniqueUsersByMask(ctx, q, 0, series)
				if err != nil {
					t.Fatal(err)
				}
				// The mask plan adds the range's total; the plans below
				// run under a breakdown, which has none. The conformance
				// suite holds the total to the reference.
				rows = slices.DeleteFunc(rows, func(r analytics.TrendRow) bool { return r.Total })
				plans = append(plans, rows)
			}
			// Under a breakdown, trendSeries counts by masks per value
			// (breakdownByMask) within the mask's reach, and past it by
			// bitmaps, or count(DISTINCT) when bitmaps are refused.
			q.Breakdown = &analytics.Property{Column: "browser"}
			q.BreakdownLimit = 100
			if len(iv.Buckets(q.From, q.To)) <= maxMaskBuckets {
				rows, err := s.breakdownByMask(ctx, q, 0, series)
				if err != nil {
					t.Fatal(err)
				}
				plans = append(plans, sumOverBreakdown(rows))
			}
			for _, bitmap := range []bool{true, false} {
				rows, err := s.trendSeries(ctx, q, 0, series, bitmap)
				if err != nil {
					t.Fatal(err)
				}
				plans = append(plans, sumOverBreakdown(rows))
			}
			for _, p := range plans {
				sortRows(p)
			}
			for i := 1; i < len(plans); i++ {
				if !reflect.DeepEqual(plans[0], plans[i]) && !(len(plans[0]) == 0 && len(plans[i]) == 0) {
					t.Errorf("seed %d %s: plan %d gives %v, plan 0 %v", seed, iv, i, plans[i], plans[0])
				}
			}
		}
	}
}

// sumOverBreakdown folds breakdown lines (every user has one browser in
// these datasets: the column is empty) into one line per bucket.
func sumOverBreakdown(rows []analytics.TrendRow) []analytics.TrendRow {
	by := map[time.Time]int64{}
	for _, r := range rows {
		by[r.Bucket] += r.Value
	}
	var out []analytics.TrendRow
	for b, v := range by {
		out = append(out, analytics.TrendRow{Bucket: b, Value: v})
	}
	return out
}

func sortRows(rows []analytics.TrendRow) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].Bucket.Before(rows[j].Bucket) })
}

// TestOutOfMemoryIsMarked runs real queries on a real DuckDB whose memory
// limit is too small for them, and checks that DuckDB's out-of-memory
// failure reaches the engine as analytics.ErrOutOfMemory (which it answers
// with 503 query_too_large), while other failures are not marked.
func TestOutOfMemoryIsMarked(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	var events []analytics.Event
	for i := range 200_000 {
		e := userEvent(1, fmt.Sprintf("user_%d", i%20_000), start.Add(time.Duration(i)*13*time.Second))
		e.Name = []string{"a", "b", "c"}[i%3]
		e.Path = fmt.Sprintf("/page/%d", i%50)
		events = append(events, e)
	}
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	scope := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: start, To: start.AddDate(0, 1, 0)}
	// The queries work within a sensible limit, so what fails below is
	// the memory and nothing else.
	funnel := analytics.FunnelQuery{EventRange: scope, Steps: []string{"a", "b", "c"}, Window: 720 * time.Hour}
	trend := analytics.TrendQuery{EventRange: scope, Interval: analytics.Hour, BreakdownLimit: 10,
		Breakdown: &analytics.Property{Column: "path"},
		Series:    []analytics.TrendSeries{{Event: "a", UniqueUsers: true}, {Event: "b"}}}
	if _, err := s.Funnel(ctx, funnel); err != nil {
		t.Fatalf("funnel within 256MB: %v", err)
	}
	if _, err := s.Trend(ctx, trend); err != nil {
		t.Fatalf("trend within 256MB: %v", err)
	}
	// Reopened with a buffer pool too small for them (the rows written
	// above would not let the limit fall while the store is open).
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, dir, Options{MemoryLimit: "4MB", Threads: 1}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	retention := analytics.RetentionQuery{EventRange: scope, StartEvent: "a", ReturnEvent: "b", Period: analytics.Day}
	for name, run := range map[string]func() error{
		"funnel":    func() error { _, err := s.Funnel(ctx, funnel); return err },
		"trend":     func() error { _, err := s.Trend(ctx, trend); return err },
		"retention": func() error { _, err := s.Retention(ctx, retention); return err },
	} {
		err := run()
		if !errors.Is(err, analytics.ErrOutOfMemory) {
			t.Errorf("%s with a 1MB limit: %v; want it to wrap analytics.ErrOutOfMemory", name, err)
		} else if n := strings.Count(err.Error(), analytics.ErrOutOfMemory.Error()); n != 1 {
			t.Errorf("%s: marked %d times: %v", name, n, err)
		}
	}
	// Any read through the store's connections is marked, the metadata
	// reads' (query.Engine.ReadMeta) as well as the event queries'.
	if _, err := s.DB().QueryContext(ctx, "SELECT length(string_agg(distinct_id || path || repeat(event, 20), ',')) FROM events"); !errors.Is(err, analytics.ErrOutOfMemory) {
		t.Errorf("a plain read with a 4MB limit: %v; want it to wrap analytics.ErrOutOfMemory", err)
	}
	_, err = s.DB().QueryContext(ctx, "SELECT nonsense FROM events")
	if err == nil || errors.Is(err, analytics.ErrOutOfMemory) {
		t.Errorf("a binder error was marked as out of memory: %v", err)
	}
}

// TestGeneratedSQL holds the SQL this store generates for each kind of
// query to testdata/sql (storetest.GoldenSQL; -update rewrites it).
func TestGeneratedSQL(t *testing.T) {
	s, err := Open(context.Background(), t.TempDir(), Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var trace []storetest.Statement
	s.traceSQL = func(sql string, args []any) { trace = append(trace, storetest.Statement{SQL: sql, Args: args}) }
	storetest.GoldenSQL(t, s, &trace)
}

// TestTimesBoundAsTimestamps runs the statements of a few queries under
// EXPLAIN with their parameters and checks that no instant is compared
// as a TIMESTAMPTZ: a time.Time the driver cannot type from the statement
// is bound as one, and DuckDB then casts every row's TIMESTAMP to compare
// (seven times the cost of a scan of 10 M events, docs/benchmarks.md).
func TestTimesBoundAsTimestamps(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	ev := userEvent(1, "u", day.Add(time.Hour))
	ev.Name = analytics.PageviewEvent
	if err := s.AppendEvents(ctx, []analytics.Event{ev}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, day.AddDate(0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	var trace []storetest.Statement
	s.traceSQL = func(sql string, args []any) { trace = append(trace, storetest.Statement{SQL: sql, Args: args}) }
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, zone := range []*time.Location{time.UTC, berlin} {
		scope := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: day, To: day.AddDate(0, 0, 7), Zone: zone}
		path := &analytics.Property{Column: "path"}
		for _, q := range []analytics.TrendQuery{
			{EventRange: scope, Interval: analytics.Day, Series: []analytics.TrendSeries{{Event: analytics.PageviewEvent}}},
			{EventRange: scope, Interval: analytics.Month, Breakdown: path, BreakdownLimit: 5,
				Series: []analytics.TrendSeries{{Event: analytics.PageviewEvent}, {Event: analytics.PageviewEvent, UniqueUsers: true}}},
		} {
			if _, err := s.Trend(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		before := s.visits.answered.Load()
		if _, err := s.Sessions(ctx, analytics.SessionsQuery{EventRange: scope, Interval: analytics.Month, Limit: 5}); err != nil {
			t.Fatal(err)
		}
		if s.visits.answered.Load() == before {
			t.Fatal("the sessions answer did not read kept visits")
		}
	}
	if len(trace) < 6 {
		t.Fatalf("%d statements traced", len(trace))
	}
	for _, st := range trace {
		if plan := explain(t, s, "EXPLAIN ", st); strings.Contains(plan, "TIME ZONE") {
			t.Errorf("the plan compares instants as TIMESTAMPTZ:\n%s\n%s", st.SQL, plan)
		}
	}
}

// explain returns the plan DuckDB gives the statement st under the
// EXPLAIN of how (such as "EXPLAIN (FORMAT json) ").
func explain(t *testing.T, s *Store, how string, st storetest.Statement) string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), how+st.SQL, st.Args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var kind, text string
		if err := rows.Scan(&kind, &text); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(text)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// TestDenseIDsBoundAsUIntegers runs the statements of queries that filter
// on an event's or a user's dense id under EXPLAIN and checks that the
// scan compares the column with a constant: database/sql passes a uint32
// on as an int64, and bound as a BIGINT the parameter made DuckDB cast
// every row's eid to compare (builder.eid).
func TestDenseIDsBoundAsUIntegers(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	var events []analytics.Event
	for i, name := range []string{"a", "b", "c", "a", "b", "c"} {
		ev := userEvent(1, fmt.Sprint("u", i%3), day.Add(time.Duration(i)*time.Hour))
		ev.Name = name
		events = append(events, ev)
	}
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	var trace []storetest.Statement
	s.traceSQL = func(sql string, args []any) { trace = append(trace, storetest.Statement{SQL: sql, Args: args}) }
	scope := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: day, To: day.AddDate(0, 0, 7), Zone: time.UTC}
	if _, err := s.Funnel(ctx, analytics.FunnelQuery{EventRange: scope, Steps: []string{"a", "b", "c"}, Window: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trend(ctx, analytics.TrendQuery{EventRange: scope, Interval: analytics.Day, Series: []analytics.TrendSeries{{Event: "b"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserEvents(ctx, analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvLive, DistinctID: "u1", Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if len(trace) < 3 {
		t.Fatalf("%d statements traced", len(trace))
	}
	for _, st := range trace {
		// JSON, whose filters are not wrapped in boxes.
		p := explain(t, s, "EXPLAIN (FORMAT json) ", st)
		if strings.Contains(p, "CAST(eid") || strings.Contains(p, "CAST(uid") || !strings.Contains(p, "id=") {
			t.Errorf("the plan does not compare the dense ids with constants:\n%s\n%s", st.SQL, p)
		}
	}
}
