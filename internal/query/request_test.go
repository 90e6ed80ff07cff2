package query

import (
	"errors"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
)

var now = time.Date(2026, 11, 23, 15, 4, 5, 0, time.UTC)

func TestConversionPct(t *testing.T) {
	for _, c := range []struct {
		n, prev int64
		want    float64
	}{
		{0, 0, 0}, {5, 0, 0}, {1, 3, 33.3}, {2, 3, 66.7}, {1, 8, 12.5}, {3, 3, 100}, {0, 7, 0}, {1, 1000, 0.1}, {1, 2001, 0},
	} {
		if got := ConversionPct(c.n, c.prev); got != c.want {
			t.Errorf("ConversionPct(%d, %d) = %v, want %v", c.n, c.prev, got, c.want)
		}
	}
}

func TestDateRangeDefaults(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(dateLayout, s); return d }
	for _, c := range []struct {
		from, to         string
		wantFrom, wantTo string // wantTo is exclusive
	}{
		{"", "", "2026-10-25", "2026-11-24"},
		{"2026-11-01", "", "2026-11-01", "2026-11-24"},
		{"", "2026-03-31", "2026-03-02", "2026-04-01"},
		{"2026-02-28", "2026-02-28", "2026-02-28", "2026-03-01"},
		{"2027-01-01", "", "2027-01-01", "2027-01-02"},
	} {
		from, to, err := dateRange(c.from, c.to, now, time.UTC)
		if err != nil || !from.Equal(day(c.wantFrom)) || !to.Equal(day(c.wantTo)) {
			t.Errorf("dateRange(%q, %q) = %v, %v, %v; want %s, %s", c.from, c.to, from, to, err, c.wantFrom, c.wantTo)
		}
	}
	for _, c := range [][2]string{{"2026-02-30", ""}, {"2026-2-01", ""}, {"", "2026-11-23T00:00:00Z"}, {"2026-03-02", "2026-03-01"}, {"2000-01-01", "2026-01-01"}} {
		if _, _, err := dateRange(c[0], c[1], now, time.UTC); err == nil {
			t.Errorf("dateRange(%q, %q) accepted", c[0], c[1])
		}
	}
}

