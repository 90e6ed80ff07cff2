package storetest

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// Time zones (docs/queries.md, "Time zones"): the random trend, funnel,
// retention, sessions and goals datasets run again in zones, moved so that each
// range holds a change of offset, and are held to the reference, which
// computes local days with Go's time.Location alone.

// zoneRuns are the zones and the day of an offset change each range is
// moved over: Berlin's 23-hour day and its 25-hour day, New York's
// autumn day (an offset behind UTC), and Kathmandu, whose offset of
// +05:45 is not a whole hour (it has not changed since 1986).
var zoneRuns = []struct {
	zone   string
	change time.Time
}{
	{"Europe/Berlin", time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)},
	{"Europe/Berlin", time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)},
	{"America/New_York", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
	{"Asia/Kathmandu", time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
}

// moveDays returns the whole number of days that puts the range [from,
// to] over day, day being its k-th day (k below the range's length).
func moveDays(from, to, day time.Time, k int) int {
	span := int(to.Sub(from).Hours()/24) + 1
	return int(day.Sub(from).Hours()/24) - k%span
}

// moved returns events with every time moved by days.
func moved(events []querytest.Event, days int) []querytest.Event {
	out := make([]querytest.Event, len(events))
	for i, e := range events {
		e.Time = e.Time.AddDate(0, 0, days)
		out[i] = e
	}
	return out
}

// zoneScope is a scope of product p in the named zone.
func zoneScope(t *testing.T, p int64, env analytics.Env, zone string) analytics.EventRange {
	t.Helper()
	loc, err := analytics.LoadZone(zone)
	if err != nil {
		t.Fatal(err)
	}
	return analytics.EventRange{ProductID: p, Env: env, Zone: loc}
}

// testZonedQueries runs trends (every interval), funnels and retention on
// the random datasets in each zone of zoneRuns.
func testZonedQueries(ctx context.Context, t *testing.T, s Events) {
	engine := &query.Engine{Store: s}
	for run, z := range zoneRuns {
		for seed := int64(1); seed <= datasets(16); seed++ {
			ds := querytest.Generate(seed)
			days := moveDays(ds.From, ds.To, z.change, int(seed))
			events := moved(ds.Events, days)
			from, to := ds.From.AddDate(0, 0, days), ds.To.AddDate(0, 0, days)
			p := int64(3000 + 100*run + int(seed))
			if err := s.AppendEvents(ctx, storeEvents(p, events)); err != nil {
				t.Fatal(err)
			}
			sc := zoneScope(t, p, analytics.EnvLive, z.zone)
			loc := sc.Location()
			name := func(what string) string {
				return fmt.Sprintf("%s %s..%s seed %d %s", z.zone, from.Format("2006-01-02"), to.Format("2006-01-02"), seed, what)
			}

			freq := query.FunnelRequest{Steps: query.EventSteps(ds.Steps), DateFrom: from.Format("2006-01-02"), DateTo: to.Format("2006-01-02")}
			freq.WindowHours = []byte(strconv.Itoa(ds.WindowHours))
			fq, err := freq.Query(sc, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			fr, err := engine.RunFunnel(ctx, fq)
			if err != nil {
				t.Fatal(err)
			}
			want := querytest.FunnelIn(loc, events, false, ds.Steps, from, to, ds.WindowHours)
			for i, st := range fr.Steps {
				if st.Count != want[i] {
					t.Errorf("%s: funnel step %d = %d, want %d", name("funnel"), i, st.Count, want[i])
				}
			}

			// Conversion over time: users by the local day or week they
			// entered the funnel; a third of the datasets broken down by
			// their property (the plan when they have none), top 2.
			freq.View, freq.Interval = "trends", []string{"day", "week"}[seed%2]
			if seed%3 == 0 {
				freq.Breakdown, freq.BreakdownLimit = cmp.Or(ds.Breakdown, "properties.plan"), 2
			}
			if fq, err = freq.Query(sc, time.Now()); err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, fq); err != nil {
				t.Fatal(err)
			}
			points, rows := querytest.FunnelOverTimeBy(loc, events, false, querytest.PlainSteps(ds.Steps), nil, freq.Breakdown, 2, from, to, ds.WindowHours, freq.Interval)
			checkFunnelOverTimeBy(t, name(fmt.Sprintf("funnel over time by %s, broken down by %q", freq.Interval, freq.Breakdown)), fr, points, rows)

			for _, interval := range []analytics.Interval{analytics.Hour, analytics.Day, analytics.Week, analytics.Month} {
				req := query.TrendRequest{Interval: string(interval), Filters: filterRequests(ds.Filters),
					DateFrom: from.Format("2006-01-02"), DateTo: to.Format("2006-01-02"),
					Series: []query.SeriesRequest{{Event: ds.Steps[0]}, {Event: ds.Steps[1], Math: "unique_users"}}}
				if ds.Breakdown != "" && interval == analytics.Day {
					req.Breakdown, req.BreakdownLimit = ds.Breakdown, 2
				}
				tq, err := req.Query(sc, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				tr, err := engine.RunTrend(ctx, tq)
				if err != nil {
					t.Fatal(err)
				}
				ref := querytest.TrendIn(loc, events, false, []querytest.Series{{Event: ds.Steps[0], Math: "total"},
					{Event: ds.Steps[1], Math: "unique_users"}}, ds.Filters, from, to, string(interval), req.Breakdown, 2)
				if len(tr.Series) != len(ref) {
					t.Errorf("%s: %d lines, want %d", name("trend by "+string(interval)), len(tr.Series), len(ref))
					continue
				}
				for i, l := range tr.Series {
					got, wantPoints := trendPoints(l.Data), refPoints(ref[i].Data, interval, loc)
					if !reflect.DeepEqual(got, wantPoints) {
						t.Errorf("%s line %d:\n got %v\nwant %v", name("trend by "+string(interval)), i, got, wantPoints)
					}
				}
			}

			period := []analytics.Interval{analytics.Day, analytics.Week, analytics.Month}[seed%3]
			rreq := query.RetentionRequest{StartEvent: ds.StartEvent, ReturnEvent: ds.ReturnEvent, Period: string(period),
				DateFrom: from.Format("2006-01-02"), DateTo: to.Format("2006-01-02")}
			rq, err := rreq.Query(sc, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			rr, err := engine.RunRetention(ctx, rq)
			if err != nil {
				t.Fatal(err)
			}
			rref := querytest.RetentionIn(loc, events, false, ds.StartEvent, ds.ReturnEvent, from, to, string(period))
			if len(rr.Cohorts) != len(rref) {
				t.Errorf("%s: %d cohorts, want %d", name("retention by "+string(period)), len(rr.Cohorts), len(rref))
				continue
			}
			for i, c := range rr.Cohorts {
				if c.Date != rref[i].Date.Format("2006-01-02") || c.Size != rref[i].Size || !reflect.DeepEqual(c.Values, rref[i].Values) {
					t.Errorf("%s cohort %d: %s %d %v, want %s %d %v", name("retention by "+string(period)), i,
						c.Date, c.Size, c.Values, rref[i].Date.Format("2006-01-02"), rref[i].Size, rref[i].Values)
				}
			}
		}
	}
}

// testZonedSessions runs the random sessions datasets in each zone of
// zoneRuns.
func testZonedSessions(ctx context.Context, t *testing.T, s Events) {
	for run, z := range zoneRuns {
		for seed := int64(1); seed <= datasets(16); seed++ {
			ds := querytest.GenerateSessions(seed)
			days := moveDays(ds.From, ds.To, z.change, int(seed))
			events := moved(ds.Events, days)
			from, to := ds.From.AddDate(0, 0, days), ds.To.AddDate(0, 0, days)
			p := int64(4000 + 100*run + int(seed))
			if err := s.AppendEvents(ctx, storeEvents(p, events)); err != nil {
				t.Fatal(err)
			}
			sc := zoneScope(t, p, analytics.EnvLive, z.zone)
			req := query.SessionsRequest{DateFrom: from.Format("2006-01-02"), DateTo: to.Format("2006-01-02"),
				Interval: ds.Interval, Filters: filterRequests(ds.Filters), Limit: ds.Limit}
			q, err := req.Query(sc, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got := sessionsAnswer(t, s, q)
			want := querytest.SessionsIn(sc.Location(), events, false, ds.Filters, from, to, ds.Interval, ds.Limit)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s seed %d %s..%s by %s:\n got %+v\nwant %+v", z.zone, seed, from.Format("2006-01-02"), to.Format("2006-01-02"), ds.Interval, got, want)
			}
		}
	}
}

// testZonedGoals runs the random goals datasets in each zone of zoneRuns,
// live and test: which events a range's local days hold decides the
// visitors, the conversions and each visitor's first page view.
func testZonedGoals(ctx context.Context, t *testing.T, s Events) {
	converted := 0
	for run, z := range zoneRuns {
		for seed := int64(1); seed <= datasets(16); seed++ {
			ds := querytest.GenerateGoals(seed)
			days := moveDays(ds.From, ds.To, z.change, int(seed))
			ds.Events = moved(ds.Events, days)
			ds.From, ds.To = ds.From.AddDate(0, 0, days), ds.To.AddDate(0, 0, days)
			p := int64(6000 + 100*run + int(seed))
			if err := s.AppendEvents(ctx, storeEvents(p, ds.Events)); err != nil {
				t.Fatal(err)
			}
			for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
				sc := zoneScope(t, p, env, z.zone)
				got := goalsIn(t, s, sc, ds)
				want := querytest.GoalsIn(sc.Location(), ds.Events, env == analytics.EnvTest, ds.Filters, ds.Goals, ds.From, ds.To, ds.Breakdown, ds.Limit)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s seed %d %s %s..%s, goals %+v by %q, filters %v, limit %d:\n got %+v\nwant %+v", z.zone, seed, env,
						ds.From.Format("2006-01-02"), ds.To.Format("2006-01-02"), ds.Goals, ds.Breakdown, ds.Filters, ds.Limit, got, want)
				}
				for _, g := range want.Goals {
					if g.Converted > 0 {
						converted++
					}
				}
			}
		}
	}
	// (30 over all the datasets; a share of them needs its share.)
	if converted < int(datasets(30)) {
		t.Errorf("only %d goals with conversions over the zoned datasets", converted)
	}
}

