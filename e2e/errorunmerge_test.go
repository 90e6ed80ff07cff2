package e2e

import (
	"encoding/json"
	"testing"
	"time"
)

// groupDetailWire is GET /api/v1/errors/{fingerprint}'s answer, as these
// tests read it.
type groupDetailWire struct {
	Group       errorGroupWire
	Occurrences []struct{ DistinctID string }
	Merged      []struct {
		Fingerprint, Reason, MergedBy, Type, Message string
		MergedAt                                     time.Time
		Events                                       int64
	}
}

// groupDetail reads a group's page with cred, failing the test unless 200.
func groupDetail(t *testing.T, s *server, cred, fp string) groupDetailWire {
	t.Helper()
	res := annCall(t, s, cred, "GET", "/api/v1/errors/"+fp, nil)
	var d groupDetailWire
	if err := json.Unmarshal(res.Body, &d); err != nil || res.Status != 200 {
		t.Fatalf("group %s: %d %s", fp, res.Status, res.Body)
	}
	return d
}

// byFingerprint indexes a list of groups.
func byFingerprint(groups []errorGroupWire) map[string]errorGroupWire {
	out := map[string]errorGroupWire{}
	for _, g := range groups {
		out[g.Fingerprint] = g
	}
	return out
}

// TestUnmergeErrorGroups drives POST /api/v1/errors/unmerge over HTTP on
// DuckDB: two groups merged into a third (one of them ignored before, and
// with an event sent while merged), the group's page listing them; the
// request's checks, an API key, another product's token and fingerprints
// that are not merged refused with nothing unmerged; then both unmerged
// one by one: the list's and the pages' counts are the originals again,
// the event sent while merged included, the ignored group is ignored
// again, and a new event of an unmerged bug counts in its own group.
func TestUnmergeErrorGroups(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	now, unit := todaySteps(6, time.Minute)
	exception := brokeIn(now)
	if r := postEvents(t, s, a.Live, exception("u1", "render", 6*unit), exception("u2", "render", 5*unit), exception("u1", "paint", 4*unit),
		exception("u3", "draw", 3*unit)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	if r := postEvents(t, s, b.Live, exception("v1", "blog", unit)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	original := waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) == 3 })
	fp := byFunction(original)
	blog := waitGroups(t, s, b.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) == 1 })[0].Fingerprint
	if res := annCall(t, s, a.Token, "PUT", "/api/v1/errors/"+fp["paint"]+"/status", map[string]any{"status": "ignored"}); res.Status != 200 {
		t.Fatalf("ignore paint: %d %s", res.Status, res.Body)
	}
	if res := annCall(t, s, a.Token, "POST", "/api/v1/errors/merge", map[string]any{"into": fp["render"], "groups": []string{fp["paint"], fp["draw"]}}); res.Status != 200 {
		t.Fatalf("merge: %d %s", res.Status, res.Body)
	}
	// paint again while merged: it counts in render.
	if r := postEvents(t, s, a.Live, exception("u4", "paint", 2*unit)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	groups := waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) > 1 || g[0].Events == 5 })
	if len(groups) != 1 || groups[0].Fingerprint != fp["render"] || groups[0].Users != 4 {
		t.Fatalf("after the merge: %+v", groups)
	}
	d := groupDetail(t, s, a.Token, fp["render"])
	merged := map[string]int64{}
	for _, m := range d.Merged {
		merged[m.Fingerprint] = m.Events
		if m.Reason != "merge" || m.MergedBy == "" || m.MergedAt.IsZero() || m.Type != "TypeError" || m.Message == "" {
			t.Errorf("a merged group on the page: %+v", m)
		}
	}
	if len(d.Merged) != 2 || merged[fp["paint"]] != 2 || merged[fp["draw"]] != 1 || d.Group.Events != 5 {
		t.Fatalf("the merged group's page: %+v", d)
	}

	unmerge := func(cred string, body any) response {
		return annCall(t, s, cred, "POST", "/api/v1/errors/unmerge", body)
	}
	wantError(t, unmerge(a.Token, map[string]any{"groups": []string{}}), 400, "invalid_request", "groups")
	wantError(t, unmerge(a.Token, map[string]any{"groups": []string{""}}), 400, "invalid_request", "groups")
	wantError(t, unmerge(a.Live, map[string]any{"groups": []string{fp["paint"]}}), 403, "key_not_allowed", "")
	// Another product's token, a group that is not merged (the one kept,
	// another product's): 404, and nothing unmerged.
	wantError(t, unmerge(b.Token, map[string]any{"groups": []string{fp["paint"]}}), 404, "error_group_not_found", "")
	wantError(t, unmerge(a.Token, map[string]any{"groups": []string{fp["paint"], fp["render"]}}), 404, "error_group_not_found", "")
	wantError(t, unmerge(a.Token, map[string]any{"groups": []string{blog}}), 404, "error_group_not_found", "")
	if g := listGroups(t, s, a.Token); len(g) != 1 || g[0].Events != 5 {
		t.Fatalf("a refused unmerge changed the groups: %+v", g)
	}

	res := unmerge(a.Token, map[string]any{"groups": []string{fp["paint"], fp["paint"]}})
	var out struct {
		Unmerged []struct{ Fingerprint, Into, Reason, CreatedBy string }
	}
	if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != 200 || len(out.Unmerged) != 1 ||
		out.Unmerged[0].Fingerprint != fp["paint"] || out.Unmerged[0].Into != fp["render"] || out.Unmerged[0].Reason != "merge" {
		t.Fatalf("unmerge: %d %s", res.Status, res.Body)
	}
	// paint is its own group again, its event sent while merged too, and
	// ignored as it was; draw is still in render.
	got := byFingerprint(listGroups(t, s, a.Token))
	if len(got) != 2 || got[fp["paint"]].Events != 2 || got[fp["paint"]].Status != "ignored" || got[fp["render"]].Events != 3 {
		t.Fatalf("after unmerging paint: %+v", got)
	}
	if d := groupDetail(t, s, a.Token, fp["render"]); len(d.Merged) != 1 || d.Merged[0].Fingerprint != fp["draw"] || d.Group.Events != 3 || len(d.Occurrences) != 3 {
		t.Errorf("render's page after unmerging paint: %+v", d)
	}
	if d := groupDetail(t, s, a.Token, fp["paint"]); d.Group.Fingerprint != fp["paint"] || d.Group.Events != 2 || len(d.Occurrences) != 2 || len(d.Merged) != 0 {
		t.Errorf("paint's page: %+v", d)
	}
	// Unmerged once, it is no longer merged.
	wantError(t, unmerge(a.Token, map[string]any{"groups": []string{fp["paint"]}}), 404, "error_group_not_found", "")

	if res := unmerge(a.Token, map[string]any{"groups": []string{fp["draw"]}}); res.Status != 200 {
		t.Fatalf("unmerge draw: %d %s", res.Status, res.Body)
	}
	got = byFingerprint(listGroups(t, s, a.Token))
	want := byFingerprint(original)
	for _, name := range []string{"render", "draw"} {
		if g, w := got[fp[name]], want[fp[name]]; g.Events != w.Events || g.Users != w.Users || g.Status != "open" || g.Message != w.Message {
			t.Errorf("%s after the unmerge: %+v, was %+v", name, g, w)
		}
	}
	if d := groupDetail(t, s, a.Token, fp["render"]); d.Group.Events != 2 || len(d.Occurrences) != 2 || len(d.Merged) != 0 {
		t.Errorf("render's page after both unmerges: %+v", d)
	}
	// A new event of an unmerged bug counts in its own group.
	if r := postEvents(t, s, a.Live, exception("u5", "draw", unit)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	got = byFingerprint(waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool {
		return byFingerprint(g)[fp["draw"]].Events == 2 || byFingerprint(g)[fp["render"]].Events != 2
	}))
	if len(got) != 3 || got[fp["draw"]].Events != 2 || got[fp["render"]].Events != 2 {
		t.Errorf("a new event of an unmerged bug: %+v", got)
	}
	if g := listGroups(t, s, b.Token); len(g) != 1 || g[0].Fingerprint != blog || g[0].Events != 1 {
		t.Errorf("the other product's groups: %+v", g)
	}
}

