package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// personData sends, through product p's live key, what a person leaves
// in every kind of data: $pageviews of a session with a group, a signup,
// an $exception, a replay chunk of the session, a survey answer and a
// message state (campaign is an active survey of p).
func personData(t *testing.T, s *server, p tenant, campaign int64, user string, at time.Time) {
	t.Helper()
	sid := "sess-" + user
	ev := func(name string, off time.Duration, props map[string]any) map[string]any {
		props["$session_id"] = sid
		return map[string]any{"event_name": name, "distinct_id": user, "timestamp": at.Add(off).Format(time.RFC3339Nano),
			"url": "https://shop.example/" + name, "properties": props}
	}
	res := postEvents(t, s, p.Live,
		ev("$pageview", 0, map[string]any{"$groups": map[string]any{"company": "acme-" + user}}),
		ev("$pageview", time.Minute, map[string]any{"$groups": map[string]any{"company": "acme-" + user}}),
		ev("signup", 2*time.Minute, map[string]any{}),
		ev("$exception", 3*time.Minute, map[string]any{"$exception_type": "TypeError", "$exception_message": "broke " + user,
			"$exception_stack": "TypeError: broke\n    at render (https://shop.example/app.js:10:5)"}),
		snapshotEvent(user, sid, "win-"+user, 0, at.UnixMilli()),
	)
	if res.Status != 202 || !strings.Contains(string(res.Body), `"accepted":5`) {
		t.Fatalf("ingest %s: %d %s", user, res.Status, res.Body)
	}
	r := do(t, "POST", fmt.Sprintf("%s/api/v1/surveys/%d/respond?api_key=%s", s.URL, campaign, p.Live),
		mustJSON(map[string]any{"distinct_id": user, "answers": []map[string]any{{"questionId": "nps", "value": 9}}}),
		map[string]string{"Origin": "https://shop.example"})
	if r.Status != 202 {
		t.Fatalf("survey answer of %s: %d %s", user, r.Status, r.Body)
	}
	if r := track(t, s, p.Live, campaign, user, "message_impression", "control"); r.Status != 202 && r.Status != 204 && r.Status != 200 {
		t.Fatalf("message state of %s: %d %s", user, r.Status, r.Body)
	}
}

// surveyCampaign creates an active one-question survey in p.
func surveyCampaign(t *testing.T, s *server, p tenant) int64 {
	t.Helper()
	return createCampaign(t, s, p.Token, map[string]any{"name": "NPS", "trigger": map[string]any{"event": "$pageview"}, "status": "active",
		"variants": []map[string]any{{"key": "control", "weight": 100, "steps": []map[string]any{
			{"kind": "survey", "question": map[string]any{"id": "nps", "type": "nps", "prompt": "Recommend us?"}}}}}}).ID
}

// bobEvents is the place of bob's events among personAnswers: they hold
// the product's own survey id, so they are compared with themselves.
const bobEvents = 5

// personAnswers are the answers about product p that a person's data
// reaches: trends, a funnel, sessions, the error groups, the replays,
// bob's events and the survey's results, as JSON text.
func personAnswers(t *testing.T, s *server, p tenant, campaign int64, at time.Time) []string {
	t.Helper()
	d := day(at)
	var out []string
	for _, q := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/query/trend", map[string]any{"series": []map[string]any{{"event": "$pageview"}, {"event": "$pageview", "math": "unique_users"},
			{"event": "signup"}, {"event": "$exception"}}, "dateFrom": d, "dateTo": d, "interval": "day"}},
		{"/api/v1/query/funnel", funnelRequest([]string{"$pageview", "signup"}, at, at, 24)},
		{"/api/v1/query/sessions", map[string]any{"dateFrom": d, "dateTo": d, "interval": "day"}},
	} {
		var v any
		ask(t, s, p.Token, q.path, q.body, &v)
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	for _, path := range []string{"/api/v1/errors?dateFrom=" + d + "&dateTo=" + d, "/api/v1/replays", "/api/v1/users/bob/events",
		fmt.Sprintf("/api/v1/campaigns/%d/survey", campaign)} {
		r := do(t, "GET", s.URL+path, nil, map[string]string{"Authorization": "Bearer " + p.Token})
		if r.Status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		out = append(out, normalizeAnswer(string(r.Body)))
	}
	return out
}

