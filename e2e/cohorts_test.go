package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// TestCohortsOverHTTP drives cohorts on the real binary: a dynamic cohort
// ("did signup at least once in the last 7 days" and not "purchase") is
// computed on create and on demand, its size and members read by pages; a
// static cohort's CSV upload counts duplicates once and a refused upload
// changes nothing; a viewer reads but does not write; another product's
// path, a query token and an API key reach none of it.
func TestCohortsOverHTTP(t *testing.T) {
	checkCohorts(t, startServer(t, t.TempDir()))
}

// TestCohortsClickHouse is the same with events in ClickHouse and the
// metadata in PostgreSQL.
func TestCohortsClickHouse(t *testing.T) {
	chtest.Skip(t)
	ch := chtest.Shared(t)
	meta := pgtest.Start(t)
	events := ch.URL(fmt.Sprintf("strata_cohorts_%d", time.Now().UnixNano()), "")
	checkCohorts(t, startServer(t, t.TempDir(), "--events", events, "--meta", meta))
}

type cohortJSON struct {
	ID         int64   `json:"id"`
	Kind       string  `json:"kind"`
	Size       int64   `json:"size"`
	State      string  `json:"state"`
	Error      string  `json:"error"`
	Generation int64   `json:"generation"`
	ComputedAt *string `json:"computedAt"`
}

