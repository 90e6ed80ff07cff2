package storetest

import (
	"context"
	"hash/fnv"
	"maps"
	"reflect"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// testGroupQueries checks trends and funnels that count groups
// (aggregateBy): first on the hand-counted case, where counting users
// gives other answers, then on seeded random datasets whose users belong
// to a few companies, against the reference over querytest.ByGroup. Every
// event store must give these same answers.
func testGroupQueries(ctx context.Context, t *testing.T, s Events) {
	engine := &query.Engine{Store: s}
	c := querytest.GroupCases()
	const p = 700
	if err := s.AppendEvents(ctx, storeEvents(p, c.Events)); err != nil {
		t.Fatal(err)
	}
	scope := analytics.EventRange{ProductID: p, Env: analytics.EnvLive, From: c.From, To: c.To.AddDate(0, 0, 1)}
	for _, x := range []struct {
		by   string
		want []int64
	}{{"", c.FunnelUsers}, {"company", c.FunnelGroups}} {
		got, err := engine.RunFunnel(ctx, analytics.FunnelQuery{EventRange: scope, Steps: c.Steps,
			Window: time.Duration(c.WindowHours) * time.Hour, AggregateBy: x.by})
		if err != nil {
			t.Fatal(err)
		}
		if counts := funnelCounts(got); !reflect.DeepEqual(counts, x.want) {
			t.Errorf("funnel by %q = %v, want %v", x.by, counts, x.want)
		}
	}
	for _, x := range []struct {
		by, math string
		want     []int64
	}{
		{"company", "total", c.TrendTotal}, {"", "unique_users", c.TrendUsers}, {"company", "unique_users", c.TrendGroups},
		{"nobody_has_this", "total", []int64{0, 0}},
	} {
		for _, iv := range []analytics.Interval{analytics.Day, analytics.Hour} {
			req := query.TrendRequest{Interval: string(iv), DateFrom: c.From.Format("2006-01-02"), DateTo: c.To.Format("2006-01-02"),
				Series: []query.SeriesRequest{{Event: c.TrendEvent, Math: x.math}}, AggregateBy: x.by}
			got := trendValues(t, engine, req, p)
			if iv == analytics.Hour {
				got = dailySums(got, x.math) // hours are checked against the reference below
			}
			if got != nil && !reflect.DeepEqual(got, x.want) {
				t.Errorf("trend %s by %q per %s = %v, want %v", x.math, x.by, iv, got, x.want)
			}
		}
	}

	for seed := int64(1); seed <= 12; seed++ {
		ds := querytest.Generate(seed)
		withCompanies(ds.Events)
		pid := 700 + seed
		if err := s.AppendEvents(ctx, storeEvents(pid, ds.Events)); err != nil {
			t.Fatal(err)
		}
		byCompany := querytest.ByGroup(ds.Events, "company")
		scope := analytics.EventRange{ProductID: pid, Env: analytics.EnvLive, From: ds.From, To: ds.To.AddDate(0, 0, 1)}
		got, err := engine.RunFunnel(ctx, analytics.FunnelQuery{EventRange: scope, Steps: ds.Steps,
			Window: time.Duration(ds.WindowHours) * time.Hour, AggregateBy: "company"})
		if err != nil {
			t.Fatal(err)
		}
		want := querytest.Funnel(byCompany, false, ds.Steps, ds.From, ds.To, ds.WindowHours)
		if counts := funnelCounts(got); !reflect.DeepEqual(counts, want) {
			t.Errorf("seed %d funnel %v by company = %v, want %v", seed, ds.Steps, counts, want)
		}

		interval := []analytics.Interval{analytics.Day, analytics.Week, analytics.Month, analytics.Hour}[seed%4]
		// Without a breakdown too: only then do the lines carry totals.
		breakdowns := []string{""}
		if ds.Breakdown != "" {
			breakdowns = append(breakdowns, ds.Breakdown)
		}
		for _, breakdown := range breakdowns {
			req := query.TrendRequest{Interval: string(interval), Filters: filterRequests(ds.Filters), AggregateBy: "company",
				DateFrom: ds.From.Format("2006-01-02"), DateTo: ds.To.Format("2006-01-02"),
				Series: []query.SeriesRequest{{Event: ds.Steps[0]}, {Event: ds.Steps[1], Math: "unique_users"}}}
			if breakdown != "" {
				req.Breakdown, req.BreakdownLimit = breakdown, 2
			}
			tq, err := req.Query(analytics.EventRange{ProductID: pid, Env: analytics.EnvLive}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			tr, err := engine.RunTrend(ctx, tq)
			if err != nil {
				t.Fatal(err)
			}
			ref := querytest.Trend(byCompany, false, []querytest.Series{{Event: ds.Steps[0], Math: "total"},
				{Event: ds.Steps[1], Math: "unique_users"}}, ds.Filters, ds.From, ds.To, string(interval), breakdown, 2)
			if len(tr.Series) != len(ref) {
				t.Errorf("seed %d trend by company and %q: %d lines, want %d", seed, breakdown, len(tr.Series), len(ref))
				continue
			}
			for i, l := range tr.Series {
				var values, wantValues []int64
				for _, p := range l.Data {
					values = append(values, p.Value)
				}
				for _, p := range ref[i].Data {
					wantValues = append(wantValues, p.Value)
				}
				if l.Other != ref[i].Other || !reflect.DeepEqual(l.BreakdownValue, ref[i].BreakdownValue) || !reflect.DeepEqual(values, wantValues) {
					t.Errorf("seed %d trend by company, line %d: got %v %v %v, want %v %v %v", seed, i,
						l.Other, l.BreakdownValue, values, ref[i].Other, ref[i].BreakdownValue, wantValues)
				}
				if !reflect.DeepEqual(l.Total, ref[i].Total) {
					t.Errorf("seed %d trend by company, line %d: total %s, want %s", seed, i, optional(l.Total), optional(ref[i].Total))
				}
			}
		}
	}
}

// withCompanies puts the generated users in companies, as group() would:
// a quarter of the users in none, the rest in three companies by a hash
// of their id, so that companies have several users. One event in seven
// comes without its company, as the events a user sends before group().
func withCompanies(events []querytest.Event) {
	names := []string{"", "acme", "globex ü", `"initech"`}
	for i := range events {
		h := fnv.New32a()
		h.Write([]byte(events[i].DistinctID))
		name := names[h.Sum32()%uint32(len(names))]
		if name == "" || i%7 == 0 {
			continue
		}
		props := maps.Clone(events[i].Properties)
		if props == nil {
			props = map[string]any{}
		}
		props["$groups"] = map[string]any{"company": name}
		events[i].Properties = props
	}
}

// funnelCounts returns a funnel answer's counts.
func funnelCounts(r query.FunnelResult) []int64 {
	var out []int64
	for _, st := range r.Steps {
		out = append(out, st.Count)
	}
	return out
}

// trendValues runs a one-series trend request on product p and returns
// its one line's values.
func trendValues(t *testing.T, engine *query.Engine, req query.TrendRequest, p int64) []int64 {
	t.Helper()
	tq, err := req.Query(analytics.EventRange{ProductID: p, Env: analytics.EnvLive}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := engine.RunTrend(context.Background(), tq)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Series) != 1 {
		t.Fatalf("trend %+v: %d lines", req, len(tr.Series))
	}
	var out []int64
	for _, pt := range tr.Series[0].Data {
		out = append(out, pt.Value)
	}
	return out
}

// dailySums folds 48 hourly values into two days for a total; unique
// counts do not add up across hours, so for them it returns nil and the
// hourly answer is left to the random datasets' comparison.
func dailySums(hours []int64, math string) []int64 {
	if math != "total" || len(hours) != 48 {
		return nil
	}
	days := make([]int64, 2)
	for i, v := range hours {
		days[i/24] += v
	}
	return days
}
