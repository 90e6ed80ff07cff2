package querytest

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// date returns midnight UTC of 2026-<m>-<d>.
func date(m time.Month, d int) time.Time {
	return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC)
}

// ts returns 2026-<m>-<d> hh:mm UTC.
func ts(m time.Month, d, hh, mm int) time.Time {
	return time.Date(2026, m, d, hh, mm, 0, 0, time.UTC)
}

// values returns the bucket values of a trend line.
func values(s TrendSeries) []int64 {
	var out []int64
	for _, p := range s.Data {
		out = append(out, p.Value)
	}
	return out
}

// dates returns the bucket dates of a trend line.
func dates(s TrendSeries) []time.Time {
	var out []time.Time
	for _, p := range s.Data {
		out = append(out, p.Date)
	}
	return out
}

// label names a trend line for error messages and comparisons.
func label(s TrendSeries) string {
	switch {
	case s.Other:
		return s.Event + "/<other>"
	case s.BreakdownValue == nil:
		return s.Event
	default:
		return s.Event + "/" + *s.BreakdownValue
	}
}

func TestFunnelCases(t *testing.T) {
	for _, c := range FunnelCases() {
		t.Run(c.Name, func(t *testing.T) {
			got := Funnel(c.Events, false, c.Steps, c.From, c.To, c.WindowHours)
			if !slices.Equal(got, c.Want) {
				t.Errorf("Funnel = %v, want %v", got, c.Want)
			}
		})
	}
}

// TestGroupCases checks the oracle on the hand-counted group case: by
// user as it is, by company through ByGroup.
func TestGroupCases(t *testing.T) {
	c := GroupCases()
	if got := Funnel(c.Events, false, c.Steps, c.From, c.To, c.WindowHours); !reflect.DeepEqual(got, c.FunnelUsers) {
		t.Errorf("funnel by user = %v, want %v", got, c.FunnelUsers)
	}
	byCompany := ByGroup(c.Events, "company")
	if got := Funnel(byCompany, false, c.Steps, c.From, c.To, c.WindowHours); !reflect.DeepEqual(got, c.FunnelGroups) {
		t.Errorf("funnel by company = %v, want %v", got, c.FunnelGroups)
	}
	for _, x := range []struct {
		events []Event
		math   string
		want   []int64
	}{
		{byCompany, "total", c.TrendTotal}, {c.Events, "unique_users", c.TrendUsers}, {byCompany, "unique_users", c.TrendGroups},
	} {
		got := Trend(x.events, false, []Series{{Event: c.TrendEvent, Math: x.math}}, nil, c.From, c.To, "day", "", 0)
		if len(got) != 1 || !reflect.DeepEqual(values(got[0]), x.want) {
			t.Errorf("trend %s = %+v, want %v", x.math, got, x.want)
		}
	}
}

func TestFunnelTestEnvironment(t *testing.T) {
	// Only u1's signup and u4's purchase are test events; u1's purchase is
	// live, so in the test environment u1 enters and stops at step 0.
	got := Funnel(testAndBotEvents(), true, []string{"signup", "purchase"}, date(3, 2), date(3, 2), 1)
	if want := []int64{1, 0}; !slices.Equal(got, want) {
		t.Errorf("Funnel(test) = %v, want %v", got, want)
	}
}

func TestFunnelNoSteps(t *testing.T) {
	if got := Funnel(nil, false, nil, date(3, 2), date(3, 2), 1); len(got) != 0 {
		t.Errorf("Funnel with no steps = %v, want []", got)
	}
}

func TestTrendDayBucketsFilled(t *testing.T) {
	events := []Event{
		ev("u1", "signup", ts(3, 2, 9, 0)),
		ev("u1", "signup", date(3, 3).Add(-time.Microsecond)), // 03-02 23:59:59.999999
		ev("u2", "signup", date(3, 4)),
		ev("u2", "signup", date(3, 6)),           // after the range
		ev("u2", "signup", ts(3, 1, 23, 59)),     // before the range
		ev("u3", "page_viewed", ts(3, 3, 12, 0)), // another event
	}
	got := Trend(events, false, []Series{{Event: "signup", Math: "total"}}, nil, date(3, 2), date(3, 5), "day", "", 10)
	if len(got) != 1 {
		t.Fatalf("got %d series, want 1", len(got))
	}
	s := got[0]
	if s.Event != "signup" || s.BreakdownValue != nil || s.Other {
		t.Errorf("series = %+v, want plain signup", s)
	}
	if want := []int64{2, 0, 1, 0}; !slices.Equal(values(s), want) {
		t.Errorf("values = %v, want %v", values(s), want)
	}
	if want := []time.Time{date(3, 2), date(3, 3), date(3, 4), date(3, 5)}; !slices.Equal(dates(s), want) {
		t.Errorf("dates = %v, want %v", dates(s), want)
	}
}

