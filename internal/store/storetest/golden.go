package storetest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

var updateSQL = flag.Bool("update", false, "rewrite the golden SQL files (testdata/sql/*.sql) from what the store generates")

// Statement is one statement a store ran: its SQL text and parameters.
type Statement struct {
	SQL  string
	Args []any
}

// GoldenSQL runs a fixed set of queries on s, an empty event store whose
// statements trace collects, and compares the statements each query ran
// with testdata/sql/<case>.sql of the store's package. A change to the SQL
// a store generates thus shows in review as a diff of those files; `go
// test -run TestGeneratedSQL -update` rewrites them. The files are the
// exact statements and parameters that ran, with line breaks added before
// the main clauses for reading.
func GoldenSQL(t *testing.T, s Events, trace *[]Statement) {
	ctx := context.Background()
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	// A few events, so that the queries have something to rank and to
	// number (the DuckDB store names events by dense ids).
	var events []analytics.Event
	for i, name := range []string{"$pageview", "signup", "purchase", "$bot_pageview"} {
		e := analytics.Event{ProductID: 1, Env: analytics.EnvLive, Timestamp: day.Add(time.Duration(i) * time.Hour),
			ReceivedAt: day, Name: name, DistinctID: "u1", UserID: ingest.UserID("u1"), URL: "https://example.com/pricing",
			Path: "/pricing", Browser: "Chrome", Properties: json.RawMessage(`{"plan":"pro","seats":3,"$groups":{"company":"acme"}}`)}
		e.UUID[15] = byte(i + 1)
		if name == "$bot_pageview" {
			e.DistinctID, e.UserID, e.IsBot, e.BotName, e.BotCategory = "bot", ingest.UserID("bot"), true, "GPTBot", "ai_crawler"
		}
		events = append(events, e)
	}
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}

	scope := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: day, To: day.AddDate(0, 0, 7)}
	plan := &analytics.Property{Key: "plan"}
	path := &analytics.Property{Column: "path"}
	every := []analytics.Filter{
		{Property: *path, Operator: analytics.OpEq, Value: "/pricing"},
		{Property: analytics.Property{Key: "seats"}, Operator: analytics.OpEq, Value: 3.0},
		{Property: *plan, Operator: analytics.OpNeq, Value: "free"},
		{Property: analytics.Property{Column: "url"}, Operator: analytics.OpContains, Value: "example"},
		{Property: analytics.Property{Column: "referrer"}, Operator: analytics.OpNotContains, Value: "spam"},
		{Property: analytics.Property{Column: "browser"}, Operator: analytics.OpRegex, Value: "^Chr"},
		{Property: analytics.Property{Key: "seats"}, Operator: analytics.OpGt, Value: 1.0},
		{Property: analytics.Property{Key: "seats"}, Operator: analytics.OpLt, Value: 10.0},
		{Property: *plan, Operator: analytics.OpIsSet},
		{Property: analytics.Property{Key: "coupon"}, Operator: analytics.OpIsNotSet},
	}
	trend := func(iv analytics.Interval, breakdown *analytics.Property, series ...analytics.TrendSeries) analytics.TrendQuery {
		q := analytics.TrendQuery{EventRange: scope, Series: series, Interval: iv, Breakdown: breakdown}
		if breakdown != nil {
			q.BreakdownLimit = 5
		}
		return q
	}
	cases := []struct {
		name string
		run  func() error
	}{
		{"funnel", func() error {
			_, err := s.Funnel(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour})
			return err
		}},
		{"funnel_groups", func() error {
			_, err := s.Funnel(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour, AggregateBy: "company"})
			return err
		}},
		{"funnel_step_filters", func() error {
			_, err := s.Funnel(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "$pageview", "purchase"}, Window: 24 * time.Hour,
				StepFilters: [][]analytics.Filter{
					{{Property: analytics.Property{Column: "path"}, Operator: analytics.OpEq, Value: "/pricing"}},
					{{Property: analytics.Property{Column: "path"}, Operator: analytics.OpEq, Value: "/signup"}},
					{{Property: analytics.Property{Key: "plan"}, Operator: analytics.OpIsSet}}}})
			return err
		}},
		{"funnel_exclusion_breakdown", func() error {
			_, err := s.FunnelRows(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour,
				Exclusions:     []analytics.FunnelExclusion{{Event: "logout", FromStep: 0, ToStep: 2}},
				Breakdown:      &analytics.Property{Column: "browser"},
				BreakdownLimit: 5})
			return err
		}},
		{"funnel_times", func() error {
			_, err := s.FunnelTimes(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour,
				Exclusions: []analytics.FunnelExclusion{{Event: "logout", FromStep: 1, ToStep: 2}}})
			return err
		}},
		{"funnel_over_time_week", func() error {
			_, err := s.FunnelOverTime(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour, OverTime: analytics.Week})
			return err
		}},
		{"funnel_times_breakdown", func() error {
			_, err := s.FunnelTimes(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour,
				Exclusions: []analytics.FunnelExclusion{{Event: "logout", FromStep: 1, ToStep: 2}},
				Breakdown:  &analytics.Property{Column: "browser"}, BreakdownLimit: 2, TopValues: []string{"Chrome", ""}})
			return err
		}},
		{"funnel_over_time_day_breakdown", func() error {
			_, err := s.FunnelOverTime(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour, OverTime: analytics.Day,
				Breakdown: plan, BreakdownLimit: 2, TopValues: []string{"pro", "free"}})
			return err
		}},
		// The store ranks the values itself (analytics.FunnelRanker);
		// a store that does not reads no TopValues: every user is other.
		{"funnel_times_ranked", func() error {
			_, err := s.FunnelTimes(ctx, analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour,
				Exclusions: []analytics.FunnelExclusion{{Event: "logout", FromStep: 1, ToStep: 2}},
				Breakdown:  &analytics.Property{Column: "browser"}, BreakdownLimit: 3, RankTop: true})
			return err
		}},
		{"funnel_users_dropped_value_page", func() error {
			value := "Firefox"
			_, err := s.FunnelUsers(ctx, analytics.FunnelUsersQuery{FunnelQuery: analytics.FunnelQuery{EventRange: scope,
				Steps: []string{"$pageview", "signup", "purchase"}, Window: 24 * time.Hour,
				Exclusions:     []analytics.FunnelExclusion{{Event: "logout", FromStep: 0, ToStep: 2}},
				Breakdown:      &analytics.Property{Column: "browser"},
				BreakdownLimit: 5},
				Step: 1, Dropped: true, BreakdownValue: &value, BeforeMicros: 1_780_000_000_000_000, BeforeID: "u9", Limit: 51})
			return err
		}},
		{"trend_unique_groups_week", func() error {
			q := trend(analytics.Week, nil, analytics.TrendSeries{Event: "signup", UniqueUsers: true})
			q.AggregateBy = "company"
			_, err := s.Trend(ctx, q)
			return err
		}},
		{"trend_groups_breakdown_day", func() error {
			q := trend(analytics.Day, plan, analytics.TrendSeries{Event: "$pageview"}, analytics.TrendSeries{Event: "$pageview", UniqueUsers: true})
			q.AggregateBy = "company"
			_, err := s.Trend(ctx, q)
			return err
		}},
		{"trend_total_day", func() error {
			_, err := s.Trend(ctx, trend(analytics.Day, nil, analytics.TrendSeries{Event: "$pageview"}))
			return err
		}},
		{"trend_unique_users_week", func() error {
			_, err := s.Trend(ctx, trend(analytics.Week, nil, analytics.TrendSeries{Event: "signup", UniqueUsers: true}))
			return err
		}},
		{"trend_filters_hour", func() error {
			q := trend(analytics.Hour, nil, analytics.TrendSeries{Event: "$pageview", Filters: every[5:]})
			q.Filters = every[:5]
			_, err := s.Trend(ctx, q)
			return err
		}},
		{"trend_breakdown_month", func() error {
			_, err := s.Trend(ctx, trend(analytics.Month, plan,
				analytics.TrendSeries{Event: "$pageview"}, analytics.TrendSeries{Event: "$pageview", UniqueUsers: true}))
			return err
		}},
		{"trend_breakdown_column_day", func() error {
			_, err := s.Trend(ctx, trend(analytics.Day, path, analytics.TrendSeries{Event: "purchase"}))
			return err
		}},
		{"trend_bot_pageview", func() error {
			_, err := s.Trend(ctx, trend(analytics.Day, nil, analytics.TrendSeries{Event: "$bot_pageview"}))
			return err
		}},
		{"retention_week", func() error {
			_, err := s.Retention(ctx, analytics.RetentionQuery{EventRange: scope, StartEvent: "signup",
				ReturnEvent: "$pageview", Period: analytics.Week})
			return err
		}},
		{"bots", func() error {
			_, _, err := s.Bots(ctx, analytics.BotsQuery{EventRange: scope, TopPages: 10})
			return err
		}},
		{"experiment_counts", func() error {
			_, err := s.ExperimentCounts(ctx, analytics.ExperimentQuery{EventRange: scope, ExperimentID: 7,
				Metrics: []string{"", "purchase"}})
			return err
		}},
		{"error_groups", func() error {
			_, err := s.ErrorGroups(ctx, analytics.ErrorGroupsQuery{EventRange: scope, Release: "1.4.2",
				Days: []time.Time{day, day.AddDate(0, 0, 1)}, Limit: 50})
			return err
		}},
		{"error_occurrences", func() error {
			_, err := s.ErrorOccurrences(ctx, analytics.ErrorOccurrencesQuery{EventRange: scope, Fingerprint: "f1", Limit: 50})
			return err
		}},
		{"error_activity", func() error {
			_, err := s.ErrorActivity(ctx, analytics.ErrorActivityQuery{EventRange: analytics.EventRange{ProductID: 1,
				Env: analytics.EnvLive, From: day, To: day.Add(169 * time.Hour)}, Recent: day.Add(168 * time.Hour), MinRecent: 10, FirstOnly: true})
			return err
		}},
		{"sessions_day", func() error {
			_, err := s.Sessions(ctx, analytics.SessionsQuery{EventRange: scope, Interval: analytics.Day, Limit: 10})
			return err
		}},
		{"sessions_filters_hour", func() error {
			_, err := s.Sessions(ctx, analytics.SessionsQuery{EventRange: scope, Interval: analytics.Hour, Limit: 5, Filters: every[:2]})
			return err
		}},
		{"paths_start", func() error {
			_, err := s.Paths(ctx, analytics.PathsQuery{EventRange: scope, Kind: analytics.PathPageviews, Start: "/pricing", Depth: 4, Branches: 5})
			return err
		}},
		{"paths_end_events_filters", func() error {
			_, err := s.Paths(ctx, analytics.PathsQuery{EventRange: scope, Kind: analytics.PathEvents, End: "purchase", Depth: 3, Branches: 2,
				Filters: every[:2]})
			return err
		}},
		{"path_users_other", func() error {
			_, err := s.PathUsers(ctx, analytics.PathUsersQuery{PathsQuery: analytics.PathsQuery{EventRange: scope, Kind: analytics.PathPageviews,
				Depth: 2, Branches: 1}, Step: 2, Other: true, BeforeMicros: day.Add(time.Hour).UnixMicro(), BeforeID: "u1", Limit: 51})
			return err
		}},
		{"user_events", func() error {
			_, err := s.UserEvents(ctx, analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvLive, DistinctID: "u1",
				Before: day.Add(2 * time.Hour), Limit: 101})
			return err
		}},
		{"event_names", func() error {
			_, err := s.EventNames(ctx, analytics.EventNamesQuery{EventRange: scope, Limit: 50})
			return err
		}},
		{"live_visitors", func() error {
			_, err := s.LiveVisitors(ctx, analytics.EventRange{ProductID: scope.ProductID, Env: scope.Env,
				From: day.Add(time.Hour), To: day.Add(time.Hour + 6*time.Minute)})
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			*trace = nil
			if err := c.run(); err != nil {
				t.Fatal(err)
			}
			if len(*trace) == 0 {
				t.Fatal("the query ran no traced statement")
			}
			got := formatStatements(*trace)
			file := filepath.Join("testdata", "sql", c.name+".sql")
			if *updateSQL {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("the SQL generated differs from %s (run with -update and review the diff):\n%s", file, got)
			}
		})
	}
}

// clauseRE finds where formatStatements breaks a line: before the main
// clauses of a statement.
var clauseRE = regexp.MustCompile(` (FROM|WHERE|GROUP BY|ORDER BY|LIMIT|UNION ALL|HAVING|LEFT JOIN|JOIN) `)

// formatStatements writes statements for reading: each clause on its own
// line, then the parameters in a comment, one per line.
func formatStatements(stmts []Statement) string {
	var sb strings.Builder
	for i, st := range stmts {
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(clauseRE.ReplaceAllString(st.SQL, "\n  $1 "))
		sb.WriteString(";\n")
		for n, a := range st.Args {
			fmt.Fprintf(&sb, "-- %d: %T %v\n", n+1, a, a)
		}
	}
	return sb.String()
}
