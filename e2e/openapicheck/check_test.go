package openapicheck

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// loaded is api/openapi.yaml, loaded once for the package's tests.
var loaded = sync.OnceValues(func() (*Checker, error) {
	return Load(filepath.Join("..", "..", "api", "openapi.yaml"))
})

// contract returns the loaded document or fails t.
func contract(t *testing.T) *Checker {
	t.Helper()
	c, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestContractCheckBites feeds the response check answers that break
// api/openapi.yaml, and answers that keep it, and expects it to reject
// exactly the first, naming the operation, the status and the reason.
func TestContractCheckBites(t *testing.T) {
	c := contract(t)
	const version = `{"version":"(devel)","commit":"","commitTime":"","modified":false,"go":"go1.26.0"}`
	json := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		want         []string // substrings of the error; nil when the response matches
	}{
		{"a valid answer", "GET", "/api/v1/version", 200, json, version, nil},
		{"a required field missing", "GET", "/api/v1/version", 200, json, `{"version":"v1.0.0"}`,
			[]string{"getVersion", "200", "commit"}},
		{"a field of the wrong type", "GET", "/api/v1/version", 200, json,
			strings.Replace(version, `"modified":false`, `"modified":"no"`, 1), []string{"getVersion", "modified"}},
		{"a field the schema forbids", "GET", "/api/v1/version", 200, json,
			strings.Replace(version, `{`, `{"extra":1,`, 1), []string{"getVersion", "extra"}},
		{"a status the operation does not list", "GET", "/api/v1/version", 418, json, `{}`,
			[]string{"getVersion", "418", "does not list"}},
		{"an error code outside the operation's enum", "POST", "/e", 400, json,
			`{"error":{"code":"no_such_code","message":"x"}}`, []string{"ingestEvents", "400", "/error/code", "must be one of"}},
		{"a JSON answer from an undocumented path", "GET", "/api/v1/no-such-thing", 200, json, `{}`,
			[]string{"/api/v1/no-such-thing", "describes no such operation"}},
		{"404 not_found from an undocumented path", "GET", "/api/v1/no-such-thing", 404, json,
			`{"error":{"code":"not_found","message":"There is nothing at this path."}}`, nil},
		{"404 with another code", "GET", "/api/v1/no-such-thing", 404, json,
			`{"error":{"code":"gone","message":"x"}}`, []string{"404", "not_found"}},
		{"431 headers_too_large on a described path", "POST", "/e", 431, json,
			`{"error":{"code":"headers_too_large","message":"The request line and headers are over 16 KB."}}`, nil},
		{"431 with another code", "POST", "/e", 431, json,
			`{"error":{"code":"too_big","message":"x"}}`, []string{"431", "headers_too_large"}},
		{"null where the schema allows it", "GET", "/api/v1/flags/7/changes", 200, json,
			`{"items":[{"id":1,"flagId":7,"flagKey":"k","action":"created","actor":"a@example.com","at":"2026-11-27T10:00:00Z",` +
				`"changes":[{"field":"enabled","from":null,"to":true}]}]}`, nil},
		{"a date-time that is not one", "GET", "/api/v1/flags/7/changes", 200, json,
			`{"items":[{"id":1,"flagId":7,"flagKey":"k","action":"created","actor":"a@example.com","at":"yesterday",` +
				`"changes":[{"field":"enabled","from":null,"to":true}]}]}`, []string{"listFlagChanges", "/items/0/at", "date-time"}},
		{"the dashboard's HTML", "GET", "/some/dashboard/page", 200, http.Header{"Content-Type": {"text/html"}}, "<html>", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1:1"+tc.path, nil)
			err := c.Check(Request(req), tc.status, tc.header, []byte(tc.body))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("rejected a response that matches: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %d %s", tc.status, tc.body)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not name %q: %v", w, err)
				}
			}
		})
	}
}