func TestTrendWeekBucketsStartMonday(t *testing.T) {
	// From Wednesday 03-04 to Tuesday 03-17: weeks of Monday 03-02, 03-09
	// and 03-16.
	events := []Event{
		ev("u", "signup", ts(3, 3, 12, 0)),  // in week 03-02 but before From
		ev("u", "signup", ts(3, 4, 10, 0)),  // week 03-02
		ev("u", "signup", ts(3, 8, 23, 59)), // Sunday: week 03-02
		ev("u", "signup", date(3, 9)),       // Monday: week 03-09
		ev("u", "signup", ts(3, 17, 23, 0)), // week 03-16
		ev("u", "signup", date(3, 18)),      // after the range
	}
	got := Trend(events, false, []Series{{Event: "signup", Math: "total"}}, nil, date(3, 4), date(3, 17), "week", "", 10)
	if want := []int64{2, 1, 1}; !slices.Equal(values(got[0]), want) {
		t.Errorf("values = %v, want %v", values(got[0]), want)
	}
	if want := []time.Time{date(3, 2), date(3, 9), date(3, 16)}; !slices.Equal(dates(got[0]), want) {
		t.Errorf("dates = %v, want %v", dates(got[0]), want)
	}
}

func TestTrendMonthBuckets(t *testing.T) {
	events := []Event{
		ev("u", "signup", ts(1, 30, 12, 0)), // before the range
		ev("u", "signup", ts(1, 31, 12, 0)),
		ev("u", "signup", ts(2, 15, 0, 0)),
		ev("u", "signup", ts(2, 28, 23, 59)),
		ev("u", "signup", ts(3, 1, 10, 0)),
		ev("u", "signup", ts(3, 2, 0, 0)), // after the range
	}
	got := Trend(events, false, []Series{{Event: "signup", Math: "total"}}, nil, date(1, 31), date(3, 1), "month", "", 10)
	if want := []int64{1, 2, 1}; !slices.Equal(values(got[0]), want) {
		t.Errorf("values = %v, want %v", values(got[0]), want)
	}
	if want := []time.Time{date(1, 1), date(2, 1), date(3, 1)}; !slices.Equal(dates(got[0]), want) {
		t.Errorf("dates = %v, want %v", dates(got[0]), want)
	}
}

func TestTrendHourBucketsCoverTheLastDay(t *testing.T) {
	events := []Event{
		ev("u", "signup", ts(3, 2, 0, 30)),
		ev("u", "signup", ts(3, 2, 0, 59)),
		ev("u", "signup", ts(3, 2, 23, 10)),
		ev("u", "signup", date(3, 3)), // after the range
	}
	got := Trend(events, false, []Series{{Event: "signup", Math: "total"}}, nil, date(3, 2), date(3, 2), "hour", "", 10)
	want := make([]int64, 24)
	want[0], want[23] = 2, 1
	if !slices.Equal(values(got[0]), want) {
		t.Errorf("values = %v, want %v", values(got[0]), want)
	}
	if last := got[0].Data[23].Date; !last.Equal(ts(3, 2, 23, 0)) {
		t.Errorf("last bucket = %v, want 23:00", last)
	}
}

func TestTrendMathEnvAndBots(t *testing.T) {
	bot := func(e Event) Event { e.Bot = true; return e }
	test := func(e Event) Event { e.Test = true; return e }
	events := []Event{
		ev("u1", "signup", ts(3, 2, 9, 0)),
		ev("u1", "signup", ts(3, 2, 10, 0)),
		ev("u2", "signup", ts(3, 2, 11, 0)),
		ev("u1", "signup", ts(3, 3, 9, 0)),
		bot(ev("u3", "signup", ts(3, 2, 9, 0))),         // bot: ignored
		test(ev("u4", "signup", ts(3, 2, 9, 0))),        // test: ignored when live
		bot(ev("u5", "$bot_pageview", ts(3, 2, 9, 0))),  // counted
		bot(ev("u5", "$bot_pageview", ts(3, 2, 10, 0))), // counted
	}
	series := []Series{
		{Event: "signup", Math: "total"},
		{Event: "signup", Math: "unique_users"},
		{Event: "$bot_pageview", Math: "total"},
	}
	got := Trend(events, false, series, nil, date(3, 2), date(3, 3), "day", "", 10)
	want := [][]int64{{3, 1}, {2, 1}, {2, 0}}
	if len(got) != len(want) {
		t.Fatalf("got %d series, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Event != series[i].Event || !slices.Equal(values(got[i]), want[i]) {
			t.Errorf("series %d = %s %v, want %s %v", i, got[i].Event, values(got[i]), series[i].Event, want[i])
		}
	}

	got = Trend(events, true, series[:1], nil, date(3, 2), date(3, 3), "day", "", 10)
	if want := []int64{1, 0}; !slices.Equal(values(got[0]), want) {
		t.Errorf("test environment = %v, want %v", values(got[0]), want)
	}
}

// countWith runs a one-event trend with one global filter and returns 1
// when the event passes the filter and 0 when it does not.
func countWith(e Event, f Filter) int64 {
	e.Name, e.DistinctID, e.Time = "x", "u", ts(3, 2, 12, 0)
	got := Trend([]Event{e}, false, []Series{{Event: "x", Math: "total"}}, []Filter{f}, date(3, 2), date(3, 2), "day", "", 10)
	return got[0].Data[0].Value
}

