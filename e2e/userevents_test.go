package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// TestUserEvents drives GET /api/v1/users/{distinctId}/events on the real
// binary with the embedded stores; TestUserEventsOnClickHouse runs the same
// checks with events in ClickHouse and metadata in PostgreSQL.
func TestUserEvents(t *testing.T) {
	checkUserEvents(t, startServer(t, t.TempDir()))
}

func TestUserEventsOnClickHouse(t *testing.T) {
	chtest.Skip(t)
	events := chtest.Shared(t).URL(fmt.Sprintf("strata_e2e_%d", time.Now().UnixNano()), "")
	checkUserEvents(t, startServer(t, t.TempDir(), "--events", events, "--meta", pgtest.Start(t)))
}

// checkUserEvents: a user's events come newest first with their fields and
// session id, paged by before and nextBefore; the test environment only
// with env=test; a query token or the dashboard session may read them, an
// API key is 403 key_not_allowed and no credential 401; bad parameters are
// 400 naming the field; and another product's events of the same
// distinct_id never appear.
func checkUserEvents(t *testing.T, s *server) {
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	const user = "ann/ü 1"
	at := func(min int) string {
		return time.Date(2026, 5, 1, 10, min, 0, 0, time.UTC).Format(time.RFC3339)
	}
	firefox := "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
	res := postEvents(t, s, a.Live,
		ev("signed_up", user, "timestamp", at(0), "properties", map[string]any{"plan": "free"}),
		ev("$pageview", user, "timestamp", at(1), "url", "https://shop.example/cart?step=2", "user_agent", firefox,
			"properties", map[string]any{"$session_id": "sess-1", "$window_id": "w1", "items": []any{1, "two"}}),
		ev("added_to_cart", user, "timestamp", at(2), "properties", map[string]any{"$session_id": "sess-1", "sku": "A-1"}),
		ev("checkout", user, "timestamp", at(3), "properties", map[string]any{"$session_id": "sess-2"}),
		ev("bob_did_this", "bob", "timestamp", at(4)),
	)
	if res.Status != 202 {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	if res := postEvents(t, s, b.Live, ev("blog_secret", user, "timestamp", at(5), "properties", map[string]any{"$session_id": "sess-9"})); res.Status != 202 {
		t.Fatalf("ingest b: %d %s", res.Status, res.Body)
	}
	if res := postEvents(t, s, a.Test, ev("test_event", user, "timestamp", at(6))); res.Status != 202 {
		t.Fatalf("ingest test: %d %s", res.Status, res.Body)
	}

	path := "/api/v1/users/" + url.PathEscape(user) + "/events"
	get := func(cred, query string) response {
		h := map[string]string{}
		if cred != "" {
			h["Authorization"] = "Bearer " + cred
		}
		return do(t, "GET", s.URL+path+query, nil, h)
	}
	type event struct {
		UUID       string         `json:"uuid"`
		Name       string         `json:"name"`
		Timestamp  string         `json:"timestamp"`
		URL        string         `json:"url"`
		Path       string         `json:"path"`
		Browser    string         `json:"browser"`
		OS         string         `json:"os"`
		DeviceType string         `json:"deviceType"`
		SessionID  *string        `json:"sessionId"`
		Properties map[string]any `json:"properties"`
	}
	var page struct {
		DistinctID string  `json:"distinctId"`
		Events     []event `json:"events"`
		NextBefore *string `json:"nextBefore"`
	}
	read := func(r response) string {
		t.Helper()
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		page.Events, page.NextBefore = nil, nil
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatalf("%v: %s", err, r.Body)
		}
		var names []string
		for _, e := range page.Events {
			names = append(names, e.Name)
		}
		return strings.Join(names, ",")
	}

	r := get(a.Token, "")
	if got := read(r); got != "checkout,added_to_cart,$pageview,signed_up" || page.NextBefore != nil || page.DistinctID != user {
		t.Fatalf("a's events of %q: %s (nextBefore %v)", user, r.Body, page.NextBefore)
	}
	if r.Header.Get("Cache-Control") != "private, no-store" {
		t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	view := page.Events[2]
	if view.Timestamp != "2026-05-01T10:01:00Z" || view.URL != "https://shop.example/cart?step=2" || view.Path != "/cart" ||
		view.Browser != "Firefox" || view.OS != "Linux" || view.DeviceType != "desktop" || view.SessionID == nil || *view.SessionID != "sess-1" ||
		view.Properties["$window_id"] != "w1" || fmt.Sprint(view.Properties["items"]) != "[1 two]" || len(view.UUID) != 36 {
		t.Errorf("the page view: %+v", view)
	}
	if first := page.Events[3]; first.SessionID != nil || first.Properties["plan"] != "free" {
		t.Errorf("an event without a session: %+v", first)
	}

	// Paging: two at a time, then strictly older than nextBefore.
	if got := read(get(a.Token, "?limit=2")); got != "checkout,added_to_cart" || page.NextBefore == nil || *page.NextBefore != at(2) {
		t.Fatalf("limit 2: %s, nextBefore %v", got, page.NextBefore)
	}
	if got := read(get(a.Token, "?limit=2&before="+url.QueryEscape(*page.NextBefore))); got != "$pageview,signed_up" || page.NextBefore != nil {
		t.Errorf("the next page: %s, nextBefore %v", got, page.NextBefore)
	}
	if got := read(get(a.Token, "?before="+url.QueryEscape("2026-05-01T12:01:00+02:00"))); got != "signed_up" {
		t.Errorf("before 10:01 UTC written at +02:00: %s", got)
	}
	if got := read(get(a.Token, "?env=test")); got != "test_event" {
		t.Errorf("env=test: %s", got)
	}
	// Tenant isolation: b sees its own event of the same distinct_id only.
	if got := read(get(b.Token, "")); got != "blog_secret" {
		t.Errorf("b's events of %q: %s", user, got)
	}
	if got := read(do(t, "GET", s.URL+"/api/v1/users/nobody/events", nil, map[string]string{"Authorization": "Bearer " + a.Token})); got != "" || page.Events == nil {
		t.Errorf("a user without events: %q, events %v (want [])", got, page.Events)
	}

	// The dashboard's session, with ?product=.
	owner := setupOwner(t, s)
	if got := read(owner.do(t, "GET", path+"?product="+b.ProductFlag, nil)); got != "blog_secret" {
		t.Errorf("through the session: %s", got)
	}
	if r := owner.do(t, "GET", path, nil); r.Status != 400 || r.ErrorCode(t) != "invalid_request" {
		t.Errorf("the session without product: %d %s", r.Status, r.Body)
	}

	for _, c := range []struct {
		name, cred, query string
		status            int
		code, field       string
	}{
		{"an API key", a.Live, "", 403, "key_not_allowed", ""},
		{"a test API key", a.Test, "", 403, "key_not_allowed", ""},
		{"no credential", "", "", 401, "missing_credentials", ""},
		{"an unknown token", "st_tok_nope", "", 401, "", ""},
		{"limit 0", a.Token, "?limit=0", 400, "invalid_request", "limit"},
		{"limit 1001", a.Token, "?limit=1001", 400, "invalid_request", "limit"},
		{"limit x", a.Token, "?limit=x", 400, "invalid_request", "limit"},
		{"before a date", a.Token, "?before=2026-05-01", 400, "invalid_request", "before"},
		{"before junk", a.Token, "?before=yesterday", 400, "invalid_request", "before"},
		{"env prod", a.Token, "?env=prod", 400, "invalid_request", "env"},
	} {
		r := get(c.cred, c.query)
		if r.Status != c.status || (c.code != "" && r.ErrorCode(t) != c.code) {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
			continue
		}
		if c.field != "" {
			if msg, _ := r.JSON(t)["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, c.field+": ") {
				t.Errorf("%s: the message %q does not name %s", c.name, msg, c.field)
			}
		}
	}
	long := "/api/v1/users/" + strings.Repeat("x", 256) + "/events"
	if r := do(t, "GET", s.URL+long, nil, map[string]string{"Authorization": "Bearer " + a.Token}); r.Status != 400 || r.ErrorCode(t) != "invalid_request" {
		t.Errorf("a distinct_id of 256 characters: %d %s", r.Status, r.Body)
	}
}