// normalizeAnswer drops what differs between two products holding the
// same data: ids given out by the store (uuids, campaign ids).
func normalizeAnswer(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			for k, val := range x {
				if k == "uuid" || k == "id" || k == "campaignId" || k == "receivedAt" || k == "lastReceived" {
					delete(x, k)
					continue
				}
				x[k] = walk(val)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		}
		return x
	}
	b, _ := json.Marshal(walk(v))
	return string(b)
}

// checkForget is the deletion and export of a person on a running server:
// product a holds alice's and bob's data, product c bob's alone (the same
// events at the same times). Alice's export lists every kind; her
// deletion, through the API, reaches done; after it, no query of a finds
// anything of hers and every answer equals c's, and her export is empty.
// The audit log records the request, the export and the end, and neither
// it nor the finished job names her.
func checkForget(t *testing.T, s *server, owner *browser) (a tenant, job string) {
	a, c := newTenant(t, s, "people"), newTenant(t, s, "control")
	at := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Minute)
	ca, cc := surveyCampaign(t, s, a), surveyCampaign(t, s, c)
	personData(t, s, a, ca, "alice", at)
	personData(t, s, a, ca, "bob", at.Add(10*time.Minute))
	personData(t, s, c, cc, "bob", at.Add(10*time.Minute))
	pa := "/api/v1/products/" + a.ProductFlag

	// The export, before. The person updater writes the profile within a
	// second or so of the events, so the test waits for it first.
	type export struct {
		DistinctID      string            `json:"distinctId"`
		Profile         map[string]any    `json:"profile"`
		Events          []map[string]any  `json:"events"`
		Groups          []map[string]any  `json:"groups"`
		Replays         []map[string]any  `json:"replays"`
		SurveyResponses []map[string]any  `json:"surveyResponses"`
		MessageStates   []json.RawMessage `json:"messageStates"`
		Cohorts         []map[string]any  `json:"cohortMemberships"`
	}
	// A static cohort of alice and bob (docs/privacy.md, "Cohort
	// memberships").
	r := owner.do(t, "POST", pa+"/cohorts", map[string]any{"name": "Beta", "kind": "static"})
	if r.Status != 201 {
		t.Fatalf("cohort: %d %s", r.Status, r.Body)
	}
	cohort := pa + "/cohorts/" + strconv.Itoa(int(r.JSON(t)["id"].(float64)))
	if r := do(t, "PUT", s.URL+cohort+"/members", []byte("alice\nbob\n"), map[string]string{"Cookie": owner.cookie, "Origin": s.URL}); r.Status != 200 {
		t.Fatalf("cohort upload: %d %s", r.Status, r.Body)
	}
	waitFor(t, 30*time.Second, "alice's profile", func() bool {
		return annCall(t, s, a.Token, "GET", "/api/v1/persons/alice", nil).Status == 200
	})
	r = owner.do(t, "GET", pa+"/persons/export?distinctId=alice", nil)
	var exp export
	if err := json.Unmarshal(r.Body, &exp); err != nil || r.Status != 200 {
		t.Fatalf("export: %d %v %s", r.Status, err, r.Body)
	}
	if exp.DistinctID != "alice" || exp.Profile["distinctId"] != "alice" || len(exp.Events) != 5 || len(exp.Groups) != 1 || exp.Groups[0]["key"] != "acme-alice" ||
		len(exp.Replays) != 1 || exp.Replays[0]["sessionId"] != "sess-alice" || len(exp.SurveyResponses) != 1 || len(exp.MessageStates) == 0 ||
		len(exp.Cohorts) != 1 || exp.Cohorts[0]["name"] != "Beta" {
		t.Errorf("alice's export: %s", r.Body)
	}
	for _, e := range exp.Events {
		if e["distinctId"] != "alice" {
			t.Errorf("alice's export holds %v", e)
		}
	}

	before := personAnswers(t, s, a, ca, at)
	control := personAnswers(t, s, c, cc, at)
	for i := range before {
		if i == bobEvents {
			continue // bob's own events: the same before and after
		}
		if before[i] == control[i] {
			t.Fatalf("answer %d is the same with and without alice, so it cannot show her deletion: %s", i, before[i])
		}
	}

	// Refusals.
	for body, code := range map[string]string{
		`{"distinctIds":[]}`:   "invalid_request",
		`{"distinctIds":[""]}`: "invalid_request",
		`{"distinctIds":["` + strings.Repeat("x", 201) + `"]}`:           "invalid_request",
		`{"distinctIds":` + string(mustJSON(make([]string, 1001))) + `}`: "too_many_ids",
	} {
		res := do(t, "POST", s.URL+pa+"/persons/deletions", []byte(body), map[string]string{"Cookie": owner.cookie, "Origin": s.URL, "Content-Type": "application/json"})
		if got := res.ErrorCode(t); got != code {
			t.Errorf("deletion %.60s: %d %s, want %s", body, res.Status, res.Body, code)
		}
	}

	r = owner.do(t, "POST", pa+"/persons/deletions", map[string]any{"distinctIds": []string{"alice", "alice", "never-seen"}})
	if r.Status != 202 {
		t.Fatalf("deletion: %d %s", r.Status, r.Body)
	}
	d := r.JSON(t)
	if d["status"] != "pending" || d["idCount"] != 2.0 {
		t.Errorf("the new job: %s", r.Body)
	}
	job = pa + "/persons/deletions/" + strconv.Itoa(int(d["id"].(float64)))
	deadline := time.Now().Add(60 * time.Second)
	for {
		r = owner.do(t, "GET", job, nil)
		d = r.JSON(t)
		if d["status"] == "done" || d["status"] == "failed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	counts, _ := d["counts"].(map[string]any)
	if d["status"] != "done" || counts["events"] != 5.0 || counts["replays"] != 1.0 || counts["surveyResponses"] != 1.0 || counts["messageStates"] == 0.0 {
		t.Fatalf("the job: %s", r.Body)
	}
	if strings.Contains(string(r.Body), "alice") {
		t.Errorf("the finished job names the person: %s", r.Body)
	}

	// After: nothing of alice's, and every answer is the control's.
	after := personAnswers(t, s, a, ca, at)
	if after[bobEvents] != before[bobEvents] {
		t.Errorf("bob's events changed with alice's deletion:\n%s\nwant:\n%s", after[bobEvents], before[bobEvents])
	}
	for i := range after {
		if i != bobEvents && after[i] != control[i] {
			t.Errorf("answer %d after the deletion:\n%s\nwant the control's:\n%s", i, after[i], control[i])
		}
	}
	for _, path := range []string{"/api/v1/users/alice/events", "/api/v1/replays?distinct_id=alice"} {
		r := do(t, "GET", s.URL+path, nil, map[string]string{"Authorization": "Bearer " + a.Token})
		if items, _ := r.JSON(t)["items"].([]any); r.Status != 200 || len(items) != 0 {
			t.Errorf("%s after the deletion: %d %s", path, r.Status, r.Body)
		}
	}
	r = owner.do(t, "GET", pa+"/persons/export?distinctId="+url.QueryEscape("alice"), nil)
	if want := `"profile":null,"events":[],"groups":[],"replays":[],"surveyResponses":[],"messageStates":[],"cohortMemberships":[]}`; !strings.Contains(string(r.Body), want) {
		t.Errorf("alice's export after: %s", r.Body)
	}
	if r := owner.do(t, "GET", cohort+"/members", nil); !strings.Contains(string(r.Body), `"items":["bob"]`) {
		t.Errorf("the cohort after alice's deletion: %s", r.Body)
	}

	// The audit log, newest first, in pages; never the ids.
	r = owner.do(t, "GET", pa+"/audit-log?limit=2", nil)
	var log struct {
		Items []struct{ Actor, Action, Summary string }
		Next  int64
	}
	if err := json.Unmarshal(r.Body, &log); err != nil || r.Status != 200 || len(log.Items) != 2 || log.Next == 0 ||
		log.Items[0].Action != "person_export" || log.Items[1].Action != "person_deletion_done" {
		t.Fatalf("audit log page 1: %d %s", r.Status, r.Body)
	}
	all := string(r.Body)
	r = owner.do(t, "GET", pa+"/audit-log?before="+strconv.FormatInt(log.Next, 10), nil)
	all += string(r.Body)
	if err := json.Unmarshal(r.Body, &log); err != nil || len(log.Items) != 2 || log.Items[0].Action != "person_deletion_requested" ||
		log.Items[1].Action != "person_export" || !strings.Contains(log.Items[0].Actor, "owner@example.com") || log.Items[0].Summary == "" {
		t.Errorf("audit log page 2: %s", r.Body)
	}
	if strings.Contains(all, "alice") {
		t.Errorf("the audit log names the person: %s", all)
	}
	// Another product's log is its own; a query token may not read it.
	if r := owner.do(t, "GET", "/api/v1/products/"+c.ProductFlag+"/audit-log", nil); len(r.JSON(t)["items"].([]any)) != 0 {
		t.Errorf("the control product's audit log: %s", r.Body)
	}
	if r := do(t, "GET", s.URL+pa+"/audit-log", nil, map[string]string{"Authorization": "Bearer " + a.Token}); r.Status < 400 {
		t.Errorf("a query token read the audit log: %d %s", r.Status, r.Body)
	}
	return a, job
}

