package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

const (
	chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	gptBotUA = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
	googleUA = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

func ev(name, distinctID string, extra ...any) map[string]any {
	e := map[string]any{"event_name": name, "distinct_id": distinctID}
	for i := 0; i+1 < len(extra); i += 2 {
		e[extra[i].(string)] = extra[i+1]
	}
	return e
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestIngestStatuses sends one request per documented outcome of POST /e
// and checks status, error code and headers.
func TestIngestStatuses(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	key := s.BootstrapKey
	if !strings.HasPrefix(key, "st_live_") || len(key) != len("st_live_")+32 {
		t.Fatalf("bootstrap key %q is not st_live_ + 32 characters", key)
	}
	pid := strconv.FormatInt(s.ProductID, 10)
	disabled := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", pid))
	cli(t, dir, "keys", "disable", disabled)
	revoked := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", pid))
	cli(t, dir, "keys", "revoke", revoked)

	valid := `{"batch":[{"event_name":"signup","distinct_id":"u1"}]}`
	json500 := func(n int) string {
		evs := make([]string, n)
		for i := range evs {
			evs[i] = `{"event_name":"e","distinct_id":"u"}`
		}
		return `{"batch":[` + strings.Join(evs, ",") + `]}`
	}
	bigProps := `{"batch":[{"event_name":"e","distinct_id":"u","properties":{"x":"` + strings.Repeat("a", 6<<20) + `"}}]}`
	jsonCT := map[string]string{"Content-Type": "application/json", "X-API-Key": key}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}

	cases := []struct {
		name   string
		method string
		body   []byte
		header map[string]string
		status int
		code   string
	}{
		{"accepted", "POST", []byte(valid), jsonCT, 202, ""},
		{"malformed json", "POST", []byte(`{"batch":[`), jsonCT, 400, "invalid_json"},
		{"trailing garbage", "POST", []byte(valid + `{}`), jsonCT, 400, "invalid_json"},
		{"not an object", "POST", []byte(`[1,2]`), jsonCT, 400, "invalid_envelope"},
		{"batch missing", "POST", []byte(`{}`), jsonCT, 400, "invalid_envelope"},
		{"batch wrong type", "POST", []byte(`{"batch":"x"}`), jsonCT, 400, "invalid_envelope"},
		{"unknown envelope field", "POST", []byte(`{"batch":[],"extra":1}`), jsonCT, 400, "unknown_field"},
		{"empty batch", "POST", []byte(`{"batch":[]}`), jsonCT, 400, "empty_batch"},
		{"bad sent_at", "POST", []byte(`{"batch":[{"event_name":"e","distinct_id":"u"}],"sent_at":"yesterday"}`), jsonCT, 400, "invalid_sent_at"},
		{"every event rejected", "POST", []byte(`{"batch":[{"event_name":"$nope","distinct_id":"u"}]}`), jsonCT, 400, "all_events_rejected"},
		{"form content type", "POST", []byte(valid), with(jsonCT, "Content-Type", "application/x-www-form-urlencoded"), 400, "unsupported_content_type"},
		{"unknown encoding", "POST", []byte(valid), with(jsonCT, "Content-Encoding", "br"), 400, "unsupported_encoding"},
		{"corrupt gzip", "POST", []byte("not gzip at all"), with(jsonCT, "Content-Encoding", "gzip"), 400, "invalid_gzip"},
		{"10000-deep nesting", "POST", []byte(`{"batch":[{"event_name":"e","distinct_id":"u","properties":{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}]}`), jsonCT, 400, "invalid_json"},
		{"raw NUL byte", "POST", []byte("{\"batch\":[{\"event_name\":\"e\x00\",\"distinct_id\":\"u\"}]}"), jsonCT, 400, "invalid_json"},
		{"no key", "POST", []byte(valid), map[string]string{"Content-Type": "application/json"}, 401, "missing_api_key"},
		{"unknown key", "POST", []byte(valid), with(jsonCT, "X-API-Key", "st_live_"+strings.Repeat("A", 32)), 401, "invalid_api_key"},
		{"malformed key", "POST", []byte(valid), with(jsonCT, "X-API-Key", "hello"), 401, "invalid_api_key"},
		{"revoked key", "POST", []byte(valid), with(jsonCT, "X-API-Key", revoked), 401, "invalid_api_key"},
		{"disabled key", "POST", []byte(valid), with(jsonCT, "X-API-Key", disabled), 403, "key_disabled"},
		{"501 events", "POST", []byte(json500(501)), jsonCT, 413, "batch_too_large"},
		{"500 events", "POST", []byte(json500(500)), jsonCT, 202, ""},
		{"over 5 MB", "POST", []byte(bigProps), jsonCT, 413, "payload_too_large"},
		{"gzip bomb", "POST", gz(t, []byte(`{"batch":[{"event_name":"e","distinct_id":"u","properties":{"x":"`+strings.Repeat("0", 64<<20)+`"}}]}`)), with(jsonCT, "Content-Encoding", "gzip"), 413, "payload_too_large"},
		{"GET not allowed", "GET", nil, nil, 405, "method_not_allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, c.method, s.URL+"/e", c.body, c.header)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.code != "" {
				if got := r.ErrorCode(t); got != c.code {
					t.Errorf("error code %q, want %q (%s)", got, c.code, r.Body)
				}
			}
			if r.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("POST /e answer %d lacks Access-Control-Allow-Origin: *", r.Status)
			}
			if r.Header.Get("Content-Type") != "application/json; charset=utf-8" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("POST /e answer %d has Content-Type %q, X-Content-Type-Options %q", r.Status,
					r.Header.Get("Content-Type"), r.Header.Get("X-Content-Type-Options"))
			}
			if c.status == 202 {
				want := fmt.Sprintf("{\"accepted\":%d,\"rejected\":[]}\n", bytes.Count(c.body, []byte("event_name")))
				if string(r.Body) != want {
					t.Errorf("202 body %q, want %q", r.Body, want)
				}
			}
		})
	}

	t.Run("all rejected lists reasons", func(t *testing.T) {
		r := do(t, "POST", s.URL+"/e", []byte(`{"batch":[{"event_name":"$nope","distinct_id":"u"},{"distinct_id":"u"}]}`), jsonCT)
		var body ingestAnswer
		json.Unmarshal(r.Body, &body)
		if len(body.Rejected) != 2 || body.Rejected[0].Code != "reserved_event_name" || body.Rejected[1].Code != "missing_event_name" {
			t.Errorf("rejected = %+v", body.Rejected)
		}
	})
	t.Run("still serving", func(t *testing.T) {
		if r := do(t, "GET", s.URL+"/healthz", nil, nil); r.Status != 200 {
			t.Fatalf("healthz %d after bad input", r.Status)
		}
	})

	s.Stop()
	db := openStore(t, dir)
	// The "accepted" case stored one signup; the 500-event case stored 500.
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = 'signup'`); n != 1 {
		t.Errorf("signup events = %d, want 1", n)
	}
	if n := count(t, db, `SELECT count(*) FROM events`); n != 501 {
		t.Errorf("events = %d, want 501", n)
	}
}

// TestIngestPerEventRejection checks that bad events are rejected one by
// one with their index and code, and that the rest are stored unaltered.
func TestIngestPerEventRejection(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	long := strings.Repeat("é", 256)
	batch := []map[string]any{
		ev("ok_1", "u1", "properties", map[string]any{"plan": "pro", "n": 3, "nested": map[string]any{"a": []any{1, "two"}}}), // 0
		ev("$custom", "u1"),                                             // 1 reserved
		ev("message_custom", "u1"),                                      // 2 reserved
		ev("$bot_pageview", "u1"),                                       // 3 ingest-only
		ev(long, "u1"),                                                  // 4 too long
		{"distinct_id": "u1"},                                           // 5 missing name
		ev("ok_2", ""),                                                  // 6 empty distinct_id
		ev("ok_2", "u1", "timestamp", "last tuesday"),                   // 7 bad timestamp
		ev("ok_2", "u1", "uuid", "not-a-uuid"),                          // 8 bad uuid
		ev("ok_2", "u1", "color", "red"),                                // 9 unknown field
		ev("ok_2", "u1", "properties", []any{1, 2}),                     // 10 properties not an object
		ev("ok_2", "u1", "properties", map[string]any{"$is_bot": true}), // 11 reserved property
		ev("ok_2", "u1", "properties", map[string]any{"x": strings.Repeat("y", 70000)}),         // 12 too large
		{"event_name": "ok_2", "distinct_id": 42},                                               // 13 wrong type
		ev("ok_2", "u1", "url", strings.Repeat("u", 9000)),                                      // 14 too long
		ev("nul\u0000name", "u1"),                                                               // 15 NUL
		ev("$pageview", "u1", "url", "https://example.com/pricing?x=1", "user_agent", chromeUA), // 16 ok
		ev(strings.Repeat("é", 255), "ü-ñ-😀"),                                                   // 17 ok: 255 characters
	}
	deep := map[string]any{}
	cur := deep
	for i := 0; i < 40; i++ {
		next := map[string]any{}
		cur["d"] = next
		cur = next
	}
	batch = append(batch, ev("ok_2", "u1", "properties", deep)) // 18 too deep
	r := postEvents(t, s, s.BootstrapKey, batch...)
	if r.Status != 202 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var body ingestAnswer
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{1: "reserved_event_name", 2: "reserved_event_name", 3: "reserved_event_name",
		4: "invalid_event_name", 5: "missing_event_name", 6: "invalid_distinct_id", 7: "invalid_timestamp",
		8: "invalid_uuid", 9: "unknown_field", 10: "invalid_properties", 11: "reserved_property",
		12: "properties_too_large", 13: "invalid_field_type", 14: "field_too_long", 15: "invalid_character",
		18: "properties_too_deep"}
	if body.Accepted != len(batch)-len(want) {
		t.Errorf("accepted %d, want %d", body.Accepted, len(batch)-len(want))
	}
	got := map[int]string{}
	for _, rj := range body.Rejected {
		got[rj.Index] = rj.Code
		if rj.Message == "" {
			t.Errorf("rejection %d has no message", rj.Index)
		}
	}
	for i, code := range want {
		if got[i] != code {
			t.Errorf("event %d: code %q, want %q", i, got[i], code)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rejected %v, want %v", got, want)
	}

	// Invalid UTF-8 inside one event rejects that event only.
	raw := []byte("{\"batch\":[{\"event_name\":\"utf8_bad\",\"distinct_id\":\"\xff\xfe\"},{\"event_name\":\"utf8_ok\",\"distinct_id\":\"u\"}]}")
	r = do(t, "POST", s.URL+"/e", raw, map[string]string{"X-API-Key": s.BootstrapKey})
	if r.Status != 202 || !strings.Contains(string(r.Body), `"invalid_utf8"`) || !strings.Contains(string(r.Body), `"accepted":1`) {
		t.Errorf("invalid UTF-8: %d %s", r.Status, r.Body)
	}

	s.Stop()
	db := openStore(t, dir)
	var props string
	if err := db.QueryRow(`SELECT properties FROM events WHERE event = 'ok_1'`).Scan(&props); err != nil {
		t.Fatal(err)
	}
	var gotProps, wantProps any
	json.Unmarshal([]byte(props), &gotProps)
	b, _ := json.Marshal(batch[0]["properties"])
	json.Unmarshal(b, &wantProps)
	if fmt.Sprint(gotProps) != fmt.Sprint(wantProps) {
		t.Errorf("stored properties %s, sent %s", props, b)
	}
	var path, browser, os, device string
	if err := db.QueryRow(`SELECT path, browser, os, device_type FROM events WHERE event = '$pageview'`).Scan(&path, &browser, &os, &device); err != nil {
		t.Fatal(err)
	}
	if path != "/pricing" || browser != "Chrome" || os != "Windows" || device != "desktop" {
		t.Errorf("pageview enrichment = %q %q %q %q", path, browser, os, device)
	}
	if n := count(t, db, `SELECT count(*) FROM events WHERE distinct_id = 'ü-ñ-😀' AND length(event) = 255`); n != 1 {
		t.Errorf("unicode event stored %d times, want 1", n)
	}
	if n := count(t, db, `SELECT count(*) FROM events`); n != 4 {
		t.Errorf("events stored = %d, want 4 (ok_1, $pageview, unicode, utf8_ok)", n)
	}
}

// TestIngestKeySourcesAndEncodings checks the key in header, body and
// query, text/plain beacons and gzip bodies.
func TestIngestKeySourcesAndEncodings(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	key := s.BootstrapKey
	body := func(name string, withKey bool) []byte {
		m := map[string]any{"batch": []any{ev(name, "u1")}}
		if withKey {
			m["api_key"] = key
		}
		b, _ := json.Marshal(m)
		return b
	}
	cases := []struct {
		name   string
		url    string
		body   []byte
		header map[string]string
	}{
		{"header", s.URL + "/e", body("via_header", false), map[string]string{"X-API-Key": key, "Content-Type": "application/json"}},
		{"body beacon", s.URL + "/e", body("via_body", true), map[string]string{"Content-Type": "text/plain;charset=UTF-8"}},
		{"query", s.URL + "/e?api_key=" + url.QueryEscape(key), body("via_query", false), map[string]string{"Content-Type": "application/json"}},
		{"gzip", s.URL + "/e", gz(t, body("via_gzip", false)), map[string]string{"X-API-Key": key, "Content-Encoding": "gzip", "Content-Type": "application/json"}},
		{"no content type", s.URL + "/e", body("via_bare", true), nil},
	}
	for _, c := range cases {
		if r := do(t, "POST", c.url, c.body, c.header); r.Status != 202 {
			t.Errorf("%s: status %d: %s", c.name, r.Status, r.Body)
		}
	}
	// Precedence, as docs/ingest.md orders it: header, then body, then query.
	unknown := "st_live_" + strings.Repeat("A", 32)
	withBodyKey := func(k string) []byte {
		b, _ := json.Marshal(map[string]any{"batch": []any{ev("precedence", "u1")}, "api_key": k})
		return b
	}
	if r := do(t, "POST", s.URL+"/e", withBodyKey(unknown), map[string]string{"X-API-Key": key}); r.Status != 202 {
		t.Errorf("header key must win over the body's: %d", r.Status)
	}
	if r := do(t, "POST", s.URL+"/e?api_key="+url.QueryEscape(key), withBodyKey(unknown), nil); r.Status != 401 {
		t.Errorf("body key must win over the query's: %d", r.Status)
	}
	s.Stop()
	db := openStore(t, dir)
	for _, name := range []string{"via_header", "via_body", "via_query", "via_gzip", "via_bare", "precedence"} {
		if n := count(t, db, `SELECT count(*) FROM events WHERE event = $1`, name); n != 1 {
			t.Errorf("%s stored %d times", name, n)
		}
	}
}

// TestIngestTimeAndDedup checks clock-skew correction, batch ordering and
// uuid deduplication, including across a restart.
func TestIngestTimeAndDedup(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	key := s.BootstrapKey

	// The client's clock runs one hour fast: sent_at and timestamp are both
	// an hour ahead, 10 seconds apart. The stored time is 10 s before arrival.
	clientNow := time.Now().Add(time.Hour)
	before := time.Now()
	b, _ := json.Marshal(map[string]any{
		"sent_at": clientNow.Format(time.RFC3339Nano),
		"batch":   []any{ev("skewed", "u1", "timestamp", clientNow.Add(-10*time.Second).Format(time.RFC3339Nano))},
	})
	if r := do(t, "POST", s.URL+"/e", b, map[string]string{"X-API-Key": key}); r.Status != 202 {
		t.Fatalf("skew: %d %s", r.Status, r.Body)
	}
	after := time.Now()

	// Without sent_at, a timestamp is taken as is.
	fixed := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	postEvents(t, s, key, ev("as_is", "u1", "timestamp", fixed.Format(time.RFC3339Nano)))

	// Without timestamps, a batch keeps its order.
	var ordered []map[string]any
	for i := 0; i < 5; i++ {
		ordered = append(ordered, ev("ordered", "u1", "properties", map[string]any{"i": i}))
	}
	postEvents(t, s, key, ordered...)

	// The same uuid twice in one batch, again in a retried batch, and once
	// more after a restart, is stored once.
	id := uuid.NewString()
	if r := postEvents(t, s, key, ev("dup", "u1", "uuid", id), ev("dup", "u1", "uuid", id)); r.Status != 202 || !strings.Contains(string(r.Body), `"accepted":2`) {
		t.Fatalf("dup batch: %d %s", r.Status, r.Body)
	}
	postEvents(t, s, key, ev("dup", "u1", "uuid", id))
	// Another product may use the same uuid: deduplication is per product.
	other := strings.TrimSpace(cli(t, dir, "keys", "create", "--product",
		strings.TrimSpace(jsonField(t, cli(t, dir, "products", "create", "--name", "Other"), "id"))))
	postEvents(t, s, other, ev("dup", "u1", "uuid", id))
	s.Stop()

	s = startServer(t, dir)
	if r := postEvents(t, s, key, ev("dup", "u1", "uuid", id)); r.Status != 202 {
		t.Fatalf("dup after restart: %d", r.Status)
	}
	s.Stop()

	db := openStore(t, dir)
	var ts time.Time
	if err := db.QueryRow(`SELECT ts FROM events WHERE event = 'skewed'`).Scan(&ts); err != nil {
		t.Fatal(err)
	}
	lo, hi := before.Add(-10*time.Second-time.Millisecond), after.Add(-10*time.Second+time.Millisecond)
	if ts.Before(lo) || ts.After(hi) {
		t.Errorf("skew-corrected ts %v not within [%v, %v]", ts, lo, hi)
	}
	if err := db.QueryRow(`SELECT ts FROM events WHERE event = 'as_is'`).Scan(&ts); err != nil || !ts.Equal(fixed) {
		t.Errorf("as_is ts = %v (%v), want %v", ts, err, fixed)
	}
	rows, err := db.Query(`SELECT CAST(json_extract(properties, '$.i') AS INTEGER) FROM events WHERE event = 'ordered' ORDER BY ts`)
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			t.Fatal(err)
		}
		order = append(order, i)
	}
	rows.Close()
	if fmt.Sprint(order) != "[0 1 2 3 4]" {
		t.Errorf("batch order by ts = %v", order)
	}
	if n := count(t, db, `SELECT count(DISTINCT ts) FROM events WHERE event = 'ordered'`); n != 5 {
		t.Errorf("ordered events share timestamps: %d distinct", n)
	}
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = 'dup' AND product_id = 1`); n != 1 {
		t.Errorf("duplicated uuid stored %d times in product 1, want 1", n)
	}
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = 'dup' AND product_id <> 1`); n != 1 {
		t.Errorf("same uuid in another product stored %d times, want 1", n)
	}
}

func jsonField(t *testing.T, s, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%q is not JSON: %v", s, err)
	}
	return fmt.Sprint(m[field])
}

// TestIngestRateLimit checks the per-key budget, its override and 429.
func TestIngestRateLimit(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--rate-limit", "4")
	pid := strconv.FormatInt(s.ProductID, 10)
	limited := s.BootstrapKey
	generous := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", pid, "--rate-limit", "100"))
	for i := 0; i < 4; i++ {
		if r := postEvents(t, s, limited, ev("e", "u")); r.Status != 202 {
			t.Fatalf("request %d: %d", i, r.Status)
		}
	}
	r := postEvents(t, s, limited, ev("e", "u"))
	if r.Status != 429 || r.ErrorCode(t) != "rate_limited" {
		t.Fatalf("5th request: %d %s", r.Status, r.Body)
	}
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	// The override is per key: another key of the same product still works,
	// past the server default.
	for i := 0; i < 10; i++ {
		if r := postEvents(t, s, generous, ev("e", "u")); r.Status != 202 {
			t.Fatalf("generous key request %d: %d", i, r.Status)
		}
	}
	if keys := cli(t, dir, "keys", "list", "--product", pid); !strings.Contains(keys, "100/min") {
		t.Errorf("keys list does not show the override:\n%s", keys)
	}
}

// TestIngestTestKeys checks that test keys work from local origins only and
// that their events are stored apart.
func TestIngestTestKeys(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	testKey := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", strconv.FormatInt(s.ProductID, 10), "--test"))
	if !strings.HasPrefix(testKey, "st_test_") {
		t.Fatalf("test key %q", testKey)
	}
	body, _ := json.Marshal(map[string]any{"batch": []any{ev("from_test", "u")}})
	for origin, want := range map[string]int{
		"":                          202,
		"http://localhost:3000":     202,
		"http://127.0.0.1:8080":     202,
		"http://[::1]:5173":         202,
		"http://shop.localhost":     202,
		"https://myapp.test":        202,
		"http://printer.local":      202,
		"https://example.com":       401,
		"https://localhost.evil.io": 401,
		"null":                      401,
	} {
		h := map[string]string{"X-API-Key": testKey}
		if origin != "" {
			h["Origin"] = origin
		}
		r := do(t, "POST", s.URL+"/e", body, h)
		if r.Status != want {
			t.Errorf("origin %q: %d, want %d", origin, r.Status, want)
		}
		if want == 401 && r.ErrorCode(t) != "test_key_not_allowed" {
			t.Errorf("origin %q: code %q", origin, r.ErrorCode(t))
		}
	}
	// A live key is accepted from any origin.
	h := map[string]string{"X-API-Key": s.BootstrapKey, "Origin": "https://example.com"}
	if r := do(t, "POST", s.URL+"/e", body, h); r.Status != 202 {
		t.Errorf("live key from example.com: %d", r.Status)
	}
	s.Stop()
	db := openStore(t, dir)
	if n := count(t, db, `SELECT count(*) FROM events WHERE env = 'test'`); n != 7 {
		t.Errorf("test events = %d, want 7", n)
	}
	if n := count(t, db, `SELECT count(*) FROM events WHERE env = 'live'`); n != 1 {
		t.Errorf("live events = %d, want 1", n)
	}
}

// TestCORS checks that /e is open to every origin and nothing else is.
func TestCORS(t *testing.T) {
	s := startServer(t, t.TempDir())
	r := do(t, "OPTIONS", s.URL+"/e", nil, map[string]string{
		"Origin": "https://shop.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type,x-api-key"})
	if r.Status != 204 {
		t.Fatalf("preflight status %d", r.Status)
	}
	for h, want := range map[string]string{
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Methods": "POST, OPTIONS",
		"Access-Control-Max-Age":       "86400",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("preflight %s = %q, want %q", h, got, want)
		}
	}
	allowed := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"content-type", "x-api-key", "content-encoding"} {
		if !strings.Contains(allowed, h) {
			t.Errorf("preflight does not allow header %s: %q", h, allowed)
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/nope", "/api/v1/query/funnel"} {
		for _, method := range []string{"GET", "OPTIONS"} {
			r := do(t, method, s.URL+path, nil, map[string]string{"Origin": "https://shop.example", "Access-Control-Request-Method": "GET"})
			for h := range r.Header {
				if strings.HasPrefix(strings.ToLower(h), "access-control-") {
					t.Errorf("%s %s sends %s", method, path, h)
				}
			}
		}
	}
	if r := do(t, "GET", s.URL+"/healthz", nil, nil); r.Status != 200 || r.JSON(t)["status"] != "ok" {
		t.Errorf("healthz: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", s.URL+"/readyz", nil, nil); r.Status != 200 || r.JSON(t)["status"] != "ready" {
		t.Errorf("readyz: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", s.URL+"/nope", nil, nil); r.Status != 404 || r.ErrorCode(t) != "not_found" {
		t.Errorf("unknown path: %d %s", r.Status, r.Body)
	}
}

// TestBotRewrite checks AI-bot classification and the $bot_pageview rule.
func TestBotRewrite(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	key := s.BootstrapKey
	r := postEvents(t, s, key,
		ev("$pageview", "bots", "user_agent", gptBotUA, "url", "https://example.com/docs/a", "properties", map[string]any{"$server_captured": "true"}),
		ev("$pageview", "bots", "user_agent", googleUA, "url", "https://example.com/docs/b"),
		ev("$pageview", "human", "user_agent", chromeUA, "url", "https://example.com/"),
		ev("signup", "bots", "user_agent", gptBotUA),
	)
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// The user agent falls back to the request's header.
	b, _ := json.Marshal(map[string]any{"batch": []any{ev("$pageview", "bots", "url", "https://example.com/docs/c")}})
	do(t, "POST", s.URL+"/e", b, map[string]string{"X-API-Key": key, "User-Agent": "Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"})
	s.Stop()

	db := openStore(t, dir)
	type row struct {
		event, botName, botCategory, props string
		isBot                              bool
	}
	rows, err := db.Query(`SELECT event, is_bot, coalesce(bot_name, ''), coalesce(bot_category, ''), properties FROM events ORDER BY received_at, ts`)
	if err != nil {
		t.Fatal(err)
	}
	var got []row
	for rows.Next() {
		var r row
		rows.Scan(&r.event, &r.isBot, &r.botName, &r.botCategory, &r.props)
		got = append(got, r)
	}
	rows.Close()
	if len(got) != 5 {
		t.Fatalf("stored %d events, want 5", len(got))
	}
	if g := got[0]; g.event != "$bot_pageview" || !g.isBot || g.botName != "GPTBot" || g.botCategory != "ai_crawler" ||
		!strings.Contains(g.props, `"$is_bot":true`) || !strings.Contains(g.props, `"$bot_name":"GPTBot"`) ||
		!strings.Contains(g.props, `"$bot_category":"ai_crawler"`) || !strings.Contains(g.props, `"$server_captured":"true"`) {
		t.Errorf("GPTBot pageview stored as %+v", g)
	}
	if g := got[1]; g.event != "$pageview" || g.isBot {
		t.Errorf("Googlebot is not an AI bot, stored as %+v", g)
	}
	if g := got[2]; g.event != "$pageview" || g.isBot {
		t.Errorf("Chrome stored as %+v", g)
	}
	if g := got[3]; g.event != "signup" || !g.isBot {
		t.Errorf("a bot's custom event keeps its name but is marked: %+v", g)
	}
	if g := got[4]; g.event != "$bot_pageview" || g.botName != "ClaudeBot" {
		t.Errorf("header user agent not used: %+v", g)
	}
}

// TestSDKScript checks that the server serves the browser SDK it embeds:
// the built file byte for byte, cacheable for a week, revalidated by ETag,
// and open to every origin.
func TestSDKScript(t *testing.T) {
	s := startServer(t, t.TempDir())
	want, err := os.ReadFile("../internal/httpapi/sdkjs/sdk.min.js")
	if err != nil {
		t.Fatal(err)
	}
	r := do(t, "GET", s.URL+"/sdk/v1/sdk.min.js", nil, map[string]string{"Origin": "https://shop.example"})
	if r.Status != 200 || !bytes.Equal(r.Body, want) {
		t.Fatalf("sdk.min.js: %d, %d bytes; want 200 and the %d embedded bytes", r.Status, len(r.Body), len(want))
	}
	for h, want := range map[string]string{
		"Content-Type":                "text/javascript; charset=utf-8",
		"Cache-Control":               "public, max-age=604800",
		"Access-Control-Allow-Origin": "*",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if r := do(t, "GET", s.URL+"/sdk/v1/sdk.min.js", nil, map[string]string{"If-None-Match": etag}); r.Status != 304 || len(r.Body) != 0 {
		t.Errorf("revalidation: %d with %d bytes; want 304 and no body", r.Status, len(r.Body))
	}
	// Pages fetch it gzipped: the budget the SDK's size test enforces is
	// its gzipped size.
	gz := do(t, "GET", s.URL+"/sdk/v1/sdk.min.js", nil, map[string]string{"Accept-Encoding": "gzip"})
	if gz.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("sdk.min.js with Accept-Encoding: gzip came as %q", gz.Header.Get("Content-Encoding"))
	} else if zr, err := gzip.NewReader(bytes.NewReader(gz.Body)); err != nil {
		t.Error(err)
	} else if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, want) || len(gz.Body) >= len(want) {
		t.Errorf("gzipped sdk.min.js: %d bytes decompressing to %d (%v); want fewer than %d decompressing to the file", len(gz.Body), len(plain), err, len(want))
	}
	if r := do(t, "GET", s.URL+"/sdk/v1/sdk.min.js.map", nil, nil); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"sources"`)) {
		t.Errorf("source map: %d %.80s", r.Status, r.Body)
	}
	if r := do(t, "POST", s.URL+"/sdk/v1/sdk.min.js", nil, nil); r.Status == 200 {
		t.Error("POST to the SDK script succeeded")
	}
}

