package e2e

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"strata/internal/flags"
)

// campaign is a campaign as the API answers it.
type campaign struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	ExperimentID *int64 `json:"experimentId"`
	FlagKey      string `json:"flagKey"`
	Variants     []struct {
		Key   string `json:"key"`
		Steps []struct {
			Kind string `json:"kind"`
			Body string `json:"body"`
		} `json:"steps"`
	} `json:"variants"`
	Stats struct {
		Shown, CTAClicks, Completed, Dismissed int
	} `json:"stats"`
}

// activeMessage is one entry of GET /api/v1/messages/active.
type activeMessage struct {
	ID        int64  `json:"id"`
	Variant   string `json:"variant"`
	Remaining int    `json:"remaining"`
	Exposure  *struct {
		Flag         string `json:"flag"`
		ExperimentID *int64 `json:"experiment_id"`
		Variant      string `json:"variant"`
	} `json:"exposure"`
	Steps []map[string]any `json:"steps"`
}

// modal is a one-step campaign body: a modal shown on $pageview.
func modal(name string, extra map[string]any) map[string]any {
	c := map[string]any{"name": name, "trigger": map[string]any{"event": "$pageview"},
		"variants": []map[string]any{{"key": "control", "weight": 100, "steps": []map[string]any{
			{"kind": "modal", "title": "Welcome", "body": "Hello **there**", "bodyFormat": "markdown"}}}}}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func createCampaign(t *testing.T, s *server, token string, body map[string]any) campaign {
	t.Helper()
	res := annCall(t, s, token, "POST", "/api/v1/campaigns", body)
	if res.Status != 201 {
		t.Fatalf("create campaign: %d %s", res.Status, res.Body)
	}
	var c campaign
	json.Unmarshal(res.Body, &c)
	return c
}

func setCampaign(t *testing.T, s *server, token string, id int64, body map[string]any) campaign {
	t.Helper()
	res := annCall(t, s, token, "PUT", "/api/v1/campaigns/"+strconv.FormatInt(id, 10), body)
	if res.Status != 200 {
		t.Fatalf("update campaign: %d %s", res.Status, res.Body)
	}
	var c campaign
	json.Unmarshal(res.Body, &c)
	return c
}

// active reads the active list as the SDK does, from a customer's page.
func active(t *testing.T, s *server, key, user, path string, q url.Values) (response, []activeMessage) {
	t.Helper()
	if q == nil {
		q = url.Values{}
	}
	q.Set("api_key", key)
	q.Set("distinct_id", user)
	q.Set("path", path)
	r := do(t, "GET", s.URL+"/api/v1/messages/active?"+q.Encode(), nil, map[string]string{"Origin": "https://shop.example"})
	var body struct {
		Messages []activeMessage `json:"messages"`
	}
	if r.Status == 200 {
		if err := json.Unmarshal(r.Body, &body); err != nil || body.Messages == nil {
			t.Fatalf("active %s: %v", r.Body, err)
		}
	}
	return r, body.Messages
}

func ids(list []activeMessage) []int64 {
	out := []int64{}
	for _, m := range list {
		out = append(out, m.ID)
	}
	return out
}

func track(t *testing.T, s *server, key string, id int64, user, event, variant string) response {
	t.Helper()
	body := mustJSON(map[string]any{"distinct_id": user, "event": event, "variant": variant, "step": 0})
	return do(t, "POST", fmt.Sprintf("%s/api/v1/messages/%d/track?api_key=%s", s.URL, id, key), body,
		map[string]string{"Origin": "https://shop.example", "Content-Type": "application/json"})
}

// TestMessages drives in-app messages over HTTP against the real binary:
// the campaign API's rules and tenant isolation, the auto-render setting,
// the active list's path, audience, cap and terminal rules, a cap and a
// terminal event across two variants, the survey path and its results and
// CSV, and the public paths' CORS and bad input.
func TestMessages(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")

	// Bad input: 400 naming the field, nothing stored.
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a regex flag Go has and JavaScript lacks", modal("R", map[string]any{"pathRegex": "(?i)^/pricing"}), "pathRegex"},
		{"a lookahead only JavaScript has", modal("R", map[string]any{"pathRegex": "^/(?=a)"}), "pathRegex"},
		{"no trigger", map[string]any{"name": "T", "variants": modal("x", nil)["variants"]}, "trigger.event"},
		{"a reserved trigger", modal("T", map[string]any{"trigger": map[string]any{"event": "$exception"}}), "trigger.event"},
		{"cap without count", modal("C", map[string]any{"cap": map[string]any{"kind": "times"}}), "cap.count"},
		{"a javascript: call to action", modal("J", map[string]any{"variants": []map[string]any{{"key": "control", "weight": 100, "steps": []map[string]any{
			{"kind": "modal", "title": "x", "cta": map[string]any{"label": "Go", "url": "javascript:alert(1)"}}}}}}), "variants[0].steps[0].cta.url"},
		{"a tooltip without selector", modal("S", map[string]any{"variants": []map[string]any{{"key": "control", "weight": 100, "steps": []map[string]any{
			{"kind": "tooltip", "title": "x"}}}}}), "variants[0].steps[0].selector"},
		{"a survey without question", modal("Q", map[string]any{"variants": []map[string]any{{"key": "control", "weight": 100, "steps": []map[string]any{
			{"kind": "survey"}}}}}), "variants[0].steps[0].question"},
		{"weights that do not sum to 100", modal("W", map[string]any{"variants": []map[string]any{
			{"key": "a", "weight": 50, "steps": []map[string]any{{"kind": "modal", "title": "x"}}},
			{"key": "b", "weight": 40, "steps": []map[string]any{{"kind": "modal", "title": "x"}}}}}), "variants"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, annCall(t, s, a.Token, "POST", "/api/v1/campaigns", c.body), 400, "invalid_request", c.field)
		})
	}
	var list struct{ Items []campaign }
	json.Unmarshal(annCall(t, s, a.Token, "GET", "/api/v1/campaigns", nil).Body, &list)
	if len(list.Items) != 0 {
		t.Fatalf("bad input stored campaigns: %+v", list.Items)
	}

	// Markdown is stored with HTML stripped and unsafe links turned to text.
	evil := createCampaign(t, s, a.Token, modal("Evil", map[string]any{"variants": []map[string]any{{"key": "control", "weight": 100, "steps": []map[string]any{
		{"kind": "modal", "title": "x", "bodyFormat": "markdown",
			"body": `Hi <script>alert(1)</script><img src=x onerror=alert(2)> [ok](https://example.com) [bad](javascript:alert(3))`}}}}}))
	if got := evil.Variants[0].Steps[0].Body; got != `Hi alert(1) [ok](https://example.com) bad` {
		t.Errorf("stored markdown %q", got)
	}

	welcome := createCampaign(t, s, a.Token, modal("Welcome", map[string]any{"pathRegex": "^/app(/.*)?$"}))
	if welcome.Status != "draft" || welcome.ExperimentID != nil {
		t.Errorf("defaults: %+v", welcome)
	}
	// Tenant isolation, and API keys refused on the dashboard's API.
	path := "/api/v1/campaigns/" + strconv.FormatInt(welcome.ID, 10)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		wantError(t, annCall(t, s, b.Token, m, path, map[string]any{"name": "x"}), 404, "campaign_not_found", "")
	}
	wantError(t, annCall(t, s, b.Token, "GET", path+"/survey", nil), 404, "campaign_not_found", "")
	wantError(t, annCall(t, s, a.Live, "GET", "/api/v1/campaigns", nil), 403, "key_not_allowed", "")
	if r := annCall(t, s, a.Token, "GET", "/api/v1/campaigns", nil); r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("the campaign API is CORS-open")
	}

	// Active but auto-render off: nothing shows, and the SDK does not load the renderer.
	setCampaign(t, s, a.Token, welcome.ID, map[string]any{"status": "active"})
	if _, msgs := active(t, s, a.Live, "u1", "/app", nil); len(msgs) != 0 {
		t.Errorf("auto-render off: %+v", msgs)
	}
	if enabled := sdkMessagesEnabled(t, s, a.Live); enabled {
		t.Error("messagesEnabled with auto-render off")
	}
	if r := annCall(t, s, a.Token, "PUT", "/api/v1/messages/settings", map[string]any{"autoRender": true}); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	if !sdkMessagesEnabled(t, s, a.Live) {
		t.Error("messagesEnabled is false with auto-render on and a campaign active")
	}
	r, msgs := active(t, s, a.Live, "u1", "/app/settings", nil)
	if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Cache-Control") != "no-store" ||
		len(msgs) != 1 || msgs[0].ID != welcome.ID || msgs[0].Variant != "control" || msgs[0].Remaining != 1 || msgs[0].Exposure != nil ||
		msgs[0].Steps[0]["body"] != "Hello **there**" {
		t.Fatalf("active: %d %v %s", r.Status, r.Header, r.Body)
	}
	// The path rule, and another product's key.
	if _, msgs := active(t, s, a.Live, "u1", "/pricing", nil); len(msgs) != 0 {
		t.Errorf("a path the regex does not match: %v", ids(msgs))
	}
	if _, msgs := active(t, s, b.Live, "u1", "/app", nil); len(msgs) != 0 {
		t.Errorf("another product's key sees %v", ids(msgs))
	}
	wantError(t, track(t, s, b.Live, welcome.ID, "u1", "message_impression", "control"), 404, "campaign_not_found", "")
	wantError(t, track(t, s, a.Live, 999999, "u1", "message_impression", "control"), 404, "campaign_not_found", "")
	wantError(t, track(t, s, a.Live, welcome.ID, "u1", "message_open", "control"), 400, "invalid_request", "event")
	wantError(t, track(t, s, a.Live, welcome.ID, "u1", "message_impression", "nope"), 400, "invalid_request", "variant")
	big := do(t, "POST", fmt.Sprintf("%s/api/v1/messages/%d/track?api_key=%s", s.URL, welcome.ID, a.Live),
		[]byte(`{"distinct_id":"`+strings.Repeat("x", 70<<10)+`"}`), nil)
	wantError(t, big, 413, "body_too_large", "")
	if r, _ := active(t, s, "st_live_"+strings.Repeat("0", 32), "u1", "/app", nil); r.Status != 401 {
		t.Errorf("unknown key: %d", r.Status)
	}

	// The cap: once. An impression uses it up; the terminal rule ends the flow.
	if r := track(t, s, a.Live, welcome.ID, "u1", "message_impression", "control"); r.Status != 202 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("track: %d %s", r.Status, r.Body)
	}
	if _, msgs := active(t, s, a.Live, "u1", "/app", nil); len(msgs) != 0 {
		t.Errorf("shown again past a cap of once: %v", ids(msgs))
	}
	if _, msgs := active(t, s, a.Live, "u2", "/app", nil); len(msgs) != 1 {
		t.Errorf("another user: %v", ids(msgs))
	}
	setCampaign(t, s, a.Token, welcome.ID, map[string]any{"cap": map[string]any{"kind": "times", "count": 3}})
	if _, msgs := active(t, s, a.Live, "u1", "/app", nil); len(msgs) != 1 || msgs[0].Remaining != 2 {
		t.Errorf("a cap of 3 after one impression: %+v", msgs)
	}
	track(t, s, a.Live, welcome.ID, "u1", "message_dismiss", "control")
	if _, msgs := active(t, s, a.Live, "u1", "/app", nil); len(msgs) != 0 {
		t.Errorf("shown after a dismissal: %v", ids(msgs))
	}

	// The audience: identified users only, a trait condition, a percentage.
	setCampaign(t, s, a.Token, welcome.ID, map[string]any{"audience": map[string]any{"identified": true, "percentage": 100,
		"conditions": []map[string]any{{"trait": "plan", "op": "eq", "value": "pro"}, {"trait": "seats", "op": "gt", "value": "5"}}}})
	for _, c := range []struct {
		identified, traits string
		want               int
	}{
		{"", "", 0},
		{"1", `{"plan":"pro","seats":10}`, 1},
		{"1", `{"plan":"free","seats":10}`, 0},
		{"1", `{"plan":"pro","seats":5}`, 0},
		{"1", `{"plan":"pro"}`, 0},
		{"0", `{"plan":"pro","seats":10}`, 0},
	} {
		q := url.Values{"identified": {c.identified}, "traits": {c.traits}}
		if _, msgs := active(t, s, a.Live, "u3", "/app", q); len(msgs) != c.want {
			t.Errorf("identified %q traits %s: %d shown, want %d", c.identified, c.traits, len(msgs), c.want)
		}
	}
	wantError(t, func() response {
		r, _ := active(t, s, a.Live, "u3", "/app", url.Values{"traits": {"[1]"}})
		return r
	}(), 400, "invalid_request", "traits")
	setCampaign(t, s, a.Token, welcome.ID, map[string]any{"audience": map[string]any{"identified": false, "percentage": 30, "conditions": []any{}}})
	shown := 0
	for i := 0; i < 400; i++ {
		if _, msgs := active(t, s, a.Live, "p"+strconv.Itoa(i), "/app", nil); len(msgs) == 1 {
			shown++
		}
	}
	if shown < 90 || shown > 150 {
		t.Errorf("a 30%% audience showed to %d of 400 users", shown)
	}
	setCampaign(t, s, a.Token, welcome.ID, map[string]any{"status": "paused"})

	// Two variants: an experiment and its flag are made; activating starts it.
	ab := createCampaign(t, s, a.Token, map[string]any{"name": "Upgrade nudge", "trigger": map[string]any{"event": "opened_billing"},
		"cap": map[string]any{"kind": "once"},
		"variants": []map[string]any{
			{"key": "control", "weight": 50, "steps": []map[string]any{{"kind": "banner", "title": "Upgrade", "placement": "top"}}},
			{"key": "bold", "weight": 50, "steps": []map[string]any{{"kind": "modal", "title": "Upgrade now!", "cta": map[string]any{"label": "Go", "url": "/billing"}}}},
		}})
	if ab.ExperimentID == nil || ab.FlagKey != "message_upgrade_nudge" {
		t.Fatalf("A/B campaign: %+v", ab)
	}
	ab = setCampaign(t, s, a.Token, ab.ID, map[string]any{"status": "active"})
	var exp struct{ Status string }
	json.Unmarshal(annCall(t, s, a.Token, "GET", "/api/v1/experiments/"+strconv.FormatInt(*ab.ExperimentID, 10), nil).Body, &exp)
	if exp.Status != "running" {
		t.Errorf("experiment after activation: %q", exp.Status)
	}
	_, cfg := sdkConfigFlags(t, s, a.Live, "")
	var f *flags.Flag
	for i := range cfg {
		if cfg[i].Key == ab.FlagKey {
			f = &cfg[i]
		}
	}
	if f == nil {
		t.Fatal("the campaign's flag is not in the configuration")
	}
	seen := map[string]int{}
	for i := 0; i < 40; i++ {
		user := "ab" + strconv.Itoa(i)
		want, _ := flags.Assign(f, user, nil, nil)
		_, msgs := active(t, s, a.Live, user, "/", nil)
		if len(msgs) != 1 || msgs[0].Variant != want.Variant || msgs[0].Exposure == nil || msgs[0].Exposure.Variant != want.Variant ||
			msgs[0].Exposure.ExperimentID == nil || *msgs[0].Exposure.ExperimentID != *ab.ExperimentID {
			t.Fatalf("%s: got %+v, the flag assigns %q", user, msgs, want.Variant)
		}
		seen[want.Variant]++
		// The cap counts across variants: an impression recorded under the
		// other variant's key still uses it up.
		other := "control"
		if want.Variant == "control" {
			other = "bold"
		}
		if i%2 == 0 {
			track(t, s, a.Live, ab.ID, user, "message_impression", other)
		} else {
			// A terminal event under the other variant ends the flow too.
			track(t, s, a.Live, ab.ID, user, "message_cta_click", other)
		}
		if _, msgs := active(t, s, a.Live, user, "/", nil); len(msgs) != 0 {
			t.Errorf("%s still sees %+v after an event under variant %s", user, msgs, other)
		}
	}
	if seen["control"] == 0 || seen["bold"] == 0 {
		t.Errorf("variants seen: %v", seen)
	}
	json.Unmarshal(annCall(t, s, a.Token, "GET", "/api/v1/campaigns", nil).Body, &list)
	for _, c := range list.Items {
		if c.ID == ab.ID && (c.Stats.Shown != 20 || c.Stats.CTAClicks != 20) {
			t.Errorf("A/B stats: %+v", c.Stats)
		}
		if c.ID == welcome.ID && (c.Stats.Shown != 1 || c.Stats.Dismissed != 1) {
			t.Errorf("welcome stats: %+v", c.Stats)
		}
	}
	// The variants of a running experiment are locked.
	wantError(t, annCall(t, s, a.Token, "PUT", "/api/v1/campaigns/"+strconv.FormatInt(ab.ID, 10), map[string]any{"variants": []map[string]any{
		{"key": "control", "weight": 10, "steps": []map[string]any{{"kind": "banner", "title": "Upgrade", "placement": "top"}}},
		{"key": "bold", "weight": 90, "steps": []map[string]any{{"kind": "modal", "title": "Upgrade now!"}}}}}), 409, "experiment_running", "")

	checkSurvey(t, s, a, b)
}