func TestFilterOperators(t *testing.T) {
	props := func(kv ...any) Event {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return Event{Properties: m}
	}
	chrome := Event{Browser: "Chrome", Path: "/Café/pricing", URL: "https://example.com/Café/pricing"}
	cases := []struct {
		name  string
		e     Event
		f     Filter
		count int64
	}{
		{"eq string", chrome, Filter{"browser", "eq", "Chrome"}, 1},
		{"eq is case-sensitive", chrome, Filter{"browser", "eq", "chrome"}, 0},
		{"eq on unset column", chrome, Filter{"os", "eq", ""}, 0},
		{"eq int64 on int64", props("n", int64(5)), Filter{"properties.n", "eq", int64(5)}, 1},
		{"eq float64 on int64", props("n", int64(5)), Filter{"properties.n", "eq", 5.0}, 1},
		{"eq number on numeric string", props("plan", "5.0"), Filter{"properties.plan", "eq", int64(5)}, 1},
		{"eq number on text", props("plan", "pro"), Filter{"properties.plan", "eq", int64(5)}, 0},
		{"eq string on int64", props("n", int64(5)), Filter{"properties.n", "eq", "5"}, 1},
		{"eq bool", props("beta", true), Filter{"properties.beta", "eq", true}, 1},
		{"eq bool on string", props("beta", "true"), Filter{"properties.beta", "eq", true}, 1},
		{"eq bool mismatch", props("beta", false), Filter{"properties.beta", "eq", true}, 0},
		{"eq on missing key", props(), Filter{"properties.plan", "eq", "pro"}, 0},
		{"eq empty string", props("plan", ""), Filter{"properties.plan", "eq", ""}, 1},
		{"neq match", props("plan", "pro"), Filter{"properties.plan", "neq", "pro"}, 0},
		{"neq mismatch", props("plan", "free"), Filter{"properties.plan", "neq", "pro"}, 1},
		{"neq on null", props("plan", nil), Filter{"properties.plan", "neq", "pro"}, 1},
		{"neq on nil map", Event{}, Filter{"properties.plan", "neq", "pro"}, 1},
		{"contains ignores case", chrome, Filter{"browser", "contains", "chr"}, 1},
		{"contains unicode case", chrome, Filter{"path", "contains", "CAFÉ"}, 1},
		{"contains miss", chrome, Filter{"url", "contains", "docs"}, 0},
		{"contains on unset", Event{}, Filter{"browser", "contains", ""}, 0},
		{"not_contains hit", chrome, Filter{"browser", "not_contains", "CHR"}, 0},
		{"not_contains miss", chrome, Filter{"browser", "not_contains", "fire"}, 1},
		{"not_contains on unset", Event{}, Filter{"browser", "not_contains", "chr"}, 1},
		{"regex unanchored", chrome, Filter{"path", "regex", "pric"}, 1},
		{"regex anchored", chrome, Filter{"path", "regex", "^/Caf"}, 1},
		{"regex anchored miss", chrome, Filter{"path", "regex", "^pricing"}, 0},
		{"regex is case-sensitive", chrome, Filter{"browser", "regex", "^chrome$"}, 0},
		{"regex on unset", Event{}, Filter{"browser", "regex", ".*"}, 0},
		{"regex on int64", props("n", int64(12)), Filter{"properties.n", "regex", "^1[0-9]$"}, 1},
		{"gt", props("n", int64(5)), Filter{"properties.n", "gt", int64(4)}, 1},
		{"gt equal", props("n", int64(5)), Filter{"properties.n", "gt", int64(5)}, 0},
		{"gt float", props("n", int64(5)), Filter{"properties.n", "gt", 4.5}, 1},
		{"gt on text", props("plan", "pro"), Filter{"properties.plan", "gt", int64(1)}, 0},
		{"gt on numeric string", props("plan", "10"), Filter{"properties.plan", "gt", int64(9)}, 1},
		{"lt", props("n", int64(5)), Filter{"properties.n", "lt", int64(10)}, 1},
		{"lt equal", props("n", int64(5)), Filter{"properties.n", "lt", 5.0}, 0},
		{"lt on unset", props(), Filter{"properties.n", "lt", int64(10)}, 0},
		{"is_set column", chrome, Filter{"browser", "is_set", nil}, 1},
		{"is_set empty column", chrome, Filter{"os", "is_set", nil}, 0},
		{"is_set empty string property", props("plan", ""), Filter{"properties.plan", "is_set", nil}, 1},
		{"is_set null property", props("plan", nil), Filter{"properties.plan", "is_set", nil}, 0},
		{"is_set false", props("beta", false), Filter{"properties.beta", "is_set", nil}, 1},
		{"is_not_set null", props("plan", nil), Filter{"properties.plan", "is_not_set", nil}, 1},
		{"is_not_set nil map", Event{}, Filter{"properties.plan", "is_not_set", nil}, 1},
		{"is_not_set set", props("plan", "pro"), Filter{"properties.plan", "is_not_set", nil}, 0},
		{"key with a dot is literal", props("a.b", "x"), Filter{"properties.a.b", "eq", "x"}, 1},
		{"key after the first prefix", props("properties.x", "y"), Filter{"properties.properties.x", "eq", "y"}, 1},
		{"nested key is not followed", props("a", map[string]any{"b": "x"}), Filter{"properties.a.b", "is_set", nil}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := countWith(c.e, c.f); got != c.count {
				t.Errorf("count = %d, want %d", got, c.count)
			}
		})
	}
}