// point is one bucket of a chart as the API labels it.
type point struct {
	Date  string
	Value int64
}

func trendPoints(data []query.Point) []point {
	out := make([]point, len(data))
	for i, p := range data {
		out[i] = point{p.Date, p.Value}
	}
	return out
}

// refPoints labels the reference's buckets (wall starts) as the API's
// contract says (docs/queries.md, "Time zones"): the local date, or for an
// hour its local start with the offset then, worked out here with Go's
// time.Date.
func refPoints(data []querytest.Point, interval analytics.Interval, loc *time.Location) []point {
	out := make([]point, len(data))
	for i, p := range data {
		label := p.Date.Format("2006-01-02")
		if interval == analytics.Hour {
			w := p.Date
			// The earliest instant showing w: of the two candidate offsets
			// an hour either side, the one whose wall time is w.
			at := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), 0, 0, 0, loc)
			if e := at.Add(-time.Hour); e.Hour() == w.Hour() && e.Day() == w.Day() {
				at = e
			}
			label = at.Format(time.RFC3339)
		}
		out[i] = point{label, p.Value}
	}
	return out
}

// testZoneCases checks hand-counted trends around the changes: events a
// second either side of each local midnight of Berlin's 23-hour and
// 25-hour days, and of a Kathmandu midnight (+05:45), and the autumn's
// repeated hour, which is one bucket holding both real hours.
func testZoneCases(ctx context.Context, t *testing.T, s Events) {
	engine := &query.Engine{Store: s}
	at := func(s string) time.Time {
		x, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return x
	}
	for i, c := range []struct {
		zone, interval, from, to string
		events                   []string
		want                     map[string]int64 // the non-zero buckets
		buckets                  int
	}{
		{"Europe/Berlin", "day", "2026-03-28", "2026-03-30",
			[]string{"2026-03-28T22:59:59Z", "2026-03-28T23:00:00Z", "2026-03-29T00:59:00Z", "2026-03-29T01:00:00Z", "2026-03-29T21:59:59Z", "2026-03-29T22:00:00Z"},
			map[string]int64{"2026-03-28": 1, "2026-03-29": 4, "2026-03-30": 1}, 3},
		{"Europe/Berlin", "hour", "2026-03-29", "2026-03-29",
			[]string{"2026-03-28T22:59:59Z", "2026-03-28T23:00:00Z", "2026-03-29T00:59:00Z", "2026-03-29T01:00:00Z", "2026-03-29T21:59:59Z", "2026-03-29T22:00:00Z"},
			map[string]int64{"2026-03-29T00:00:00+01:00": 1, "2026-03-29T01:00:00+01:00": 1, "2026-03-29T03:00:00+02:00": 1, "2026-03-29T23:00:00+02:00": 1}, 23},
		{"Europe/Berlin", "day", "2026-10-24", "2026-10-26",
			[]string{"2026-10-24T21:59:59Z", "2026-10-24T22:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-25T22:59:59Z", "2026-10-25T23:00:00Z"},
			map[string]int64{"2026-10-24": 1, "2026-10-25": 4, "2026-10-26": 1}, 3},
		{"Europe/Berlin", "hour", "2026-10-25", "2026-10-25",
			[]string{"2026-10-24T21:59:59Z", "2026-10-24T22:00:00Z", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-25T22:59:59Z", "2026-10-25T23:00:00Z"},
			map[string]int64{"2026-10-25T00:00:00+02:00": 1, "2026-10-25T02:00:00+02:00": 2, "2026-10-25T23:00:00+01:00": 1}, 24},
		{"Europe/Berlin", "week", "2026-03-29", "2026-03-30",
			[]string{"2026-03-29T21:59:59Z", "2026-03-29T22:00:00Z"},
			map[string]int64{"2026-03-23": 1, "2026-03-30": 1}, 2},
		{"Asia/Kathmandu", "day", "2025-12-31", "2026-01-01",
			[]string{"2025-12-30T18:14:59Z", "2025-12-30T18:15:00Z", "2025-12-31T18:14:59Z", "2025-12-31T18:15:00Z", "2026-01-01T00:00:00Z", "2026-01-01T18:15:00Z"},
			map[string]int64{"2025-12-31": 2, "2026-01-01": 2}, 2},
		{"Asia/Kathmandu", "hour", "2026-01-01", "2026-01-01",
			[]string{"2025-12-31T18:14:59Z", "2025-12-31T18:15:00Z", "2026-01-01T00:00:00Z", "2026-01-01T18:14:59Z"},
			map[string]int64{"2026-01-01T00:00:00+05:45": 1, "2026-01-01T05:00:00+05:45": 1, "2026-01-01T23:00:00+05:45": 1}, 24},
		{"Asia/Kathmandu", "month", "2025-12-31", "2026-01-01",
			[]string{"2025-11-30T18:14:59Z", "2025-12-31T18:14:59Z", "2025-12-31T18:15:00Z", "2026-01-01T00:00:00Z"},
			map[string]int64{"2025-12-01": 1, "2026-01-01": 2}, 2},
	} {
		p := int64(5000 + i)
		var events []querytest.Event
		for _, ts := range c.events {
			events = append(events, querytest.Event{Name: "x", DistinctID: "u", Time: at(ts)})
		}
		if err := s.AppendEvents(ctx, storeEvents(p, events)); err != nil {
			t.Fatal(err)
		}
		for _, math := range []string{"total", "unique_users"} {
			req := query.TrendRequest{Interval: c.interval, DateFrom: c.from, DateTo: c.to, Series: []query.SeriesRequest{{Event: "x", Math: math}}}
			q, err := req.Query(zoneScope(t, p, analytics.EnvLive, c.zone), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			res, err := engine.RunTrend(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			for _, pt := range res.Series[0].Data {
				if pt.Value != 0 {
					got[pt.Date] = pt.Value
				}
			}
			want := c.want
			if math == "unique_users" { // one user: 1 in every non-empty bucket
				want = map[string]int64{}
				for k := range c.want {
					want[k] = 1
				}
			}
			if len(res.Series[0].Data) != c.buckets || !reflect.DeepEqual(got, want) {
				t.Errorf("%s by %s %s..%s (%s): %d buckets %v; want %d %v", c.zone, c.interval, c.from, c.to, math,
					len(res.Series[0].Data), got, c.buckets, want)
			}
		}
	}
}

// testZoneErrorDays checks that an error group's sparkline counts local
// days: the last day of Berlin's range 2026-10-19..2026-10-25 lasts 25
// hours, to 23:00 UTC, so an exception at 22:30 UTC on the 25th counts in
// it; 21:30 UTC on the 18th is 23:30 local, before the range, and 22:30
// UTC is 00:30 on the 19th, its first day.
func testZoneErrorDays(ctx context.Context, t *testing.T, s Events) {
	p := int64(5100)
	var events []querytest.Event
	for _, ts := range []string{"2026-10-18T21:30:00Z", "2026-10-18T22:30:00Z", "2026-10-25T22:30:00Z", "2026-10-24T21:59:59Z", "2026-10-24T22:00:00Z"} {
		at, _ := time.Parse(time.RFC3339, ts)
		events = append(events, querytest.Event{Name: analytics.ExceptionEvent, DistinctID: "u", Time: at,
			Properties: map[string]any{"$exception_fingerprint": "fp", "$exception_type": "TypeError", "$exception_message": "x"}})
	}
	if err := s.AppendEvents(ctx, storeEvents(p, events)); err != nil {
		t.Fatal(err)
	}
	q, err := query.ParseErrorGroups("2026-10-19", "2026-10-25", "", "", zoneScope(t, p, analytics.EnvLive, "Europe/Berlin"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.ErrorGroups(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, 0, 0, 0, 0, 1, 2}; len(rows) != 1 || rows[0].Events != 4 || !reflect.DeepEqual(rows[0].Daily, want) {
		t.Errorf("Berlin error days: %+v; want 4 events, daily %v", rows, want)
	}
}