// sdkMessagesEnabled reads messagesEnabled of the SDK's configuration.
func sdkMessagesEnabled(t *testing.T, s *server, key string) bool {
	t.Helper()
	r := do(t, "GET", s.URL+"/api/v1/config?api_key="+key, nil, nil)
	var cfg struct{ MessagesEnabled bool }
	if err := json.Unmarshal(r.Body, &cfg); r.Status != 200 || err != nil {
		t.Fatalf("config: %d %s", r.Status, r.Body)
	}
	return cfg.MessagesEnabled
}

// checkSurvey answers a survey through the SDK path: checked answers, the
// results with counts and the NPS score, the CSV export, the
// $survey_response events, and another product's key refused.
func checkSurvey(t *testing.T, s *server, a, b tenant) {
	steps := []map[string]any{
		{"kind": "survey", "question": map[string]any{"id": "nps", "type": "nps", "prompt": "How likely are you to recommend us?"}},
		{"kind": "survey", "question": map[string]any{"id": "liked", "type": "multiple", "prompt": "What do you like?", "choices": []string{"Speed", "Price", "Support"}}},
		{"kind": "survey", "question": map[string]any{"id": "why", "type": "text", "prompt": "Why?"}},
	}
	sv := createCampaign(t, s, a.Token, map[string]any{"name": "NPS", "trigger": map[string]any{"event": "$pageview"}, "status": "active",
		"variants": []map[string]any{{"key": "control", "weight": 100, "steps": steps}}})
	respond := func(key string, body any) response {
		return do(t, "POST", fmt.Sprintf("%s/api/v1/surveys/%d/respond?api_key=%s", s.URL, sv.ID, key), mustJSON(body),
			map[string]string{"Origin": "https://shop.example"})
	}
	answers := []struct {
		nps   int
		liked []string
		why   string
	}{{10, []string{"Speed", "Price"}, "Fast"}, {9, []string{"Speed"}, "=cmd()"}, {7, []string{"Support"}, "ok"}, {3, []string{"Price"}, "slow, \"really\""}}
	for i, an := range answers {
		r := respond(a.Live, map[string]any{"distinct_id": "s" + strconv.Itoa(i), "answers": []map[string]any{
			{"questionId": "nps", "value": an.nps}, {"questionId": "liked", "value": an.liked}, {"questionId": "why", "value": an.why}}})
		if r.Status != 202 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("respond: %d %s", r.Status, r.Body)
		}
	}
	for _, c := range []struct {
		answers any
		field   string
	}{
		{[]map[string]any{{"questionId": "nps", "value": 11}}, "answers[0].value"},
		{[]map[string]any{{"questionId": "nps", "value": "9"}}, "answers[0].value"},
		{[]map[string]any{{"questionId": "liked", "value": []string{"Speed", "Beer"}}}, "answers[0].value"},
		{[]map[string]any{{"questionId": "nps", "value": 9}, {"questionId": "nope", "value": 1}}, "answers[1].questionId"},
		{[]map[string]any{}, "answers"},
	} {
		wantError(t, respond(a.Live, map[string]any{"distinct_id": "bad", "answers": c.answers}), 400, "invalid_request", c.field)
	}
	wantError(t, respond(b.Live, map[string]any{"distinct_id": "s9", "answers": []map[string]any{{"questionId": "nps", "value": 9}}}), 404, "campaign_not_found", "")

	var res struct {
		Responses int
		Questions []struct {
			ID      string
			Answers int
			Counts  []struct {
				Value string
				Count int
			}
			NPS *struct {
				Score                           float64
				Promoters, Passives, Detractors int
			}
			Recent []string
		}
	}
	r := annCall(t, s, a.Token, "GET", fmt.Sprintf("/api/v1/campaigns/%d/survey", sv.ID), nil)
	if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != 200 || res.Responses != 4 || len(res.Questions) != 3 {
		t.Fatalf("results: %d %s", r.Status, r.Body)
	}
	nps, liked, why := res.Questions[0], res.Questions[1], res.Questions[2]
	// Two promoters, one passive, one detractor of four: (2 − 1) / 4 = 25.
	if nps.Answers != 4 || len(nps.Counts) != 11 || nps.Counts[10].Count != 1 || nps.Counts[9].Count != 1 || nps.Counts[3].Count != 1 ||
		nps.NPS == nil || nps.NPS.Score != 25 || nps.NPS.Promoters != 2 || nps.NPS.Passives != 1 || nps.NPS.Detractors != 1 {
		t.Errorf("nps: %+v", nps)
	}
	if len(liked.Counts) != 3 || liked.Counts[0].Count != 2 || liked.Counts[1].Count != 2 || liked.Counts[2].Count != 1 || liked.NPS != nil {
		t.Errorf("liked: %+v", liked)
	}
	if why.Answers != 4 || len(why.Recent) != 4 || why.Recent[0] != `slow, "really"` {
		t.Errorf("why: %+v", why)
	}
	r = annCall(t, s, a.Token, "GET", fmt.Sprintf("/api/v1/campaigns/%d/survey.csv", sv.ID), nil)
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || r.Status != 200 || len(rows) != 5 || strings.Join(rows[0], ",") != "response_id,answered_at,distinct_id,variant,nps,liked,why" ||
		rows[1][4] != "10" || rows[1][5] != "Speed; Price" || rows[2][6] != "'=cmd()" || rows[4][6] != `slow, "really"` {
		t.Errorf("csv: %v %d %q", err, r.Status, rows)
	}

	// Each response is a $survey_response event too.
	s.Stop()
	db := openStore(t, s.dataDir)
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = '$survey_response' AND product_id = ? AND json_extract(properties, '$."$survey_id"')::BIGINT = ?`, a.ID, sv.ID); n != 4 {
		t.Errorf("%d $survey_response events, want 4", n)
	}
}

// TestSDKWritesRateLimited holds the SDK's campaign writes to the key's
// ingest budget (docs/security.md, "Every public write counts"): on a
// server whose keys may make 20 requests a minute, survey answers and
// message events are refused with 429 once the key's bucket is spent,
// whichever path spent it, while another product's key is still answered;
// and only an active campaign's survey takes answers, a draft takes no
// message event.
func TestSDKWritesRateLimited(t *testing.T) {
	const perMinute = 20
	s := startServer(t, t.TempDir(), "--rate-limit", strconv.Itoa(perMinute))
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	survey := func(tn tenant, status string) campaign {
		return createCampaign(t, s, tn.Token, map[string]any{"name": "NPS " + status, "trigger": map[string]any{"event": "$pageview"}, "status": status,
			"variants": []map[string]any{{"key": "control", "weight": 100, "steps": []map[string]any{
				{"kind": "survey", "question": map[string]any{"id": "nps", "type": "nps", "prompt": "How likely are you to recommend us?"}}}}}})
	}
	respond := func(key string, id int64, user string) response {
		return do(t, "POST", fmt.Sprintf("%s/api/v1/surveys/%d/respond?api_key=%s", s.URL, id, key),
			mustJSON(map[string]any{"distinct_id": user, "answers": []map[string]any{{"questionId": "nps", "value": 9}}}),
			map[string]string{"Origin": "https://shop.example"})
	}

	// Drafts, paused and archived campaigns take no answers; a draft takes
	// no message event either. Each refusal is charged, as every request
	// with the key is.
	draft, paused := survey(a, "draft"), survey(a, "active")
	setCampaign(t, s, a.Token, paused.ID, map[string]any{"status": "paused"})
	wantError(t, respond(a.Live, draft.ID, "u0"), 409, "campaign_not_active", "")
	wantError(t, respond(a.Live, paused.ID, "u0"), 409, "campaign_not_active", "")
	wantError(t, track(t, s, a.Live, draft.ID, "u0", "message_impression", "control"), 409, "campaign_not_active", "")
	if r := track(t, s, a.Live, paused.ID, "u0", "message_dismiss", "control"); r.Status != 202 {
		t.Errorf("a dismiss of a paused campaign's message: %d %s, want 202", r.Status, r.Body)
	}
	spent := 4

	open := survey(a, "active")
	accepted, limited := 0, 0
	for i := 0; i < 2*perMinute; i++ {
		var r response
		if i%2 == 0 {
			r = respond(a.Live, open.ID, "u"+strconv.Itoa(i))
		} else {
			r = track(t, s, a.Live, open.ID, "u"+strconv.Itoa(i), "message_impression", "control")
		}
		switch r.Status {
		case 202:
			accepted++
		case 429:
			limited++
			wantError(t, r, 429, "rate_limited", "")
			if r.Header.Get("Retry-After") == "" || r.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Fatalf("429 without Retry-After or CORS: %v", r.Header)
			}
		default:
			t.Fatalf("write %d: %d %s", i, r.Status, r.Body)
		}
	}
	// The bucket holds a minute's worth; a token or two may come back
	// while the test runs.
	if accepted < perMinute-spent || accepted > perMinute-spent+2 || limited != 2*perMinute-accepted {
		t.Errorf("%d accepted and %d refused with 429 of %d writes; want about %d accepted", accepted, limited, 2*perMinute, perMinute-spent)
	}
	// Ingest shares the bucket: spent by the SDK's writes, /e refuses too.
	if r := postEvents(t, s, a.Live, map[string]any{"event_name": "$pageview", "distinct_id": "u1"}); r.Status != 429 {
		t.Errorf("/e after the key's budget was spent on survey answers: %d, want 429", r.Status)
	}
	// Another product's key has its own budget.
	other := survey(b, "active")
	if r := respond(b.Live, other.ID, "v1"); r.Status != 202 {
		t.Errorf("another product's answer: %d %s", r.Status, r.Body)
	}
	var res struct{ Responses int }
	r := annCall(t, s, a.Token, "GET", fmt.Sprintf("/api/v1/campaigns/%d/survey", open.ID), nil)
	if err := json.Unmarshal(r.Body, &res); err != nil || res.Responses != (accepted+1)/2 && res.Responses != accepted/2 {
		t.Errorf("results after the limit: %d %s; want the accepted answers only", r.Status, r.Body)
	}
}
