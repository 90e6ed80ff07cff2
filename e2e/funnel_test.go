package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"strata/internal/query/querytest"
)

// TestFunnelStepFilters asks the real server for funnels whose steps carry
// filters: /pricing then /signup, two $pageview steps told apart by path,
// whose answer names each step by its event and filters while a plain
// step's entry stays the spec's; then random datasets against the
// reference with filters on their steps.
func TestFunnelStepFilters(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "step filters")
	base := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Hour)
	view := func(user, path string, at time.Duration) querytest.Event {
		return querytest.Event{Name: "$pageview", DistinctID: user, Time: base.Add(at), URL: "https://shop.example" + path, Path: path}
	}
	events := []querytest.Event{
		// a: /pricing, /signup, signed up: the whole funnel.
		view("a", "/pricing", 0), view("a", "/signup", time.Minute),
		{Name: "signup_completed", DistinctID: "a", Time: base.Add(2 * time.Minute)},
		// b: /signup before /pricing: step 0 only.
		view("b", "/signup", 0), view("b", "/pricing", time.Minute),
		// c: /pricing, /docs, then /signup: two steps.
		view("c", "/pricing", 0), view("c", "/docs", time.Minute), view("c", "/signup", 2*time.Minute),
		// d: never on /pricing.
		view("d", "/docs", 0), view("d", "/signup", time.Minute),
	}
	ingestDataset(t, s, tn, events)
	where := func(path string) []map[string]any {
		return []map[string]any{{"property": "path", "operator": "eq", "value": path}}
	}
	req := map[string]any{"steps": []any{
		map[string]any{"event": "$pageview", "where": where("/pricing")},
		map[string]any{"event": "$pageview", "where": where("/signup")},
		"signup_completed",
	}, "dateFrom": day(base.AddDate(0, 0, -1)), "dateTo": day(base.AddDate(0, 0, 1))}
	body, _ := json.Marshal(req)
	res := do(t, "POST", s.URL+"/api/v1/query/funnel", body, map[string]string{"Authorization": "Bearer " + tn.Token})
	want := `{"steps":[{"name":"$pageview","where":[{"property":"path","operator":"eq","value":"/pricing"}],"count":3,"conversionPct":null},` +
		`{"name":"$pageview","where":[{"property":"path","operator":"eq","value":"/signup"}],"count":2,"conversionPct":66.7},` +
		`{"name":"signup_completed","count":1,"conversionPct":50}]}`
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("funnel with step filters: %d %s\nwant %s", res.Status, res.Body, want)
	}

	// A malformed step is refused with the field at fault.
	bad, _ := json.Marshal(map[string]any{"steps": []any{"a", map[string]any{"event": "b", "where": []map[string]any{{"property": "path", "operator": "like", "value": "x"}}}}})
	res = do(t, "POST", s.URL+"/api/v1/query/funnel", bad, map[string]string{"Authorization": "Bearer " + tn.Token})
	if res.Status != 400 || !strings.Contains(string(res.Body), "steps[1].where[0].operator") {
		t.Errorf("bad step filter: %d %s", res.Status, res.Body)
	}

	for seed := int64(1); seed <= 12; seed++ {
		ds := querytest.Generate(seed)
		tn := newTenant(t, s, fmt.Sprintf("filtered seed %d", seed))
		stored := ingestDataset(t, s, tn, ds.Events)
		steps := querytest.PlainSteps(ds.Steps)
		wire := []any{}
		for i := range steps {
			steps[i].Filters = ds.StepFilters[i]
			wire = append(wire, map[string]any{"event": ds.Steps[i], "where": filterJSON(ds.StepFilters[i])})
		}
		var got funnelAnswer
		ask(t, s, tn.Token, "/api/v1/query/funnel", map[string]any{"steps": wire, "dateFrom": day(ds.From), "dateTo": day(ds.To), "windowHours": ds.WindowHours}, &got)
		checkFunnel(t, got, ds.Steps, querytest.FunnelSteps(time.UTC, stored, false, steps, ds.From, ds.To, ds.WindowHours), fmt.Sprintf("seed %d where %v", seed, ds.StepFilters))
	}
}

