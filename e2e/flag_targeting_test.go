package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"strata/internal/flags"
)

// TestFlagTargeting drives a flag's targeting conditions through the real
// binary: saved and read back through the flag API, refused with the field
// named, kept by an update that leaves them out and removed by [], in the
// flag's trail, served in GET /api/v1/config (and nothing of them to
// another product), and an experiment on a targeted flag counting the
// users its conditions leave out in no arm.
func TestFlagTargeting(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	type condition struct{ Type, Trait, Op, Value string }
	type targetedFlag struct {
		ID         int64       `json:"id"`
		Key        string      `json:"key"`
		Conditions []condition `json:"conditions"`
	}
	conds := []map[string]any{{"trait": "plan", "op": "eq", "value": "pro"}, {"type": "trait", "trait": "seats", "op": "gt", "value": "10"}}
	res := annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"name": "Big accounts", "enabled": true, "conditions": conds})
	var f targetedFlag
	json.Unmarshal(res.Body, &f)
	want := []condition{{"trait", "plan", "eq", "pro"}, {"trait", "seats", "gt", "10"}}
	if res.Status != 201 || len(f.Conditions) != 2 || f.Conditions[0] != want[0] || f.Conditions[1] != want[1] {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	path := "/api/v1/flags/" + strconv.FormatInt(f.ID, 10)

	// Bad conditions: 400 naming the field, nothing stored.
	for _, c := range []struct {
		conds any
		field string
	}{
		{[]map[string]any{{"trait": "plan", "op": "is", "value": "pro"}}, "conditions[0].op"},
		{[]map[string]any{{"trait": "plan", "op": "eq"}, {"trait": "a b", "op": "exists"}}, "conditions[1].trait"},
		{[]map[string]any{{"trait": "seats", "op": "gt", "value": "ten"}}, "conditions[0].value"},
		{[]map[string]any{{"type": "segment", "trait": "x", "op": "eq"}}, "conditions[0].type"},
		{make([]map[string]any, 21), "conditions"},
	} {
		wantError(t, annCall(t, s, a.Token, "PUT", path, map[string]any{"conditions": c.conds}), 400, "invalid_request", c.field)
	}
	json.Unmarshal(annCall(t, s, a.Token, "GET", path, nil).Body, &f)
	if len(f.Conditions) != 2 {
		t.Errorf("after refused updates: %+v", f)
	}
	// An update that leaves them out keeps them; another product never reaches them.
	if r := annCall(t, s, a.Token, "PUT", path, map[string]any{"description": "Seats over 10 on pro"}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	json.Unmarshal(annCall(t, s, a.Token, "GET", path, nil).Body, &f)
	if len(f.Conditions) != 2 {
		t.Errorf("an update without conditions dropped them: %+v", f)
	}
	wantError(t, annCall(t, s, b.Token, "PUT", path, map[string]any{"conditions": []any{}}), 404, "flag_not_found", "")

	// The SDK configuration serves them; B's serves none of A's flags.
	_, cfg := sdkConfigFlags(t, s, a.Live, "")
	if len(cfg) != 1 || len(cfg[0].Conditions) != 2 || cfg[0].Conditions[0] != (flags.Condition{Type: "trait", Trait: "plan", Op: "eq", Value: "pro"}) ||
		cfg[0].Conditions[1] != (flags.Condition{Type: "trait", Trait: "seats", Op: "gt", Value: "10"}) {
		t.Fatalf("config: %+v", cfg)
	}
	if _, other := sdkConfigFlags(t, s, b.Live, ""); len(other) != 0 {
		t.Errorf("B's config: %+v", other)
	}
	if as, _ := flags.Assign(&cfg[0], "u1", map[string]any{"plan": "pro", "seats": float64(11)}, nil); as.Variant != "on" {
		t.Errorf("a targeted user: %+v", as)
	}
	if as, _ := flags.Assign(&cfg[0], "u1", map[string]any{"plan": "pro", "seats": float64(10)}, nil); as.Variant != "control" || !as.Excluded {
		t.Errorf("an untargeted user: %+v", as)
	}

	// [] removes them, recorded in the trail.
	if r := annCall(t, s, a.Token, "PUT", path, map[string]any{"conditions": []any{}}); r.Status != 200 {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	_, cfg = sdkConfigFlags(t, s, a.Live, "")
	if len(cfg) != 1 || len(cfg[0].Conditions) != 0 {
		t.Errorf("config after removing the conditions: %+v", cfg)
	}
	var trail struct {
		Items []struct {
			Action  string
			Changes []struct{ Field string }
		}
	}
	json.Unmarshal(annCall(t, s, a.Token, "GET", path+"/changes", nil).Body, &trail)
	if len(trail.Items) != 3 || len(trail.Items[0].Changes) != 1 || trail.Items[0].Changes[0].Field != "conditions" {
		t.Errorf("trail: %+v", trail.Items)
	}

	// An experiment on a targeted flag: users the conditions leave out are
	// exposed as excluded and counted in no arm.
	now := time.Now().UTC()
	res = annCall(t, s, a.Token, "POST", "/api/v1/experiments", map[string]any{"name": "Pro pricing", "holdout": 10,
		"startDate": now.Add(-time.Hour).Format("2006-01-02")})
	var e experimentWire
	json.Unmarshal(res.Body, &e)
	if res.Status != 201 {
		t.Fatalf("experiment: %d %s", res.Status, res.Body)
	}
	fpath := "/api/v1/flags/" + strconv.FormatInt(e.FlagID, 10)
	if r := annCall(t, s, a.Token, "PUT", fpath, map[string]any{"conditions": []map[string]any{{"trait": "plan", "op": "eq", "value": "pro"}}}); r.Status != 200 {
		t.Fatalf("targeting the experiment's flag: %d %s", r.Status, r.Body)
	}
	base := "/api/v1/experiments/" + strconv.FormatInt(e.ID, 10)
	if r := annCall(t, s, a.Token, "POST", base+"/start", nil); r.Status != 200 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	_, cfg = sdkConfigFlags(t, s, a.Live, "")
	var ef *flags.Flag
	for i := range cfg {
		if cfg[i].Key == e.FlagKey {
			ef = &cfg[i]
		}
	}
	if ef == nil || len(ef.Conditions) != 1 || ef.Experiment == nil {
		t.Fatalf("the experiment's flag in the config: %+v", cfg)
	}
	counts := map[string]int64{}
	var batch []map[string]any
	for i := range 600 {
		id := "user_" + strconv.Itoa(i)
		props := map[string]any{"plan": []string{"pro", "free", "team"}[i%3]}
		as, _ := flags.Assign(ef, id, props, nil)
		counts[as.Exposed()]++
		batch = append(batch, map[string]any{"event_name": "$exposure", "distinct_id": id, "timestamp": now.Add(-10 * time.Minute).Format(time.RFC3339Nano),
			"properties": map[string]any{"flag": e.FlagKey, "experiment_id": e.ID, "variant": as.Exposed()}})
		if len(batch) == 300 {
			if r := postEvents(t, s, a.Live, batch...); r.Status != 202 {
				t.Fatalf("ingest: %d %s", r.Status, r.Body)
			}
			batch = nil
		}
	}
	// Two thirds of the users are not pro: about 400 excluded, 20 held out, 90 an arm.
	if counts["excluded"] < 350 || counts["control"] < 60 || counts["treatment"] < 60 {
		t.Fatalf("assignments %v", counts)
	}
	res = annCall(t, s, a.Token, "GET", base+"/results", nil)
	var r struct {
		Arms []struct {
			Variant string
			Exposed int64
		}
		Holdout, Excluded, MultipleArms int64
	}
	if err := json.Unmarshal(res.Body, &r); err != nil || res.Status != 200 {
		t.Fatalf("results: %d %s", res.Status, res.Body)
	}
	if r.Excluded != counts["excluded"] || r.Holdout != counts["holdout"] || len(r.Arms) != 2 ||
		r.Arms[0].Exposed != counts["control"] || r.Arms[1].Exposed != counts["treatment"] {
		t.Errorf("results %s, want %v", res.Body, counts)
	}
}
