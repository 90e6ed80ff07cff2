package e2e

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"strata/internal/query/querytest"
)

// goalsAnswer is the answer of POST /api/v1/query/goals.
type goalsAnswer struct {
	Visitors int64 `json:"visitors"`
	Goals    []struct {
		ID             int64   `json:"id"`
		Name           string  `json:"name"`
		Visitors       int64   `json:"visitors"`
		Conversions    int64   `json:"conversions"`
		ConversionRate float64 `json:"conversionRate"`
	} `json:"goals"`
	Breakdown string `json:"breakdown"`
	Rows      []struct {
		Value          string  `json:"value"`
		Total          int64   `json:"total"`
		Visitors       int64   `json:"visitors"`
		Conversions    int64   `json:"conversions"`
		ConversionRate float64 `json:"conversionRate"`
	} `json:"rows"`
}

// addGoal creates goal g of product p as the signed-in owner and returns
// its id.
func addGoal(t *testing.T, owner *browser, p int64, g querytest.Goal) int64 {
	t.Helper()
	body := map[string]string{"kind": "event", "event": g.Event}
	if g.Path != "" {
		body = map[string]string{"kind": "page", "path": g.Path}
	}
	r := owner.do(t, "POST", "/api/v1/products/"+strconv.FormatInt(p, 10)+"/goals", body)
	if r.Status != 201 {
		t.Fatalf("create goal %+v: %d %s", g, r.Status, r.Body)
	}
	return int64(r.JSON(t)["id"].(float64))
}