func TestTrendGlobalAndSeriesFilters(t *testing.T) {
	events := []Event{
		{DistinctID: "u1", Name: "x", Time: ts(3, 2, 9, 0), Browser: "Chrome", OS: "iOS"},
		{DistinctID: "u2", Name: "x", Time: ts(3, 2, 9, 0), Browser: "Chrome", OS: "Linux"},
		{DistinctID: "u3", Name: "x", Time: ts(3, 2, 9, 0), Browser: "Safari", OS: "iOS"},
	}
	global := []Filter{{"browser", "eq", "Chrome"}}
	series := []Series{
		{Event: "x", Math: "total"},
		{Event: "x", Math: "total", Filters: []Filter{{"os", "eq", "iOS"}}},
	}
	got := Trend(events, false, series, global, date(3, 2), date(3, 2), "day", "", 10)
	if a, b := values(got[0]), values(got[1]); a[0] != 2 || b[0] != 1 {
		t.Errorf("values = %v %v, want [2] [1]", a, b)
	}
}

// breakdownEvents are the events of the plan breakdown tests.
//
//	day 1 (03-02): signup u1 pro, u2 pro, u3 free, u1 Team, u4 (no
//	               properties), u5 plan ""; page_viewed u1 pro
//	day 2 (03-03): signup u3 free, u3 free, u2 Team, u4 plan null
func breakdownEvents() []Event {
	plan := func(user, name string, t time.Time, p any) Event {
		e := ev(user, name, t)
		e.Properties = map[string]any{"plan": p}
		return e
	}
	d1, d2 := ts(3, 2, 12, 0), ts(3, 3, 12, 0)
	return []Event{
		plan("u1", "signup", d1, "pro"),
		plan("u2", "signup", d1, "pro"),
		plan("u3", "signup", d1, "free"),
		plan("u1", "signup", d1, "Team"),
		ev("u4", "signup", d1),
		plan("u5", "signup", d1, ""),
		plan("u1", "page_viewed", d1, "pro"),
		plan("u3", "signup", d2, "free"),
		plan("u3", "signup", d2, "free"),
		plan("u2", "signup", d2, "Team"),
		plan("u4", "signup", d2, nil),
	}
}

// checkLines compares trend lines by label and values.
func checkLines(t *testing.T, got []TrendSeries, want []string, wantValues [][]int64) {
	t.Helper()
	var labels []string
	for _, s := range got {
		labels = append(labels, label(s))
	}
	if !slices.Equal(labels, want) {
		t.Fatalf("lines = %q, want %q", labels, want)
	}
	for i, s := range got {
		if !slices.Equal(values(s), wantValues[i]) {
			t.Errorf("%s = %v, want %v", labels[i], values(s), wantValues[i])
		}
		if s.Other != (s.BreakdownValue == nil) {
			t.Errorf("%s: Other %v with BreakdownValue %v", labels[i], s.Other, s.BreakdownValue)
		}
	}
}

func TestTrendBreakdownTotal(t *testing.T) {
	// Signup totals: "" 3 (u4 twice unset, u5 empty), free 3, Team 2,
	// pro 2. Ties go to the smaller value: "", free, Team, pro.
	// Other = Team + pro: day 1 1+2, day 2 1.
	// page_viewed has one value only, and "never" has no events at all.
	series := []Series{
		{Event: "signup", Math: "total"},
		{Event: "page_viewed", Math: "total"},
		{Event: "never", Math: "total"},
	}
	got := Trend(breakdownEvents(), false, series, nil, date(3, 2), date(3, 3), "day", "properties.plan", 2)
	checkLines(t, got,
		[]string{"signup/", "signup/free", "signup/<other>", "page_viewed/pro"},
		[][]int64{{2, 1}, {1, 2}, {3, 1}, {1, 0}})

	// With a limit above the number of values there is no other line.
	got = Trend(breakdownEvents(), false, series[:1], nil, date(3, 2), date(3, 3), "day", "properties.plan", 10)
	checkLines(t, got,
		[]string{"signup/", "signup/free", "signup/Team", "signup/pro"},
		[][]int64{{2, 1}, {1, 2}, {1, 1}, {2, 0}})
}