func checkCohorts(t *testing.T, s *server) {
	owner := setupOwner(t, s)
	a, b := newTenant(t, s, "cohorts a"), newTenant(t, s, "cohorts b")
	base := "/api/v1/products/" + a.ProductFlag + "/cohorts"
	now := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var evs []map[string]any
	for i, id := range []string{"alice", "bob", "carol", "dave"} {
		evs = append(evs, map[string]any{"event_name": "signup", "distinct_id": id, "timestamp": now.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	evs = append(evs, map[string]any{"event_name": "purchase", "distinct_id": "bob", "timestamp": now.Format(time.RFC3339)},
		map[string]any{"event_name": "visit", "distinct_id": "erin", "timestamp": now.Format(time.RFC3339)})
	if r := postEvents(t, s, a.Live, evs...); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	// Every distinct id becomes a person within about a second.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := annCall(t, s, a.Token, "GET", "/api/v1/persons", nil)
		var p struct{ Items []any }
		json.Unmarshal(r.Body, &p)
		if len(p.Items) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("persons not written: %s", r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	def := map[string]any{"groups": []any{map[string]any{"conditions": []any{
		map[string]any{"type": "behavior", "event": "signup", "days": 7},
		map[string]any{"type": "behavior", "event": "purchase", "performed": false, "days": 30},
	}}}}
	r := owner.do(t, "POST", base, map[string]any{"name": "Signed up, no purchase", "kind": "dynamic", "definition": def})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var dyn cohortJSON
	json.Unmarshal(r.Body, &dyn)
	path := base + "/" + strconv.FormatInt(dyn.ID, 10)
	ready := func(path string, after int64) cohortJSON {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var c cohortJSON
			r := owner.do(t, "GET", path, nil)
			json.Unmarshal(r.Body, &c)
			if c.State == "ready" && c.Generation > after {
				return c
			}
			if c.State == "failed" || time.Now().After(deadline) {
				t.Fatalf("cohort not computed: %d %s", r.Status, r.Body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	c := ready(path, 0)
	if c.Size != 3 || c.ComputedAt == nil {
		t.Errorf("computed cohort: %+v, want 3 members", c)
	}
	members := func(path string, limit int) []string {
		t.Helper()
		var out []string
		for cursor := ""; ; {
			r := owner.do(t, "GET", path+"/members?limit="+strconv.Itoa(limit)+"&cursor="+cursor, nil)
			var p struct {
				Items      []string `json:"items"`
				NextCursor *string  `json:"nextCursor"`
			}
			if err := json.Unmarshal(r.Body, &p); r.Status != 200 || err != nil {
				t.Fatalf("members: %d %s", r.Status, r.Body)
			}
			out = append(out, p.Items...)
			if p.NextCursor == nil {
				return out
			}
			cursor = *p.NextCursor
		}
	}
	if got, want := members(path, 2), []string{"alice", "carol", "dave"}; !reflect.DeepEqual(got, want) {
		t.Errorf("members = %v, want %v", got, want)
	}
	// A trend of signups filtered by the cohort, with the product's query
	// token: its members' (three) or the others' (bob).
	signups := func(op string, cohort int64) response {
		return annCall(t, s, a.Token, "POST", "/api/v1/query/trend", map[string]any{
			"series":  []any{map[string]any{"event": "signup", "math": "unique_users"}},
			"filters": []any{map[string]any{"property": "cohort", "operator": op, "value": cohort}}})
	}
	users := func(op string, cohort int64) float64 {
		t.Helper()
		r := signups(op, cohort)
		var tr struct{ Series []struct{ Total *float64 } }
		if err := json.Unmarshal(r.Body, &tr); r.Status != 200 || err != nil || len(tr.Series) != 1 || tr.Series[0].Total == nil {
			t.Fatalf("a trend %s cohort %d: %d %s", op, cohort, r.Status, r.Body)
		}
		return *tr.Series[0].Total
	}
	if in, out := users("in", dyn.ID), users("not_in", dyn.ID); in != 3 || out != 1 {
		t.Errorf("signups in the cohort %v and not in it %v, want 3 and 1", in, out)
	}
	// Dave purchases now; a recompute drops him.
	if r := postEvents(t, s, a.Live, map[string]any{"event_name": "purchase", "distinct_id": "dave", "timestamp": now.Format(time.RFC3339)}); r.Status != 202 {
		t.Fatalf("ingest: %d", r.Status)
	}
	time.Sleep(1500 * time.Millisecond) // the spool's loader stores it
	if r := owner.do(t, "POST", path+"/compute", nil); r.Status != 202 {
		t.Fatalf("compute: %d %s", r.Status, r.Body)
	}
	if c := ready(path, c.Generation); c.Size != 2 {
		t.Errorf("recomputed: %+v, want 2", c)
	}
	if got, want := members(path, 100), []string{"alice", "carol"}; !reflect.DeepEqual(got, want) {
		t.Errorf("members after the recompute = %v, want %v", got, want)
	}
	// The same trend reads the new generation.
	if in, out := users("in", dyn.ID), users("not_in", dyn.ID); in != 2 || out != 2 {
		t.Errorf("after the recompute, signups in the cohort %v and not in it %v, want 2 and 2", in, out)
	}

	// A static cohort from a CSV.
	r = owner.do(t, "POST", base, map[string]any{"name": "Beta", "kind": "static"})
	var st cohortJSON
	json.Unmarshal(r.Body, &st)
	spath := base + "/" + strconv.FormatInt(st.ID, 10)
	upload := func(body string) response {
		return do(t, "PUT", s.URL+spath+"/members", []byte(body), map[string]string{"Cookie": owner.cookie, "Origin": s.URL, "Content-Type": "text/csv"})
	}
	if r := upload("email,distinct_id\nx@example.com, zed \n\n,\ny@example.com,amy\nz@example.com,zed\n"); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	if got, want := members(spath, 100), []string{"amy", "zed"}; !reflect.DeepEqual(got, want) {
		t.Errorf("uploaded members = %v, want %v", got, want)
	}
	if r := owner.do(t, "GET", spath, nil); !strings.Contains(string(r.Body), `"size":2`) || !strings.Contains(string(r.Body), `"state":"ready"`) {
		t.Errorf("static cohort: %s", r.Body)
	}
	if r := upload("ok\n" + strings.Repeat("x", 256) + "\n"); r.Status != 400 || !strings.Contains(string(r.Body), "line 2") {
		t.Errorf("an id over 255 bytes: %d %s", r.Status, r.Body)
	}
	if got := members(spath, 100); !reflect.DeepEqual(got, []string{"amy", "zed"}) {
		t.Errorf("a refused upload changed the members: %v", got)
	}
	if r := upload(strings.Repeat("id\n", 23<<20)); r.Status != 413 {
		t.Errorf("a 69 MiB upload: %d %s", r.Status, r.Body)
	}
	if r := upload("a,b\n1,2\n"); r.Status != 400 {
		t.Errorf("no distinct_id column: %d %s", r.Status, r.Body)
	}
	if r := owner.do(t, "POST", spath+"/compute", nil); r.ErrorCode(t) != "cohort_not_dynamic" {
		t.Errorf("computing a static cohort: %d %s", r.Status, r.Body)
	}
	if r := do(t, "PUT", s.URL+path+"/members", []byte("x\n"), map[string]string{"Cookie": owner.cookie, "Origin": s.URL}); r.ErrorCode(t) != "cohort_not_static" {
		t.Errorf("uploading to a dynamic cohort: %d %s", r.Status, r.Body)
	}
	for body, field := range map[string]string{
		`{"name":"x","kind":"dynamic"}`: "definition.groups",
		`{"name":"x","kind":"dynamic","definition":{"groups":[{"conditions":[{"type":"behavior","event":"e","days":400}]}]}}`: "definition.groups[0].conditions[0].days",
		`{"name":"","kind":"static"}`: "name",
		`{"name":"x","kind":"other"}`: "kind",
	} {
		r := do(t, "POST", s.URL+base, []byte(body), map[string]string{"Cookie": owner.cookie, "Origin": s.URL, "Content-Type": "application/json"})
		if r.Status != 400 || !strings.Contains(string(r.Body), field+":") {
			t.Errorf("create %s: %d %s, want 400 naming %s", body, r.Status, r.Body, field)
		}
	}

	// Tenants and credentials: B's path knows nothing of A's cohorts; a
	// query token and an API key are no session.
	bpath := "/api/v1/products/" + b.ProductFlag + "/cohorts/" + strconv.FormatInt(dyn.ID, 10)
	for _, m := range []string{"GET", "DELETE"} {
		if r := owner.do(t, m, bpath, nil); r.Status != 404 {
			t.Errorf("%s A's cohort through B: %d %s", m, r.Status, r.Body)
		}
	}
	if r := owner.do(t, "GET", bpath+"/members", nil); r.Status != 404 {
		t.Errorf("A's members through B: %d %s", r.Status, r.Body)
	}
	if r := owner.do(t, "GET", "/api/v1/products/"+b.ProductFlag+"/cohorts", nil); r.Status != 200 || strings.Contains(string(r.Body), `"id"`) {
		t.Errorf("B's list: %d %s", r.Status, r.Body)
	}
	// B's queries cannot filter by A's cohort.
	r = annCall(t, s, b.Token, "POST", "/api/v1/query/trend", map[string]any{"series": []any{map[string]any{"event": "signup"}},
		"filters": []any{map[string]any{"property": "cohort", "operator": "in", "value": dyn.ID}}})
	if want := fmt.Sprintf("filters: no cohort %d in this product", dyn.ID); r.Status != 400 || !strings.Contains(string(r.Body), want) {
		t.Errorf("B's trend in A's cohort: %d %s, want 400 %q", r.Status, r.Body, want)
	}
	for _, cred := range []string{a.Token, a.Live} {
		if r := do(t, "GET", s.URL+path+"/members", nil, map[string]string{"Authorization": "Bearer " + cred}); r.Status != 401 && r.Status != 403 {
			t.Errorf("members with %.6s…: %d %s", cred, r.Status, r.Body)
		}
	}
	// Roles: a viewer reads, a viewer does not write.
	r = owner.do(t, "GET", "/api/v1/products/"+a.ProductFlag, nil)
	ws := int64(r.JSON(t)["workspaceId"].(float64))
	viewer := accept(t, s, invite(t, owner, ws, "viewer@example.com", "viewer"), "viewer password 1")
	if r := viewer.do(t, "GET", path+"/members", nil); r.Status != 200 {
		t.Errorf("a viewer reading members: %d %s", r.Status, r.Body)
	}
	for _, x := range [][2]string{{"POST", base}, {"POST", path + "/compute"}, {"PUT", path}, {"DELETE", path}} {
		if r := viewer.do(t, x[0], x[1], map[string]any{"name": "v", "kind": "static"}); r.Status != 403 {
			t.Errorf("a viewer's %s %s: %d %s", x[0], x[1], r.Status, r.Body)
		}
	}
	checkPersonFilters(t, s, a, now)

	if r := owner.do(t, "DELETE", path, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := owner.do(t, "GET", path, nil); r.Status != 404 {
		t.Errorf("a deleted cohort: %d %s", r.Status, r.Body)
	}
}

// checkPersonFilters filters a trend by person properties (docs/queries.md,
// "Person filters") over HTTP: alice and carol are on pro, bob on free,
// dave has no plan; all four signed up. A bad key or operator is refused
// naming the field.
func checkPersonFilters(t *testing.T, s *server, a tenant, now time.Time) {
	t.Helper()
	var evs []map[string]any
	for id, plan := range map[string]string{"alice": "pro", "bob": "free", "carol": "pro"} {
		evs = append(evs, map[string]any{"event_name": "$identify", "distinct_id": id, "timestamp": now.Format(time.RFC3339), "properties": map[string]any{"plan": plan}})
	}
	if r := postEvents(t, s, a.Live, evs...); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := annCall(t, s, a.Token, "GET", `/api/v1/persons?where=[{"key":"plan","operator":"is_set"}]`, nil)
		var p struct{ Items []any }
		json.Unmarshal(r.Body, &p)
		if len(p.Items) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("traits not written: %s", r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	signups := func(filter map[string]any) response {
		return annCall(t, s, a.Token, "POST", "/api/v1/query/trend", map[string]any{
			"series": []any{map[string]any{"event": "signup", "math": "unique_users"}}, "filters": []any{filter}})
	}
	for _, c := range []struct {
		filter map[string]any
		want   float64
	}{
		{map[string]any{"property": "person.plan", "operator": "eq", "value": "pro"}, 2},
		{map[string]any{"property": "person.plan", "operator": "neq", "value": "pro"}, 2},
		{map[string]any{"property": "person.plan", "operator": "is_set"}, 3},
	} {
		r := signups(c.filter)
		var tr struct{ Series []struct{ Total *float64 } }
		if err := json.Unmarshal(r.Body, &tr); r.Status != 200 || err != nil || len(tr.Series) != 1 || tr.Series[0].Total == nil || *tr.Series[0].Total != c.want {
			t.Errorf("signups filtered by %v: %d %s, want %v users", c.filter, r.Status, r.Body, c.want)
		}
	}
	for filter, want := range map[string]string{
		`{"property":"person.$set","operator":"eq","value":"x"}`:    "filters[0].property: a person property's key must",
		`{"property":"person.plan","operator":"regex","value":"x"}`: "filters[0].operator: must be one of eq, neq, contains, is_set, is_not_set for a person property",
		`{"property":"person.plan","operator":"eq"}`:                "filters[0].value: eq needs a value",
	} {
		var f map[string]any
		json.Unmarshal([]byte(filter), &f)
		if r := signups(f); r.Status != 400 || !strings.Contains(string(r.Body), want) {
			t.Errorf("a trend filtered by %s: %d %s, want 400 %q", filter, r.Status, r.Body, want)
		}
	}
}
