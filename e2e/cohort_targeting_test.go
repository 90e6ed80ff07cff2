package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"strata/internal/flags"
	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// TestCohortTargeting drives cohort conditions through the real binary on
// the embedded stores: flags and message audiences that name a cohort,
// refused when it is not the product's; /api/v1/config giving each
// identified user their own memberships (plain and gzipped, with ETags of
// their own), following an upload of new members and a person's deletion;
// the message engine showing a campaign to the cohort's members alone.
func TestCohortTargeting(t *testing.T) {
	s := startServer(t, t.TempDir())
	checkCohortTargeting(t, s, true)
}

// TestCohortTargetingClickHouse is the same on ClickHouse and PostgreSQL.
func TestCohortTargetingClickHouse(t *testing.T) {
	chtest.Skip(t)
	ch := chtest.Shared(t)
	meta := pgtest.Start(t)
	events := ch.URL(fmt.Sprintf("strata_targeting_%d", time.Now().UnixNano()), "")
	checkCohortTargeting(t, startServer(t, t.TempDir(), "--events", events, "--meta", meta), false)
}

// userConfig is GET /api/v1/config for a user, as the browser SDK asks it.
type userConfig struct {
	Flags   []flags.Flag    `json:"flags"`
	Cohorts map[string]bool `json:"cohorts"`
	has     bool            // the answer has a cohorts member
}

