package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/enrich/source"
	"strata/internal/enrich/ua"
	"strata/internal/query/querytest"
)

// tenant is one product with its credentials, made through the real CLI.
type tenant struct {
	ID          int64
	Live, Test  string // API keys
	Token       string // query token
	ProductFlag string
}

// newTenant creates a product with a live key, a test key and a query token.
func newTenant(t *testing.T, s *server, name string) tenant {
	t.Helper()
	var p struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(cli(t, s.dataDir, s.manage("products", "create", "--name", name)...)), &p); err != nil {
		t.Fatalf("products create: %v", err)
	}
	pid := strconv.FormatInt(p.ID, 10)
	return tenant{
		ID:          p.ID,
		ProductFlag: pid,
		Live:        strings.TrimSpace(cli(t, s.dataDir, s.manage("keys", "create", "--product", pid)...)),
		Test:        strings.TrimSpace(cli(t, s.dataDir, s.manage("keys", "create", "--product", pid, "--test")...)),
		Token:       strings.TrimSpace(cli(t, s.dataDir, s.manage("tokens", "create", "--product", pid)...)),
	}
}

// Real user agents and what the server's parser makes of them. The test
// sends the agent; the reference sees the parsed columns.
type agent struct{ ua, browser, os, device string }

var (
	agents = map[string]agent{
		"Chrome":  {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "Chrome", "Windows", "desktop"},
		"Firefox": {"Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0", "Firefox", "Linux", "desktop"},
		"Safari":  {"Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1", "Safari", "iOS", "mobile"},
		"Edge":    {"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0", "Edge", "Windows", "desktop"},
		"":        {},
	}
	androidTablet = agent{"Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", "Chrome", "Android", "tablet"}
	macSafari     = agent{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15", "Safari", "macOS", "desktop"}
	gptBot        = agent{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", "GPTBot", "", "bot"}
)

// realize turns a generated event into what ingest can be sent and what it
// will store: the browser, OS and device come from a real user agent, the
// path and the acquisition columns from the URL and referrer, and a bot's
// $pageview becomes $bot_pageview. It
// returns the wire event and the event as the reference should see it.
func realize(e querytest.Event) (map[string]any, querytest.Event) {
	a := agents[e.Browser]
	switch {
	case e.Bot:
		a = gptBot
	case e.Browser == "Chrome" && e.OS == "Android":
		a = androidTablet
	case e.Browser == "Safari" && e.OS == "Mac OS X":
		a = macSafari
	}
	e.Browser, e.OS, e.DeviceType = a.browser, a.os, a.device
	e.Path = ""
	if e.URL != "" {
		if u, err := url.Parse(e.URL); err == nil {
			e.Path = u.Path
		}
	}
	// Ingest finds the acquisition columns from the URL and referrer; their
	// rules have their own tests (enrich/source), and here the reference
	// is given what ingest stores, as for the user agent.
	src := source.Classify(e.URL, e.Referrer)
	e.Source, e.Channel, e.UTMSource, e.UTMMedium, e.UTMCampaign = src.Source, src.Channel, src.UTMSource, src.UTMMedium, src.UTMCampaign
	// The client is on loopback, which has no location; the screen class
	// is what ingest finds from the $viewport_width the event carries.
	e.Country, e.Region, e.City = "", "", ""
	e.ScreenClass = ""
	if w, ok := e.Properties["$viewport_width"].(int64); ok {
		e.ScreenClass = ua.ScreenClass(float64(w))
	}
	wireName := e.Name
	if e.Bot && (e.Name == "$pageview" || e.Name == "$bot_pageview") {
		e.Name, wireName = "$bot_pageview", "$pageview"
	}
	w := map[string]any{
		"event_name":  wireName,
		"distinct_id": e.DistinctID,
		"timestamp":   e.Time.UTC().Format(time.RFC3339Nano),
	}
	if a.ua != "" {
		w["user_agent"] = a.ua
	}
	if e.URL != "" {
		w["url"] = e.URL
	}
	if e.Referrer != "" {
		w["referrer"] = e.Referrer
	}
	if e.Properties != nil {
		w["properties"] = e.Properties
	}
	return w, e
}

// ingestDataset sends events through POST /e (test events with the test
// key) and returns them as stored.
func ingestDataset(t *testing.T, s *server, tn tenant, events []querytest.Event) []querytest.Event {
	t.Helper()
	stored := make([]querytest.Event, 0, len(events))
	batches := map[bool][]map[string]any{}
	for _, e := range events {
		w, r := realize(e)
		stored = append(stored, r)
		batches[e.Test] = append(batches[e.Test], w)
	}
	for test, batch := range batches {
		key := tn.Live
		if test {
			key = tn.Test
		}
		body, _ := json.Marshal(map[string]any{"batch": batch})
		res := do(t, "POST", s.URL+"/e", body, map[string]string{
			"Content-Type": "application/json", "X-API-Key": key, "User-Agent": ""})
		if res.Status != 202 {
			t.Fatalf("ingest: %d %s", res.Status, res.Body)
		}
		var ack ingestAnswer
		json.Unmarshal(res.Body, &ack)
		if ack.Accepted != len(batch) {
			t.Fatalf("ingest accepted %d of %d: %s", ack.Accepted, len(batch), res.Body)
		}
	}
	return stored
}

// ask posts a query with a bearer credential and decodes a 200 answer.
func ask(t *testing.T, s *server, cred, path string, req, out any) {
	t.Helper()
	body, _ := json.Marshal(req)
	res := do(t, "POST", s.URL+path, body, map[string]string{"Authorization": "Bearer " + cred, "Content-Type": "application/json"})
	if res.Status != 200 {
		t.Fatalf("POST %s %s: %d %s", path, body, res.Status, res.Body)
	}
	if err := json.Unmarshal(res.Body, out); err != nil {
		t.Fatalf("POST %s: %v: %s", path, err, res.Body)
	}
}

type funnelAnswer struct {
	Steps []struct {
		Name          string   `json:"name"`
		Count         int64    `json:"count"`
		ConversionPct *float64 `json:"conversionPct"`
	} `json:"steps"`
}

// checkFunnel compares the server's funnel with the expected counts,
// including the names and conversion percentages docs/queries.md describes.
func checkFunnel(t *testing.T, got funnelAnswer, steps []string, want []int64, what string) {
	t.Helper()
	if len(got.Steps) != len(steps) {
		t.Fatalf("%s: %d steps answered, want %d", what, len(got.Steps), len(steps))
	}
	for i, s := range got.Steps {
		if s.Name != steps[i] || s.Count != want[i] {
			t.Errorf("%s: step %d = %q %d, want %q %d", what, i, s.Name, s.Count, steps[i], want[i])
		}
		switch {
		case i == 0 && s.ConversionPct != nil:
			t.Errorf("%s: step 0 conversionPct = %v, want null", what, *s.ConversionPct)
		case i > 0:
			pct := 0.0
			if want[i-1] > 0 {
				pct = math.Round(1000*float64(want[i])/float64(want[i-1])) / 10
			}
			if s.ConversionPct == nil || *s.ConversionPct != pct {
				t.Errorf("%s: step %d conversionPct = %v, want %v", what, i, s.ConversionPct, pct)
			}
		}
	}
}

func day(t time.Time) string { return t.Format("2006-01-02") }

func funnelRequest(steps []string, from, to time.Time, window int) map[string]any {
	return map[string]any{"steps": steps, "dateFrom": day(from), "dateTo": day(to), "windowHours": window}
}

// TestFunnelHandCases runs the hand-computed funnel cases through the real
// server: each case in its own product.
func TestFunnelHandCases(t *testing.T) {
	s := startServer(t, t.TempDir())
	for _, c := range querytest.FunnelCases() {
		t.Run(c.Name, func(t *testing.T) {
			tn := newTenant(t, s, c.Name)
			ingestDataset(t, s, tn, c.Events)
			var got funnelAnswer
			ask(t, s, tn.Token, "/api/v1/query/funnel", funnelRequest(c.Steps, c.From, c.To, c.WindowHours), &got)
			checkFunnel(t, got, c.Steps, c.Want, c.Name)
		})
	}
}

// trendLine is a trend line in a form both answers can be put in.
type trendLine struct {
	Event          string
	BreakdownValue *string
	Other          bool
	Dates          []string
	Values         []int64
}

func referenceTrend(in []querytest.TrendSeries, interval string) []trendLine {
	out := []trendLine{}
	for _, s := range in {
		l := trendLine{Event: s.Event, BreakdownValue: s.BreakdownValue, Other: s.Other}
		for _, p := range s.Data {
			if interval == "hour" {
				l.Dates = append(l.Dates, p.Date.UTC().Format(time.RFC3339))
			} else {
				l.Dates = append(l.Dates, day(p.Date))
			}
			l.Values = append(l.Values, p.Value)
		}
		out = append(out, l)
	}
	return out
}

type trendAnswer struct {
	Series []struct {
		Label          string  `json:"label"`
		Event          string  `json:"event"`
		BreakdownValue *string `json:"breakdownValue"`
		Other          bool    `json:"other"`
		Data           []struct {
			Date  string `json:"date"`
			Value int64  `json:"value"`
		} `json:"data"`
	} `json:"series"`
}

func (a trendAnswer) lines() []trendLine {
	out := []trendLine{}
	for _, s := range a.Series {
		l := trendLine{Event: s.Event, BreakdownValue: s.BreakdownValue, Other: s.Other}
		for _, p := range s.Data {
			l.Dates = append(l.Dates, p.Date)
			l.Values = append(l.Values, p.Value)
		}
		out = append(out, l)
	}
	return out
}

func filterJSON(fs []querytest.Filter) []map[string]any {
	out := []map[string]any{}
	for _, f := range fs {
		m := map[string]any{"property": f.Property, "operator": f.Operator}
		if f.Value != nil {
			m["value"] = f.Value
		}
		out = append(out, m)
	}
	return out
}

type retentionAnswer struct {
	Cohorts []struct {
		Date   string  `json:"date"`
		Size   int64   `json:"size"`
		Values []int64 `json:"values"`
	} `json:"cohorts"`
}

// TestQueriesMatchReference is the correctness proof: for 80 seeded
// random datasets, ingested through the real server, every funnel, trend
// and retention answer (and every later query checkAnswers asks) must
// equal the reference in querytest. It ran 300 until the queries it asks
// of each dataset had grown to take a third of the package's time
// (345 s), then 150, then 80 to keep `make test` under 30 minutes on 2
// cores; the stores' conformance suites hold the same reference on 40
// more datasets each, on DuckDB, ClickHouse and the cluster.
func TestQueriesMatchReference(t *testing.T) {
	seeds := 80
	if testing.Short() {
		seeds = 40
	}
	s := startServer(t, t.TempDir())
	var wg sync.WaitGroup
	work := make(chan int64)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range work {
				t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { checkDataset(t, s, seed) })
			}
		}()
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		work <- seed
	}
	close(work)
	wg.Wait()
}

