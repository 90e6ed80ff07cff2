package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// browser is a client of the dashboard API: the session cookie it was given
// and the Origin a browser would send.
type browser struct {
	s      *server
	cookie string
}

func (b *browser) do(t *testing.T, method, path string, body any) response {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	h := map[string]string{"Origin": b.s.URL, "Content-Type": "application/json"}
	if b.cookie != "" {
		h["Cookie"] = b.cookie
	}
	return do(t, method, b.s.URL+path, raw, h)
}

// setupOwner runs first-run setup with the token the server logged and
// returns a browser signed in as the owner.
func setupOwner(t *testing.T, s *server) *browser {
	t.Helper()
	b := &browser{s: s}
	r := b.do(t, "POST", "/api/v1/dashboard/setup", map[string]string{"email": "owner@example.com", "password": "correct horse battery", "setupToken": s.SetupToken})
	if r.Status != 201 {
		t.Fatalf("setup: %d %s", r.Status, r.Body)
	}
	b.cookie = strings.Split(r.Header.Get("Set-Cookie"), ";")[0]
	return b
}

// TestDashboardSignInAndKeys drives the dashboard's API on the real binary:
// setup, a key made through the session ingests, the session reads it back,
// survives a restart (sessions live in the database) and ends at sign-out.
func TestDashboardSignInAndKeys(t *testing.T) {
	t.Setenv("NEXT_PUBLIC_FEATURE_ERROR_TRACKING", "")
	dir := t.TempDir()
	s := startServer(t, dir)
	anon := &browser{s: s}
	if r := anon.do(t, "GET", "/api/v1/dashboard/config", nil); r.Status != 200 || r.JSON(t)["setupRequired"] != true {
		t.Fatalf("config: %d %s", r.Status, r.Body)
	}
	b := setupOwner(t, s)
	if !regexp.MustCompile(`^strata_session=[A-Za-z0-9_-]{43}$`).MatchString(b.cookie) {
		t.Errorf("session cookie %q", b.cookie)
	}
	if r := anon.do(t, "POST", "/api/v1/dashboard/setup", map[string]string{"email": "x@example.com", "password": "another password", "setupToken": s.SetupToken}); r.Status != 409 || r.ErrorCode(t) != "setup_complete" {
		t.Errorf("second setup: %d %s", r.Status, r.Body)
	}

	r := b.do(t, "POST", "/api/v1/products", map[string]string{"name": "E2E"})
	if r.Status != 201 {
		t.Fatalf("create product: %d %s", r.Status, r.Body)
	}
	pid := int64(r.JSON(t)["id"].(float64))
	products := "/api/v1/products/" + jsonNumber(pid)
	r = b.do(t, "POST", products+"/keys", map[string]string{"env": "live"})
	key, _ := r.JSON(t)["secret"].(string)
	if r.Status != 201 || !strings.HasPrefix(key, "st_live_") {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	if r := postEvents(t, s, key, map[string]any{"event_name": "dashboard_e2e", "distinct_id": "u1"}); r.Status != 202 {
		t.Fatalf("ingest with the new key: %d %s", r.Status, r.Body)
	}
	trend := map[string]any{"series": []map[string]string{{"event": "dashboard_e2e", "math": "total"}}, "interval": "day"}
	r = b.do(t, "POST", "/api/v1/query/trend?product="+jsonNumber(pid), trend)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"value":1`) {
		t.Errorf("trend through the session: %d %s", r.Status, r.Body)
	}
	if r := do(t, "POST", s.URL+"/api/v1/query/trend?product="+jsonNumber(pid), mustJSON(trend), map[string]string{"Cookie": b.cookie}); r.Status != 403 || r.ErrorCode(t) != "bad_origin" {
		t.Errorf("cookie without Origin: %d %s", r.Status, r.Body)
	}
	// An annotation made from the dashboard records the person, not a key.
	r = b.do(t, "POST", "/api/v1/annotations?product="+jsonNumber(pid), map[string]any{
		"label": "Deploy 42", "date": "2026-11-20T10:00:00Z", "color": "sky", "scope": "workspace"})
	if r.Status != 201 || r.JSON(t)["createdBy"] != "owner@example.com" {
		t.Errorf("annotation through the session: %d %s", r.Status, r.Body)
	}

	s.Stop()
	s = startServer(t, dir)
	b.s, anon.s = s, s
	if r := b.do(t, "GET", "/api/v1/session", nil); r.Status != 200 {
		t.Fatalf("session after a restart: %d %s", r.Status, r.Body)
	}
	if r := b.do(t, "GET", products+"/keys", nil); r.Status != 200 || strings.Contains(string(r.Body), key) || !strings.Contains(string(r.Body), key[:12]) {
		t.Errorf("list keys: %d %s", r.Status, r.Body)
	}
	if r := b.do(t, "DELETE", "/api/v1/session", nil); r.Status != 204 {
		t.Errorf("sign-out: %d %s", r.Status, r.Body)
	}
	if r := b.do(t, "GET", products+"/keys", nil); r.Status != 401 || r.ErrorCode(t) != "not_signed_in" {
		t.Errorf("after sign-out: %d %s", r.Status, r.Body)
	}
	r = anon.do(t, "POST", "/api/v1/session", map[string]string{"email": "owner@example.com", "password": "correct horse battery"})
	if r.Status != 200 || !strings.Contains(r.Header.Get("Set-Cookie"), "HttpOnly") || !strings.Contains(r.Header.Get("Set-Cookie"), "SameSite=Lax") {
		t.Errorf("sign-in: %d %s %q", r.Status, r.Body, r.Header.Get("Set-Cookie"))
	}
}

// TestDashboardPages checks what the binary serves for the dashboard's
// pages and assets, and that the Errors page follows
// NEXT_PUBLIC_FEATURE_ERROR_TRACKING.
func TestDashboardPages(t *testing.T) {
	html := map[string]string{"Accept": "text/html"}
	t.Run("flag off", func(t *testing.T) {
		t.Setenv("NEXT_PUBLIC_FEATURE_ERROR_TRACKING", "")
		s := startServer(t, t.TempDir())
		r := do(t, "GET", s.URL+"/settings/products/1", nil, nil)
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || r.Header.Get("Content-Security-Policy") == "" {
			t.Fatalf("a page: %d %v", r.Status, r.Header)
		}
		asset := regexp.MustCompile(`/assets/[^"]+\.js`).Find(r.Body)
		if asset == nil {
			t.Fatalf("index.html loads no script: %s", r.Body)
		}
		if a := do(t, "GET", s.URL+string(asset), nil, nil); a.Status != 200 || a.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("asset %s: %d %q", asset, a.Status, a.Header.Get("Cache-Control"))
		}
		if r := do(t, "GET", s.URL+"/errors", nil, html); r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("/errors with the flag off: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		if r := do(t, "GET", s.URL+"/api/v1/dashboard/config", nil, nil); !strings.Contains(string(r.Body), `"errorTracking":false`) {
			t.Errorf("config: %s", r.Body)
		}
		if r := do(t, "GET", s.URL+"/api/v1/config?api_key="+s.BootstrapKey+"&distinct_id=u1", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"errorTracking":false`) {
			t.Errorf("the SDK's config with the switch off: %d %s", r.Status, r.Body)
		}
		if r := do(t, "GET", s.URL+"/api/v1/nothing", nil, html); r.Status != 404 || r.ErrorCode(t) != "not_found" {
			t.Errorf("an unknown /api path: %d %s", r.Status, r.Body)
		}
	})
	t.Run("flag on", func(t *testing.T) {
		t.Setenv("NEXT_PUBLIC_FEATURE_ERROR_TRACKING", "true")
		s := startServer(t, t.TempDir())
		if r := do(t, "GET", s.URL+"/errors", nil, html); r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Errorf("/errors with the flag on: %d %s", r.Status, r.Header.Get("Content-Type"))
		}
		if r := do(t, "GET", s.URL+"/api/v1/dashboard/config", nil, nil); !strings.Contains(string(r.Body), `"errorTracking":true`) {
			t.Errorf("config: %s", r.Body)
		}
		// The SDK's configuration says what the server has on: the same
		// switch, which browser SDKs whose init leaves errorTracking unset
		// follow (docs/errors.md, "Turning it on").
		if r := do(t, "GET", s.URL+"/api/v1/config?api_key="+s.BootstrapKey+"&distinct_id=u1", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"errorTracking":true`) {
			t.Errorf("the SDK's config with the switch on: %d %s", r.Status, r.Body)
		}
	})
}

func jsonNumber(n int64) string { return string(mustJSON(n)) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