// TestGoalsOverHTTP drives goals on the real binary: the owner adds,
// lists and deletes a product's goals in its settings, refused past
// --goal-limit, twice, malformed, or through another product; a query
// token reads their conversions through POST /api/v1/query/goals, equal
// to the reference on seeded datasets (by source, channel, country and
// device type too), and another product's token sees none of them.
func TestGoalsOverHTTP(t *testing.T) {
	s := startServer(t, t.TempDir(), "--goal-limit", "4")
	owner := setupOwner(t, s)
	a, b := newTenant(t, s, "goals a"), newTenant(t, s, "goals b")
	pa := "/api/v1/products/" + a.ProductFlag + "/goals"

	signup := addGoal(t, owner, a.ID, querytest.Goal{Event: "signup"})
	addGoal(t, owner, a.ID, querytest.Goal{Path: "/blog/*"})
	for body, code := range map[string]string{
		`{"kind":"page","path":"blog"}`:              "invalid_request",
		`{"kind":"click","event":"signup"}`:          "invalid_request",
		`{"kind":"event","event":"signup"}`:          "goal_exists",
		`{"kind":"event","event":"x","extra":1}`:     "invalid_request",
		`{"kind":"page","path":"/*/*/*/*/*/*"}`:      "invalid_request",
		`{"kind":"event","event":"signup","path":1}`: "invalid_request",
	} {
		r := do(t, "POST", s.URL+pa, []byte(body), map[string]string{"Cookie": owner.cookie, "Origin": s.URL, "Content-Type": "application/json"})
		if got := r.ErrorCode(t); got != code {
			t.Errorf("create %s: %d %s, want %s", body, r.Status, r.Body, code)
		}
	}
	addGoal(t, owner, a.ID, querytest.Goal{Event: "purchase"})
	addGoal(t, owner, a.ID, querytest.Goal{Path: "/pricing"})
	if r := owner.do(t, "POST", pa, map[string]string{"kind": "event", "event": "fifth"}); r.Status != 409 || r.ErrorCode(t) != "goals_full" {
		t.Errorf("a fifth goal under --goal-limit 4: %d %s", r.Status, r.Body)
	}
	if r := owner.do(t, "GET", pa, nil); r.Status != 200 || len(r.JSON(t)["items"].([]any)) != 4 {
		t.Errorf("list: %d %s", r.Status, r.Body)
	}
	// A's goal is not reachable through B's path, nor without a session.
	if r := owner.do(t, "DELETE", "/api/v1/products/"+b.ProductFlag+"/goals/"+strconv.FormatInt(signup, 10), nil); r.Status != 404 {
		t.Errorf("deleting A's goal through B: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", s.URL+pa, nil, map[string]string{"Authorization": "Bearer " + a.Token}); r.Status != 401 && r.Status != 403 {
		t.Errorf("listing goals with a query token: %d %s, want 401 or 403", r.Status, r.Body)
	}
	if r := owner.do(t, "DELETE", pa+"/"+strconv.FormatInt(signup, 10), nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := owner.do(t, "GET", pa, nil); len(r.JSON(t)["items"].([]any)) != 3 {
		t.Errorf("after a delete: %s", r.Body)
	}

	// The queries: a bad request names its field; an API key is no
	// query credential; B's token knows nothing of A's goals.
	for body, code := range map[string]string{
		`{"breakdown":"source"}`:            "invalid_request",
		`{"goal":1,"breakdown":"browser"}`:  "invalid_request",
		`{"goal":` + a.ProductFlag + `999}`: "goal_not_found",
		`{"limit":1000}`:                    "invalid_request",
		`{"dateFrom":"2026-13-01"}`:         "invalid_request",
	} {
		r := do(t, "POST", s.URL+"/api/v1/query/goals", []byte(body), map[string]string{"Authorization": "Bearer " + a.Token})
		if r.ErrorCode(t) != code {
			t.Errorf("query %s: %d %s, want %s", body, r.Status, r.Body, code)
		}
	}
	if r := do(t, "POST", s.URL+"/api/v1/query/goals", []byte(`{}`), map[string]string{"Authorization": "Bearer " + a.Live}); r.Status != 403 {
		t.Errorf("an API key on the goals query: %d %s, want 403", r.Status, r.Body)
	}
	var other goalsAnswer
	ask(t, s, b.Token, "/api/v1/query/goals", map[string]any{}, &other)
	if other.Visitors != 0 || len(other.Goals) != 0 {
		t.Errorf("B's token sees %+v", other)
	}

	// Through a shared link of A: A's goals, live; a filter on a column
	// a link does not share is refused.
	r := owner.do(t, "POST", "/api/v1/products/"+a.ProductFlag+"/shared-links", map[string]string{"name": "Board"})
	if r.Status != 201 {
		t.Fatalf("create a shared link: %d %s", r.Status, r.Body)
	}
	shared := s.URL + "/share/" + r.JSON(t)["secret"].(string) + "/api/v1/query/goals"
	hdr := map[string]string{"Origin": s.URL, "Content-Type": "application/json"}
	if r := do(t, "POST", shared, []byte(`{}`), hdr); r.Status != 200 || len(r.JSON(t)["goals"].([]any)) != 3 {
		t.Errorf("goals through a shared link: %d %s, want A's 3 goals", r.Status, r.Body)
	}
	body := []byte(`{"filters":[{"property":"properties.email","operator":"is_set"}]}`)
	if r := do(t, "POST", shared, body, hdr); r.Status != 403 || r.ErrorCode(t) != "not_shared" {
		t.Errorf("a property filter through a shared link: %d %s, want 403 not_shared", r.Status, r.Body)
	}

	// Seeded datasets, each its own product with its own goals, equal to
	// the reference live and test.
	for seed := int64(1); seed <= 8; seed++ {
		ds := querytest.GenerateGoals(seed)
		if len(ds.Goals) > 4 {
			ds.Goals = ds.Goals[:4]
		}
		tn := newTenant(t, s, fmt.Sprintf("goals %d", seed))
		events := ingestDataset(t, s, tn, ds.Events)
		var ids []int64
		seen := map[querytest.Goal]int64{}
		var unique []querytest.Goal
		for _, g := range ds.Goals {
			if seen[g] == 0 {
				seen[g] = addGoal(t, owner, tn.ID, g)
				unique = append(unique, g)
			}
			ids = append(ids, seen[g])
		}
		req := map[string]any{"dateFrom": day(ds.From), "dateTo": day(ds.To), "filters": filterJSON(ds.Filters), "limit": ds.Limit}
		if ds.Breakdown != "" {
			req["goal"], req["breakdown"] = ids[0], ds.Breakdown
			unique = ds.Goals[:1]
		}
		for _, test := range []bool{false, true} {
			path := "/api/v1/query/goals"
			if test {
				path += "?env=test"
			}
			var got goalsAnswer
			ask(t, s, tn.Token, path, req, &got)
			want := querytest.Goals(events, test, ds.Filters, unique, ds.From, ds.To, ds.Breakdown, ds.Limit)
			what := fmt.Sprintf("seed %d test=%v", seed, test)
			if got.Visitors != want.Visitors || len(got.Goals) != len(want.Goals) {
				t.Fatalf("%s: %+v, want %+v", what, got, want)
			}
			for i, w := range want.Goals {
				g := got.Goals[i]
				if g.Visitors != w.Converted || g.Conversions != w.Conversions || g.ConversionRate != pct(w.Converted, want.Visitors) {
					t.Errorf("%s goal %s: %+v, want %+v of %d", what, g.Name, g, w, want.Visitors)
				}
			}
			var rows []querytest.GoalRow
			for _, r := range got.Rows {
				rows = append(rows, querytest.GoalRow{Value: r.Value, Visitors: r.Total, GoalCount: querytest.GoalCount{Converted: r.Visitors, Conversions: r.Conversions}})
				if r.ConversionRate != pct(r.Visitors, r.Total) {
					t.Errorf("%s row %q: rate %v of %d/%d", what, r.Value, r.ConversionRate, r.Visitors, r.Total)
				}
			}
			if !reflect.DeepEqual(rows, want.Rows) {
				t.Errorf("%s by %s:\n got %+v\nwant %+v", what, ds.Breakdown, rows, want.Rows)
			}
		}
	}
}