var (
	intervals = []string{"day", "week", "month", "hour"}
	periods   = []string{"day", "week", "month"}
)

func checkDataset(t *testing.T, s *server, seed int64) {
	ds := querytest.Generate(seed)
	tn := newTenant(t, s, fmt.Sprintf("seed %d", seed))
	events := ingestDataset(t, s, tn, ds.Events)
	checkAnswers(t, s, tn, seed, ds, events)
}

// checkAnswers asks s every query of dataset seed and compares each answer
// with the reference over events, the events as stored.
func checkAnswers(t *testing.T, s *server, tn tenant, seed int64, ds querytest.Dataset, events []querytest.Event) {
	what := fmt.Sprintf("seed %d on %s", seed, s.URL)

	// Funnels, live and test data.
	for _, test := range []bool{false, true} {
		want := querytest.Funnel(events, test, ds.Steps, ds.From, ds.To, ds.WindowHours)
		var got funnelAnswer
		path := "/api/v1/query/funnel"
		if test {
			path += "?env=test"
		}
		ask(t, s, tn.Token, path, funnelRequest(ds.Steps, ds.From, ds.To, ds.WindowHours), &got)
		checkFunnel(t, got, ds.Steps, want, fmt.Sprintf("%s funnel test=%v %v window %dh", what, test, ds.Steps, ds.WindowHours))
	}

	// Trends: two series (events and unique users), the dataset's filters
	// on the first, a breakdown with a small limit so "other" appears.
	interval := intervals[seed%int64(len(intervals))]
	series := []querytest.Series{
		{Event: ds.Steps[0], Math: "total", Filters: ds.Filters},
		{Event: ds.Steps[1], Math: "unique_users"},
	}
	if seed%5 == 0 {
		series = append(series, querytest.Series{Event: "$bot_pageview", Math: "total"})
	}
	limit := 1 + int(seed%3)
	var global []querytest.Filter
	if seed%2 == 0 && len(ds.Filters) > 0 {
		global, series[0].Filters = ds.Filters[:1], ds.Filters[1:]
	}
	req := map[string]any{"dateFrom": day(ds.From), "dateTo": day(ds.To), "interval": interval,
		"filters": filterJSON(global)}
	var sj []map[string]any
	for _, se := range series {
		sj = append(sj, map[string]any{"event": se.Event, "math": se.Math, "filters": filterJSON(se.Filters)})
	}
	req["series"] = sj
	if ds.Breakdown != "" {
		req["breakdown"], req["breakdownLimit"] = ds.Breakdown, limit
	}
	for _, test := range []bool{false, true} {
		want := referenceTrend(querytest.Trend(events, test, series, global, ds.From, ds.To, interval, ds.Breakdown, limit), interval)
		var got trendAnswer
		path := "/api/v1/query/trend"
		if test {
			path += "?env=test"
		}
		ask(t, s, tn.Token, path, req, &got)
		if g := got.lines(); !reflect.DeepEqual(g, want) {
			b, _ := json.Marshal(req)
			t.Errorf("%s trend test=%v %s:\n got %s\nwant %s", what, test, b, show(g), show(want))
		}
	}

	// Retention.
	period := periods[seed%int64(len(periods))]
	want := querytest.Retention(events, false, ds.StartEvent, ds.ReturnEvent, ds.From, ds.To, period)
	var got retentionAnswer
	ask(t, s, tn.Token, "/api/v1/query/retention", map[string]any{"startEvent": ds.StartEvent,
		"returnEvent": ds.ReturnEvent, "dateFrom": day(ds.From), "dateTo": day(ds.To), "period": period}, &got)
	if len(got.Cohorts) != len(want) {
		t.Fatalf("%s retention by %s: %d cohorts, want %d", what, period, len(got.Cohorts), len(want))
	}
	for i, c := range want {
		g := got.Cohorts[i]
		if g.Date != day(c.Date) || g.Size != c.Size || !reflect.DeepEqual(g.Values, c.Values) {
			t.Errorf("%s retention %s→%s by %s, cohort %d: got %+v, want %s %d %v",
				what, ds.StartEvent, ds.ReturnEvent, period, i, g, day(c.Date), c.Size, c.Values)
		}
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestQueryRequestsAreValidated checks the 400s, naming the field, and the
// credential rules of the query API.
func TestQueryRequestsAreValidated(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "validation")
	bad := []struct {
		body  string
		field string
	}{
		{`{"steps":["a"]}`, "steps"},
		{`{"steps":[]}`, "steps"},
		{`{}`, "steps"},
		{`{"steps":"a"}`, "steps"},
		{`{"steps":["a",""]}`, "steps[1]"},
		{`{"steps":["a","` + strings.Repeat("é", 256) + `"]}`, "steps[1]"},
		{`{"steps":["a","b"],"windowHours":0}`, "windowHours"},
		{`{"steps":["a","b"],"windowHours":721}`, "windowHours"},
		{`{"steps":["a","b"],"windowHours":1.5}`, "windowHours"},
		{`{"steps":["a","b"],"windowHours":"24"}`, "windowHours"},
		{`{"steps":["a","b"],"dateFrom":"2026-13-01"}`, "dateFrom"},
		{`{"steps":["a","b"],"dateFrom":"2026-1-01"}`, "dateFrom"},
		{`{"steps":["a","b"],"dateTo":"yesterday"}`, "dateTo"},
		{`{"steps":["a","b"],"dateFrom":"2026-03-02","dateTo":"2026-03-01"}`, "dateTo"},
		{`{"steps":["a","b"],"window":24}`, "window"},
		{`{"steps":["a","b"]} {}`, "body"},
		{`not json`, "body"},
	}
	for _, c := range bad {
		res := do(t, "POST", s.URL+"/api/v1/query/funnel", []byte(c.body), map[string]string{"Authorization": "Bearer " + tn.Token})
		if res.Status != 400 || res.ErrorCode(t) != "invalid_request" {
			t.Errorf("%s: %d %s, want 400 invalid_request", c.body, res.Status, res.Body)
			continue
		}
		msg := res.JSON(t)["error"].(map[string]any)["message"].(string)
		if !strings.HasPrefix(msg, c.field+":") {
			t.Errorf("%s: message %q does not name %s first", c.body, msg, c.field)
		}
	}
	trendBad := []struct{ body, field string }{
		{`{"series":[]}`, "series"},
		{`{"series":[{"event":"a","math":"median"}]}`, "series[0].math"},
		{`{"series":[{"event":"a"}],"interval":"minute"}`, "interval"},
		{`{"series":[{"event":"a"}],"filters":[{"property":"color","operator":"eq","value":"x"}]}`, "filters[0].property"},
		{`{"series":[{"event":"a"}],"filters":[{"property":"url","operator":"like","value":"x"}]}`, "filters[0].operator"},
		{`{"series":[{"event":"a"}],"filters":[{"property":"url","operator":"regex","value":"(("}]}`, "filters[0].value"},
		{`{"series":[{"event":"a"}],"filters":[{"property":"properties.n","operator":"gt","value":"x"}]}`, "filters[0].value"},
		{`{"series":[{"event":"a"}],"filters":[{"property":"url","operator":"is_set","value":"x"}]}`, "filters[0].value"},
		{`{"series":[{"event":"a"}],"breakdown":"browser","breakdownLimit":101}`, "breakdownLimit"},
		{`{"series":[{"event":"a"}],"interval":"hour","dateFrom":"2025-01-01","dateTo":"2026-01-01"}`, "interval"},
	}
	for _, c := range trendBad {
		res := do(t, "POST", s.URL+"/api/v1/query/trend", []byte(c.body), map[string]string{"Authorization": "Bearer " + tn.Token})
		if res.Status != 400 {
			t.Errorf("%s: %d %s, want 400", c.body, res.Status, res.Body)
			continue
		}
		if msg := res.JSON(t)["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, c.field+":") {
			t.Errorf("%s: message %q does not name %s first", c.body, msg, c.field)
		}
	}
	if res := do(t, "POST", s.URL+"/api/v1/query/retention", []byte(`{"startEvent":"a","period":"hour"}`),
		map[string]string{"Authorization": "Bearer " + tn.Token}); res.Status != 400 {
		t.Errorf("retention by hour: %d, want 400", res.Status)
	}
	if res := do(t, "GET", s.URL+"/api/v1/query/bots?limit=0", nil, map[string]string{"Authorization": "Bearer " + tn.Token}); res.Status != 400 {
		t.Errorf("bots limit=0: %d, want 400", res.Status)
	}
	if res := do(t, "POST", s.URL+"/api/v1/query/funnel?env=staging", []byte(`{"steps":["a","b"]}`),
		map[string]string{"Authorization": "Bearer " + tn.Token}); res.Status != 400 {
		t.Errorf("env=staging: %d, want 400", res.Status)
	}

	valid := []byte(`{"steps":["a","b"]}`)
	for _, c := range []struct {
		header string
		status int
		code   string
	}{
		{"", 401, "missing_credentials"},
		{"Basic dXNlcjpwYXNz", 401, "missing_credentials"},
		{"Bearer st_tok_" + strings.Repeat("x", 40), 401, "invalid_credentials"},
		{"Bearer nonsense", 401, "invalid_credentials"},
		{"Bearer " + tn.Token, 200, ""},
		// API keys are public: they may not read (TestCredentialPermissions).
		{"Bearer " + tn.Live, 403, "key_not_allowed"},
		{"Bearer " + tn.Test, 403, "key_not_allowed"},
	} {
		h := map[string]string{}
		if c.header != "" {
			h["Authorization"] = c.header
		}
		res := do(t, "POST", s.URL+"/api/v1/query/funnel", valid, h)
		if res.Status != c.status || (c.code != "" && res.ErrorCode(t) != c.code) {
			t.Errorf("Authorization %q: %d %s, want %d %s", c.header, res.Status, res.Body, c.status, c.code)
		}
		if res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("the query API must not send CORS headers")
		}
	}
	cli(t, s.dataDir, "keys", "disable", tn.Live)
	if res := do(t, "POST", s.URL+"/api/v1/query/funnel", valid, map[string]string{"Authorization": "Bearer " + tn.Live}); res.Status != 403 {
		t.Errorf("disabled key: %d, want 403", res.Status)
	}
	cli(t, s.dataDir, "keys", "revoke", tn.Live)
	if res := do(t, "POST", s.URL+"/api/v1/query/funnel", valid, map[string]string{"Authorization": "Bearer " + tn.Live}); res.Status != 401 {
		t.Errorf("revoked key: %d, want 401", res.Status)
	}
}

