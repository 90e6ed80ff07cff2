package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// listGroups reads /api/v1/errors with cred, failing the test on an error.
func listGroups(t *testing.T, s *server, cred string) []errorGroupWire {
	t.Helper()
	res := annCall(t, s, cred, "GET", "/api/v1/errors", nil)
	var out struct{ Groups []errorGroupWire }
	if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != 200 {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	return out.Groups
}

// waitGroups polls /api/v1/errors until cond holds of its groups, or fails
// after limit: what ingest acknowledged is read once it is stored.
func waitGroups(t *testing.T, s *server, cred string, limit time.Duration, cond func([]errorGroupWire) bool) []errorGroupWire {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		g := listGroups(t, s, cred)
		if cond(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("groups not as expected within %v: %+v", limit, g)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSourcemapAfterErrorsKeepsOneGroup sends the real server, with a
// webhook for alerts on a one-second interval, a minified error of a
// release without a sourcemap, then the release's map, then the same error
// again: the second, de-minified, lands in the first's group (one group,
// two events, its occurrences both there, the newest with the original
// function), and only one "new group" alert is sent.
func TestSourcemapAfterErrorsKeepsOneGroup(t *testing.T) {
	s := startServer(t, t.TempDir(), "--alert-interval", "1s")
	a := newTenant(t, s, "Shop")
	rcv := newAlertReceiver(t)
	if res := annCall(t, s, a.Token, "PUT", "/api/v1/alerts/webhook", map[string]any{"url": rcv.URL + "/a"}); res.Status != 201 {
		t.Fatalf("webhook: %d %s", res.Status, res.Body)
	}
	m := loadMinifiedApp(t)
	if r := postEvents(t, s, a.Live, m.onerror("before")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	first := waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) == 1 })[0].Fingerprint
	rcv.waitFor(t, "the new group's alert", 30*time.Second, func(ds []delivery) bool { return len(of(ds, "new", first)) > 0 })

	m.upload(t, s, a.Live)
	if r := postEvents(t, s, a.Live, m.onerror("after")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	groups := waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool {
		return len(g) > 1 || len(g) == 1 && g[0].Events == 2
	})
	if len(groups) != 1 || groups[0].Fingerprint != first || groups[0].Events != 2 || groups[0].Users != 2 {
		t.Fatalf("the map split the bug: %+v, want one group %s of 2 events", groups, first)
	}
	res := annCall(t, s, a.Token, "GET", "/api/v1/errors/"+first, nil)
	var detail struct {
		Occurrences []struct {
			DistinctID string
			Frames     []struct {
				Function string
				Resolved bool
			}
		}
	}
	json.Unmarshal(res.Body, &detail)
	if res.Status != 200 || len(detail.Occurrences) != 2 || detail.Occurrences[0].DistinctID != "after" ||
		!detail.Occurrences[0].Frames[0].Resolved || detail.Occurrences[0].Frames[0].Function != "checkout" || detail.Occurrences[1].Frames[0].Resolved {
		t.Errorf("the group's occurrences: %d %s", res.Status, res.Body)
	}

	// A few rounds later: one new-group alert, of the first group.
	time.Sleep(4 * time.Second)
	ids := map[int64]string{}
	for _, d := range rcv.deliveries() {
		if d.Payload.Kind == "new" {
			ids[d.Payload.ID] = d.Payload.Fingerprint
		}
	}
	if len(ids) != 1 {
		t.Errorf("new-group alerts: %v; want one, of %s: %s", ids, first, describeDeliveries(rcv.deliveries()))
	}
}

// brokeIn makes the TypeErrors of release 1.0 the merge tests send: user
// id's, thrown in function fn (a group of its own), ago before now.
func brokeIn(now time.Time) func(id, fn string, ago time.Duration) map[string]any {
	return func(id, fn string, ago time.Duration) map[string]any {
		return map[string]any{"event_name": "$exception", "distinct_id": id, "timestamp": now.Add(-ago).Format(time.RFC3339Nano),
			"properties": map[string]any{"$exception_type": "TypeError", "$exception_message": "broke in " + fn, "$release": "1.0",
				"$exception_stack": "TypeError: broke\n    at " + fn + " (https://shop.example.com/app.js:10:5)\n    at main (https://shop.example.com/app.js:40:1)"}}
	}
}

// byFunction is the fingerprints of groups of brokeIn errors by the
// function each was thrown in.
func byFunction(groups []errorGroupWire) map[string]string {
	fp := map[string]string{}
	for _, g := range groups {
		fp[strings.TrimPrefix(g.Message, "broke in ")] = g.Fingerprint
	}
	return fp
}

// TestMergeErrorGroups drives POST /api/v1/errors/merge over HTTP: the
// request's checks, a group of another product refused (nothing merged),
// an API key refused; merged groups read as one, by the list, by each
// fingerprint's page and by new events of a merged fingerprint; another
// product sees none of it; and past --error-alias-limit a merge is refused.
func TestMergeErrorGroups(t *testing.T) {
	s := startServer(t, t.TempDir(), "--error-alias-limit", "2")
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	now, unit := todaySteps(4, time.Minute)
	exception := brokeIn(now)
	if r := postEvents(t, s, a.Live, exception("u1", "render", 4*unit), exception("u2", "render", 3*unit), exception("u1", "paint", 2*unit),
		exception("u3", "draw", unit), exception("u4", "sketch", unit)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	if r := postEvents(t, s, b.Live, exception("v1", "blog", unit)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	fp := byFunction(waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) == 4 }))
	blog := waitGroups(t, s, b.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) == 1 })[0].Fingerprint

	merge := func(cred string, body any) response {
		return annCall(t, s, cred, "POST", "/api/v1/errors/merge", body)
	}
	wantError(t, merge(a.Token, map[string]any{"groups": []string{fp["paint"]}}), 400, "invalid_request", "into")
	wantError(t, merge(a.Token, map[string]any{"into": fp["render"], "groups": []string{}}), 400, "invalid_request", "groups")
	wantError(t, merge(a.Token, map[string]any{"into": fp["render"], "groups": []string{""}}), 400, "invalid_request", "groups")
	wantError(t, merge(a.Live, map[string]any{"into": fp["render"], "groups": []string{fp["paint"]}}), 403, "key_not_allowed", "")
	// Another product's group, in either place: 404, and nothing merged.
	wantError(t, merge(a.Token, map[string]any{"into": fp["render"], "groups": []string{fp["paint"], blog}}), 404, "error_group_not_found", "")
	wantError(t, merge(a.Token, map[string]any{"into": blog, "groups": []string{fp["paint"]}}), 404, "error_group_not_found", "")
	wantError(t, merge(b.Token, map[string]any{"into": blog, "groups": []string{fp["paint"]}}), 404, "error_group_not_found", "")
	if g := listGroups(t, s, a.Token); len(g) != 4 {
		t.Fatalf("a refused merge changed the groups: %+v", g)
	}

	res := merge(a.Token, map[string]any{"into": fp["render"], "groups": []string{fp["paint"], fp["draw"], fp["paint"]}})
	var merged struct {
		Into   string
		Merged []string
	}
	if err := json.Unmarshal(res.Body, &merged); err != nil || res.Status != 200 || merged.Into != fp["render"] || len(merged.Merged) != 2 {
		t.Fatalf("merge: %d %s", res.Status, res.Body)
	}
	groups := listGroups(t, s, a.Token)
	if len(groups) != 2 || groups[0].Fingerprint != fp["render"] || groups[0].Events != 4 || groups[0].Users != 3 ||
		groups[0].Message != "broke in draw" || groups[1].Fingerprint != fp["sketch"] {
		t.Fatalf("after the merge: %+v", groups)
	}
	// A merged group's page is the group it was merged into.
	res = annCall(t, s, a.Token, "GET", "/api/v1/errors/"+fp["paint"], nil)
	var detail struct {
		Group       errorGroupWire
		Occurrences []struct{ DistinctID string }
	}
	json.Unmarshal(res.Body, &detail)
	if res.Status != 200 || detail.Group.Fingerprint != fp["render"] || detail.Group.Events != 4 || len(detail.Occurrences) != 4 {
		t.Errorf("a merged group's page: %d %s", res.Status, res.Body)
	}
	// A new event of a merged bug counts in the group.
	if r := postEvents(t, s, a.Live, exception("u5", "paint", 0)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	groups = waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) > 2 || g[0].Events == 5 })
	if len(groups) != 2 || groups[0].Fingerprint != fp["render"] || groups[0].Events != 5 {
		t.Errorf("a merged bug's new event: %+v", groups)
	}
	if g := listGroups(t, s, b.Token); len(g) != 1 || g[0].Fingerprint != blog || g[0].Events != 1 {
		t.Errorf("the other product's groups: %+v", g)
	}
	// Two aliases are the limit: a third is refused.
	wantError(t, merge(a.Token, map[string]any{"into": fp["render"], "groups": []string{fp["sketch"]}}), 403, "error_aliases_full", "")
	if g := listGroups(t, s, a.Token); len(g) != 2 {
		t.Errorf("a merge over the limit changed the groups: %+v", g)
	}
}