// TestForgetPersonEmbedded deletes and exports a person on the embedded
// store; the finished job and the audit log survive a restart.
func TestForgetPersonEmbedded(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	owner := setupOwner(t, s)
	_, job := checkForget(t, s, owner)
	s.Stop()
	s = startServer(t, dir)
	owner.s = s
	if r := owner.do(t, "GET", job, nil); r.Status != 200 || r.JSON(t)["status"] != "done" {
		t.Errorf("the job after a restart: %d %s", r.Status, r.Body)
	}
}

// TestForgetPersonClickHouse is the same on ClickHouse and PostgreSQL.
func TestForgetPersonClickHouse(t *testing.T) {
	chtest.Skip(t)
	ch := chtest.Shared(t)
	meta := pgtest.Start(t)
	s := startServer(t, t.TempDir(), "--events", ch.URL(fmt.Sprintf("strata_forget_%d", time.Now().UnixNano()), ""), "--meta", meta)
	checkForget(t, s, setupOwner(t, s))
}

// TestForgetPersonCluster is the same on a two-shard ClickHouse cluster,
// where the mutation runs on every shard's local table.
func TestForgetPersonCluster(t *testing.T) {
	chtest.Skip(t)
	shards := chtest.Cluster(t, 2)
	meta := pgtest.Start(t)
	s := startServer(t, t.TempDir(), "--events", shards[0].URL(fmt.Sprintf("strata_forget_%d", time.Now().UnixNano()), "cluster=strata"), "--meta", meta)
	checkForget(t, s, setupOwner(t, s))
}

