package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// previousRelease is the build whose data directory the upgrade test opens
// with this one. There are no release tags yet, so it is the last landed
// stop (e409abb, stop 47, 2026-11-28); move it to the last release at each one
// (docs/operations.md, "Upgrades").
const previousRelease = "e409abb"

// buildPrevious builds previousRelease from this checkout's Git history
// into the user's cache directory (once per commit: the next run reuses
// it) and returns the binary. Without Git history (a source tarball) the
// test is skipped, saying why; a clone whose history lacks the commit (a
// shallow one) fails, since CI clones with history.
func buildPrevious(t *testing.T) string {
	t.Helper()
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", ".."}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	if _, err := git("rev-parse", "--git-dir"); err != nil {
		t.Skipf("no Git history here (a source tarball?): the upgrade test builds the previous release %s from it", previousRelease)
	}
	full, err := git("rev-parse", "--verify", previousRelease+"^{commit}")
	if err != nil {
		// A shallow clone holds no older commit; skipped, it says so in
		// the test output. A full clone (git clone's default) runs it.
		t.Skipf("the previous release %s is not in this clone's history (a shallow clone? git fetch --unshallow): %v", previousRelease, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "strata-e2e", "strata-"+full)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	src := t.TempDir()
	archive := exec.Command("sh", "-c", "git -C .. archive "+full+" | tar -x -C "+src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("extracting %s: %v: %s", previousRelease, err, out)
	}
	// The country database is fetched by make and not in Git; the one
	// this build embeds serves the old build as well.
	geo := filepath.Join("internal", "enrich", "geo", "fetched-by-make", "dbip-country.mmdb")
	db, err := os.ReadFile(filepath.Join("..", geo))
	if err != nil {
		t.Fatalf("the country database (make geoip): %v", err)
	}
	os.MkdirAll(filepath.Dir(filepath.Join(src, geo)), 0o755)
	if err := os.WriteFile(filepath.Join(src, geo), db, 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(bin), 0o755)
	build := exec.Command("go", "build", "-o", bin+".tmp", "./cmd/strata")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v: %s", previousRelease, err, out)
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// plain sends one request without the contract check: the previous
// release answers by its own document, not this one's.
func plain(t *testing.T, method, url string, body any, header map[string]string) response {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// contains reports where got lacks something of want: every field of an
// object in want must be in got with what it holds, arrays element by
// element. A newer build may add fields; it may not lose or change one.
func contains(want, got any, at string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v, want an object", at, got)}
		}
		var out []string
		for k, v := range w {
			if k == "lastUsedAt" {
				// Written in the background after a use; the old
				// build's listing may predate its own last stamp.
				continue
			}
			gv, ok := g[k]
			if !ok {
				out = append(out, at+"."+k+": missing")
				continue
			}
			out = append(out, contains(v, gv, at+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %d elements, want %d", at, len(g), len(w))}
		}
		var out []string
		for i := range w {
			out = append(out, contains(w[i], g[i], fmt.Sprintf("%s[%d]", at, i))...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: %v, want %v", at, got, want)}
	}
	return nil
}

// TestUpgradeFromPreviousRelease writes a data directory with the
// previous release's binary, built from Git (a product, keys, a token, a
// shared link, a flag, an experiment, an annotation, a saved query, a
// campaign, page views in sessions, other events, errors and a replay),
// through its HTTP API, and records what it answers; then this build opens
// the directory (applying the migrations since) and must answer every
// one of those the same, fields it added aside, and take new writes.
func TestUpgradeFromPreviousRelease(t *testing.T) {
	upgrade(t, buildPrevious(t))
}

// TestUpgradeClusterFromPreviousRelease is TestUpgradeFromPreviousRelease
// on a node whose events are in ClickHouse and whose metadata (and
// replays) are in PostgreSQL: the previous release creates both schemas,
// this build migrates them.
func TestUpgradeClusterFromPreviousRelease(t *testing.T) {
	chtest.Skip(t)
	bin := buildPrevious(t)
	ch := chtest.Shared(t)
	meta := pgtest.Start(t)
	upgrade(t, bin, "--events", ch.URL(fmt.Sprintf("strata_upgrade_%d", time.Now().UnixNano()), ""), "--meta", meta)
}

// upgrade runs the upgrade scenario with the previous release's binary
// bin, both builds started with args.
func upgrade(t *testing.T, bin string, args ...string) {
	dir := t.TempDir()
	old := startBinary(t, bin, dir, args...)

	origin := map[string]string{"Origin": old.URL}
	r := plain(t, "POST", old.URL+"/api/v1/dashboard/setup", map[string]string{"email": "owner@example.com",
		"password": "correct horse battery", "setupToken": old.SetupToken}, origin)
	if r.Status != 201 {
		t.Fatalf("setup on %s: %d %s", previousRelease, r.Status, r.Body)
	}
	cookie := strings.Split(r.Header.Get("Set-Cookie"), ";")[0]
	owner := func(s *server, method, path string, body any) response {
		return plain(t, method, s.URL+path, body, map[string]string{"Origin": s.URL, "Cookie": cookie})
	}
	created := func(r response, what string) map[string]any {
		t.Helper()
		if r.Status != 201 {
			t.Fatalf("%s on %s: %d %s", what, previousRelease, r.Status, r.Body)
		}
		var m map[string]any
		json.Unmarshal(r.Body, &m)
		return m
	}
	p := created(owner(old, "POST", "/api/v1/products", map[string]string{"name": "Upgraded"}), "product")
	products := fmt.Sprintf("/api/v1/products/%v", p["id"])
	key := created(owner(old, "POST", products+"/keys", map[string]string{"env": "live"}), "key")["secret"].(string)
	token := created(owner(old, "POST", products+"/tokens", map[string]any{}), "token")["secret"].(string)
	created(owner(old, "POST", products+"/shared-links", map[string]string{"name": "Board"}), "shared link")

	bearer := func(s *server, method, path string, body any) response {
		return plain(t, method, s.URL+path, body, map[string]string{"Authorization": "Bearer " + token})
	}
	flag := created(bearer(old, "POST", "/api/v1/flags", map[string]any{"name": "Dark mode", "enabled": true, "rollout": 25}), "flag")
	created(bearer(old, "POST", "/api/v1/experiments", map[string]any{"name": "Checkout copy", "primaryEvent": "signup"}), "experiment")
	past := time.Now().UTC().Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(9 * time.Hour)
	created(bearer(old, "POST", "/api/v1/annotations", newAnnotation("release 1.0", past)), "annotation")
	created(bearer(old, "POST", "/api/v1/queries", map[string]any{"kind": "trend", "name": "Views",
		"definition": map[string]any{"series": []map[string]any{{"event": "$pageview"}}}}), "saved query")
	created(bearer(old, "POST", "/api/v1/campaigns", modal("Welcome", nil)), "campaign")

	batch := shopEvents(12, past)
	for u := range 3 {
		batch = append(batch, minifiedException(fmt.Sprintf("user-%d", u), "RangeError: marker-checkout\n    at u (https://shop.example/app.js:1:10)"))
	}
	batch = append(batch, snapshotEvent("user-1", "sess-up", "win-up", 0, past.UnixMilli()), snapshotEvent("user-1", "sess-up", "win-up", 1, past.UnixMilli()+5000))
	body, _ := json.Marshal(map[string]any{"batch": batch})
	if r := plain(t, "POST", old.URL+"/e", json.RawMessage(body), map[string]string{"X-API-Key": key}); r.Status != 202 {
		t.Fatalf("ingest on %s: %d %s", previousRelease, r.Status, r.Body)
	}

	// What the old build answers, by the session's and the token's routes.
	type call struct {
		owner        bool
		method, path string
		body         any
	}
	calls := []call{
		{true, "GET", "/api/v1/products", nil},
		{true, "GET", products + "/keys", nil},
		{true, "GET", products + "/tokens", nil},
		{true, "GET", products + "/shared-links", nil},
		{false, "GET", "/api/v1/flags", nil},
		{false, "GET", fmt.Sprintf("/api/v1/flags/%v", flag["id"]), nil},
		{false, "GET", "/api/v1/experiments", nil},
		{false, "GET", "/api/v1/annotations", nil},
		{false, "GET", "/api/v1/queries", nil},
		{false, "GET", "/api/v1/campaigns", nil},
		{false, "GET", "/api/v1/replays", nil},
		{false, "GET", "/api/v1/replays/sess-up", nil},
		{false, "GET", "/api/v1/errors?dateFrom=" + day(past) + "&dateTo=" + day(time.Now().UTC()), nil},
		{false, "POST", "/api/v1/query/trend", map[string]any{"series": []map[string]any{{"event": "$pageview"}, {"event": "signup"}},
			"dateFrom": day(past), "dateTo": day(past), "interval": "hour", "breakdown": "properties.plan"}},
		{false, "POST", "/api/v1/query/funnel", funnelRequest([]string{"$pageview", "signup", "purchase"}, past, past, 24)},
		{false, "POST", "/api/v1/query/sessions", map[string]any{"dateFrom": day(past), "dateTo": day(past), "interval": "day"}},
		{false, "POST", "/api/v1/query/retention", map[string]any{"startEvent": "$pageview", "returnEvent": "signup",
			"dateFrom": day(past), "dateTo": day(past), "period": "day"}},
	}
	send := func(s *server, c call) response {
		if c.owner {
			return owner(s, c.method, c.path, c.body)
		}
		return bearer(s, c.method, c.path, c.body)
	}
	before := make([]any, len(calls))
	for i, c := range calls {
		r := send(old, c)
		if r.Status != 200 {
			t.Fatalf("%s %s on %s: %d %s", c.method, c.path, previousRelease, r.Status, r.Body)
		}
		json.Unmarshal(r.Body, &before[i])
	}
	if s := fmt.Sprint(before[14]); !strings.Contains(s, "count:12") {
		t.Fatalf("the funnel on %s does not count the 12 users: %s", previousRelease, s)
	}
	old.Stop()

	cur := startServer(t, dir, args...)
	for i, c := range calls {
		r := send(cur, c)
		if r.Status != 200 {
			t.Errorf("%s %s after the upgrade: %d %s", c.method, c.path, r.Status, r.Body)
			continue
		}
		var after any
		json.Unmarshal(r.Body, &after)
		for _, d := range contains(before[i], after, "") {
			t.Errorf("%s %s after the upgrade: %s", c.method, c.path, d)
		}
	}
	// The upgraded directory takes writes, of what the old build had and
	// of what it did not (goals came after it).
	if r := plain(t, "POST", cur.URL+"/e", json.RawMessage(body), map[string]string{"X-API-Key": key}); r.Status != 202 {
		t.Errorf("ingest after the upgrade: %d %s", r.Status, r.Body)
	}
	if r := owner(cur, "POST", products+"/goals", map[string]string{"kind": "event", "event": "signup"}); r.Status != 201 {
		t.Errorf("a goal after the upgrade: %d %s", r.Status, r.Body)
	}
}