// checkCohortTargeting runs the test on s; with browser, the browser SDK
// in headless Chromium asks getVariant for a member and for another user.
func checkCohortTargeting(t *testing.T, s *server, browser bool) {
	owner := setupOwner(t, s)
	a, b := newTenant(t, s, "Targeting a"), newTenant(t, s, "Targeting b")
	pa := "/api/v1/products/" + a.ProductFlag
	staticCohort := func(product, name, csv string) int64 {
		t.Helper()
		r := owner.do(t, "POST", "/api/v1/products/"+product+"/cohorts", map[string]any{"name": name, "kind": "static"})
		var c cohortJSON
		if err := json.Unmarshal(r.Body, &c); r.Status != 201 || err != nil {
			t.Fatalf("create cohort: %d %s", r.Status, r.Body)
		}
		if csv != "" {
			upload(t, s, owner, "/api/v1/products/"+product+"/cohorts/"+strconv.FormatInt(c.ID, 10), csv)
		}
		return c.ID
	}
	paying := staticCohort(a.ProductFlag, "Paying", "distinct_id\nann\nbea\n")
	churned := staticCohort(a.ProductFlag, "Churned", "distinct_id\nbea\n")
	other := staticCohort(b.ProductFlag, "B's", "distinct_id\nann\n")
	cohortCond := func(id int64, op string) map[string]any {
		return map[string]any{"type": "cohort", "cohortId": id, "op": op}
	}

	// Refusals name the field; nothing is stored.
	for _, c := range []struct {
		cond  map[string]any
		field string
	}{
		{cohortCond(other, "in"), "conditions[0].cohortId"},
		{cohortCond(0, "in"), "conditions[0].cohortId"},
		{cohortCond(paying, "eq"), "conditions[0].op"},
		{map[string]any{"type": "cohort", "cohortId": paying, "op": "in", "trait": "plan"}, "conditions[0]"},
		{map[string]any{"type": "segment", "trait": "plan", "op": "eq", "value": "x"}, "conditions[0].type"},
		{map[string]any{"trait": "plan", "op": "eq", "value": "x", "cohortId": paying}, "conditions[0].cohortId"},
	} {
		wantError(t, annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"name": "Refused", "conditions": []any{c.cond}}),
			400, "invalid_request", c.field)
	}

	// A flag for the paying, and one for whoever did not churn.
	res := annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"name": "Paying", "enabled": true,
		"conditions": []any{cohortCond(paying, "in")}})
	var stored struct {
		ID         int64 `json:"id"`
		Conditions []map[string]any
	}
	json.Unmarshal(res.Body, &stored)
	if res.Status != 201 || len(stored.Conditions) != 1 || stored.Conditions[0]["cohortId"] != float64(paying) ||
		stored.Conditions[0]["type"] != "cohort" || stored.Conditions[0]["op"] != "in" || stored.Conditions[0]["trait"] != nil {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	if r := annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"name": "Kept", "enabled": true,
		"conditions": []any{cohortCond(churned, "not_in"), map[string]any{"trait": "plan", "op": "eq", "value": "pro"}}}); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}

	// Each user's own memberships, of the cohorts the flags name.
	read := func(key, user string) userConfig {
		t.Helper()
		q := "/api/v1/config?api_key=" + key
		if user != "" {
			q += "&distinct_id=" + user
		}
		r := do(t, "GET", s.URL+q, nil, map[string]string{"Origin": "https://shop.example"})
		var raw map[string]json.RawMessage
		var c userConfig
		if err := json.Unmarshal(r.Body, &raw); r.Status != 200 || err != nil {
			t.Fatalf("config: %d %s", r.Status, r.Body)
		}
		json.Unmarshal(r.Body, &c)
		_, c.has = raw["cohorts"]
		return c
	}
	pid, cid := strconv.FormatInt(paying, 10), strconv.FormatInt(churned, 10)
	want := func(user string, in, out bool) {
		t.Helper()
		c := read(a.Live, user)
		if len(c.Cohorts) != 2 || c.Cohorts[pid] != in || c.Cohorts[cid] != out {
			t.Errorf("%s's cohorts: %v, want paying %v and churned %v", user, c.Cohorts, in, out)
		}
	}
	want("ann", true, false)
	want("bea", true, true)
	want("carl", false, false)
	if c := read(a.Live, ""); c.has {
		t.Errorf("a request without a user got cohorts: %v", c.Cohorts)
	}
	if c := read(b.Live, "ann"); c.has {
		t.Errorf("B's configuration, whose flags name no cohort, gave cohorts: %v", c.Cohorts)
	}
	// The SDKs' rule on them: ann gets the paying flag, carl is excluded.
	ann, carl := read(a.Live, "ann"), read(a.Live, "carl")
	byKey := map[string]*flags.Flag{}
	for i := range ann.Flags {
		byKey[ann.Flags[i].Key] = &ann.Flags[i]
	}
	member := func(c userConfig) flags.Cohorts {
		out := flags.Cohorts{}
		for k, v := range c.Cohorts {
			id, _ := strconv.ParseInt(k, 10, 64)
			out[id] = v
		}
		return out
	}
	if as, _ := flags.Assign(byKey["paying"], "ann", nil, member(ann)); as.Variant != "on" {
		t.Errorf("ann on the paying flag: %+v", as)
	}
	if as, _ := flags.Assign(byKey["paying"], "carl", nil, member(carl)); as.Variant != "control" || !as.Excluded {
		t.Errorf("carl on the paying flag: %+v", as)
	}
	if as, _ := flags.Assign(byKey["kept"], "carl", map[string]any{"plan": "pro"}, member(carl)); as.Variant != "on" {
		t.Errorf("carl, not churned, on the kept flag: %+v", as)
	}

	// Gzipped: the same JSON, and an ETag for each user and encoding.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(user, encoding, etag string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"/api/v1/config?api_key="+a.Live+"&distinct_id="+user, nil)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	plainResp, plain := get("bea", "", "")
	gzResp, gz := get("bea", "gzip", "")
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil || gzResp.Header.Get("Content-Encoding") != "gzip" || gzResp.Header.Get("Content-Length") != strconv.Itoa(len(gz)) {
		t.Fatalf("gzip: %v %v", gzResp.Header, err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain) {
		t.Fatalf("the gzipped configuration (%v) is not the plain one:\n%s\n%s", err, unzipped, plain)
	}
	carlResp, _ := get("carl", "", "")
	tags := map[string]bool{plainResp.Header.Get("ETag"): true, gzResp.Header.Get("ETag"): true, carlResp.Header.Get("ETag"): true}
	if len(tags) != 3 {
		t.Errorf("ETags of bea plain, bea gzip and carl: %v, want three", tags)
	}
	if r, _ := get("bea", "gzip", gzResp.Header.Get("ETag")); r.StatusCode != 304 {
		t.Errorf("a repeated gzip request: %d", r.StatusCode)
	}

	if browser {
		if got := browserVariants(t, s, a.Live, "paying", "ann", "carl"); got["ann"] != "on" || got["carl"] != "control" {
			t.Errorf("the browser SDK's answers: %v, want ann on and carl control", got)
		}
	}

	// New members of a static cohort reach the answers within seconds.
	upload(t, s, owner, pa+"/cohorts/"+pid, "distinct_id\ncarl\n")
	waitFor(t, 15*time.Second, "carl in and ann out of the paying cohort after the upload",
		func() bool { c := read(a.Live, "carl"); return c.Cohorts[pid] && !read(a.Live, "ann").Cohorts[pid] })

	// A message audience of the cohort: carl sees the campaign, ann does not.
	wantError(t, annCall(t, s, a.Token, "POST", "/api/v1/campaigns", modal("Refused", map[string]any{
		"audience": map[string]any{"percentage": 100, "conditions": []any{cohortCond(other, "in")}}})), 400, "invalid_request", "audience.conditions[0].cohortId")
	c := createCampaign(t, s, a.Token, modal("For the paying", map[string]any{"status": "active",
		"audience": map[string]any{"percentage": 100, "conditions": []any{cohortCond(paying, "in")}}}))
	if r := annCall(t, s, a.Token, "PUT", "/api/v1/messages/settings", map[string]any{"autoRender": true}); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	if _, msgs := active(t, s, a.Live, "carl", "/", nil); len(msgs) != 1 || msgs[0].ID != c.ID {
		t.Errorf("carl, in the cohort: %+v", msgs)
	}
	if _, msgs := active(t, s, a.Live, "ann", "/", nil); len(msgs) != 0 {
		t.Errorf("ann, not in the cohort: %+v", msgs)
	}

	// A person's deletion takes them out of the answers at once.
	r := owner.do(t, "POST", pa+"/persons/deletions", map[string]any{"distinctIds": []string{"carl"}})
	if r.Status != 202 {
		t.Fatalf("deletion: %d %s", r.Status, r.Body)
	}
	waitFor(t, 60*time.Second, "the deletion job done", func() bool {
		return owner.do(t, "GET", pa+"/persons/deletions/"+strconv.Itoa(int(r.JSON(t)["id"].(float64))), nil).JSON(t)["status"] == "done"
	})
	if c := read(a.Live, "carl"); c.Cohorts[pid] {
		t.Errorf("carl, deleted, is still in the paying cohort: %v", c.Cohorts)
	}
}

