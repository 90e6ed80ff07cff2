package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"strata/internal/admin"
	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/query"
	"strata/internal/store/duckdb"
	"strata/internal/store/duckdb/duckdbtest"
)

// dash is a test server with the dashboard's API on a real DuckDB store,
// and a browser-like client: a cookie jar, and the dashboard's Origin on
// every request unless a test says otherwise.
type dash struct {
	t      *testing.T
	srv    *httptest.Server
	store  *duckdb.Store
	api    *Server
	client *http.Client
	// key is the live key of the bootstrapped product 1.
	key string
	// setupToken is the first-run setup token, issued as the server does
	// at start.
	setupToken string
}

func newDash(t *testing.T) *dash {
	t.Helper()
	ctx := context.Background()
	st := duckdbtest.Open(t)
	keys := auth.NewKeyring(st, time.Minute, time.Now)
	svc := &admin.Service{Meta: st, OnChange: keys.Invalidate}
	key, _, err := svc.Bootstrap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	accounts := auth.NewAccounts(st, 0, time.Now)
	s := &Server{
		Keys:     keys,
		Queries:  &query.Engine{Store: st, Now: time.Now},
		Saved:    st,
		Accounts: accounts,
		Admin:    svc,
		Pages:    fakePages{},
		Now:      time.Now,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	return &dash{t: t, srv: srv, store: st, api: s, client: &http.Client{Jar: jar}, key: key, setupToken: accounts.IssueSetupToken()}
}

// fakePages serves /trends as the dashboard would, and nothing else.
type fakePages struct{}

func (fakePages) ServePage(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Path != "/trends" && !strings.Contains(r.Header.Get("Accept"), "text/html") {
		return false
	}
	w.Write([]byte("<!doctype html>"))
	return true
}

// reply is a decoded answer.
type reply struct {
	status int
	header http.Header
	body   map[string]any
}

func (r reply) code() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// do sends a request with the dashboard's Origin; header entries override
// it ("" removes one).
func (d *dash) do(method, path string, body any, header map[string]string) reply {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.srv.URL+path, rd)
	req.Header.Set("Origin", d.srv.URL)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := d.client.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, header: res.Header}
	json.Unmarshal(raw, &r.body)
	return r
}

// setup creates the owner and keeps the session cookie.
func (d *dash) setup() {
	d.t.Helper()
	if r := d.do("POST", "/api/v1/dashboard/setup", d.owner("owner@example.com", "correct horse"), nil); r.status != 201 {
		d.t.Fatalf("setup: %d %v", r.status, r.body)
	}
}

// owner is a setup body with the right setup token.
func (d *dash) owner(email, password string) map[string]string {
	return map[string]string{"email": email, "password": password, "setupToken": d.setupToken}
}