func TestTrendBreakdownUniqueUsers(t *testing.T) {
	// Distinct users over the range: "" {u4,u5} 2, Team {u1,u2} 2, pro
	// {u1,u2} 2, free {u3} 1. Rank: "", Team, pro, free. With limit 1 the
	// other line holds Team, pro and free: day 1 {u1,u2,u3} = 3 (not
	// 1+2+1), day 2 {u3,u2} = 2.
	series := []Series{{Event: "signup", Math: "unique_users"}}
	got := Trend(breakdownEvents(), false, series, nil, date(3, 2), date(3, 3), "day", "properties.plan", 1)
	checkLines(t, got,
		[]string{"signup/", "signup/<other>"},
		[][]int64{{2, 1}, {3, 2}})
}

func TestTrendBreakdownRanksUniqueUsersOverTheWholeRange(t *testing.T) {
	// Chrome: user x on both days (1 user; 2 if daily counts were summed).
	// Firefox: users y and z on day 1 (2 users). Firefox ranks first; a
	// sum of daily counts would tie and put Chrome first.
	browser := func(user, b string, t time.Time) Event {
		e := ev(user, "signup", t)
		e.Browser = b
		return e
	}
	events := []Event{
		browser("x", "Chrome", ts(3, 2, 9, 0)),
		browser("x", "Chrome", ts(3, 3, 9, 0)),
		browser("y", "Firefox", ts(3, 2, 9, 0)),
		browser("z", "Firefox", ts(3, 2, 9, 0)),
	}
	got := Trend(events, false, []Series{{Event: "signup", Math: "unique_users"}}, nil, date(3, 2), date(3, 3), "day", "browser", 1)
	checkLines(t, got,
		[]string{"signup/Firefox", "signup/<other>"},
		[][]int64{{2, 0}, {1, 1}})
}

func TestTrendBreakdownValueForms(t *testing.T) {
	// Numbers break down by their decimal form and rank as strings on a
	// tie ("10" < "9"); an unset column breaks down as "".
	n := func(v any, b string) Event {
		e := ev("u", "signup", ts(3, 2, 9, 0))
		e.Properties = map[string]any{"n": v}
		e.Browser = b
		return e
	}
	events := []Event{n(int64(9), "Chrome"), n(int64(10), ""), n(true, "")}
	series := []Series{{Event: "signup", Math: "total"}}
	got := Trend(events, false, series, nil, date(3, 2), date(3, 2), "day", "properties.n", 5)
	checkLines(t, got, []string{"signup/10", "signup/9", "signup/true"}, [][]int64{{1}, {1}, {1}})

	got = Trend(events, false, series, nil, date(3, 2), date(3, 2), "day", "browser", 5)
	checkLines(t, got, []string{"signup/", "signup/Chrome"}, [][]int64{{2}, {1}})
}

// checkCohorts compares retention cohorts.
func checkCohorts(t *testing.T, got []Cohort, want []Cohort) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d cohorts, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Date.Equal(w.Date) || g.Size != w.Size || !slices.Equal(g.Values, w.Values) {
			t.Errorf("cohort %d = %v %d %v, want %v %d %v", i, g.Date, g.Size, g.Values, w.Date, w.Size, w.Values)
		}
	}
}

func TestRetentionDay(t *testing.T) {
	bot := func(e Event) Event { e.Bot = true; return e }
	test := func(e Event) Event { e.Test = true; return e }
	events := []Event{
		ev("u1", "signup", ts(3, 2, 10, 0)),
		ev("u1", "purchase", ts(3, 3, 9, 0)),
		ev("u1", "purchase", ts(3, 4, 9, 0)),
		ev("u2", "signup", ts(3, 2, 23, 0)),
		ev("u2", "signup", ts(3, 3, 8, 0)), // not the first: no second cohort
		bot(ev("u2", "purchase", ts(3, 3, 12, 0))),
		ev("u2", "purchase", ts(3, 4, 12, 0)),
		ev("u3", "signup", ts(3, 1, 12, 0)), // before the range
		ev("u3", "signup", ts(3, 3, 10, 0)),
		ev("u3", "purchase", ts(3, 3, 11, 0)), // same day: not a return
		ev("u3", "purchase", ts(3, 4, 11, 0)),
		ev("u4", "purchase", ts(3, 3, 9, 0)), // no signup
		ev("u5", "signup", ts(3, 5, 9, 0)),   // after the range
		test(ev("u6", "signup", ts(3, 2, 9, 0))),
		test(ev("u6", "purchase", ts(3, 3, 9, 0))),
	}
	// Cohort 03-02 = {u1, u2}: day +1 only u1 (u2's is a bot), day +2 both.
	// Cohort 03-03 = {u3}: day +1 yes. Cohort 03-04 is empty.
	got := Retention(events, false, "signup", "purchase", date(3, 2), date(3, 4), "day")
	checkCohorts(t, got, []Cohort{
		{date(3, 2), 2, []int64{2, 1, 2}},
		{date(3, 3), 1, []int64{1, 1}},
		{date(3, 4), 0, []int64{0}},
	})

	// The test environment sees only u6.
	got = Retention(events, true, "signup", "purchase", date(3, 2), date(3, 4), "day")
	checkCohorts(t, got, []Cohort{
		{date(3, 2), 1, []int64{1, 1, 0}},
		{date(3, 3), 0, []int64{0, 0}},
		{date(3, 4), 0, []int64{0}},
	})
}