// TestFunnelExclusionsBreakdown asks the real server for a funnel with an
// exclusion and a breakdown: a hand case with its exact answer, then
// random datasets against the reference.
func TestFunnelExclusionsBreakdown(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "exclusions")
	base := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Hour)
	ev := func(name, user, plan string, at time.Duration) querytest.Event {
		e := querytest.Event{Name: name, DistinctID: user, Time: base.Add(at)}
		if plan != "" {
			e.Properties = map[string]any{"plan": plan}
		}
		return e
	}
	ingestDataset(t, s, tn, []querytest.Event{
		// a (pro) converts; b (pro) converts but logged out in between:
		// left out; c (free) stops at step 1 after a logout: kept; d has
		// no plan and converts; e (free) converts, its logout after.
		ev("visit", "a", "pro", 0), ev("signup", "a", "", time.Minute), ev("paid", "a", "", 2*time.Minute),
		ev("visit", "b", "pro", 0), ev("signup", "b", "", time.Minute), ev("logout", "b", "", 90*time.Second), ev("paid", "b", "", 2*time.Minute),
		ev("visit", "c", "free", 0), ev("signup", "c", "", time.Minute), ev("logout", "c", "", 90*time.Second),
		ev("visit", "d", "", 0), ev("signup", "d", "", time.Minute), ev("paid", "d", "", 2*time.Minute),
		ev("visit", "e", "free", 0), ev("signup", "e", "", time.Minute), ev("paid", "e", "", 2*time.Minute), ev("logout", "e", "", 3*time.Minute),
	})
	req := map[string]any{"steps": []string{"visit", "signup", "paid"},
		"exclusions": []map[string]any{{"event": "logout", "fromStep": 1, "toStep": 2}},
		"breakdown":  "properties.plan", "breakdownLimit": 1,
		"dateFrom": day(base.AddDate(0, 0, -1)), "dateTo": day(base.AddDate(0, 0, 1))}
	body, _ := json.Marshal(req)
	res := do(t, "POST", s.URL+"/api/v1/query/funnel", body, map[string]string{"Authorization": "Bearer " + tn.Token})
	want := `{"steps":[{"name":"visit","count":4,"conversionPct":null},{"name":"signup","count":4,"conversionPct":100},{"name":"paid","count":3,"conversionPct":75}],` +
		`"breakdown":[{"breakdownValue":"free","steps":[{"name":"visit","count":2,"conversionPct":null},{"name":"signup","count":2,"conversionPct":100},{"name":"paid","count":1,"conversionPct":50}]},` +
		`{"breakdownValue":null,"other":true,"steps":[{"name":"visit","count":2,"conversionPct":null},{"name":"signup","count":2,"conversionPct":100},{"name":"paid","count":2,"conversionPct":100}]}]}`
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("funnel with an exclusion by plan: %d %s\nwant %s", res.Status, res.Body, want)
	}

	for seed := int64(1); seed <= 12; seed++ {
		ds := querytest.Generate(seed)
		tn := newTenant(t, s, fmt.Sprintf("excluded seed %d", seed))
		stored := ingestDataset(t, s, tn, ds.Events)
		exclusions := []map[string]any{}
		for _, x := range ds.Exclusions {
			exclusions = append(exclusions, map[string]any{"event": x.Event, "where": filterJSON(x.Filters), "fromStep": x.FromStep, "toStep": x.ToStep})
		}
		req := map[string]any{"steps": ds.Steps, "exclusions": exclusions, "breakdown": ds.Breakdown,
			"dateFrom": day(ds.From), "dateTo": day(ds.To), "windowHours": ds.WindowHours}
		if ds.Breakdown != "" {
			req["breakdownLimit"] = 2
		}
		var got struct {
			funnelAnswer
			Breakdown []struct {
				BreakdownValue *string         `json:"breakdownValue"`
				Other          bool            `json:"other"`
				Steps          funnelAnswer    `json:"-"`
				Raw            json.RawMessage `json:"steps"`
			} `json:"breakdown"`
		}
		ask(t, s, tn.Token, "/api/v1/query/funnel", req, &got)
		total, rows := querytest.FunnelBreakdown(time.UTC, stored, false, querytest.PlainSteps(ds.Steps), ds.Exclusions, ds.Breakdown, 2, ds.From, ds.To, ds.WindowHours)
		what := fmt.Sprintf("seed %d excluding %v by %q", seed, ds.Exclusions, ds.Breakdown)
		checkFunnel(t, got.funnelAnswer, ds.Steps, total, what)
		if len(got.Breakdown) != len(rows) {
			t.Errorf("%s: %d breakdown rows, want %d", what, len(got.Breakdown), len(rows))
			continue
		}
		for i, r := range rows {
			g := got.Breakdown[i]
			var steps funnelAnswer
			json.Unmarshal([]byte(`{"steps":`+string(g.Raw)+`}`), &steps)
			if g.Other != r.Other || (g.BreakdownValue == nil) != (r.Value == nil) || (r.Value != nil && *g.BreakdownValue != *r.Value) {
				t.Errorf("%s: row %d is %v %v, want %v %v", what, i, g.Other, g.BreakdownValue, r.Other, r.Value)
			}
			checkFunnel(t, steps, ds.Steps, r.Counts, fmt.Sprintf("%s row %d", what, i))
		}
	}
}

