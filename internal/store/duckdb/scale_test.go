package duckdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
)

// scaleUsers is how many users the small-pool test loads: each with an
// exposure, the three funnel steps, an exception and for a third of them a
// purchase, about 2.5 M events. It is the number of exposed users that
// decides whether the experiment's query fits: 400,000 of them ran out of a
// 40 MB pool with count(DISTINCT variant) per user.
const scaleUsers = 400_000

// loadScale appends the small-pool test's events: user u acts on day u%28
// of the month from start, a minute apart, in this order: exposure to
// experiment 7 (variant a or b), page_viewed, button_clicked,
// form_submitted, a purchase (converted) for every third user, and an
// exception of one of 1,000 fingerprints. One user in 50 also has an AI
// bot's page view.
func loadScale(t testing.TB, s *Store, users int, start time.Time) {
	ctx := context.Background()
	batch := make([]analytics.Event, 0, 100_000)
	add := func(e analytics.Event) {
		e.UUID, e.ProductID, e.Env, e.ReceivedAt = uuid.New(), 1, analytics.EnvLive, e.Timestamp
		if e.Properties == nil {
			e.Properties = []byte(`{}`)
		}
		batch = append(batch, e)
		if len(batch) == cap(batch) {
			if err := s.AppendEvents(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	for u := range users {
		did := "user_" + strconv.Itoa(u)
		at := start.Add(time.Duration(u%28)*24*time.Hour + time.Duration(u%80_000)*time.Second)
		add(analytics.Event{Timestamp: at, Name: analytics.ExposureEvent, DistinctID: did,
			Properties: fmt.Appendf(nil, `{"experiment_id":7,"variant":%q}`, []string{"a", "b"}[u%2])})
		for i, name := range []string{"page_viewed", "button_clicked", "form_submitted"} {
			add(analytics.Event{Timestamp: at.Add(time.Duration(i+1) * time.Minute), Name: name, DistinctID: did,
				URL: "https://shop.example.com/p" + strconv.Itoa(u%40), Browser: []string{"Chrome", "Firefox", "Safari"}[u%3]})
		}
		if u%3 == 0 {
			add(analytics.Event{Timestamp: at.Add(4 * time.Minute), Name: "purchase", DistinctID: did, Properties: []byte(`{"converted":1}`)})
		}
		add(analytics.Event{Timestamp: at.Add(5 * time.Minute), Name: analytics.ExceptionEvent, DistinctID: did,
			Properties: fmt.Appendf(nil, `{"$exception_fingerprint":"fp%d","$exception_type":"TypeError","$exception_message":"x is undefined"}`, u%1000)})
		if u%50 == 0 {
			add(analytics.Event{Timestamp: at, Name: botPageview, DistinctID: "bot_" + did, IsBot: true, BotName: "GPTBot",
				BotCategory: "ai_crawler", URL: "https://shop.example.com/p" + strconv.Itoa(u%40)})
		}
	}
	if err := s.AppendEvents(ctx, batch); err != nil {
		t.Fatal(err)
	}
}

// TestQueriesInASmallPool runs every kind of query on 400,000 users in a
// 40 MB buffer pool, where the operators that cannot spill (a distinct
// count's state per group) ran out of memory: each must answer, by
// spilling what does not fit, and answer right. It stands for a busy site
// on the default pool, a hundred times the data in a pool a hundred times
// larger. SCALE_DIR keeps the loaded database between runs.
func TestQueriesInASmallPool(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 2.5 M events")
	}
	ctx := context.Background()
	dir := os.Getenv("SCALE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := os.Stat(dir + "/" + FileName); err != nil {
		s, err := Open(ctx, dir, Options{MemoryLimit: "1GB"})
		if err != nil {
			t.Fatal(err)
		}
		loadScale(t, s, scaleUsers, start)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(ctx, dir, Options{MemoryLimit: "40MB", Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: start, To: start.AddDate(0, 0, 30)}
	var days []time.Time
	for d := range 30 {
		days = append(days, start.AddDate(0, 0, d))
	}
	const n = scaleUsers
	for _, c := range []struct {
		name string
		run  func() (string, error)
		want string
	}{
		{"funnel", func() (string, error) {
			got, err := s.Funnel(ctx, analytics.FunnelQuery{EventRange: rng, Steps: []string{"page_viewed", "button_clicked", "form_submitted"}, Window: time.Hour})
			return fmt.Sprint(got), err
		}, fmt.Sprint([]int64{n, n, n})},
		{"unique users by hour and URL", func() (string, error) {
			rows, err := s.Trend(ctx, analytics.TrendQuery{EventRange: rng, Interval: analytics.Hour,
				Series: []analytics.TrendSeries{{Event: "page_viewed", UniqueUsers: true}}, Breakdown: &analytics.Property{Column: "url"}, BreakdownLimit: 10})
			var users int64
			for _, r := range rows {
				users += r.Value
			}
			return fmt.Sprint(users), err
		}, fmt.Sprint(n)}, // each user views one page once
		{"retention", func() (string, error) {
			rows, err := s.Retention(ctx, analytics.RetentionQuery{EventRange: rng, StartEvent: "page_viewed", ReturnEvent: "form_submitted", Period: analytics.Day})
			var cohorts int64
			for _, r := range rows {
				if r.Cohort.Equal(r.Return) {
					cohorts += r.Users
				}
			}
			return fmt.Sprint(cohorts), err
		}, fmt.Sprint(n)},
		{"bots", func() (string, error) {
			bots, pages, err := s.Bots(ctx, analytics.BotsQuery{EventRange: rng, TopPages: 100})
			if err != nil || len(bots) != 1 {
				return fmt.Sprint(bots), err
			}
			return fmt.Sprint(bots[0].Hits, len(pages)), nil
		}, fmt.Sprint(n/50, 4)}, // bots fetch four pages: u%40 of multiples of 50
		{"error groups", func() (string, error) {
			groups, err := s.ErrorGroups(ctx, analytics.ErrorGroupsQuery{EventRange: rng, Days: days, Limit: 2000})
			var users int64
			for _, g := range groups {
				users += g.Users
			}
			return fmt.Sprint(len(groups), users), err
		}, fmt.Sprint(1000, n)},
		{"experiment results", func() (string, error) {
			rows, err := s.ExperimentCounts(ctx, analytics.ExperimentQuery{EventRange: rng, ExperimentID: 7, Metrics: []string{""}})
			exposed := map[string]int64{}
			var converted int64
			for _, r := range rows {
				if r.Metric == -1 {
					exposed[r.Variant] += r.Users
				} else {
					converted += r.Users
				}
			}
			return fmt.Sprint(exposed["a"], exposed["b"], converted), err
		}, fmt.Sprint(n/2, n/2, (n+2)/3)},
		{"user events", func() (string, error) {
			evs, err := s.UserEvents(ctx, analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvLive, DistinctID: "user_3", Limit: 100})
			return fmt.Sprint(len(evs)), err
		}, "6"},
	} {
		got, err := c.run()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestSpillsUnderTheDataDirectory checks where DuckDB spills what outgrows
// its pool: beside the database file, on the filesystem whose free space
// the storage guard watches.
func TestSpillsUnderTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, Options{MemoryLimit: "64MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var temp string
	if err := s.DB().QueryRow("SELECT current_setting('temp_directory')").Scan(&temp); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, FileName) + ".tmp"; temp != want {
		t.Errorf("temp_directory %q, want %q", temp, want)
	}
}