func TestSetupLoginLogout(t *testing.T) {
	d := newDash(t)
	if r := d.do("GET", "/api/v1/dashboard/config", nil, nil); r.status != 200 || r.body["setupRequired"] != true {
		t.Fatalf("config on a fresh store: %d %v", r.status, r.body)
	}
	if r := d.do("GET", "/api/v1/session", nil, nil); r.status != 401 || r.code() != "not_signed_in" {
		t.Errorf("session before setup: %d %v", r.status, r.body)
	}
	owner := d.owner("Owner@Example.com", "correct horse")
	for name, origin := range map[string]string{"no Origin": "", "another site": "https://evil.example", "another port": "http://127.0.0.1:1", "null": "null"} {
		if r := d.do("POST", "/api/v1/dashboard/setup", owner, map[string]string{"Origin": origin}); r.status != 403 || r.code() != "bad_origin" {
			t.Errorf("setup from %s: %d %v; want 403 bad_origin", name, r.status, r.body)
		}
	}
	// Without the right token setup is refused, before the body's other
	// fields are looked at (a bad email would otherwise be a 400).
	for name, body := range map[string]map[string]string{
		"no token":    {"email": "owner@example.com", "password": "correct horse"},
		"empty token": {"email": "owner@example.com", "password": "correct horse", "setupToken": ""},
		"wrong token": {"email": "owner@example.com", "password": "correct horse", "setupToken": strings.Repeat("A", 32)},
		"bad email":   {"email": "not an email", "password": "short", "setupToken": "x"},
	} {
		r := d.do("POST", "/api/v1/dashboard/setup", body, nil)
		if e, _ := r.body["error"].(map[string]any); r.status != 403 || r.code() != "invalid_setup_token" || !strings.Contains(e["message"].(string), "log") {
			t.Errorf("setup with %s: %d %v; want 403 invalid_setup_token pointing at the log", name, r.status, r.body)
		}
	}
	if r := d.do("POST", "/api/v1/dashboard/setup", d.owner("owner@example.com", "123456789"), nil); r.status != 400 || r.code() != "invalid_request" {
		t.Errorf("setup with a 9-character password: %d %v", r.status, r.body)
	}
	if r := d.do("POST", "/api/v1/dashboard/setup", map[string]any{"email": "owner@example.com", "password": "correct horse", "setupToken": d.setupToken, "role": "admin"}, nil); r.status != 400 {
		t.Errorf("setup with an unknown field: %d %v", r.status, r.body)
	}

	r := d.do("POST", "/api/v1/dashboard/setup", owner, nil)
	if r.status != 201 || r.body["user"].(map[string]any)["email"] != "owner@example.com" {
		t.Fatalf("setup: %d %v", r.status, r.body)
	}
	cookie := r.header.Get("Set-Cookie")
	for _, want := range []string{"strata_session=", "Path=/", "HttpOnly", "SameSite=Lax", "Max-Age="} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Errorf("Set-Cookie %q is Secure over plain http", cookie)
	}
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("the dashboard API sent CORS headers")
	}
	// After setup every attempt is 409, with the spent token or none:
	// that tells no more than the config's setupRequired.
	for _, tok := range []string{d.setupToken, ""} {
		if r := d.do("POST", "/api/v1/dashboard/setup", map[string]string{"email": "two@example.com", "password": "another password", "setupToken": tok}, nil); r.status != 409 || r.code() != "setup_complete" {
			t.Errorf("second setup with token %q: %d %v", tok, r.status, r.body)
		}
	}
	if r := d.do("GET", "/api/v1/dashboard/config", nil, nil); r.body["setupRequired"] != false {
		t.Errorf("config after setup: %v", r.body)
	}
	if r := d.do("GET", "/api/v1/session", nil, map[string]string{"Origin": ""}); r.status != 200 || r.body["user"].(map[string]any)["email"] != "owner@example.com" {
		t.Errorf("session (a GET needs no Origin): %d %v", r.status, r.body)
	}

	if r := d.do("DELETE", "/api/v1/session", nil, map[string]string{"Origin": "https://evil.example"}); r.status != 403 {
		t.Errorf("sign-out from another site: %d", r.status)
	}
	r = d.do("DELETE", "/api/v1/session", nil, nil)
	if r.status != 204 || !strings.Contains(r.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("sign-out: %d, Set-Cookie %q", r.status, r.header.Get("Set-Cookie"))
	}
	if r := d.do("GET", "/api/v1/session", nil, nil); r.status != 401 {
		t.Errorf("session after sign-out: %d", r.status)
	}
	if r := d.do("DELETE", "/api/v1/session", nil, nil); r.status != 204 {
		t.Errorf("a second sign-out: %d", r.status)
	}

	if r := d.do("POST", "/api/v1/session", map[string]string{"email": "owner@example.com", "password": "wrong password"}, nil); r.status != 401 || r.code() != "invalid_login" {
		t.Errorf("wrong password: %d %v", r.status, r.body)
	}
	login := map[string]string{"email": "Owner@Example.com", "password": "correct horse"}
	if r := d.do("POST", "/api/v1/session", login, map[string]string{"Origin": ""}); r.status != 403 {
		t.Errorf("sign-in without Origin: %d", r.status)
	}
	if r := d.do("POST", "/api/v1/session", login, nil); r.status != 200 {
		t.Fatalf("sign-in: %d %v", r.status, r.body)
	}
	if r := d.do("GET", "/api/v1/products", nil, nil); r.status != 200 {
		t.Errorf("products after sign-in: %d", r.status)
	}
}

func TestSecureCookieBehindTLS(t *testing.T) {
	d := newDash(t)
	r := d.do("POST", "/api/v1/dashboard/setup", d.owner("owner@example.com", "correct horse"),
		map[string]string{"X-Forwarded-Proto": "https"})
	if r.status != 201 || !strings.Contains(r.header.Get("Set-Cookie"), "Secure") {
		t.Errorf("setup over HTTPS: %d, Set-Cookie %q; want Secure", r.status, r.header.Get("Set-Cookie"))
	}
}

