package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// testSavedQueries checks saved query storage, scoped by product.
func testSavedQueries(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	q := analytics.SavedQuery{ProductID: a.ID, Kind: analytics.QueryFunnel, Name: "Signup",
		Definition: json.RawMessage(`{"steps":["a","b"]}`)}
	if err := s.CreateSavedQuery(ctx, &q); err != nil || q.ID == 0 || q.CreatedAt.IsZero() {
		t.Fatalf("create: %v %+v", err, q)
	}
	got, err := s.SavedQuery(ctx, a.ID, q.ID)
	if err != nil || got.Name != "Signup" || string(got.Definition) != `{"steps":["a","b"]}` || got.Kind != analytics.QueryFunnel {
		t.Errorf("get: %v %+v", err, got)
	}
	if _, err := s.SavedQuery(ctx, b.ID, q.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's query: %v, want ErrNotFound", err)
	}
	q.Name, q.Definition = "Renamed", json.RawMessage(`{"steps":["a","c"]}`)
	if err := s.UpdateSavedQuery(ctx, &q); err != nil {
		t.Fatal(err)
	}
	other := q
	other.ProductID = b.ID
	if err := s.UpdateSavedQuery(ctx, &other); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("update through another product: %v, want ErrNotFound", err)
	}
	q2 := analytics.SavedQuery{ProductID: a.ID, Kind: analytics.QueryTrend, Name: "T", Definition: json.RawMessage(`{}`)}
	s.CreateSavedQuery(ctx, &q2)
	list, err := s.ListSavedQueries(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != q2.ID || list[1].Name != "Renamed" {
		t.Errorf("list: %v %+v", err, list)
	}
	if list, _ := s.ListSavedQueries(ctx, b.ID); len(list) != 0 {
		t.Errorf("B lists %d queries", len(list))
	}
	if err := s.DeleteSavedQuery(ctx, b.ID, q.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("delete through another product: %v", err)
	}
	if err := s.DeleteSavedQuery(ctx, a.ID, q.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SavedQuery(ctx, a.ID, q.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

// storeEvents converts reference events to stored events of a product.
func storeEvents(productID int64, events []querytest.Event) []analytics.Event {
	out := make([]analytics.Event, len(events))
	for i, e := range events {
		props := []byte("{}")
		if e.Properties != nil {
			props, _ = json.Marshal(e.Properties)
		}
		env := analytics.EnvLive
		if e.Test {
			env = analytics.EnvTest
		}
		out[i] = analytics.Event{
			UUID: [16]byte{byte(i >> 8), byte(i), byte(productID)}, ProductID: productID, Env: env,
			Timestamp: e.Time, ReceivedAt: e.Time, Name: e.Name, DistinctID: e.DistinctID,
			UserID: ingest.UserID(e.DistinctID), URL: e.URL, Path: e.Path, Referrer: e.Referrer,
			Browser: e.Browser, OS: e.OS, DeviceType: e.DeviceType, IsBot: e.Bot, Properties: props,
			Source: e.Source, Channel: e.Channel, UTMSource: e.UTMSource, UTMMedium: e.UTMMedium, UTMCampaign: e.UTMCampaign,
			Country: e.Country, Region: e.Region, City: e.City, ScreenClass: e.ScreenClass,
		}
		if e.Bot {
			out[i].BotName, out[i].BotCategory = "GPTBot", "ai_crawler"
		}
	}
	return out
}

// testQueries runs the query engine on the store for seeded random
// datasets and compares each answer with the reference in querytest.
func testQueries(ctx context.Context, t *testing.T, s Events) {
	engine := &query.Engine{Store: s}
	for seed := int64(1); seed <= datasets(40); seed++ {
		ds := querytest.Generate(seed)
		// Each dataset is its own product, so the queries also prove that
		// one product never sees another's events.
		p := analytics.Product{ID: 100 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			test := env == analytics.EnvTest
			scope := analytics.EventRange{ProductID: p.ID, Env: env, From: ds.From, To: ds.To.AddDate(0, 0, 1)}

			fq := analytics.FunnelQuery{EventRange: scope, Steps: ds.Steps, Window: time.Duration(ds.WindowHours) * time.Hour}
			fr, err := engine.RunFunnel(ctx, fq)
			if err != nil {
				t.Fatal(err)
			}
			want := querytest.Funnel(ds.Events, test, ds.Steps, ds.From, ds.To, ds.WindowHours)
			for i, st := range fr.Steps {
				if st.Count != want[i] {
					t.Errorf("seed %d %s funnel %v: step %d = %d, want %d", seed, env, ds.Steps, i, st.Count, want[i])
				}
			}

			// The same funnel with filters on its steps, sent as a request.
			freq := query.FunnelRequest{Steps: query.EventSteps(ds.Steps), WindowHours: json.RawMessage(strconv.Itoa(ds.WindowHours)),
				DateFrom: ds.From.Format("2006-01-02"), DateTo: ds.To.Format("2006-01-02")}
			refSteps := querytest.PlainSteps(ds.Steps)
			for i := range freq.Steps {
				freq.Steps[i].Where = filterRequests(ds.StepFilters[i])
				refSteps[i].Filters = ds.StepFilters[i]
			}
			sq, err := freq.Query(analytics.EventRange{ProductID: p.ID, Env: env}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, sq); err != nil {
				t.Fatal(err)
			}
			want = querytest.FunnelSteps(time.UTC, ds.Events, test, refSteps, ds.From, ds.To, ds.WindowHours)
			for i, st := range fr.Steps {
				if st.Count != want[i] {
					t.Errorf("seed %d %s funnel %v where %v: step %d = %d, want %d", seed, env, ds.Steps, ds.StepFilters, i, st.Count, want[i])
				}
			}

			// With exclusions, and broken down by the trend's property.
			freq.Steps = query.EventSteps(ds.Steps)
			refSteps = querytest.PlainSteps(ds.Steps)
			if seed%2 == 0 {
				// Half the datasets keep their step filters too.
				for i := range freq.Steps {
					freq.Steps[i].Where = filterRequests(ds.StepFilters[i])
					refSteps[i].Filters = ds.StepFilters[i]
				}
			}
			freq.Exclusions = nil
			for _, x := range ds.Exclusions {
				freq.Exclusions = append(freq.Exclusions, query.FunnelExclusion{Event: x.Event, Where: filterRequests(x.Filters), FromStep: x.FromStep, ToStep: x.ToStep})
			}
			freq.Breakdown, freq.BreakdownLimit = ds.Breakdown, 0
			if ds.Breakdown != "" {
				freq.BreakdownLimit = 2
			}
			if sq, err = freq.Query(analytics.EventRange{ProductID: p.ID, Env: env}, time.Now()); err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, sq); err != nil {
				t.Fatal(err)
			}
			total, rows := querytest.FunnelBreakdown(time.UTC, ds.Events, test, refSteps, ds.Exclusions, ds.Breakdown, 2, ds.From, ds.To, ds.WindowHours)
			what := fmt.Sprintf("seed %d %s funnel %v excluding %v by %q", seed, env, ds.Steps, ds.Exclusions, ds.Breakdown)
			checkFunnelRows(t, what, fr, total, rows)

			// Time to convert, with the exclusions (and the step filters of
			// half the datasets), without the breakdown.
			freq.Breakdown, freq.BreakdownLimit, freq.View = "", 0, "time_to_convert"
			if sq, err = freq.Query(analytics.EventRange{ProductID: p.ID, Env: env}, time.Now()); err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, sq); err != nil {
				t.Fatal(err)
			}
			freq.View = ""
			counts, times := querytest.FunnelTimes(time.UTC, ds.Events, test, refSteps, ds.Exclusions, ds.From, ds.To, ds.WindowHours)
			checkFunnelTimes(t, fmt.Sprintf("seed %d %s funnel %v excluding %v, time to convert", seed, env, ds.Steps, ds.Exclusions), fr, counts, times)

			// Conversion over time, by day or week, with the exclusions.
			freq.View, freq.Interval = "trends", []string{"day", "week"}[seed%2]
			if sq, err = freq.Query(analytics.EventRange{ProductID: p.ID, Env: env}, time.Now()); err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, sq); err != nil {
				t.Fatal(err)
			}
			freq.View, freq.Interval = "", ""
			checkFunnelOverTime(t, fmt.Sprintf("seed %d %s funnel %v excluding %v by %s", seed, env, ds.Steps, ds.Exclusions, sq.OverTime), fr,
				querytest.FunnelOverTime(time.UTC, ds.Events, test, refSteps, ds.Exclusions, ds.From, ds.To, ds.WindowHours, string(sq.OverTime)))

			// Both views again, broken down by the dataset's property (the
			// plan when it has none) with a limit of 1 to 3: each row's
			// times and buckets against the reference's, its rows ranked
			// as the steps view ranks them.
			freq.Breakdown, freq.BreakdownLimit = ds.Breakdown, 1+int(seed%3)
			if freq.Breakdown == "" {
				freq.Breakdown = "properties.plan"
			}
			freq.View = "time_to_convert"
			if sq, err = freq.Query(analytics.EventRange{ProductID: p.ID, Env: env}, time.Now()); err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, sq); err != nil {
				t.Fatal(err)
			}
			counts, times, trows := querytest.FunnelTimesBy(time.UTC, ds.Events, test, refSteps, ds.Exclusions, freq.Breakdown, freq.BreakdownLimit,
				ds.From, ds.To, ds.WindowHours)
			what = fmt.Sprintf("seed %d %s funnel %v excluding %v by %q (%d), time to convert", seed, env, ds.Steps, ds.Exclusions, freq.Breakdown, freq.BreakdownLimit)
			checkFunnelTimesBy(t, what, fr, counts, times, trows)
			freq.View, freq.Interval = "trends", []string{"week", "day"}[seed%2]
			if sq, err = freq.Query(analytics.EventRange{ProductID: p.ID, Env: env}, time.Now()); err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, sq); err != nil {
				t.Fatal(err)
			}
			points, prows := querytest.FunnelOverTimeBy(time.UTC, ds.Events, test, refSteps, ds.Exclusions, freq.Breakdown, freq.BreakdownLimit,
				ds.From, ds.To, ds.WindowHours, freq.Interval)
			what = fmt.Sprintf("seed %d %s funnel %v excluding %v by %q (%d), over time by %s", seed, env, ds.Steps, ds.Exclusions, freq.Breakdown, freq.BreakdownLimit, freq.Interval)
			checkFunnelOverTimeBy(t, what, fr, points, prows)
			freq.View, freq.Interval, freq.Breakdown, freq.BreakdownLimit = "", "", "", 0

			interval := []analytics.Interval{analytics.Day, analytics.Week, analytics.Month, analytics.Hour}[seed%4]
			// Without a breakdown too: only then do the lines carry totals.
			breakdowns := []string{""}
			if ds.Breakdown != "" {
				breakdowns = append(breakdowns, ds.Breakdown)
			}
			for _, breakdown := range breakdowns {
				req := query.TrendRequest{Interval: string(interval), Filters: filterRequests(ds.Filters),
					DateFrom: ds.From.Format("2006-01-02"), DateTo: ds.To.Format("2006-01-02"),
					Series: []query.SeriesRequest{{Event: ds.Steps[0]}, {Event: ds.Steps[1], Math: "unique_users"}}}
				if breakdown != "" {
					req.Breakdown, req.BreakdownLimit = breakdown, 2
				}
				tq, err := req.Query(analytics.EventRange{ProductID: p.ID, Env: env}, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				tr, err := engine.RunTrend(ctx, tq)
				if err != nil {
					t.Fatal(err)
				}
				ref := querytest.Trend(ds.Events, test, []querytest.Series{{Event: ds.Steps[0], Math: "total"},
					{Event: ds.Steps[1], Math: "unique_users"}}, ds.Filters, ds.From, ds.To, string(interval), breakdown, 2)
				if len(tr.Series) != len(ref) {
					t.Errorf("seed %d %s trend by %q: %d lines, want %d", seed, env, breakdown, len(tr.Series), len(ref))
					continue
				}
				for i, l := range tr.Series {
					var values []int64
					for _, p := range l.Data {
						values = append(values, p.Value)
					}
					var wantValues []int64
					for _, p := range ref[i].Data {
						wantValues = append(wantValues, p.Value)
					}
					if l.Event != ref[i].Event || l.Other != ref[i].Other || !reflect.DeepEqual(l.BreakdownValue, ref[i].BreakdownValue) ||
						!reflect.DeepEqual(values, wantValues) {
						t.Errorf("seed %d %s trend line %d: got %s %v %v %v, want %s %v %v %v", seed, env, i,
							l.Event, l.Other, l.BreakdownValue, values, ref[i].Event, ref[i].Other, ref[i].BreakdownValue, wantValues)
					}
					// The whole range's figure: for unique users not the buckets' sum.
					if !reflect.DeepEqual(l.Total, ref[i].Total) {
						t.Errorf("seed %d %s trend line %d (%s %s): total %s, want %s", seed, env, i, interval, l.Event, optional(l.Total), optional(ref[i].Total))
					}
				}
			}
		}

		period := []analytics.Interval{analytics.Day, analytics.Week, analytics.Month}[seed%3]
		rq := analytics.RetentionQuery{EventRange: analytics.EventRange{ProductID: p.ID, Env: analytics.EnvLive, From: ds.From, To: ds.To.AddDate(0, 0, 1)},
			StartEvent: ds.StartEvent, ReturnEvent: ds.ReturnEvent, Period: period}
		rr, err := engine.RunRetention(ctx, rq)
		if err != nil {
			t.Fatal(err)
		}
		ref := querytest.Retention(ds.Events, false, ds.StartEvent, ds.ReturnEvent, ds.From, ds.To, string(period))
		if len(rr.Cohorts) != len(ref) {
			t.Errorf("seed %d retention: %d cohorts, want %d", seed, len(rr.Cohorts), len(ref))
			continue
		}
		for i, c := range rr.Cohorts {
			if c.Size != ref[i].Size || !reflect.DeepEqual(c.Values, ref[i].Values) {
				t.Errorf("seed %d retention by %s cohort %d: %d %v, want %d %v", seed, period, i, c.Size, c.Values, ref[i].Size, ref[i].Values)
			}
		}
	}
}

