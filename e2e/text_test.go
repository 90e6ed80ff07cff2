package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestTextRules checks, on the real binary, the rules on text that JSON can
// carry but Strata does not store (docs/ingest.md, docs/security.md "Text
// rules"): NUL, which can only come as the escape \u0000, is refused
// anywhere in an event, property keys and values included; the escape of
// half a surrogate pair ("\ud800"), which decoders silently turn into
// U+FFFD, is refused in events and in the API's JSON bodies, naming the
// field; whole pairs written as escapes are stored exactly. In ingest each
// rule rejects its event only.
func TestTextRules(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", strconv.FormatInt(s.ProductID, 10)))

	// Written by hand: json.Marshal would not produce these escapes.
	body := `{"batch":[` +
		`{"event_name":"text_ok","distinct_id":"u"},` + // 0
		`{"event_name":"text_nul_key","distinct_id":"u","properties":{"k\u0000":1}},` + // 1
		`{"event_name":"text_nul_value","distinct_id":"u","properties":{"k":{"deep":["v\u0000"]}}},` + // 2
		`{"event_name":"text_nul_name\u0000","distinct_id":"u"},` + // 3
		`{"event_name":"s\ud800","distinct_id":"u"},` + // 4
		`{"event_name":"text_lone_property","distinct_id":"u","properties":{"k":"\udc00"}},` + // 5
		`{"event_name":"text_pair_\ud83d\ude00","distinct_id":"\uD83D\uDE01","properties":{"\ud83d\ude02":"\ud83d\ude03"}}` + // 6
		`]}`
	r := do(t, "POST", s.URL+"/e", []byte(body), map[string]string{"X-API-Key": s.BootstrapKey})
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var got ingestAnswer
	json.Unmarshal(r.Body, &got)
	want := map[int]string{1: "invalid_character", 2: "invalid_character", 3: "invalid_character", 4: "invalid_utf8", 5: "invalid_utf8"}
	codes := map[int]string{}
	for _, rj := range got.Rejected {
		codes[rj.Index] = rj.Code
	}
	if got.Accepted != 2 || len(codes) != len(want) {
		t.Errorf("accepted %d, rejected %v; want 2 accepted and %v", got.Accepted, codes, want)
	}
	for i, code := range want {
		if codes[i] != code {
			t.Errorf("event %d: %q, want %q", i, codes[i], code)
		}
	}

	// The API's bodies: the field at fault is named.
	bearer := map[string]string{"Authorization": "Bearer " + token}
	for _, c := range []struct{ path, body, field string }{
		{"/api/v1/annotations", `{"label":"deploy \ud800","date":"2026-11-01T00:00:00Z","color":"emerald","scope":"workspace"}`, "label"},
		{"/api/v1/annotations", `{"label":"deploy","date":"2026-11-01T00:00:00Z","color":"emerald","scope":"workspace","description":"\udfff"}`, "description"},
		{"/api/v1/queries", `{"kind":"trend","name":"\ud83d","definition":{"series":[{"event":"a"}]}}`, "name"},
		{"/api/v1/queries", `{"kind":"trend","name":"n","definition":{"series":[{"event":"a"},{"event":"\udc00"}]}}`, "definition.series[1].event"},
		{"/api/v1/query/funnel", `{"steps":["a\ud800","b"]}`, "steps[0]"},
	} {
		res := do(t, "POST", s.URL+c.path, []byte(c.body), bearer)
		wantError(t, res, 400, "invalid_request", c.field)
	}
	res := do(t, "POST", s.URL+"/api/v1/annotations",
		[]byte(`{"label":"\ud83d\ude80 deploy","date":"2026-11-01T00:00:00Z","color":"emerald","scope":"workspace"}`), bearer)
	if res.Status != 201 || res.JSON(t)["label"] != "🚀 deploy" {
		t.Errorf("an escaped pair in a label: %d %s", res.Status, res.Body)
	}

	s.Stop()
	db := openStore(t, dir)
	var props, distinct string
	if err := db.QueryRow(`SELECT properties, distinct_id FROM events WHERE event = 'text_pair_😀'`).Scan(&props, &distinct); err != nil {
		t.Fatalf("the event with escaped pairs was not stored as sent: %v", err)
	}
	var m map[string]string
	if json.Unmarshal([]byte(props), &m); m["😂"] != "😃" || distinct != "😁" {
		t.Errorf("stored distinct_id %q, properties %s; want 😁 and {\"😂\":\"😃\"}", distinct, props)
	}
	if n := count(t, db, `SELECT count(*) FROM events WHERE event LIKE 'text_%' OR event LIKE 's%'`); n != 2 {
		t.Errorf("%d text events stored, want 2", n)
	}
}