func TestRetentionWeek(t *testing.T) {
	// From Wednesday 03-04 to Wednesday 03-18: weeks 03-02, 03-09, 03-16.
	events := []Event{
		ev("u1", "signup", ts(3, 5, 9, 0)),     // cohort 03-02
		ev("u1", "purchase", ts(3, 15, 23, 0)), // Sunday: week +1
		ev("u1", "purchase", date(3, 16)),      // Monday: week +2
		ev("u2", "signup", ts(3, 3, 9, 0)),     // before From: ignored
		ev("u2", "signup", ts(3, 10, 9, 0)),    // cohort 03-09
		ev("u2", "purchase", ts(3, 20, 9, 0)),  // after To, still week 03-16: +1
		ev("u3", "signup", ts(3, 3, 9, 0)),     // only before From: no cohort
		ev("u3", "purchase", ts(3, 10, 9, 0)),
	}
	got := Retention(events, false, "signup", "purchase", date(3, 4), date(3, 18), "week")
	checkCohorts(t, got, []Cohort{
		{date(3, 2), 1, []int64{1, 1, 1}},
		{date(3, 9), 1, []int64{1, 1}},
		{date(3, 16), 0, []int64{0}},
	})
}

func TestRetentionMonth(t *testing.T) {
	events := []Event{
		ev("u1", "signup", ts(1, 20, 9, 0)),    // January
		ev("u1", "purchase", date(2, 1)),       // +1
		ev("u2", "signup", ts(1, 31, 23, 59)),  // January
		ev("u2", "purchase", ts(3, 31, 23, 0)), // +2
		ev("u3", "signup", ts(2, 28, 9, 0)),    // February
		ev("u3", "purchase", date(3, 1)),       // +1
		ev("u4", "signup", ts(1, 10, 9, 0)),    // before From
		ev("u4", "purchase", date(2, 1)),
	}
	got := Retention(events, false, "signup", "purchase", date(1, 15), date(3, 10), "month")
	checkCohorts(t, got, []Cohort{
		{date(1, 1), 2, []int64{2, 1, 1}},
		{date(2, 1), 1, []int64{1, 1}},
		{date(3, 1), 0, []int64{0}},
	})
}

func TestRetentionEmptyAndSameEvent(t *testing.T) {
	got := Retention(nil, false, "signup", "signup", date(3, 2), date(3, 5), "day")
	checkCohorts(t, got, []Cohort{
		{date(3, 2), 0, []int64{0, 0, 0, 0}},
		{date(3, 3), 0, []int64{0, 0, 0}},
		{date(3, 4), 0, []int64{0, 0}},
		{date(3, 5), 0, []int64{0}},
	})

	// The start event doubles as the return event.
	events := []Event{
		ev("u1", "signup", ts(3, 2, 9, 0)),
		ev("u1", "signup", ts(3, 4, 9, 0)),
	}
	got = Retention(events, false, "signup", "signup", date(3, 2), date(3, 4), "day")
	checkCohorts(t, got, []Cohort{
		{date(3, 2), 1, []int64{1, 0, 1}},
		{date(3, 3), 0, []int64{0, 0}},
		{date(3, 4), 0, []int64{0}},
	})
}

func TestGenerateDeterministic(t *testing.T) {
	for _, seed := range []int64{0, 1, 42, -7} {
		if !reflect.DeepEqual(Generate(seed), Generate(seed)) {
			t.Errorf("Generate(%d) differs between calls", seed)
		}
	}
	for seed := int64(1); seed < 20; seed++ {
		if reflect.DeepEqual(Generate(seed), Generate(seed+1)) {
			t.Errorf("Generate(%d) == Generate(%d)", seed, seed+1)
		}
	}
}

