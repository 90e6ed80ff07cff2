package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// asHost sends one request to s as if it were addressed to host: the Host
// header names host, and so does Origin when origin is set, as a page
// loaded from that name sends them after DNS rebinding pointed the name at
// the server.
func asHost(t *testing.T, s *server, host, method, path string, body any, origin bool, header map[string]string) response {
	t.Helper()
	var raw []byte
	if body != nil {
		raw = mustJSON(body)
	}
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if origin {
		req.Header.Set("Origin", "http://"+host)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s for %s: %v", method, path, host, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// setupRequired asks the server whether it still has no owner.
func setupRequired(t *testing.T, s *server) bool {
	t.Helper()
	r := do(t, "GET", s.URL+"/api/v1/dashboard/config", nil, nil)
	if r.Status != 200 {
		t.Fatalf("config: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["setupRequired"] == true
}

// TestSetupToken checks first-run setup against DNS rebinding on the real
// binary: the server logs a one-time setup URL; setup without its token, as
// a rebinding page would try it, or with a wrong or outdated one, is
// refused and creates no owner; the right token works once; a restart
// before setup prints a new token, and one after setup prints none.
func TestSetupToken(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	port := s.URL[strings.LastIndexByte(s.URL, ':')+1:]
	if !regexp.MustCompile(`^[0-9A-Za-z]{32}$`).MatchString(s.SetupToken) || s.SetupURL != s.URL+"/?setup_token="+s.SetupToken {
		t.Fatalf("setup token %q, URL %q; want 32 base62 characters at %s/?setup_token=", s.SetupToken, s.SetupURL, s.URL)
	}
	owner := func(token string) map[string]string {
		return map[string]string{"email": "owner@example.com", "password": "correct horse battery", "setupToken": token}
	}
	rebind := "rebind.attacker.example:" + port

	// What the hardening issue reported: Host and Origin of the attacker's
	// name pass the Origin check, so only the token stops the claim.
	for name, body := range map[string]any{
		"no token":    map[string]string{"email": "attacker@example.com", "password": "attacker's password"},
		"empty token": owner(""),
		"wrong token": owner(strings.Repeat("x", 32)),
	} {
		r := asHost(t, s, rebind, "POST", "/api/v1/dashboard/setup", body, true, nil)
		if r.Status != 403 || r.ErrorCode(t) != "invalid_setup_token" || !strings.Contains(string(r.Body), "log") {
			t.Errorf("rebinding setup with %s: %d %s; want 403 invalid_setup_token", name, r.Status, r.Body)
		}
	}
	b := &browser{s: s}
	if r := b.do(t, "POST", "/api/v1/dashboard/setup", owner(strings.ToLower(s.SetupToken)+"x")); r.Status != 403 || r.ErrorCode(t) != "invalid_setup_token" {
		t.Errorf("setup from the server's own origin with a wrong token: %d %s", r.Status, r.Body)
	}
	if !setupRequired(t, s) {
		t.Fatal("a refused setup created the owner")
	}
	if !strings.Contains(s.Logs(), `"first-run setup refused: missing or wrong setup token"`) || !strings.Contains(s.Logs(), `"host":"`+rebind+`"`) {
		t.Errorf("the refusals are not logged with their Host:\n%s", s.Logs())
	}

	// A restart before setup prints a new token; the old one is void.
	old := s.SetupToken
	s.Stop()
	s = startServer(t, dir)
	b.s = s
	if s.SetupToken == "" || s.SetupToken == old {
		t.Fatalf("the token after a restart is %q (was %q); want a new one", s.SetupToken, old)
	}
	if r := b.do(t, "POST", "/api/v1/dashboard/setup", owner(old)); r.Status != 403 || r.ErrorCode(t) != "invalid_setup_token" {
		t.Errorf("setup with the token of the previous start: %d %s", r.Status, r.Body)
	}

	// The token from the log works, once.
	if r := b.do(t, "POST", "/api/v1/dashboard/setup", owner(s.SetupToken)); r.Status != 201 {
		t.Fatalf("setup with the logged token: %d %s", r.Status, r.Body)
	}
	if setupRequired(t, s) {
		t.Error("config still says setupRequired after setup")
	}
	for _, tok := range []string{s.SetupToken, ""} {
		body := map[string]string{"email": "second@example.com", "password": "another long password", "setupToken": tok}
		if r := b.do(t, "POST", "/api/v1/dashboard/setup", body); r.Status != 409 || r.ErrorCode(t) != "setup_complete" {
			t.Errorf("setup again with token %q: %d %s; want 409 setup_complete", tok, r.Status, r.Body)
		}
	}
	if r := b.do(t, "POST", "/api/v1/session", map[string]string{"email": "owner@example.com", "password": "correct horse battery"}); r.Status != 200 {
		t.Errorf("the owner cannot sign in: %d %s", r.Status, r.Body)
	}

	// Once there is an owner, a start prints no setup token.
	s.Stop()
	s = startServer(t, dir)
	if s.SetupToken != "" || strings.Contains(s.Logs(), "first-run setup") {
		t.Errorf("a start after setup logged a setup token:\n%s", s.Logs())
	}
}

// TestAllowedHosts checks --allowed-hosts on the real binary: a Host not
// listed is refused with 421 unknown_host on /e (served on fasthttp
// directly), on the API and on the dashboard's pages (behind net/http),
// whatever its port; listed names are served on any port, including the
// loopback address the test reaches the server at.
func TestAllowedHosts(t *testing.T) {
	s := startServer(t, t.TempDir(), "--allowed-hosts", "Analytics.Example.com, 127.0.0.1")
	port := s.URL[strings.LastIndexByte(s.URL, ':')+1:]
	event := map[string]any{"batch": []map[string]any{{"event_name": "host_check", "distinct_id": "u1"}}}
	key := map[string]string{"X-API-Key": s.BootstrapKey}
	html := map[string]string{"Accept": "text/html"}
	type req struct {
		method, path string
		body         any
		header       map[string]string
	}
	reqs := []req{
		{"POST", "/e", event, key},
		{"OPTIONS", "/e", nil, nil},
		{"GET", "/api/v1/dashboard/config", nil, nil},
		{"GET", "/api/v1/config", nil, key},
		{"GET", "/", nil, html},
		{"GET", "/settings/products", nil, html},
		{"GET", "/sdk/v1/sdk.min.js", nil, nil},
		{"GET", "/healthz", nil, nil},
	}
	for _, host := range []string{"rebind.attacker.example:" + port, "rebind.attacker.example", "localhost:" + port, "analytics.example.com.attacker.example"} {
		for _, q := range reqs {
			r := asHost(t, s, host, q.method, q.path, q.body, false, q.header)
			if r.Status != 421 || r.ErrorCode(t) != "unknown_host" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s %s for %s: %d %s; want 421 unknown_host", q.method, q.path, host, r.Status, r.Body)
			}
		}
	}
	// Even with the right token, a rebinding page cannot set up the owner.
	r := asHost(t, s, "rebind.attacker.example:"+port, "POST", "/api/v1/dashboard/setup",
		map[string]string{"email": "attacker@example.com", "password": "attacker's password", "setupToken": s.SetupToken}, true, nil)
	if r.Status != 421 || !setupRequired(t, s) {
		t.Fatalf("setup for another host: %d %s", r.Status, r.Body)
	}

	for _, host := range []string{"analytics.example.com", "ANALYTICS.example.com:443", "analytics.example.com:" + port, "127.0.0.1:" + port} {
		for _, q := range reqs {
			if r := asHost(t, s, host, q.method, q.path, q.body, false, q.header); r.Status >= 300 {
				t.Errorf("%s %s for %s: %d %s", q.method, q.path, host, r.Status, r.Body)
			}
		}
	}
	u, _ := url.Parse(s.SetupURL)
	if u.Hostname() != "127.0.0.1" {
		t.Errorf("setup URL %s", s.SetupURL)
	}
	r = asHost(t, s, "analytics.example.com", "POST", "/api/v1/dashboard/setup",
		map[string]string{"email": "owner@example.com", "password": "correct horse battery", "setupToken": s.SetupToken}, true, nil)
	if r.Status != 201 {
		t.Errorf("setup at a listed host: %d %s", r.Status, r.Body)
	}
	var body struct {
		User struct{ Email string }
	}
	if json.Unmarshal(r.Body, &body); body.User.Email != "owner@example.com" {
		t.Errorf("setup answered %s", r.Body)
	}
}
