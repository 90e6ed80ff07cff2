package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"strata/internal/query/querytest"
)

// sessionsAnswer is the answer of POST /api/v1/query/sessions.
type sessionsAnswer struct {
	Interval string `json:"interval"`
	Totals   struct {
		Visits        int64   `json:"visits"`
		Visitors      int64   `json:"visitors"`
		Pageviews     int64   `json:"pageviews"`
		BounceRate    float64 `json:"bounceRate"`
		VisitDuration float64 `json:"visitDuration"`
		PagesPerVisit float64 `json:"pagesPerVisit"`
	} `json:"totals"`
	Series []struct {
		Date       string  `json:"date"`
		Visits     int64   `json:"visits"`
		BounceRate float64 `json:"bounceRate"`
	} `json:"series"`
	EntryPages []struct {
		Path       string  `json:"path"`
		Visits     int64   `json:"visits"`
		BounceRate float64 `json:"bounceRate"`
	} `json:"entryPages"`
	ExitPages []struct {
		Path   string `json:"path"`
		Visits int64  `json:"visits"`
	} `json:"exitPages"`
}

// pct is a rate as the API rounds it: percent to one decimal, 0 of 0.
func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(1000*float64(n)/float64(of)) / 10
}

// checkSessions compares the server's answer with the reference's, shaped
// as docs/queries.md, "Sessions", says: rates and means rounded, the
// series only where the reference has visits (the other points must be
// 0).
func checkSessions(t *testing.T, got sessionsAnswer, want querytest.SessionsResult, what string) {
	t.Helper()
	w := want.Totals
	tot := got.Totals
	var dur, ppv float64
	if w.Visits > 0 {
		dur = math.Round(float64(w.DurationMicros)/1e5/float64(w.Visits)) / 10
		ppv = math.Round(100*float64(w.Pageviews)/float64(w.Visits)) / 100
	}
	if tot.Visits != w.Visits || tot.Visitors != want.Visitors || tot.Pageviews != w.Pageviews ||
		tot.BounceRate != pct(w.Bounces, w.Visits) || tot.VisitDuration != dur || tot.PagesPerVisit != ppv {
		t.Errorf("%s: totals %+v, want %+v of %d visitors (duration %v s, %v pages a visit)", what, tot, w, want.Visitors, dur, ppv)
	}
	buckets := map[string]querytest.SessionStats{}
	for _, b := range want.Buckets {
		d := day(b.Date)
		if got.Interval == "hour" {
			d = b.Date.Format("2006-01-02T15:04:05Z")
		}
		buckets[d] = b.SessionStats
	}
	seen := 0
	for _, p := range got.Series {
		b := buckets[p.Date]
		if p.Visits != b.Visits || p.BounceRate != pct(b.Bounces, b.Visits) {
			t.Errorf("%s: point %+v, want %+v", what, p, b)
		}
		if b.Visits > 0 {
			seen++
		}
	}
	if seen != len(want.Buckets) {
		t.Errorf("%s: the series shows %d of the reference's %d buckets", what, seen, len(want.Buckets))
	}
	if len(got.EntryPages) != len(want.Entry) || len(got.ExitPages) != len(want.Exit) {
		t.Fatalf("%s: %d entry and %d exit pages, want %+v and %+v", what, len(got.EntryPages), len(got.ExitPages), want.Entry, want.Exit)
	}
	for i, p := range want.Entry {
		if g := got.EntryPages[i]; g.Path != p.Path || g.Visits != p.Visits || g.BounceRate != pct(p.Bounces, p.Visits) {
			t.Errorf("%s: entry page %d %+v, want %+v", what, i, g, p)
		}
	}
	for i, p := range want.Exit {
		if g := got.ExitPages[i]; g.Path != p.Path || g.Visits != p.Visits {
			t.Errorf("%s: exit page %d %+v, want %+v", what, i, g, p)
		}
	}
}

// checkSessionDatasets sends seeded sessions datasets (querytest.
// GenerateSessions) to s, one product each, and compares the sessions
// answer, live and test, with the reference over the events as stored.
func checkSessionDatasets(t *testing.T, s *server, seeds int64) {
	for seed := int64(1); seed <= seeds; seed++ {
		ds := querytest.GenerateSessions(seed)
		tn := newTenant(t, s, fmt.Sprintf("sessions %d", seed))
		events := ingestDataset(t, s, tn, ds.Events)
		req := map[string]any{"dateFrom": day(ds.From), "dateTo": day(ds.To), "interval": ds.Interval,
			"filters": filterJSON(ds.Filters), "limit": ds.Limit}
		for _, test := range []bool{false, true} {
			path := "/api/v1/query/sessions"
			if test {
				path += "?env=test"
			}
			var got sessionsAnswer
			ask(t, s, tn.Token, path, req, &got)
			want := querytest.Sessions(events, test, ds.Filters, ds.From, ds.To, ds.Interval, ds.Limit)
			checkSessions(t, got, want, fmt.Sprintf("seed %d test=%v on %s", seed, test, s.URL))
		}
	}
}