// TestErrorGroupsOnTwoNodes runs both ways groups become one on two nodes
// over one ClickHouse and one PostgreSQL: a minified error through node a,
// the release's map uploaded through a, the same error through node b,
// de-minified there, lands in the first group; a group merged through b is
// read merged through a, and unmerged through a is read apart through b.
func TestErrorGroupsOnTwoNodes(t *testing.T) {
	a, b := startNodes(t)
	ten := newTenant(t, a, "Shop")
	m := loadMinifiedApp(t)
	if r := postEvents(t, a, ten.Live, minifiedException("before", m.checkout)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	first := waitGroups(t, a, ten.Token, 20*time.Second, func(g []errorGroupWire) bool { return len(g) == 1 })[0].Fingerprint
	m.upload(t, a, ten.Live)
	if r := postEvents(t, b, ten.Live, minifiedException("after", m.checkout)); r.Status != 202 {
		t.Fatalf("ingest through b: %d %s", r.Status, r.Body)
	}
	groups := waitGroups(t, b, ten.Token, 20*time.Second, func(g []errorGroupWire) bool { return len(g) > 1 || g[0].Events == 2 })
	if len(groups) != 1 || groups[0].Fingerprint != first {
		t.Fatalf("through b after the map: %+v, want the one group %s", groups, first)
	}

	// Another bug through a, merged through b, read through a.
	other := "RangeError: marker-checkout\n    at render (https://shop.example.com/assets/view.js:10:5)"
	if r := postEvents(t, a, ten.Live, minifiedException("other", other)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	groups = waitGroups(t, b, ten.Token, 20*time.Second, func(g []errorGroupWire) bool { return len(g) == 2 })
	second := groups[0].Fingerprint
	if second == first {
		second = groups[1].Fingerprint
	}
	if res := annCall(t, b, ten.Token, "POST", "/api/v1/errors/merge", map[string]any{"into": first, "groups": []string{second}}); res.Status != 200 {
		t.Fatalf("merge through b: %d %s", res.Status, res.Body)
	}
	if g := listGroups(t, a, ten.Token); len(g) != 1 || g[0].Fingerprint != first || g[0].Events != 3 {
		t.Errorf("through a after the merge: %+v", g)
	}
	// Unmerged through a, read through b: the two groups again, and the
	// de-minified fingerprint ingest aliased is still in the first.
	if res := annCall(t, a, ten.Token, "POST", "/api/v1/errors/unmerge", map[string]any{"groups": []string{second}}); res.Status != 200 {
		t.Fatalf("unmerge through a: %d %s", res.Status, res.Body)
	}
	if g := byFingerprint(listGroups(t, b, ten.Token)); len(g) != 2 || g[first].Events != 2 || g[second].Events != 1 {
		t.Errorf("through b after the unmerge: %+v", g)
	}
	if d := groupDetail(t, b, ten.Token, first); len(d.Merged) != 1 || d.Merged[0].Reason != "sourcemap" || d.Merged[0].Events != 1 {
		t.Errorf("the first group's merged fingerprints through b: %+v", d.Merged)
	}
}