// TestFunnelTimeToConvert asks the real server for the view
// time_to_convert: a hand case with its exact answer, then random
// datasets with exclusions against the reference.
func TestFunnelTimeToConvert(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "time to convert")
	base := time.Now().UTC().Add(-72 * time.Hour).Truncate(time.Hour)
	ev := func(name, user string, at time.Duration) querytest.Event {
		return querytest.Event{Name: name, DistinctID: user, Time: base.Add(at)}
	}
	ingestDataset(t, s, tn, []querytest.Event{
		// Signed up after 5 s, 45 s and 2 h; paid after 20 s (a) and 2 days (b, with a 72-hour window).
		ev("visit", "a", 0), ev("signup", "a", 5*time.Second), ev("paid", "a", 25*time.Second),
		ev("visit", "b", 0), ev("signup", "b", 45*time.Second), ev("paid", "b", 45*time.Second+48*time.Hour),
		ev("visit", "c", 0), ev("signup", "c", 2*time.Hour),
		ev("visit", "d", 0),
	})
	req := map[string]any{"steps": []string{"visit", "signup", "paid"}, "view": "time_to_convert", "windowHours": 72,
		"dateFrom": day(base.AddDate(0, 0, -1)), "dateTo": day(base.AddDate(0, 0, 1))}
	var got struct {
		funnelAnswer
		TimeToConvert []struct {
			Step          int      `json:"step"`
			Converted     int64    `json:"converted"`
			MedianSeconds *float64 `json:"medianSeconds"`
			Histogram     []struct {
				FromSeconds int64  `json:"fromSeconds"`
				ToSeconds   *int64 `json:"toSeconds"`
				Count       int64  `json:"count"`
			} `json:"histogram"`
		} `json:"timeToConvert"`
	}
	ask(t, s, tn.Token, "/api/v1/query/funnel", req, &got)
	checkFunnel(t, got.funnelAnswer, []string{"visit", "signup", "paid"}, []int64{4, 3, 2}, "time to convert")
	hist := func(i int) []int64 {
		var out []int64
		for _, b := range got.TimeToConvert[i].Histogram {
			out = append(out, b.Count)
		}
		return out
	}
	if len(got.TimeToConvert) != 2 {
		t.Fatalf("timeToConvert %+v", got.TimeToConvert)
	}
	// signup: 5 s, 45 s, 2 h: the lower median of three is the middle, 45 s.
	if st := got.TimeToConvert[0]; st.Step != 1 || st.Converted != 3 || st.MedianSeconds == nil || *st.MedianSeconds != 45 ||
		fmt.Sprint(hist(0)) != "[1 0 1 0 0 0 1 0 0 0 0]" {
		t.Errorf("step 1: %+v %v", st, hist(0))
	}
	// paid: 20 s and 48 h: the lower of the two middles, 20 s.
	if st := got.TimeToConvert[1]; st.Step != 2 || st.Converted != 2 || st.MedianSeconds == nil || *st.MedianSeconds != 20 ||
		fmt.Sprint(hist(1)) != "[0 1 0 0 0 0 0 0 1 0 0]" {
		t.Errorf("step 2: %+v %v", st, hist(1))
	}
	if h := got.TimeToConvert[0].Histogram; h[0].FromSeconds != 0 || *h[0].ToSeconds != 10 || h[10].FromSeconds != 604800 || h[10].ToSeconds != nil {
		t.Errorf("bucket bounds %+v", h)
	}

	for seed := int64(1); seed <= 8; seed++ {
		ds := querytest.Generate(seed)
		tn := newTenant(t, s, fmt.Sprintf("timed seed %d", seed))
		stored := ingestDataset(t, s, tn, ds.Events)
		exclusions := []map[string]any{}
		for _, x := range ds.Exclusions {
			exclusions = append(exclusions, map[string]any{"event": x.Event, "where": filterJSON(x.Filters), "fromStep": x.FromStep, "toStep": x.ToStep})
		}
		req := map[string]any{"steps": ds.Steps, "exclusions": exclusions, "view": "time_to_convert",
			"dateFrom": day(ds.From), "dateTo": day(ds.To), "windowHours": ds.WindowHours}
		got.TimeToConvert = nil
		ask(t, s, tn.Token, "/api/v1/query/funnel", req, &got)
		counts, times := querytest.FunnelTimes(time.UTC, stored, false, querytest.PlainSteps(ds.Steps), ds.Exclusions, ds.From, ds.To, ds.WindowHours)
		what := fmt.Sprintf("seed %d excluding %v, time to convert", seed, ds.Exclusions)
		checkFunnel(t, got.funnelAnswer, ds.Steps, counts, what)
		if len(got.TimeToConvert) != len(times) {
			t.Errorf("%s: %d steps timed, want %d", what, len(got.TimeToConvert), len(times))
			continue
		}
		for i, w := range times {
			g := got.TimeToConvert[i]
			median := -1.0
			if g.MedianSeconds != nil {
				median = *g.MedianSeconds
			}
			want := -1.0
			if w.Converted > 0 {
				want = float64(w.Median.Microseconds()) / 1e6
			}
			if g.Converted != w.Converted || median != want || fmt.Sprint(hist(i)) != fmt.Sprint(w.Histogram) {
				t.Errorf("%s: step %d = %d, %v s, %v; want %d, %v s, %v", what, i+1, g.Converted, median, hist(i), w.Converted, want, w.Histogram)
			}
		}
	}
}