// TestQueryTenantIsolation checks that a credential reads only its own
// product, and test data only when asked.
func TestQueryTenantIsolation(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "A"), newTenant(t, s, "B")
	now := time.Now().UTC().Truncate(time.Second)
	ev := func(user, name string, at time.Time, test bool) querytest.Event {
		return querytest.Event{DistinctID: user, Name: name, Time: at, Test: test}
	}
	ingestDataset(t, s, a, []querytest.Event{
		ev("u1", "signup", now.Add(-2*time.Hour), false), ev("u1", "paid", now.Add(-time.Hour), false),
		ev("t1", "signup", now.Add(-2*time.Hour), true),
	})
	ingestDataset(t, s, b, []querytest.Event{ev("u9", "signup", now.Add(-3*time.Hour), false)})

	funnel := map[string]any{"steps": []string{"signup", "paid"}}
	var got funnelAnswer
	ask(t, s, a.Token, "/api/v1/query/funnel", funnel, &got)
	checkFunnel(t, got, []string{"signup", "paid"}, []int64{1, 1}, "A live")
	ask(t, s, a.Token, "/api/v1/query/funnel?env=test", funnel, &got)
	checkFunnel(t, got, []string{"signup", "paid"}, []int64{1, 0}, "A test")
	ask(t, s, b.Token, "/api/v1/query/funnel", funnel, &got)
	checkFunnel(t, got, []string{"signup", "paid"}, []int64{1, 0}, "B live")
	if res := do(t, "POST", s.URL+"/api/v1/query/funnel", mustJSON(funnel), map[string]string{"Authorization": "Bearer " + b.Live}); res.Status != 403 {
		t.Errorf("B's live key reads: %d %s; want 403, keys are public", res.Status, res.Body)
	}

	// Saved queries: A's are invisible and untouchable to B.
	var saved struct {
		ID int64 `json:"id"`
	}
	body, _ := json.Marshal(map[string]any{"kind": "funnel", "name": "Signup", "definition": funnel})
	res := do(t, "POST", s.URL+"/api/v1/queries", body, map[string]string{"Authorization": "Bearer " + a.Token})
	if res.Status != 201 {
		t.Fatalf("create saved query: %d %s", res.Status, res.Body)
	}
	json.Unmarshal(res.Body, &saved)
	path := fmt.Sprintf("%s/api/v1/queries/%d", s.URL, saved.ID)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if res := do(t, m, path, body, map[string]string{"Authorization": "Bearer " + b.Token}); res.Status != 404 {
			t.Errorf("%s of another product's saved query: %d, want 404", m, res.Status)
		}
	}
	if res := do(t, "POST", path+"/run", nil, map[string]string{"Authorization": "Bearer " + b.Token}); res.Status != 404 {
		t.Errorf("run of another product's saved query: %d, want 404", res.Status)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	json.Unmarshal(do(t, "GET", s.URL+"/api/v1/queries", nil, map[string]string{"Authorization": "Bearer " + b.Token}).Body, &list)
	if len(list.Items) != 0 {
		t.Errorf("B lists %d saved queries, want 0", len(list.Items))
	}
	if res := do(t, "POST", path+"/run", nil, map[string]string{"Authorization": "Bearer " + a.Token}); res.Status != 200 {
		t.Errorf("A runs its saved query: %d %s", res.Status, res.Body)
	}
}