func TestLoginThrottled(t *testing.T) {
	d := newDash(t)
	d.setup()
	var last reply
	for range 6 {
		last = d.do("POST", "/api/v1/session", map[string]string{"email": "owner@example.com", "password": "a guess"}, nil)
	}
	if last.status != 429 || last.code() != "too_many_attempts" || last.header.Get("Retry-After") == "" {
		t.Errorf("sixth guess: %d %v, Retry-After %q", last.status, last.body, last.header.Get("Retry-After"))
	}
}

func TestSettingsAPI(t *testing.T) {
	d := newDash(t)
	ctx := context.Background()
	if r := d.do("GET", "/api/v1/products", nil, map[string]string{"Authorization": "Bearer " + d.key}); r.status != 401 || r.code() != "not_signed_in" {
		t.Errorf("products with a bearer key: %d %v; settings need a session", r.status, r.body)
	}
	d.setup()
	// A workspace made after setup is not the owner's.
	other, _ := d.store.CreateWorkspace(ctx, "Other")
	foreign, _ := d.store.CreateProduct(ctx, other.ID, "Foreign")

	if r := d.do("GET", "/api/v1/products", nil, nil); r.status != 200 || len(r.body["items"].([]any)) != 1 {
		t.Errorf("products: %d %v; want only the owner's", r.status, r.body)
	}
	if r := d.do("POST", "/api/v1/products", map[string]string{"name": "Shop"}, map[string]string{"Origin": ""}); r.status != 403 || r.code() != "bad_origin" {
		t.Errorf("create without Origin: %d %v", r.status, r.body)
	}
	r := d.do("POST", "/api/v1/products", map[string]string{"name": "  Shop  "}, nil)
	if r.status != 201 || r.body["name"] != "Shop" {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	id := int64(r.body["id"].(float64))
	path := "/api/v1/products/" + itoa(id)
	if r := d.do("POST", "/api/v1/products", map[string]string{"name": ""}, nil); r.status != 400 {
		t.Errorf("empty name: %d", r.status)
	}
	if r := d.do("PATCH", path, map[string]string{"name": "Web shop"}, nil); r.status != 200 || r.body["name"] != "Web shop" {
		t.Errorf("rename: %d %v", r.status, r.body)
	}
	for _, p := range []string{"/api/v1/products/" + itoa(foreign.ID), "/api/v1/products/999", "/api/v1/products/x"} {
		if r := d.do("GET", p, nil, nil); r.status != 404 || r.code() != "product_not_found" {
			t.Errorf("GET %s: %d %v; want 404 product_not_found", p, r.status, r.body)
		}
		if r := d.do("POST", p+"/keys", map[string]string{"env": "live"}, nil); r.status != 404 {
			t.Errorf("POST %s/keys: %d", p, r.status)
		}
	}

	r = d.do("POST", path+"/keys", map[string]string{"env": "live"}, nil)
	secret, _ := r.body["secret"].(string)
	if r.status != 201 || !strings.HasPrefix(secret, "st_live_") || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create key: %d %v", r.status, r.body)
	}
	keyID := int64(r.body["key"].(map[string]any)["id"].(float64))
	if r := d.do("POST", path+"/keys", map[string]string{"env": "prod"}, nil); r.status != 400 {
		t.Errorf("env prod: %d", r.status)
	}
	r = d.do("GET", path+"/keys", nil, nil)
	items := r.body["items"].([]any)
	if r.status != 200 || len(items) != 1 || items[0].(map[string]any)["prefix"] != secret[:12] || strings.Contains(toJSON(r.body), secret) {
		t.Errorf("list keys: %d %v", r.status, r.body)
	}
	// The key of product 1 cannot be changed through this product.
	k1, _ := d.store.APIKeyByHash(ctx, auth.Hash(d.key))
	if r := d.do("PATCH", path+"/keys/"+itoa(k1.ID), map[string]string{"status": "revoked"}, nil); r.status != 404 || r.code() != "key_not_found" {
		t.Errorf("another product's key: %d %v", r.status, r.body)
	}
	for _, step := range []struct {
		status string
		want   int
		code   string
	}{{"disabled", 200, ""}, {"active", 200, ""}, {"paused", 400, "invalid_request"}, {"revoked", 200, ""}, {"active", 409, "key_revoked"}} {
		r := d.do("PATCH", path+"/keys/"+itoa(keyID), map[string]string{"status": step.status}, nil)
		if r.status != step.want || step.code != "" && r.code() != step.code {
			t.Errorf("key → %s: %d %v; want %d %s", step.status, r.status, r.body, step.want, step.code)
		}
	}
	if k, _ := d.store.APIKey(ctx, keyID); k.Status != analytics.KeyRevoked {
		t.Errorf("stored key status %s", k.Status)
	}

	r = d.do("POST", path+"/tokens", nil, nil)
	tok, _ := r.body["secret"].(string)
	if r.status != 201 || !auth.ValidTokenShape(tok) {
		t.Fatalf("create token: %d %v", r.status, r.body)
	}
	tokID := int64(r.body["token"].(map[string]any)["id"].(float64))
	if r := d.do("GET", path+"/tokens", nil, nil); r.status != 200 || len(r.body["items"].([]any)) != 1 {
		t.Errorf("list tokens: %d %v", r.status, r.body)
	}
	if r := d.do("PATCH", path+"/tokens/"+itoa(tokID), map[string]string{"status": "revoked"}, nil); r.status != 200 || r.body["status"] != "revoked" {
		t.Errorf("revoke token: %d %v", r.status, r.body)
	}
	if r := d.do("PATCH", path+"/tokens/"+itoa(tokID), map[string]string{"status": "active"}, nil); r.status != 409 || r.code() != "token_revoked" {
		t.Errorf("re-enable a revoked token: %d %v", r.status, r.body)
	}
	if r := d.do("PATCH", path+"/tokens/999", map[string]string{"status": "disabled"}, nil); r.status != 404 || r.code() != "token_not_found" {
		t.Errorf("unknown token: %d %v", r.status, r.body)
	}
}