// TestSessionsOverHTTP sends visits to the real binary and reads them back
// through POST /api/v1/query/sessions: the hand-counted case's exact
// numbers, nothing for another product's token, a 400 that names the
// field for a bad request, and seeded datasets equal to the reference.
func TestSessionsOverHTTP(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "visited"), newTenant(t, s, "other")
	c := querytest.SessionCases()[0]
	var events []querytest.Event
	for _, e := range c.Events {
		e.URL = "https://example.com" + e.Path
		events = append(events, e)
	}
	ingestDataset(t, s, a, events)
	req := map[string]any{"dateFrom": day(c.From), "dateTo": day(c.To), "interval": c.Interval, "limit": c.Limit}

	var got sessionsAnswer
	ask(t, s, a.Token, "/api/v1/query/sessions", req, &got)
	// 4 visits of 3 users, 3 bounces, 5 page views, 300 s in all
	// (querytest.SessionCases explains each).
	want := `{"interval":"day","totals":{"visits":4,"visitors":3,"pageviews":5,"bounceRate":75,"visitDuration":75,"pagesPerVisit":1.25},` +
		`"series":[{"date":"2026-03-02","visits":4,"bounceRate":75}],` +
		`"entryPages":[{"path":"/a","visits":2,"bounceRate":100},{"path":"/","visits":1,"bounceRate":0},{"path":"/b","visits":1,"bounceRate":100}],` +
		`"exitPages":[{"path":"/a","visits":2},{"path":"/b","visits":1},{"path":"/pricing","visits":1}]}`
	var w sessionsAnswer
	json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("sessions:\n got %s\nwant %s", g, want)
	}

	// Another product's token sees none of these visits.
	var other sessionsAnswer
	ask(t, s, b.Token, "/api/v1/query/sessions", req, &other)
	if other.Totals.Visits != 0 || len(other.EntryPages) != 0 || len(other.ExitPages) != 0 || len(other.Series) != 1 || other.Series[0].Visits != 0 {
		t.Errorf("another product's token sees %+v", other)
	}

	// A bad request is a 400 naming the field.
	for body, msg := range map[string]string{
		`{"limit":1000}`:        "limit: must be from 1 to 100, not 1000",
		`{"interval":"minute"}`: `interval: must be hour, day, week or month, not "minute"`,
		`{"limits":5}`:          "limits",
	} {
		res := do(t, "POST", s.URL+"/api/v1/query/sessions", []byte(body), map[string]string{"Authorization": "Bearer " + a.Token})
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		json.Unmarshal(res.Body, &e)
		if res.Status != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, msg) {
			t.Errorf("%s: %d %s; want 400 invalid_request saying %q", body, res.Status, res.Body, msg)
		}
	}

	checkSessionDatasets(t, s, 12)
}

// TestSessionsOnClickHouse runs the seeded datasets through two nodes on
// one ClickHouse: every answer must be the reference's, as on DuckDB.
func TestSessionsOnClickHouse(t *testing.T) {
	a, _ := startNodes(t)
	checkSessionDatasets(t, a, 8)
}

// TestSessionPageFiltersOverHTTP filters visits by entry and exit page
// through the real binary: the hand-counted cases' exact numbers, the
// filters combined with an event filter, and a trend refusing a visit's
// property with a 400 that names the sessions query.
func TestSessionPageFiltersOverHTTP(t *testing.T) {
	s := startServer(t, t.TempDir())
	cases := querytest.SessionCases()[3:]
	if len(cases) != 2 || cases[0].Filters == nil || cases[1].Filters == nil {
		t.Fatalf("the page filter cases moved: %d cases from the fourth", len(cases))
	}
	wants := []string{
		// Entry page / and a page view of /pricing: u1's visit alone.
		`{"interval":"day","totals":{"visits":1,"visitors":1,"pageviews":2,"bounceRate":0,"visitDuration":240,"pagesPerVisit":2},` +
			`"series":[{"date":"2026-03-05","visits":1,"bounceRate":0}],` +
			`"entryPages":[{"path":"/","visits":1,"bounceRate":0}],"exitPages":[{"path":"/pricing","visits":1}]}`,
		// Exit page /b: three visits, one a bounce, 90 s in all.
		`{"interval":"day","totals":{"visits":3,"visitors":3,"pageviews":4,"bounceRate":33.3,"visitDuration":30,"pagesPerVisit":1.33},` +
			`"series":[{"date":"2026-03-06","visits":3,"bounceRate":33.3}],` +
			`"entryPages":[{"path":"/b","visits":2,"bounceRate":50},{"path":"/a","visits":1,"bounceRate":0}],"exitPages":[{"path":"/b","visits":3}]}`,
	}
	for i, c := range cases {
		tn := newTenant(t, s, fmt.Sprintf("pages %d", i))
		var events []querytest.Event
		for _, e := range c.Events {
			e.URL = "https://example.com" + e.Path
			events = append(events, e)
		}
		ingestDataset(t, s, tn, events)
		req := map[string]any{"dateFrom": day(c.From), "dateTo": day(c.To), "interval": c.Interval, "limit": c.Limit, "filters": filterJSON(c.Filters)}
		var got, w sessionsAnswer
		ask(t, s, tn.Token, "/api/v1/query/sessions", req, &got)
		json.Unmarshal([]byte(wants[i]), &w)
		if !reflect.DeepEqual(got, w) {
			g, _ := json.Marshal(got)
			t.Errorf("%s:\n got %s\nwant %s", c.Name, g, wants[i])
		}
		// The same answer as the reference's over the events as stored.
		checkSessions(t, got, querytest.Sessions(events, false, c.Filters, c.From, c.To, c.Interval, c.Limit), c.Name)

		body := `{"series":[{"event":"$pageview"}],"filters":[{"property":"exit_page","operator":"eq","value":"/b"}]}`
		res := do(t, "POST", s.URL+"/api/v1/query/trend", []byte(body), map[string]string{"Authorization": "Bearer " + tn.Token})
		if res.Status != 400 || !strings.Contains(string(res.Body), "only the sessions query") {
			t.Errorf("a trend filtered by exit_page: %d %s; want 400 naming the sessions query", res.Status, res.Body)
		}
	}
}
