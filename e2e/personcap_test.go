package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// TestPersonsCapOverHTTP runs the binary with --persons-per-product 3: the
// public key's events from five distinct ids are all stored and counted,
// but only the first three ids get a profile; a capped product's existing
// persons still take their traits, and another product has its own cap.
func TestPersonsCapOverHTTP(t *testing.T) {
	s := startServer(t, t.TempDir(), "--persons-per-product", "3")
	a, b := newTenant(t, s, "capped a"), newTenant(t, s, "capped b")
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second).Format(time.RFC3339)
	ev := func(id, plan string) map[string]any {
		return map[string]any{"event_name": "x", "distinct_id": id, "timestamp": at, "properties": map[string]any{"$set": map[string]any{"plan": plan}}}
	}
	person := func(tenant tenant, id string) (int, string) {
		r := annCall(t, s, tenant.Token, "GET", "/api/v1/persons/"+id, nil)
		var p struct{ Properties map[string]any }
		json.Unmarshal(r.Body, &p)
		plan, _ := p.Properties["plan"].(string)
		return r.Status, plan
	}
	waitPlan := func(tenant tenant, id, plan string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			if st, got := person(tenant, id); st == 200 && got == plan {
				return
			}
			if time.Now().After(deadline) {
				st, got := person(tenant, id)
				t.Fatalf("%s's plan: %d %q, want %q", id, st, got, plan)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if r := postEvents(t, s, a.Live, ev("ann", "free"), ev("bo", "free"), ev("cy", "free")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	waitPlan(a, "cy", "free")
	if r := postEvents(t, s, a.Live, ev("dee", "free"), ev("eve", "free"), ev("ann", "pro")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	// ann's new trait is written in the same batch as dee's and eve's.
	waitPlan(a, "ann", "pro")
	for _, id := range []string{"dee", "eve"} {
		if st, _ := person(a, id); st != 404 {
			t.Errorf("%s past the cap: %d, want 404", id, st)
		}
	}
	r := annCall(t, s, a.Token, "GET", "/api/v1/persons", nil)
	var list struct{ Items []struct{ DistinctID string } }
	if err := json.Unmarshal(r.Body, &list); r.Status != 200 || err != nil || len(list.Items) != 3 {
		t.Errorf("the people list of the capped product: %d %s", r.Status, r.Body)
	}
	// Every event was stored: five users did x.
	r = annCall(t, s, a.Token, "POST", "/api/v1/query/trend", map[string]any{"series": []any{map[string]any{"event": "x", "math": "unique_users"}}})
	var tr struct{ Series []struct{ Total *float64 } }
	if err := json.Unmarshal(r.Body, &tr); err != nil || len(tr.Series) != 1 || tr.Series[0].Total == nil || *tr.Series[0].Total != 5 {
		t.Errorf("users of x in the capped product: %d %s, want 5", r.Status, r.Body)
	}
	// The other product has room of its own.
	if r := postEvents(t, s, b.Live, ev("dee", "team")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	waitPlan(b, "dee", "team")
}