// testFunnelCases runs the hand-computed funnel cases: window boundaries,
// equal timestamps, repeats, the same name in two steps, and the rest.
func testFunnelCases(ctx context.Context, t *testing.T, s Events) {
	engine := &query.Engine{Store: s}
	for i, c := range querytest.FunnelCases() {
		p := int64(500 + i)
		if err := s.AppendEvents(ctx, storeEvents(p, c.Events)); err != nil {
			t.Fatal(err)
		}
		q := analytics.FunnelQuery{
			EventRange: analytics.EventRange{ProductID: p, Env: analytics.EnvLive, From: c.From, To: c.To.AddDate(0, 0, 1)},
			Steps:      c.Steps, Window: time.Duration(c.WindowHours) * time.Hour}
		got, err := engine.RunFunnel(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var counts []int64
		for _, st := range got.Steps {
			counts = append(counts, st.Count)
		}
		if !reflect.DeepEqual(counts, c.Want) {
			t.Errorf("%s: %v, want %v", c.Name, counts, c.Want)
		}
	}
}

// testFunnelViewsCases runs the hand-computed case of the views with a
// breakdown (querytest.FunnelViewsCases): each row's times and days, and
// the whole funnel's, as requests to the engine.
func testFunnelViewsCases(ctx context.Context, t *testing.T, s Events) {
	engine := &query.Engine{Store: s}
	c := querytest.FunnelViewsCases()
	const p = 600
	if err := s.AppendEvents(ctx, storeEvents(p, c.Events)); err != nil {
		t.Fatal(err)
	}
	req := query.FunnelRequest{Steps: query.EventSteps(c.Steps), WindowHours: json.RawMessage(strconv.Itoa(c.WindowHours)),
		DateFrom: c.From.Format("2006-01-02"), DateTo: c.To.Format("2006-01-02"), Breakdown: c.Breakdown, BreakdownLimit: c.Limit}
	run := func(view, interval string) query.FunnelResult {
		req.View, req.Interval = view, interval
		q, err := req.Query(analytics.EventRange{ProductID: p, Env: analytics.EnvLive}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		res, err := engine.RunFunnel(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	checkFunnelTimesBy(t, "hand case, time to convert by "+c.Breakdown, run("time_to_convert", ""), c.Counts, c.Times, c.Rows)
	points := func(days [][]int64) []querytest.FunnelPoint {
		out := make([]querytest.FunnelPoint, len(days))
		for i, d := range days {
			out[i] = querytest.FunnelPoint{Date: c.From.AddDate(0, 0, i), Counts: d}
		}
		return out
	}
	rows := make([]querytest.FunnelOverTimeRow, len(c.Rows))
	for i, r := range c.Rows {
		rows[i] = querytest.FunnelOverTimeRow{Value: r.Value, Other: r.Other, Points: points(c.RowDays[i])}
	}
	checkFunnelOverTimeBy(t, "hand case, over time by "+c.Breakdown, run("trends", "day"), points(c.Days), rows)
}

// testBots checks the AI-bot panel on a handful of bot fetches: bots by
// hits, then name; pages by hits, then URL, with their distinct bots; and
// nothing from another product, the test environment or human events.
func testBots(ctx context.Context, t *testing.T, s Events) {
	day := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	hit := func(i int, product int64, env analytics.Env, name, bot, cat, url string, at time.Duration) analytics.Event {
		return analytics.Event{UUID: [16]byte{byte(i), 0xb0}, ProductID: product, Env: env, Timestamp: day.Add(at), ReceivedAt: day,
			Name: name, DistinctID: "bots", UserID: 7, URL: url, IsBot: bot != "", BotName: bot, BotCategory: cat, Properties: []byte("{}")}
	}
	events := []analytics.Event{
		hit(1, 1, analytics.EnvLive, "$bot_pageview", "GPTBot", "ai_crawler", "https://x/a", time.Hour),
		hit(2, 1, analytics.EnvLive, "$bot_pageview", "GPTBot", "ai_crawler", "https://x/b", 2*time.Hour),
		hit(3, 1, analytics.EnvLive, "$bot_pageview", "ClaudeBot", "ai_crawler", "https://x/a", 3*time.Hour),
		hit(4, 1, analytics.EnvLive, "$bot_pageview", "ChatGPT-User", "ai_assistant", "https://x/c", 4*time.Hour),
		hit(5, 1, analytics.EnvLive, "$bot_pageview", "ChatGPT-User", "ai_assistant", "https://x/a", 5*time.Hour),
		hit(6, 1, analytics.EnvLive, "$bot_pageview", "GPTBot", "ai_crawler", "https://x/a", 6*time.Hour),
		hit(7, 2, analytics.EnvLive, "$bot_pageview", "GPTBot", "ai_crawler", "https://x/a", time.Hour),
		hit(8, 1, analytics.EnvTest, "$bot_pageview", "GPTBot", "ai_crawler", "https://x/a", time.Hour),
		hit(9, 1, analytics.EnvLive, "$pageview", "", "", "https://x/a", time.Hour),
		hit(10, 1, analytics.EnvLive, "$bot_pageview", "GPTBot", "ai_crawler", "https://x/a", 30*time.Hour),
	}
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	bots, pages, err := s.Bots(ctx, analytics.BotsQuery{
		EventRange: analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: day, To: day.AddDate(0, 0, 1)}, TopPages: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantBots := []analytics.BotActivity{
		{Name: "GPTBot", Category: "ai_crawler", Hits: 3, LastSeen: day.Add(6 * time.Hour)},
		{Name: "ChatGPT-User", Category: "ai_assistant", Hits: 2, LastSeen: day.Add(5 * time.Hour)},
		{Name: "ClaudeBot", Category: "ai_crawler", Hits: 1, LastSeen: day.Add(3 * time.Hour)},
	}
	if !reflect.DeepEqual(bots, wantBots) {
		t.Errorf("bots = %+v, want %+v", bots, wantBots)
	}
	wantPages := []analytics.PageActivity{{URL: "https://x/a", Hits: 4, Bots: 3}, {URL: "https://x/b", Hits: 1, Bots: 1}}
	if !reflect.DeepEqual(pages, wantPages) {
		t.Errorf("pages = %+v, want %+v", pages, wantPages)
	}
}

// testEventNames checks the list behind the builders' autocomplete: names
// by events, ties by name, cut at the limit; nothing outside the range,
// from another product or environment, and no AI-bot events. Names are
// bound values, so quotes and unicode come back as sent.
func testEventNames(ctx context.Context, t *testing.T, s Events) {
	day := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	var events []analytics.Event
	add := func(product int64, env analytics.Env, name string, bot bool, at time.Duration, n int) {
		for range n {
			i := len(events)
			e := analytics.Event{UUID: [16]byte{byte(i), byte(i >> 8), 0xe7}, ProductID: product, Env: env,
				Timestamp: day.Add(at), ReceivedAt: day, Name: name, DistinctID: "u", UserID: 9, Properties: []byte("{}")}
			if bot {
				e.IsBot, e.BotName, e.BotCategory = true, "GPTBot", "ai_crawler"
			}
			events = append(events, e)
		}
	}
	add(1, analytics.EnvLive, "page_viewed", false, time.Hour, 4)
	add(1, analytics.EnvLive, "signed_up", false, 2*time.Hour, 2)
	add(1, analytics.EnvLive, "it's ünïcode", false, 3*time.Hour, 2)
	add(1, analytics.EnvLive, "button_clicked", false, 4*time.Hour, 1)
	add(1, analytics.EnvLive, "$bot_pageview", true, time.Hour, 9)
	add(1, analytics.EnvTest, "test_only", false, time.Hour, 5)
	add(2, analytics.EnvLive, "other_product", false, time.Hour, 5)
	add(1, analytics.EnvLive, "next_day", false, 25*time.Hour, 5)
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	scope := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: day, To: day.AddDate(0, 0, 1)}
	got, err := s.EventNames(ctx, analytics.EventNamesQuery{EventRange: scope, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []analytics.EventCount{{Name: "page_viewed", Count: 4}, {Name: "it's ünïcode", Count: 2},
		{Name: "signed_up", Count: 2}, {Name: "button_clicked", Count: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EventNames = %+v, want %+v", got, want)
	}
	got, err = s.EventNames(ctx, analytics.EventNamesQuery{EventRange: scope, Limit: 2})
	if err != nil || !reflect.DeepEqual(got, want[:2]) {
		t.Errorf("EventNames with limit 2 = %+v, %v, want %+v", got, err, want[:2])
	}
	scope.Env = analytics.EnvTest
	got, err = s.EventNames(ctx, analytics.EventNamesQuery{EventRange: scope, Limit: 10})
	if err != nil || !reflect.DeepEqual(got, []analytics.EventCount{{Name: "test_only", Count: 5}}) {
		t.Errorf("EventNames of the test environment = %+v, %v", got, err)
	}
	scope.ProductID = 3
	if got, err := s.EventNames(ctx, analytics.EventNamesQuery{EventRange: scope, Limit: 10}); err != nil || len(got) != 0 {
		t.Errorf("EventNames of a product without events = %+v, %v", got, err)
	}
	// HasEvents reads every day, not the scope's range, and counts human
	// events only (product 4 has nothing but AI-bot hits).
	bots := []analytics.Event{{UUID: [16]byte{0xb0, 0xe7}, ProductID: 4, Env: analytics.EnvLive, Timestamp: day, ReceivedAt: day,
		Name: "$bot_pageview", DistinctID: "b", UserID: 1, Properties: []byte("{}"), IsBot: true, BotName: "GPTBot", BotCategory: "ai_crawler"}}
	if err := s.AppendEvents(ctx, bots); err != nil {
		t.Fatal(err)
	}
	past := analytics.EventRange{From: day.AddDate(-1, 0, 0), To: day.AddDate(-1, 0, 1)}
	for _, c := range []struct {
		product int64
		env     analytics.Env
		want    bool
	}{{1, analytics.EnvLive, true}, {1, analytics.EnvTest, true}, {2, analytics.EnvLive, true}, {2, analytics.EnvTest, false},
		{3, analytics.EnvLive, false}, {4, analytics.EnvLive, false}} {
		r := past
		r.ProductID, r.Env = c.product, c.env
		if got, err := s.HasEvents(ctx, r); err != nil || got != c.want {
			t.Errorf("HasEvents(product %d, %s) = %v, %v, want %v", c.product, c.env, got, err, c.want)
		}
	}
}

// filterRequests turns reference filters into filters as a client sends
// them: numbers arrive from JSON as float64.
func filterRequests(fs []querytest.Filter) []query.FilterRequest {
	var out []query.FilterRequest
	for _, f := range fs {
		v := f.Value
		if n, ok := v.(int64); ok {
			v = float64(n)
		}
		if c, ok := v.(querytest.CohortValue); ok {
			v = float64(c.ID)
		}
		out = append(out, query.FilterRequest{Property: f.Property, Operator: f.Operator, Value: v})
	}
	return out
}

// optional shows an optional count: its value, or "none".
func optional(n *int64) string {
	if n == nil {
		return "none"
	}
	return strconv.FormatInt(*n, 10)
}

// checkFunnelRows compares a funnel answer with the reference's whole
// funnel and breakdown rows.
func checkFunnelRows(t *testing.T, what string, got query.FunnelResult, total []int64, rows []querytest.FunnelBreakdownRow) {
	t.Helper()
	counts := func(steps []query.FunnelStep) []int64 {
		out := make([]int64, len(steps))
		for i, s := range steps {
			out[i] = s.Count
		}
		return out
	}
	if c := counts(got.Steps); !reflect.DeepEqual(c, total) {
		t.Errorf("%s: %v, want %v", what, c, total)
	}
	if len(got.Breakdown) != len(rows) {
		t.Errorf("%s: %d breakdown rows, want %d", what, len(got.Breakdown), len(rows))
		return
	}
	for i, r := range rows {
		g := got.Breakdown[i]
		if g.Other != r.Other || (g.BreakdownValue == nil) != (r.Value == nil) ||
			(r.Value != nil && *g.BreakdownValue != *r.Value) || !reflect.DeepEqual(counts(g.Steps), r.Counts) {
			t.Errorf("%s: row %d = %v %v %v, want %v %v %v", what, i, g.Other, deref(g.BreakdownValue), counts(g.Steps), r.Other, deref(r.Value), r.Counts)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// checkFunnelTimes compares a time-to-convert answer with the reference.
func checkFunnelTimes(t *testing.T, what string, got query.FunnelResult, counts []int64, times []querytest.StepTime) {
	t.Helper()
	checkFunnelTimesBy(t, what, got, counts, times, nil)
}

// checkFunnelTimesBy compares a time-to-convert answer with the
// reference's whole funnel and, with a breakdown, its rows: their values
// in order, counts and times.
func checkFunnelTimesBy(t *testing.T, what string, got query.FunnelResult, counts []int64, times []querytest.StepTime, rows []querytest.FunnelTimesRow) {
	t.Helper()
	ranked := make([]querytest.FunnelBreakdownRow, len(rows))
	for i, r := range rows {
		ranked[i] = querytest.FunnelBreakdownRow{Value: r.Value, Other: r.Other, Counts: r.Counts}
	}
	checkFunnelRows(t, what, got, counts, ranked)
	checkStepTimes(t, what, got.TimeToConvert, times)
	if len(got.Breakdown) != len(rows) {
		return // checkFunnelRows said so
	}
	for i, r := range rows {
		checkStepTimes(t, fmt.Sprintf("%s, row %d (%s)", what, i, deref(r.Value)), got.Breakdown[i].TimeToConvert, r.Times)
	}
}

// checkStepTimes compares one set of users' times (the whole funnel's or
// a breakdown row's) with the reference.
func checkStepTimes(t *testing.T, what string, got []query.StepTime, times []querytest.StepTime) {
	t.Helper()
	if len(got) != len(times) {
		t.Errorf("%s: %d steps timed, want %d", what, len(got), len(times))
		return
	}
	for i, w := range times {
		g := got[i]
		var hist []int64
		for k, b := range g.Histogram {
			hist = append(hist, b.Count)
			if b.FromSeconds != querytest.ConvertBuckets[k] {
				t.Errorf("%s: step %d bucket %d from %d s, want %d", what, g.Step, k, b.FromSeconds, querytest.ConvertBuckets[k])
			}
		}
		median := -1.0
		if g.MedianSeconds != nil {
			median = *g.MedianSeconds
		}
		wantMedian := -1.0
		if w.Converted > 0 {
			wantMedian = float64(w.Median.Microseconds()) / 1e6
		}
		if g.Step != i+1 || g.Converted != w.Converted || median != wantMedian || !reflect.DeepEqual(hist, w.Histogram) {
			t.Errorf("%s: step %d = %d users, median %v s, %v; want step %d, %d, %v s, %v", what, g.Step, g.Converted, median, hist, i+1, w.Converted, wantMedian, w.Histogram)
		}
	}
}

// checkFunnelOverTime compares a conversion-over-time answer with the
// reference's buckets, and its steps with what the buckets add up to.
func checkFunnelOverTime(t *testing.T, what string, got query.FunnelResult, want []querytest.FunnelPoint) {
	t.Helper()
	checkFunnelOverTimeBy(t, what, got, want, nil)
}

// checkFunnelOverTimeBy compares a conversion-over-time answer with the
// reference's whole funnel and, with a breakdown, its rows: their values
// in order and each one's buckets, and every one's steps with what its
// buckets add up to.
func checkFunnelOverTimeBy(t *testing.T, what string, got query.FunnelResult, want []querytest.FunnelPoint, rows []querytest.FunnelOverTimeRow) {
	t.Helper()
	ranked := make([]querytest.FunnelBreakdownRow, len(rows))
	for i, r := range rows {
		ranked[i] = querytest.FunnelBreakdownRow{Value: r.Value, Other: r.Other, Counts: pointsTotal(r.Points)}
	}
	checkFunnelRows(t, what, got, pointsTotal(want), ranked)
	checkPoints(t, what, got.OverTime, want)
	if len(got.Breakdown) != len(rows) {
		return // checkFunnelRows said so
	}
	for i, r := range rows {
		checkPoints(t, fmt.Sprintf("%s, row %d (%s)", what, i, deref(r.Value)), got.Breakdown[i].OverTime, r.Points)
	}
}

// pointsTotal adds up the counts of a funnel's buckets.
func pointsTotal(points []querytest.FunnelPoint) []int64 {
	var total []int64
	for _, p := range points {
		if total == nil {
			total = make([]int64, len(p.Counts))
		}
		for k, c := range p.Counts {
			total[k] += c
		}
	}
	return total
}

// checkPoints compares one set of users' buckets (the whole funnel's or a
// breakdown row's) with the reference's.
func checkPoints(t *testing.T, what string, got []query.FunnelPoint, want []querytest.FunnelPoint) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d buckets, want %d", what, len(got), len(want))
		return
	}
	for i, w := range want {
		g := got[i]
		n := len(w.Counts)
		if g.Date != w.Date.Format("2006-01-02") || g.Entered != w.Counts[0] || g.Converted != w.Counts[n-1] ||
			g.ConversionPct != query.ConversionPct(w.Counts[n-1], w.Counts[0]) {
			t.Errorf("%s: bucket %d = %+v, want %s %v", what, i, g, w.Date.Format("2006-01-02"), w.Counts)
		}
	}
}