// TestSavedQueries walks a saved query through its life: create (a funnel
// without a definition gets the placeholder steps), list, get, update, run
// and delete.
func TestSavedQueries(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "saved")
	auth := map[string]string{"Authorization": "Bearer " + tn.Token, "Content-Type": "application/json"}
	now := time.Now().UTC().Truncate(time.Second)
	ingestDataset(t, s, tn, []querytest.Event{
		{DistinctID: "u", Name: "page_viewed", Time: now.Add(-3 * time.Hour)},
		{DistinctID: "u", Name: "button_clicked", Time: now.Add(-2 * time.Hour)},
	})

	type saved struct {
		ID         int64           `json:"id"`
		Kind       string          `json:"kind"`
		Name       string          `json:"name"`
		Definition json.RawMessage `json:"definition"`
		CreatedAt  time.Time       `json:"createdAt"`
	}
	res := do(t, "POST", s.URL+"/api/v1/queries", []byte(`{"kind":"funnel","name":"New funnel"}`), auth)
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var q saved
	json.Unmarshal(res.Body, &q)
	var def struct {
		Steps       []string `json:"steps"`
		WindowHours int      `json:"windowHours"`
	}
	json.Unmarshal(q.Definition, &def)
	if q.ID < 1 || q.Kind != "funnel" || q.Name != "New funnel" || q.CreatedAt.IsZero() ||
		!reflect.DeepEqual(def.Steps, []string{"page_viewed", "button_clicked", "form_submitted"}) || def.WindowHours != 24 {
		t.Fatalf("a new funnel should start from the placeholder steps: %s", res.Body)
	}
	path := fmt.Sprintf("%s/api/v1/queries/%d", s.URL, q.ID)

	var got funnelAnswer
	res = do(t, "POST", path+"/run", nil, auth)
	json.Unmarshal(res.Body, &got)
	checkFunnel(t, got, def.Steps, []int64{1, 1, 0}, "run placeholder funnel")

	res = do(t, "PUT", path, []byte(`{"name":"Renamed","definition":{"steps":["page_viewed","form_submitted"],"windowHours":48}}`), auth)
	if res.Status != 200 {
		t.Fatalf("update: %d %s", res.Status, res.Body)
	}
	res = do(t, "GET", path, nil, auth)
	json.Unmarshal(res.Body, &q)
	if q.Name != "Renamed" || !strings.Contains(string(q.Definition), `"windowHours":48`) {
		t.Errorf("get after update: %s", res.Body)
	}
	if res := do(t, "PUT", path, []byte(`{"kind":"trend","name":"x","definition":{"series":[{"event":"a"}]}}`), auth); res.Status != 400 {
		t.Errorf("changing the kind: %d, want 400", res.Status)
	}
	if res := do(t, "PUT", path, []byte(`{"name":"x","definition":{"steps":["a"]}}`), auth); res.Status != 400 ||
		!strings.Contains(string(res.Body), "definition.steps") {
		t.Errorf("invalid definition: %d %s, want 400 naming definition.steps", res.Status, res.Body)
	}

	res = do(t, "POST", s.URL+"/api/v1/queries", []byte(`{"kind":"trend","name":"Views","definition":{"series":[{"event":"page_viewed","math":"unique_users"}],"interval":"week"}}`), auth)
	if res.Status != 201 {
		t.Fatalf("create trend: %d %s", res.Status, res.Body)
	}
	var trend saved
	json.Unmarshal(res.Body, &trend)
	var ta trendAnswer
	json.Unmarshal(do(t, "POST", fmt.Sprintf("%s/api/v1/queries/%d/run", s.URL, trend.ID), nil, auth).Body, &ta)
	total := int64(0)
	for _, p := range ta.Series[0].Data {
		total += p.Value
	}
	if len(ta.Series) != 1 || total != 1 {
		t.Errorf("run saved trend: %+v", ta)
	}
	for _, body := range []string{`{"kind":"trend","name":"No definition"}`, `{"kind":"pie","name":"x","definition":{}}`,
		`{"kind":"funnel","name":""}`, `{"kind":"funnel","name":"x","extra":1}`} {
		if res := do(t, "POST", s.URL+"/api/v1/queries", []byte(body), auth); res.Status != 400 {
			t.Errorf("%s: %d, want 400", body, res.Status)
		}
	}

	var list struct {
		Items []saved `json:"items"`
	}
	json.Unmarshal(do(t, "GET", s.URL+"/api/v1/queries", nil, auth).Body, &list)
	if len(list.Items) != 2 || list.Items[0].ID != trend.ID {
		t.Errorf("list, newest first: %+v", list.Items)
	}
	if res := do(t, "DELETE", path, nil, auth); res.Status != 204 {
		t.Errorf("delete: %d", res.Status)
	}
	if res := do(t, "GET", path, nil, auth); res.Status != 404 || res.ErrorCode(t) != "query_not_found" {
		t.Errorf("get after delete: %d %s", res.Status, res.Body)
	}
}