// TestFunnelOverTime asks the real server for the view trends: users by
// the day they entered, each day's conversion, every day of the range.
func TestFunnelOverTime(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "over time")
	day0 := time.Now().UTC().AddDate(0, 0, -5).Truncate(24 * time.Hour).Add(10 * time.Hour)
	ev := func(name, user string, at time.Duration) querytest.Event {
		return querytest.Event{Name: name, DistinctID: user, Time: day0.Add(at)}
	}
	plan := func(e querytest.Event, p string) querytest.Event {
		e.Properties = map[string]any{"plan": p}
		return e
	}
	ingestDataset(t, s, tn, []querytest.Event{
		// Day 0: a converts, b does not. Day 2: c converts, its last step
		// on day 3. Day 3: d converts. a and c visit on the plan pro, b on
		// free, d on none.
		plan(ev("visit", "a", 0), "pro"), ev("paid", "a", time.Hour),
		plan(ev("visit", "b", time.Hour), "free"),
		plan(ev("visit", "c", 48*time.Hour+13*time.Hour), "pro"), ev("paid", "c", 48*time.Hour+20*time.Hour),
		ev("visit", "d", 72*time.Hour), ev("paid", "d", 73*time.Hour),
	})
	req := map[string]any{"steps": []string{"visit", "paid"}, "view": "trends", "interval": "day",
		"dateFrom": day(day0), "dateTo": day(day0.AddDate(0, 0, 3))}
	body, _ := json.Marshal(req)
	res := do(t, "POST", s.URL+"/api/v1/query/funnel", body, map[string]string{"Authorization": "Bearer " + tn.Token})
	d := func(k int) string { return day(day0.AddDate(0, 0, k)) }
	want := `{"steps":[{"name":"visit","count":4,"conversionPct":null},{"name":"paid","count":3,"conversionPct":75}],"overTime":[` +
		`{"date":"` + d(0) + `","entered":2,"converted":1,"conversionPct":50},{"date":"` + d(1) + `","entered":0,"converted":0,"conversionPct":0},` +
		`{"date":"` + d(2) + `","entered":1,"converted":1,"conversionPct":100},{"date":"` + d(3) + `","entered":1,"converted":1,"conversionPct":100}]}`
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("funnel over time: %d %s\nwant %s", res.Status, res.Body, want)
	}

	// By plan, the top value alone: pro (a and c), then b and d
	// together, each with every day; the whole funnel as above.
	req["breakdown"], req["breakdownLimit"] = "properties.plan", 1
	body, _ = json.Marshal(req)
	res = do(t, "POST", s.URL+"/api/v1/query/funnel", body, map[string]string{"Authorization": "Bearer " + tn.Token})
	point := func(k, entered, converted int, pct string) string {
		return fmt.Sprintf(`{"date":"%s","entered":%d,"converted":%d,"conversionPct":%s}`, d(k), entered, converted, pct)
	}
	want = `{"steps":[{"name":"visit","count":4,"conversionPct":null},{"name":"paid","count":3,"conversionPct":75}],"breakdown":[` +
		`{"breakdownValue":"pro","steps":[{"name":"visit","count":2,"conversionPct":null},{"name":"paid","count":2,"conversionPct":100}],"overTime":[` +
		point(0, 1, 1, "100") + "," + point(1, 0, 0, "0") + "," + point(2, 1, 1, "100") + "," + point(3, 0, 0, "0") + `]},` +
		`{"breakdownValue":null,"other":true,"steps":[{"name":"visit","count":2,"conversionPct":null},{"name":"paid","count":1,"conversionPct":50}],"overTime":[` +
		point(0, 1, 0, "0") + "," + point(1, 0, 0, "0") + "," + point(2, 0, 0, "0") + "," + point(3, 1, 1, "100") + `]}],"overTime":[` +
		point(0, 2, 1, "50") + "," + point(1, 0, 0, "0") + "," + point(2, 1, 1, "100") + "," + point(3, 1, 1, "100") + `]}`
	if res.Status != 200 || strings.TrimSpace(string(res.Body)) != want {
		t.Errorf("funnel over time by plan: %d %s\nwant %s", res.Status, res.Body, want)
	}
}