func TestGenerateShape(t *testing.T) {
	seen := map[string]bool{}
	note := func(what string, ok bool) {
		if ok {
			seen[what] = true
		}
	}
	for seed := int64(0); seed < 300; seed++ {
		ds := Generate(seed)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("seed %d: "+format, append([]any{seed}, args...)...)
		}

		if ds.Base.Before(firstBase) || ds.Base.After(firstBase.AddDate(0, 0, 60)) || ds.Base.Hour() != 0 {
			fail("Base %v", ds.Base)
		}
		if n := len(ds.Events); n < 10 || n > 300 {
			fail("%d events", n)
		}
		users, names := map[string]bool{}, map[string]bool{}
		for _, e := range ds.Events {
			users[e.DistinctID] = true
			if e.Name != "$bot_pageview" {
				names[e.Name] = true
			}
			if !namesOK(e.Name) {
				fail("bad name %q", e.Name)
			}
			if e.Time.Year() != 2026 || e.Time.Location() != time.UTC || e.Time.Nanosecond()%1000 != 0 {
				fail("bad time %v", e.Time)
			}
			note("test event", e.Test)
			note("bot event", e.Bot)
			note("$bot_pageview", e.Name == "$bot_pageview")
			note("$pageview", e.Name == "$pageview")
			note("nil properties", e.Properties == nil)
			plan, ok := e.Properties["plan"]
			note("null plan", ok && plan == nil)
			note("sub-minute time", e.Time.Second() != 0 || e.Time.Nanosecond() != 0)
		}
		if n := len(users); n < 3 || n > 25 {
			fail("%d users", n)
		}
		if !users["ユーザー7"] || !users["émilie"] {
			fail("unicode users missing")
		}
		if n := len(names); n < 3 || n > 5 {
			fail("%d names: %v", n, names)
		}
		if n := len(ds.Steps); n < 2 || n > 4 {
			fail("%d steps", n)
		}
		for i, s := range ds.Steps {
			if !names[s] {
				fail("step %q not among the names", s)
			}
			note("repeated step", slices.Contains(ds.Steps[:i], s))
		}
		if w := ds.WindowHours; (w < 1 || w > 72) && w != 720 {
			fail("window %d", w)
		}
		note("720h window", ds.WindowHours == 720)
		days := ds.To.Sub(ds.From) / day
		if ds.From.Hour() != 0 || ds.To.Hour() != 0 || days < 0 || days > 13 {
			fail("range %v..%v", ds.From, ds.To)
		}
		if len(ds.Filters) > 2 {
			fail("%d filters", len(ds.Filters))
		}
		for _, f := range ds.Filters {
			seen["operator "+f.Operator] = true
		}
		seen["breakdown "+ds.Breakdown] = true
		if !names[ds.StartEvent] || !names[ds.ReturnEvent] {
			fail("retention events %q %q", ds.StartEvent, ds.ReturnEvent)
		}

		// Edge cases the data should contain.
		window := time.Duration(ds.WindowHours) * time.Hour
		for i, a := range ds.Events {
			note("step 0 before From", a.Name == ds.Steps[0] && a.Time.Before(ds.From))
			note("event after To", !a.Time.Before(ds.To.Add(day)))
			for j, b := range ds.Events {
				if i == j || a.DistinctID != b.DistinctID {
					continue
				}
				note("equal timestamps", a.Time.Equal(b.Time) && a.Name != b.Name)
				if b.Time.Equal(a.Time.Add(window)) {
					seen["pair at window"] = true
				} else if b.Time.Equal(a.Time.Add(window + time.Microsecond)) {
					seen["pair 1µs over"] = true
				}
			}
		}

		// The queries run, and a few consistency checks hold.
		counts := Funnel(ds.Events, false, ds.Steps, ds.From, ds.To, ds.WindowHours)
		for i := 1; i < len(counts); i++ {
			if counts[i] > counts[i-1] {
				fail("funnel not decreasing: %v", counts)
			}
		}
		note("funnel converts", counts[len(counts)-1] > 0)
		var series []Series
		for name := range names {
			series = append(series, Series{Event: name, Math: "total"}, Series{Event: name, Math: "unique_users"})
		}
		slices.SortFunc(series, func(a, b Series) int { return strings.Compare(a.Event+a.Math, b.Event+b.Math) })
		plain := Trend(ds.Events, false, series, ds.Filters, ds.From, ds.To, "day", "", 3)
		if ds.Breakdown != "" {
			// The lines of a total breakdown add up to the plain total
			// per bucket.
			for i, s := range series {
				if s.Math != "total" {
					continue
				}
				sum := make([]int64, len(plain[i].Data))
				lines := Trend(ds.Events, false, []Series{s}, ds.Filters, ds.From, ds.To, "day", ds.Breakdown, 3)
				for _, line := range lines {
					for j, p := range line.Data {
						sum[j] += p.Value
					}
				}
				if !slices.Equal(sum, values(plain[i])) {
					fail("breakdown of %s sums to %v, plain %v", s.Event, sum, values(plain[i]))
				}
			}
		}
		for _, interval := range []string{"hour", "week", "month"} {
			Trend(ds.Events, false, series, ds.Filters, ds.From, ds.To, interval, ds.Breakdown, 3)
		}
		for _, period := range []string{"day", "week", "month"} {
			for _, c := range Retention(ds.Events, false, ds.StartEvent, ds.ReturnEvent, ds.From, ds.To, period) {
				for _, v := range c.Values {
					if v > c.Size {
						fail("retention %s cohort %v: %v over size %d", period, c.Date, c.Values, c.Size)
					}
				}
			}
		}
	}

	for _, what := range []string{
		"test event", "bot event", "$bot_pageview", "$pageview", "nil properties", "null plan",
		"sub-minute time", "repeated step", "720h window", "step 0 before From", "event after To",
		"equal timestamps", "pair at window", "pair 1µs over", "funnel converts",
		"operator eq", "operator neq", "operator contains", "operator not_contains", "operator regex",
		"operator gt", "operator lt", "operator is_set", "operator is_not_set",
		"breakdown ", "breakdown browser", "breakdown properties.plan", "breakdown properties.n",
	} {
		if !seen[what] {
			t.Errorf("no dataset among 300 seeds has %s", what)
		}
	}
}