// TestUnmergeSourcemapAlias unmerges the alias ingest made when a release's
// map arrived after its minified errors: the de-minified error becomes its
// own group, and the same error sent again stays there (ingest does not
// alias a fingerprint that has events of its own).
func TestUnmergeSourcemapAlias(t *testing.T) {
	s := startServer(t, t.TempDir())
	a := newTenant(t, s, "Shop")
	m := loadMinifiedApp(t)
	exception := func(id string) map[string]any { return minifiedException(id, m.checkout) }
	if r := postEvents(t, s, a.Live, exception("before")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	first := waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) == 1 })[0].Fingerprint
	m.upload(t, s, a.Live)
	if r := postEvents(t, s, a.Live, exception("after")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool { return len(g) > 1 || g[0].Events == 2 })
	d := groupDetail(t, s, a.Token, first)
	if len(d.Merged) != 1 || d.Merged[0].Reason != "sourcemap" || d.Merged[0].MergedBy != "ingest" || d.Merged[0].Events != 1 {
		t.Fatalf("the de-minified fingerprint on the group's page: %+v", d)
	}
	deminified := d.Merged[0].Fingerprint
	if res := annCall(t, s, a.Token, "POST", "/api/v1/errors/unmerge", map[string]any{"groups": []string{deminified}}); res.Status != 200 {
		t.Fatalf("unmerge: %d %s", res.Status, res.Body)
	}
	got := byFingerprint(listGroups(t, s, a.Token))
	if len(got) != 2 || got[first].Events != 1 || got[deminified].Events != 1 {
		t.Fatalf("after the unmerge: %+v", got)
	}
	if r := postEvents(t, s, a.Live, exception("again")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	got = byFingerprint(waitGroups(t, s, a.Token, 10*time.Second, func(g []errorGroupWire) bool {
		return byFingerprint(g)[deminified].Events+byFingerprint(g)[first].Events == 3
	}))
	if len(got) != 2 || got[first].Events != 1 || got[deminified].Events != 2 {
		t.Errorf("the error again after the unmerge: %+v, want it in %s", got, deminified)
	}
}