func TestSessionReadsProducts(t *testing.T) {
	d := newDash(t)
	trend := map[string]any{"series": []map[string]string{{"event": "x", "math": "total"}}, "interval": "day"}
	if r := d.do("POST", "/api/v1/query/trend?product=1", trend, nil); r.status != 401 || r.code() != "missing_credentials" {
		t.Errorf("no cookie, no bearer: %d %v", r.status, r.body)
	}
	d.setup()
	ctx := context.Background()
	other, _ := d.store.CreateWorkspace(ctx, "Other")
	foreign, _ := d.store.CreateProduct(ctx, other.ID, "Foreign")
	cases := []struct {
		name   string
		path   string
		header map[string]string
		status int
		code   string
	}{
		{"the owner's product", "/api/v1/query/trend?product=1", nil, 200, ""},
		{"test data", "/api/v1/query/trend?product=1&env=test", nil, 200, ""},
		{"no product", "/api/v1/query/trend", nil, 400, "invalid_request"},
		{"a product id that is not a number", "/api/v1/query/trend?product=one", nil, 400, "invalid_request"},
		{"another workspace's product", "/api/v1/query/trend?product=" + itoa(foreign.ID), nil, 404, "product_not_found"},
		{"a missing product", "/api/v1/query/trend?product=999", nil, 404, "product_not_found"},
		{"without Origin", "/api/v1/query/trend?product=1", map[string]string{"Origin": ""}, 403, "bad_origin"},
		// The bearer key is judged, not the cookie (which would make this
		// 404), and an API key may not read.
		{"a bearer key wins over the cookie", "/api/v1/query/trend?product=" + itoa(foreign.ID), map[string]string{"Authorization": "Bearer " + d.key}, 403, "key_not_allowed"},
	}
	for _, c := range cases {
		if r := d.do("POST", c.path, trend, c.header); r.status != c.status || c.code != "" && r.code() != c.code {
			t.Errorf("%s: %d %v; want %d %s", c.name, r.status, r.body, c.status, c.code)
		}
	}
	if r := d.do("GET", "/api/v1/queries?product=1", nil, map[string]string{"Origin": ""}); r.status != 200 {
		t.Errorf("a GET with the cookie needs no Origin: %d %v", r.status, r.body)
	}
}

func TestFallback(t *testing.T) {
	d := newDash(t)
	html := map[string]string{"Accept": "text/html"}
	for _, c := range []struct {
		method, path string
		header       map[string]string
		status       int
		json         bool
	}{
		{"GET", "/trends", nil, 200, false},
		{"GET", "/nowhere", html, 200, false},
		{"GET", "/nowhere", nil, 404, true},
		{"POST", "/trends", nil, 404, true},
		{"GET", "/api/v1/nowhere", html, 404, true},
		{"GET", "/api", html, 404, true},
	} {
		r := d.do(c.method, c.path, nil, c.header)
		isJSON := strings.HasPrefix(r.header.Get("Content-Type"), "application/json")
		if r.status != c.status || isJSON != c.json || c.json && r.code() != "not_found" {
			t.Errorf("%s %s (%v): %d %s", c.method, c.path, c.header, r.status, r.header.Get("Content-Type"))
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
