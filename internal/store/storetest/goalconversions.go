package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// goalsOf asks the store for the goals' conversions over a range (its
// first and last day), the request parsed as the endpoint parses it, and
// returns the answer in the reference's terms.
func goalsOf(t *testing.T, s Events, productID int64, env analytics.Env, ds querytest.GoalDataset) querytest.GoalsResult {
	t.Helper()
	return goalsIn(t, s, analytics.EventRange{ProductID: productID, Env: env}, ds)
}

// goalsIn is goalsOf in the scope sc, whose zone the range's days follow.
func goalsIn(t *testing.T, s Events, sc analytics.EventRange, ds querytest.GoalDataset) querytest.GoalsResult {
	t.Helper()
	goals := make([]analytics.Goal, len(ds.Goals))
	for i, g := range ds.Goals {
		goals[i] = analytics.Goal{ID: int64(i + 1), Kind: analytics.GoalEvent, Event: g.Event}
		if g.Path != "" {
			goals[i] = analytics.Goal{ID: int64(i + 1), Kind: analytics.GoalPage, Path: g.Path}
		}
	}
	req := query.GoalsRequest{DateFrom: ds.From.Format("2006-01-02"), DateTo: ds.To.Format("2006-01-02"),
		Filters: filterRequests(ds.Filters), Breakdown: ds.Breakdown, Limit: ds.Limit}
	if ds.Breakdown != "" {
		req.Goal = 1
	}
	q, _, err := req.Query(sc, goals, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.GoalConversions(context.Background(), q)
	if err != nil {
		t.Fatalf("GoalConversions: %v", err)
	}
	res := querytest.GoalsResult{Visitors: a.Visitors, Goals: make([]querytest.GoalCount, len(a.Goals))}
	for i, c := range a.Goals {
		res.Goals[i] = querytest.GoalCount(c)
	}
	for _, r := range a.Rows {
		res.Rows = append(res.Rows, querytest.GoalRow{Value: r.Value, Visitors: r.Visitors, GoalCount: querytest.GoalCount(r.GoalCounts)})
	}
	return res
}

// testGoalConversions runs the goals query on the store for seeded
// random datasets, live and test, and compares each answer with the
// reference in querytest. Every dataset is its own product, so the
// answers also show that no product's events reach another's goals.
func testGoalConversions(ctx context.Context, t *testing.T, s Events) {
	converted := 0
	for seed := int64(1); seed <= datasets(60); seed++ {
		ds := querytest.GenerateGoals(seed)
		p := analytics.Product{ID: 900 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			got := goalsOf(t, s, p.ID, env, ds)
			want := querytest.Goals(ds.Events, env == analytics.EnvTest, ds.Filters, ds.Goals, ds.From, ds.To, ds.Breakdown, ds.Limit)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d %s, goals %+v by %q, filters %v, limit %d:\n got %+v\nwant %+v",
					seed, env, ds.Goals, ds.Breakdown, ds.Filters, ds.Limit, got, want)
			}
			for _, g := range want.Goals {
				if g.Converted > 0 {
					converted++
				}
			}
		}
	}
	// The datasets must exercise the counts, not only agree on zeros.
	// (30 over all the datasets; a share of them needs its share.)
	if converted < int(datasets(30)) {
		t.Errorf("only %d goals with conversions over the datasets: the generator no longer converts", converted)
	}
}

// testGoalCases checks hand-counted goals: the visitors are the users
// with a page view in the range, a page goal's '*' matches any run of
// characters and its other characters only themselves, an event of a user
// without a page view converts nobody, and a breakdown attributes each
// visitor to their first page view's source.
func testGoalCases(ctx context.Context, t *testing.T, s Events) {
	day := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	pv := func(user, path, source string, h int) querytest.Event {
		return querytest.Event{DistinctID: user, Name: "$pageview", Path: path, Source: source, Time: at(h)}
	}
	ev := func(user, name string, h int) querytest.Event {
		return querytest.Event{DistinctID: user, Name: name, Time: at(h)}
	}
	events := []querytest.Event{
		pv("a", "/", "Google", 1), pv("a", "/blog/x", "", 2), ev("a", "signup", 3), ev("a", "signup", 4),
		pv("b", "/blog.html", "Bing", 1), ev("b", "signup", 2),
		pv("c", "/pricing", "Google", 5),
		ev("d", "signup", 1),                           // no page view: not a visitor
		pv("e", "/blog/", "", 1), ev("e", "signup", 0), // signed up before the page view, still in the range
		pv("f", "/blog/y", "Google", 30), ev("f", "signup", 31), // the next day: outside
	}
	p := analytics.Product{ID: 990}
	if err := s.AppendEvents(ctx, storeEvents(p.ID, events)); err != nil {
		t.Fatal(err)
	}
	ds := querytest.GoalDataset{From: day, To: day, Goals: []querytest.Goal{{Event: "signup"}, {Path: "/blog/*"}, {Path: "/blog.*"}}, Limit: 10}
	want := querytest.GoalsResult{Visitors: 4, Goals: []querytest.GoalCount{{Converted: 3, Conversions: 4}, {Converted: 2, Conversions: 2}, {Converted: 1, Conversions: 1}}}
	if got := goalsOf(t, s, p.ID, analytics.EnvLive, ds); !reflect.DeepEqual(got, want) {
		t.Errorf("goals:\n got %+v\nwant %+v", got, want)
	}
	ds.Goals, ds.Breakdown = ds.Goals[:1], "source"
	want = querytest.GoalsResult{Visitors: 4, Goals: []querytest.GoalCount{{Converted: 3, Conversions: 4}}, Rows: []querytest.GoalRow{
		{Value: "Google", Visitors: 2, GoalCount: querytest.GoalCount{Converted: 1, Conversions: 2}},
		{Value: "", Visitors: 1, GoalCount: querytest.GoalCount{Converted: 1, Conversions: 1}},
		{Value: "Bing", Visitors: 1, GoalCount: querytest.GoalCount{Converted: 1, Conversions: 1}},
	}}
	if got := goalsOf(t, s, p.ID, analytics.EnvLive, ds); !reflect.DeepEqual(got, want) {
		t.Errorf("goals by source:\n got %+v\nwant %+v", got, want)
	}
}