// TestSDKConfig checks GET /api/v1/config: the API key decides the product,
// a bad key is refused, the answer is cacheable for a minute and open to
// every origin, as the SDK on customers' pages fetches it.
func TestSDKConfig(t *testing.T) {
	s := startServer(t, t.TempDir())
	r := do(t, "GET", s.URL+"/api/v1/config?api_key="+s.BootstrapKey+"&distinct_id=u1", nil, map[string]string{"Origin": "https://shop.example"})
	if r.Status != 200 {
		t.Fatalf("config: %d %s", r.Status, r.Body)
	}
	var cfg struct {
		Flags           []any `json:"flags"`
		MessagesEnabled *bool `json:"messagesEnabled"`
		ErrorTracking   *bool `json:"errorTracking"`
		Replay          *bool `json:"replay"`
	}
	if err := json.Unmarshal(r.Body, &cfg); err != nil || cfg.Flags == nil || cfg.MessagesEnabled == nil || cfg.ErrorTracking == nil || cfg.Replay == nil {
		t.Errorf("config body %s does not have the contract's fields (%v)", r.Body, err)
	}
	if got := r.Header.Get("Cache-Control"); got != "max-age=60" {
		t.Errorf("Cache-Control = %q", got)
	}
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("Access-Control-Allow-Origin = %q", got)
	}
	if r := do(t, "GET", s.URL+"/api/v1/config?api_key=st_live_nope&distinct_id=u1", nil, nil); r.Status != 401 {
		t.Errorf("unknown key: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", s.URL+"/api/v1/config", nil, nil); r.Status != 401 {
		t.Errorf("no key: %d %s", r.Status, r.Body)
	}
	pre := do(t, "OPTIONS", s.URL+"/api/v1/config", nil, map[string]string{"Origin": "https://shop.example", "Access-Control-Request-Method": "GET"})
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Methods") != "GET, OPTIONS" {
		t.Errorf("preflight: %d %q", pre.Status, pre.Header.Get("Access-Control-Allow-Methods"))
	}
}

