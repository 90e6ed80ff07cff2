package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCredentialPermissions calls every query and annotation route with
// each kind of credential. API keys are public (every visitor's browser
// has the page's key), so a key may only create annotations, as a deploy
// script does; reading data or deleting it takes a query token or a
// dashboard session, and a key there gets 403 key_not_allowed. A test key
// is accepted, where keys are, only from a local Origin.
func TestCredentialPermissions(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--annotation-rate-limit", "100000")
	pid := strconv.FormatInt(s.ProductID, 10)
	live := s.BootstrapKey
	test := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", pid, "--test"))
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", pid))
	owner := setupOwner(t, s)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

	type credential struct {
		name   string
		header map[string]string
		query  string // appended to the path
	}
	bearer := func(name, secret string) credential {
		return credential{name, map[string]string{"Authorization": "Bearer " + secret}, ""}
	}
	session := credential{"session", map[string]string{"Cookie": owner.cookie, "Origin": s.URL}, "product=" + pid}
	creds := []credential{bearer("token", token), session, bearer("live key", live), bearer("test key", test)}
	call := func(c credential, method, path string, body any, extra ...string) response {
		t.Helper()
		h := map[string]string{"Content-Type": "application/json"}
		for k, v := range c.header {
			h[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		if c.query != "" {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			path += sep + c.query
		}
		var raw []byte
		if body != nil {
			raw = mustJSON(body)
		}
		return do(t, method, s.URL+path, raw, h)
	}
	// Fresh things to read or delete, made with the token.
	saved := func() string { return strconv.FormatInt(saveQuery(t, s, token, "saved"), 10) }
	annotationID := func() int64 { return createAnnotation(t, s, token, newAnnotation("to delete", at)).ID }
	trend := map[string]any{"series": []map[string]any{{"event": "$pageview"}}}

	routes := []struct {
		method, path string
		body         any
		ok           int
		keys         bool // whether API keys may call it
	}{
		{"POST", "/api/v1/query/funnel", map[string]any{"steps": []string{"a", "b"}}, 200, false},
		{"POST", "/api/v1/query/trend", trend, 200, false},
		{"POST", "/api/v1/query/retention", map[string]any{"startEvent": "a"}, 200, false},
		{"GET", "/api/v1/query/bots", nil, 200, false},
		{"GET", "/api/v1/query/events", nil, 200, false},
		{"GET", "/api/v1/query/live", nil, 200, false},
		{"GET", "/api/v1/queries", nil, 200, false},
		{"POST", "/api/v1/queries", map[string]any{"kind": "trend", "name": "t", "definition": trend}, 201, false},
		{"GET", "/api/v1/queries/{saved}", nil, 200, false},
		{"PUT", "/api/v1/queries/{saved}", map[string]any{"name": "renamed", "definition": trend}, 200, false},
		{"DELETE", "/api/v1/queries/{saved}", nil, 204, false},
		{"POST", "/api/v1/queries/{saved}/run", nil, 200, false},
		{"GET", "/api/v1/annotations", nil, 200, false},
		{"POST", "/api/v1/annotations", newAnnotation("marker", at), 201, true},
		{"GET", "/api/v1/annotations/export.csv", nil, 200, false},
		{"POST", "/api/v1/annotations/bulk-delete", "{annotations}", 200, false},
		{"DELETE", "/api/v1/annotations/{annotation}", nil, 204, false},
	}
	for _, r := range routes {
		for _, c := range creds {
			t.Run(r.method+" "+r.path+" with "+c.name, func(t *testing.T) {
				path, body := r.path, r.body
				if strings.Contains(path, "{saved}") {
					path = strings.ReplaceAll(path, "{saved}", saved())
				}
				if strings.Contains(path, "{annotation}") {
					path = strings.ReplaceAll(path, "{annotation}", strconv.FormatInt(annotationID(), 10))
				}
				if body == "{annotations}" {
					body = map[string]any{"ids": []int64{annotationID()}}
				}
				res := call(c, r.method, path, body)
				isKey := strings.HasSuffix(c.name, "key")
				switch {
				case isKey && !r.keys:
					wantError(t, res, 403, "key_not_allowed", "")
					if res.Status == 403 && !strings.Contains(string(res.Body), "query token") {
						t.Errorf("the message %s does not say to use a query token", res.Body)
					}
				case res.Status != r.ok:
					t.Errorf("%d %s; want %d", res.Status, res.Body, r.ok)
				}
			})
		}
	}

	// A test key is accepted only from a local page, wherever keys are.
	create := newAnnotation("from a page", at)
	for _, c := range []struct {
		cred, origin string
		status       int
		code         string
	}{
		{test, "https://shop.example.com", 401, "test_key_not_allowed"},
		{test, "null", 401, "test_key_not_allowed"},
		{test, "http://localhost:5173", 201, ""},
		{live, "https://shop.example.com", 201, ""},
	} {
		res := call(bearer("key", c.cred), "POST", "/api/v1/annotations", create, "Origin", c.origin)
		if res.Status != c.status || (c.code != "" && res.ErrorCode(t) != c.code) {
			t.Errorf("creating with %.8s… from %s: %d %s; want %d %s", c.cred, c.origin, res.Status, res.Body, c.status, c.code)
		}
	}
	for _, c := range []struct {
		key, origin string
		status      int
	}{
		{test, "https://shop.example.com", 401},
		{test, "http://127.0.0.1:3000", 200},
		{test, "", 200},
		{live, "https://shop.example.com", 200},
	} {
		h := map[string]string{}
		if c.origin != "" {
			h["Origin"] = c.origin
		}
		res := do(t, "GET", s.URL+"/api/v1/config?api_key="+c.key, nil, h)
		if res.Status != c.status || (c.status == 401 && res.ErrorCode(t) != "test_key_not_allowed") {
			t.Errorf("GET /api/v1/config with %.8s… from %q: %d %s; want %d", c.key, c.origin, res.Status, res.Body, c.status)
		}
	}
	// A refused key changed nothing: the annotations it tried to delete
	// are still there.
	if l := listAnnotations(t, s, token, nil); l.Total < 2 {
		t.Errorf("after the refused deletes the workspace has %d annotations", l.Total)
	}
}