// TestForgetPersonCLI deletes and exports persons with `strata persons`:
// through the running server's admin socket (ids from a file), then on the
// stopped store; each deletion prints its counts once done, and the
// person's data is gone from the queries and the export.
func TestForgetPersonCLI(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	a := newTenant(t, s, "cli people")
	campaign := surveyCampaign(t, s, a)
	at := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Minute)
	personData(t, s, a, campaign, "alice", at)
	personData(t, s, a, campaign, "bob", at.Add(5*time.Minute))
	personData(t, s, a, campaign, "carol", at.Add(10*time.Minute))

	exported := func(out string) (events int) {
		t.Helper()
		var doc struct {
			Events []any `json:"events"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("export is not JSON: %v: %s", err, out)
		}
		return len(doc.Events)
	}
	if n := exported(cli(t, dir, "persons", "export", "--product", a.ProductFlag, "alice")); n != 5 {
		t.Errorf("alice's export through the socket: %d events, want 5", n)
	}
	file := dir + "/../ids.txt"
	if err := os.WriteFile(file, []byte("alice\r\n\nnobody\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := cli(t, dir, "persons", "delete", "--product", a.ProductFlag, "--file", file)
	if !strings.Contains(out, "done: 2 distinct ids") || !strings.Contains(out, "events 5") || !strings.Contains(out, "replays 1") {
		t.Errorf("delete through the socket printed %q", out)
	}
	r := do(t, "GET", s.URL+"/api/v1/users/alice/events", nil, map[string]string{"Authorization": "Bearer " + a.Token})
	if items, _ := r.JSON(t)["items"].([]any); len(items) != 0 {
		t.Errorf("alice's events after the CLI's deletion: %s", r.Body)
	}
	if _, errOut, code := cliResult(dir, "persons", "delete", "--product", a.ProductFlag); code != 2 || !strings.Contains(errOut, "needs distinct ids") {
		t.Errorf("delete without ids: exit %d, %s", code, errOut)
	}

	s.Stop()
	out = cli(t, dir, "persons", "delete", "--product", a.ProductFlag, "bob")
	if !strings.Contains(out, "done: 1 distinct id") || !strings.Contains(out, "events 5") || !strings.Contains(out, "surveyResponses 1") {
		t.Errorf("delete on the stopped store printed %q", out)
	}
	if n := exported(cli(t, dir, "persons", "export", "--product", a.ProductFlag, "bob")); n != 0 {
		t.Errorf("bob's export after his deletion: %d events", n)
	}
	if n := exported(cli(t, dir, "persons", "export", "--product", a.ProductFlag, "carol")); n != 5 {
		t.Errorf("carol's export: %d events, want 5", n)
	}
}