// TestHTTPEdges checks what the HTTP server itself answers before a
// handler runs, in the API's error format: headers too large (431), a
// chunked body within and over the 5 MB limit; and that it does not name
// its HTTP library in a Server header.
func TestHTTPEdges(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	jsonCT := map[string]string{"Content-Type": "application/json", "X-API-Key": s.BootstrapKey}

	t.Run("headers over 16 KB", func(t *testing.T) {
		for _, path := range []string{"/e", "/api/v1/products"} {
			r := do(t, "POST", s.URL+path, []byte(`{"batch":[{"event_name":"e","distinct_id":"u"}]}`),
				map[string]string{"X-API-Key": s.BootstrapKey, "X-Padding": strings.Repeat("a", 20<<10)})
			if r.Status != 431 || r.ErrorCode(t) != "headers_too_large" {
				t.Errorf("%s: %d %s, want 431 headers_too_large", path, r.Status, r.Body)
			}
		}
	})
	chunked := func(body []byte) response {
		req, err := http.NewRequest("POST", s.URL+"/e", io.MultiReader(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.TransferEncoding = []string{"chunked"}
		for k, v := range jsonCT {
			req.Header.Set(k, v)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}
	t.Run("chunked body", func(t *testing.T) {
		r := chunked([]byte(`{"batch":[{"event_name":"chunked","distinct_id":"u"}]}`))
		if r.Status != 202 || string(r.Body) != "{\"accepted\":1,\"rejected\":[]}\n" {
			t.Errorf("chunked body: %d %s", r.Status, r.Body)
		}
	})
	t.Run("chunked body over 5 MB", func(t *testing.T) {
		r := chunked([]byte(`{"batch":[{"event_name":"e","distinct_id":"u","properties":{"x":"` + strings.Repeat("a", 6<<20) + `"}}]}`))
		// (Browsers send bodies with a Content-Length, whose 413 carries
		// the CORS headers: TestIngestStatuses.)
		if r.Status != 413 || r.ErrorCode(t) != "payload_too_large" {
			t.Errorf("chunked 6 MB body: %d %s", r.Status, r.Body)
		}
	})
	t.Run("no Server header", func(t *testing.T) {
		for _, path := range []string{"/e", "/healthz"} {
			if r := do(t, "GET", s.URL+path, nil, nil); r.Header.Get("Server") != "" {
				t.Errorf("GET %s sends Server: %q", path, r.Header.Get("Server"))
			}
		}
	})

	s.Stop()
	db := openStore(t, dir)
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = 'chunked'`); n != 1 {
		t.Errorf("chunked events stored = %d, want 1", n)
	}
}
