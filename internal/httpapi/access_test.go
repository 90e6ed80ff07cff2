package httpapi

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"strata/internal/metrics"
)

// TestQueryRoutesAreRoutes: every route the metrics time as a query is a
// pattern of the route table, so that renaming a route does not silently
// stop its latency being measured.
func TestQueryRoutesAreRoutes(t *testing.T) {
	mux := (&Server{}).routes()
	wildcard := regexp.MustCompile(`\{[^}]+\}`)
	for _, route := range metrics.QueryRoutes() {
		method, path, ok := strings.Cut(route, " ")
		if !ok {
			method, path = "GET", route
		}
		path = wildcard.ReplaceAllString(path, "1")
		if _, got := mux.Handler(httptest.NewRequest(method, path, nil)); got != route {
			t.Errorf("%s %s routes to %q, not to the metrics' %q", method, path, got, route)
		}
	}
}

// TestValidRequestID: what an X-Request-Id may be to be used as is.
func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"4bf92f3577b34da6a3ce929d0e0e4736":         true,
		"Root=1-67891233-abcdef012345678912345678": true,
		"a":                                    true,
		strings.Repeat("a", maxRequestIDLen):   true,
		"":                                     false,
		strings.Repeat("a", maxRequestIDLen+1): false,
		"has space":                            false,
		"line\nbreak":                          false,
		`quote"`:                               false,
		"caf\xc3\xa9":                          false,
	} {
		if got := validRequestID([]byte(id)); got != want {
			t.Errorf("validRequestID(%q) = %v; want %v", id, got, want)
		}
	}
	if a, b := string(newRequestID(make([]byte, 32))), string(newRequestID(make([]byte, 32))); a == b || !validRequestID([]byte(a)) {
		t.Errorf("two fresh ids %q and %q", a, b)
	}
}