// TestBotsPanel checks the Acquisition panel's numbers: bots with their
// category labels, and the pages they fetched.
func TestBotsPanel(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "bots")
	claude := "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)"
	var batch []map[string]any
	add := func(ua, url string) {
		batch = append(batch, map[string]any{"event_name": "$pageview", "distinct_id": "srv", "user_agent": ua, "url": url})
	}
	for i := 0; i < 3; i++ {
		add(gptBot.ua, "https://example.com/docs")
	}
	add(gptBot.ua, "https://example.com/pricing")
	add(claude, "https://example.com/docs")
	add(agents["Chrome"].ua, "https://example.com/docs") // a person: not a bot hit
	if res := postEvents(t, s, tn.Live, batch...); res.Status != 202 {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	res := do(t, "GET", s.URL+"/api/v1/query/bots", nil, map[string]string{"Authorization": "Bearer " + tn.Token})
	var got struct {
		Bots []struct {
			Name, Category, CategoryLabel string
			Hits                          int64
			LastSeen                      time.Time
		} `json:"bots"`
		TopPages []struct {
			URL  string `json:"url"`
			Hits int64  `json:"hits"`
			Bots int64  `json:"bots"`
		} `json:"topPages"`
	}
	if err := json.Unmarshal(res.Body, &got); err != nil || res.Status != 200 {
		t.Fatalf("bots: %d %s", res.Status, res.Body)
	}
	if len(got.Bots) != 2 || got.Bots[0].Name != "GPTBot" || got.Bots[0].Hits != 4 || got.Bots[0].Category != "ai_crawler" ||
		got.Bots[0].CategoryLabel != "AI crawler (training/index)" || time.Since(got.Bots[0].LastSeen) > time.Minute {
		t.Errorf("bots: %s", res.Body)
	}
	if len(got.Bots) == 2 && (got.Bots[1].Hits != 1 || got.Bots[1].Category != "ai_assistant" || got.Bots[1].CategoryLabel != "AI assistant (live fetch)") {
		t.Errorf("second bot: %+v", got.Bots[1])
	}
	if len(got.TopPages) != 2 || got.TopPages[0].URL != "https://example.com/docs" || got.TopPages[0].Hits != 4 ||
		got.TopPages[0].Bots != 2 || got.TopPages[1].Hits != 1 || got.TopPages[1].Bots != 1 {
		t.Errorf("top pages: %+v", got.TopPages)
	}
	// Bot hits stay out of human trends.
	var ta trendAnswer
	ask(t, s, tn.Token, "/api/v1/query/trend", map[string]any{"series": []map[string]any{{"event": "$pageview"}}}, &ta)
	sum := int64(0)
	for _, p := range ta.Series[0].Data {
		sum += p.Value
	}
	if sum != 1 {
		t.Errorf("human $pageview trend counts %d, want 1", sum)
	}
}