// cohortPage identifies each user in turn, as at a login, asks getVariant
// of one flag, and posts what it got to /done.
const cohortPage = `<!doctype html><html><head><meta charset="utf-8"><title>Cohorts</title>
<script src="%s/sdk/v1/sdk.min.js"></script>
<script>strata.init({ apiKey: %q })</script>
</head><body><script>
(async () => {
  const got = {};
  try {
    for (const id of %s) {
      strata.reset();
      strata.identify(id);
      got[id] = await strata.flags.getVariant(%q);
    }
  } catch (e) {
    got.error = String(e);
  }
  await fetch("/done", { method: "POST", body: JSON.stringify(got) });
})();
</script></body></html>`

// browserVariants runs cohortPage in headless Chromium for users, and
// returns what getVariant gave each. The SDK reads its configuration
// gzipped, as browsers ask for it.
func browserVariants(t *testing.T, s *server, key, flag string, users ...string) map[string]string {
	t.Helper()
	done := make(chan map[string]string, 1)
	list, _ := json.Marshal(users)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/done":
			got := map[string]string{}
			json.NewDecoder(r.Body).Decode(&got)
			select {
			case done <- got:
			default:
			}
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, cohortPage, s.URL, key, list, flag)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	startChromium(t, site.URL+"/")
	select {
	case got := <-done:
		return got
	case <-time.After(60 * time.Second):
		t.Fatal("the page did not report within 60 s")
		return nil
	}
}

// upload replaces a static cohort's members with a CSV.
func upload(t *testing.T, s *server, owner *browser, path, csv string) {
	t.Helper()
	r := do(t, "PUT", s.URL+path+"/members", []byte(csv), map[string]string{"Cookie": owner.cookie, "Origin": s.URL, "Content-Type": "text/csv"})
	if r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
}