func TestParseFunnel(t *testing.T) {
	sc := analytics.EventRange{ProductID: 7, Env: analytics.EnvLive}
	q, err := ParseFunnel([]byte(`{"steps":["a","b","a"],"dateFrom":"2026-11-01","dateTo":"2026-11-02","windowHours":24.0}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	if q.ProductID != 7 || q.Window != 24*time.Hour || len(q.Steps) != 3 ||
		!q.From.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) || !q.To.Equal(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("parsed %+v", q)
	}
	if q, _ := ParseFunnel([]byte(`{"steps":["a","b"]}`), sc, now); q.Window != DefaultWindowHours*time.Hour {
		t.Errorf("default window = %v", q.Window)
	}
	long := strings.Repeat("é", 255)
	if _, err := ParseFunnel([]byte(`{"steps":["`+long+`","b"],"windowHours":720}`), sc, now); err != nil {
		t.Errorf("255 characters and 720 hours are allowed: %v", err)
	}
	for body, field := range map[string]string{
		`{"steps":["a"]}`:                             "steps",
		`{"steps":["a","b"],"windowHours":-1}`:        "windowHours",
		`{"steps":["a","b"],"windowHours":1e3}`:       "windowHours",
		`{"steps":["a","b"],"windowHours":null}`:      "",
		`{"steps":["a","b"],"unknown":true}`:          "unknown",
		`[1,2]`:                                       "body",
		`{"steps":["a","b"],"dateFrom":7}`:            "dateFrom",
		`{"steps":["a","b"],"aggregateBy":"Company"}`: "aggregateBy",
		`{"steps":["a","b"],"aggregateBy":"$groups"}`: "aggregateBy",
		`{"steps":["a","b"],"aggregateBy":""}`:        "",
	} {
		_, err := ParseFunnel([]byte(body), sc, now)
		if field == "" {
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			continue
		}
		var e *analytics.Error
		if !errors.As(err, &e) || e.Kind != analytics.KindInvalid || e.Code != "invalid_request" || !strings.HasPrefix(e.Message, field+":") {
			t.Errorf("%s: got %v, want invalid_request naming %s", body, err, field)
		}
	}
}

func TestParseTrendFilters(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	q, err := ParseTrend([]byte(`{"series":[{"event":"a","math":"unique_users","filters":[{"property":"properties.a.b","operator":"eq","value":true}]}],
		"filters":[{"property":"browser","operator":"is_set"},{"property":"properties.n","operator":"gt","value":3}],
		"breakdown":"properties.plan","interval":"week"}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Series[0].UniqueUsers || q.Series[0].Filters[0].Property.Key != "a.b" || q.Series[0].Filters[0].Value != "true" ||
		q.Filters[0].Property.Column != "browser" || q.Filters[1].Value != 3.0 || q.Breakdown.Key != "plan" ||
		q.BreakdownLimit != DefaultBreakdown || q.Interval != analytics.Week {
		t.Errorf("parsed %+v", q)
	}
}

// TestParseCohortFilters checks a cohort filter as every filter list takes
// it: in or not_in and a cohort's id, which is kept for the engine to
// resolve; anything else names the field.
func TestParseCohortFilters(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	q, err := ParseTrend([]byte(`{"series":[{"event":"a","filters":[{"property":"cohort","operator":"not_in","value":7}]}],
		"filters":[{"property":"cohort","operator":"in","value":12}]}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	if c := q.Filters[0].Cohort; c == nil || c.ID != 12 || c.Generation != 0 || q.Filters[0].Operator != analytics.OpInCohort ||
		q.Series[0].Filters[0].Cohort == nil || q.Series[0].Filters[0].Cohort.ID != 7 || q.Series[0].Filters[0].Operator != analytics.OpNotInCohort {
		t.Errorf("parsed %+v and %+v", q.Filters, q.Series[0].Filters)
	}
	r, err := ParseRetention([]byte(`{"startEvent":"a","filters":[{"property":"cohort","operator":"in","value":3},{"property":"os","operator":"eq","value":"iOS"}]}`), sc, now)
	if err != nil || len(r.Filters) != 2 || r.Filters[0].Cohort == nil || r.Filters[1].Property.Column != "os" {
		t.Errorf("retention filters: %+v, %v", r.Filters, err)
	}
	p, err := ParseTrend([]byte(`{"series":[{"event":"a"}],"filters":[{"property":"person.plan","operator":"eq","value":"pro"},
		{"property":"person.seats","operator":"neq","value":3},{"property":"person.email","operator":"is_set"}]}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []analytics.PersonFilter{{Key: "plan", Operator: analytics.OpEq, Value: "pro"}, {Key: "seats", Operator: analytics.OpNeq, Value: "3"},
		{Key: "email", Operator: analytics.OpIsSet}}
	for i, f := range p.Filters {
		if f.Person == nil || *f.Person != want[i] || f.Cohort != nil {
			t.Errorf("person filter %d: %+v, want %+v", i, f, want[i])
		}
	}
	for body, want := range map[string]string{
		`{"series":[{"event":"a"}],"filters":[{"property":"person.plan","operator":"gt","value":1}]}`:     "filters[0].operator: must be one of eq, neq, contains, is_set, is_not_set for a person property",
		`{"series":[{"event":"a"}],"filters":[{"property":"person.","operator":"eq","value":"x"}]}`:       "filters[0].property: a person property's key must",
		`{"series":[{"event":"a"}],"filters":[{"property":"person.plan","operator":"is_set","value":1}]}`: "filters[0].value: is_set takes no value",
		`{"series":[{"event":"a"}],"filters":[{"property":"person.plan","operator":"eq","value":[1]}]}`:   "filters[0].value: must be a string, number or boolean",
		`{"series":[{"event":"a"}],"filters":[{"property":"cohort","operator":"eq","value":1}]}`:          "filters[0].operator: must be in or not_in for a cohort",
		`{"series":[{"event":"a"}],"filters":[{"property":"cohort","operator":"in","value":"1"}]}`:        "filters[0].value: must be a cohort's id",
		`{"series":[{"event":"a"}],"filters":[{"property":"cohort","operator":"in","value":1.5}]}`:        "filters[0].value: must be a cohort's id",
		`{"series":[{"event":"a"}],"filters":[{"property":"cohort","operator":"in","value":0}]}`:          "filters[0].value: must be a cohort's id",
		`{"series":[{"event":"a"}],"filters":[{"property":"cohort","operator":"in"}]}`:                    "filters[0].value: must be a cohort's id",
		`{"series":[{"event":"a"}],"filters":[{"property":"browser","operator":"in","value":"x"}]}`:       "filters[0].operator: must be one of eq",
		`{"series":[{"event":"a"}],"breakdown":"cohort"}`:                                                 "breakdown: must be one of",
		`{"series":[{"event":"a","filters":[{"property":"cohort","operator":"not_in","value":-2}]}]}`:     "series[0].filters[0].value: must be a cohort's id",
	} {
		if _, err := ParseTrend([]byte(body), sc, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// TestParseAggregateBy checks the group type trends and funnels count:
// absent or "" counts users, a group type is kept, anything else names
// the field.
func TestParseAggregateBy(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	if q, err := ParseTrend([]byte(`{"series":[{"event":"a","math":"unique_users"}],"aggregateBy":"company"}`), sc, now); err != nil || q.AggregateBy != "company" {
		t.Errorf("trend: %+v, %v", q, err)
	}
	if q, err := ParseFunnel([]byte(`{"steps":["a","b"],"aggregateBy":"team_2"}`), sc, now); err != nil || q.AggregateBy != "team_2" {
		t.Errorf("funnel: %+v, %v", q, err)
	}
	if q, err := ParseTrend([]byte(`{"series":[{"event":"a"}]}`), sc, now); err != nil || q.AggregateBy != "" {
		t.Errorf("without aggregateBy: %+v, %v", q, err)
	}
	for _, t2 := range []string{"Company", "1st", "a-b", strings.Repeat("a", 33), "company'"} {
		_, err := ParseTrend([]byte(`{"series":[{"event":"a"}],"aggregateBy":"`+t2+`"}`), sc, now)
		if e := analytics.AsError(err); err == nil || e.Code != "invalid_request" || !strings.HasPrefix(e.Message, "aggregateBy:") {
			t.Errorf("aggregateBy %q: %v", t2, err)
		}
	}
}

func TestIntervalTruncate(t *testing.T) {
	at := time.Date(2026, 3, 1, 13, 45, 0, 0, time.UTC) // a Sunday
	for iv, want := range map[analytics.Interval]time.Time{
		analytics.Hour:  time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC),
		analytics.Day:   time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		analytics.Week:  time.Date(2026, 2, 23, 0, 0, 0, 0, time.UTC),
		analytics.Month: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got := iv.Truncate(at); !got.Equal(want) {
			t.Errorf("%s.Truncate = %v, want %v", iv, got, want)
		}
	}
	if got := analytics.Week.Truncate(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)); got.Day() != 2 {
		t.Errorf("a Monday is its own week start, got %v", got)
	}
}

// TestParseSessionsPageFilters checks that the sessions query takes the
// visit's entry_page and exit_page apart from its event filters, keeps
// each event filter's place in error fields, and that trends refuse them
// with a message naming the sessions query.
func TestParseSessionsPageFilters(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	q, err := ParseSessions([]byte(`{"filters":[{"property":"entry_page","operator":"eq","value":"/a"},
		{"property":"country","operator":"eq","value":"DE"},{"property":"exit_page","operator":"eq","value":""}]}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []analytics.PageFilter{{Path: "/a"}, {Exit: true, Path: ""}}
	if len(q.Filters) != 1 || q.Filters[0].Property.Column != "country" || len(q.Pages) != 2 || q.Pages[0] != want[0] || q.Pages[1] != want[1] {
		t.Errorf("parsed filters %+v, pages %+v", q.Filters, q.Pages)
	}
	for body, field := range map[string]string{
		`{"filters":[{"property":"entry_page","operator":"neq","value":"/a"}]}`:                                               "filters[0].operator",
		`{"filters":[{"property":"exit_page","operator":"eq","value":3}]}`:                                                    "filters[0].value",
		`{"filters":[{"property":"entry_page","operator":"eq","value":"/"},{"property":"nope","operator":"eq","value":"x"}]}`: "filters[1].property",
	} {
		_, err := ParseSessions([]byte(body), sc, now)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error %v, want one naming %s", body, err, field)
		}
	}
	// Page filters count against the 20 filters like any other.
	many := strings.Repeat(`{"property":"entry_page","operator":"eq","value":"/"},`, MaxFilters) + `{"property":"path","operator":"is_set"}`
	if _, err := ParseSessions([]byte(`{"filters":[`+many+`]}`), sc, now); err == nil || !strings.Contains(err.Error(), "at most 20 filters") {
		t.Errorf("21 filters, 20 of them page filters: error %v, want at most 20", err)
	}
	_, err = ParseTrend([]byte(`{"series":[{"event":"$pageview"}],"filters":[{"property":"entry_page","operator":"eq","value":"/"}]}`), sc, now)
	if err == nil || !strings.Contains(err.Error(), "only the sessions query") {
		t.Errorf("a trend filtered by entry_page: error %v, want one naming the sessions query", err)
	}
}
