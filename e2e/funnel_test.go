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