// TestSessionCases checks the reference on the hand-counted sessions cases.
func TestSessionCases(t *testing.T) {
	for _, c := range SessionCases() {
		t.Run(c.Name, func(t *testing.T) {
			got := Sessions(c.Events, false, c.Filters, c.From, c.To, c.Interval, c.Limit)
			if !reflect.DeepEqual(got, c.Want) {
				t.Errorf("Sessions =\n %+v\nwant\n %+v", got, c.Want)
			}
		})
	}
}

// TestGenerateSessions checks that the generated datasets reach the edges
// the sessions rules are about: a split at exactly 30 minutes, visits
// starting before the range and visits after its end, and bounces and
// non-bounces.
func TestGenerateSessions(t *testing.T) {
	var splits, before, bounces, nonBounces, pageFiltered int
	for seed := int64(1); seed <= 40; seed++ {
		ds := GenerateSessions(seed)
		if !reflect.DeepEqual(ds, GenerateSessions(seed)) {
			t.Fatalf("seed %d: not reproducible", seed)
		}
		for _, a := range ds.Events {
			for _, b := range ds.Events {
				if a.DistinctID == b.DistinctID && b.Time.Sub(a.Time) == 30*time.Minute {
					splits++
				}
			}
			if a.Time.Before(ds.From) && !a.Time.Before(ds.From.Add(-30*time.Minute)) {
				before++
			}
		}
		r := Sessions(ds.Events, false, nil, ds.From, ds.To, ds.Interval, ds.Limit)
		bounces += int(r.Totals.Bounces)
		nonBounces += int(r.Totals.Visits - r.Totals.Bounces)
		// A page filter that keeps some visits and drops others.
		var events []Filter
		for _, f := range ds.Filters {
			if f.Property != "entry_page" && f.Property != "exit_page" {
				events = append(events, f)
			}
		}
		if len(events) < len(ds.Filters) {
			all := Sessions(ds.Events, false, events, ds.From, ds.To, ds.Interval, ds.Limit).Totals.Visits
			kept := Sessions(ds.Events, false, ds.Filters, ds.From, ds.To, ds.Interval, ds.Limit).Totals.Visits
			if kept > 0 && kept < all {
				pageFiltered++
			}
		}
	}
	if splits == 0 || before == 0 || bounces == 0 || nonBounces == 0 || pageFiltered < 5 {
		t.Errorf("the datasets miss an edge: %d gaps of exactly 30 minutes, %d events in the look-back, %d bounces, %d non-bounces, %d page filters keeping some visits and not others",
			splits, before, bounces, nonBounces, pageFiltered)
	}
}

// TestFunnelViewsCases holds FunnelTimesBy and FunnelOverTimeBy to the
// hand-checked case of the views with a breakdown.
func TestFunnelViewsCases(t *testing.T) {
	c := FunnelViewsCases()
	steps := PlainSteps(c.Steps)
	counts, times, rows := FunnelTimesBy(time.UTC, c.Events, false, steps, nil, c.Breakdown, c.Limit, c.From, c.To, c.WindowHours)
	if !reflect.DeepEqual(counts, c.Counts) || !reflect.DeepEqual(times, c.Times) {
		t.Errorf("whole funnel: %v %+v, want %v %+v", counts, times, c.Counts, c.Times)
	}
	if !reflect.DeepEqual(rows, c.Rows) {
		t.Errorf("rows:\n%+v\nwant\n%+v", rows, c.Rows)
	}
	points, prows := FunnelOverTimeBy(time.UTC, c.Events, false, steps, nil, c.Breakdown, c.Limit, c.From, c.To, c.WindowHours, "day")
	days := func(ps []FunnelPoint) (out [][]int64) {
		for i, p := range ps {
			if !p.Date.Equal(c.From.AddDate(0, 0, i)) {
				t.Errorf("bucket %d is %s", i, p.Date)
			}
			out = append(out, p.Counts)
		}
		return out
	}
	if got := days(points); !reflect.DeepEqual(got, c.Days) {
		t.Errorf("whole funnel by day: %v, want %v", got, c.Days)
	}
	if len(prows) != len(c.Rows) {
		t.Fatalf("%d rows over time, want %d", len(prows), len(c.Rows))
	}
	for i, r := range prows {
		if r.Other != c.Rows[i].Other || !reflect.DeepEqual(r.Value, c.Rows[i].Value) || !reflect.DeepEqual(days(r.Points), c.RowDays[i]) {
			t.Errorf("row %d over time: %v %v %v, want %v %v %v", i, r.Other, r.Value, days(r.Points), c.Rows[i].Other, c.Rows[i].Value, c.RowDays[i])
		}
	}
	// Without a breakdown, the same whole funnel and no rows.
	if counts, times, rows := FunnelTimesBy(time.UTC, c.Events, false, steps, nil, "", 0, c.From, c.To, c.WindowHours); !reflect.DeepEqual(counts, c.Counts) ||
		!reflect.DeepEqual(times, c.Times) || rows != nil {
		t.Errorf("without a breakdown: %v %+v %+v", counts, times, rows)
	}
}
