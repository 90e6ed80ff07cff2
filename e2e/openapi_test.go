package e2e

// Every answer the suite gets from a strata server is checked against
// api/openapi.yaml, so that the server, the document's examples and the
// clients generated from the document cannot drift apart: a test that
// receives a body its operation's schema rejects, a status the operation
// does not list, or a JSON answer from a path the document does not describe
// fails, naming the operation, the status and the schema's complaint.
//
// The check sits in the transport of httpClient (and of the other clients
// the suite sends with), so every helper that sends through them is checked
// without calling anything. A request made with do() carries its test, which
// the failure is reported to; one made by other code is reported to the test
// that started the server it was sent to (see strataServers). The checker
// itself is e2e/openapicheck, which the Node suites use through
// e2e/cmd/openapi-proxy.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"strata/e2e/openapicheck"
)

// contract is api/openapi.yaml, loaded and routed once per test binary.
var contract = sync.OnceValues(func() (*openapicheck.Checker, error) {
	return openapicheck.Load(filepath.Join("..", "api", "openapi.yaml"))
})

// strataServers maps the host:port of each server the suite started to
// the test that started it, so that a response whose request carries no
// test is still reported to one.
var strataServers sync.Map // host → testing.TB

// testKey is the context key under which do() puts the test a request
// belongs to.
type testKey struct{}

// withTest returns req carrying t, to which a contract failure is reported.
func withTest(req *http.Request, t testing.TB) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), testKey{}, t))
}

// contractTransport checks every response from a server of the suite
// against the document and reports a mismatch to the test that sent the
// request (or started the server). The body is read whole and handed on
// unchanged.
type contractTransport struct{ base http.RoundTripper }

func (ct contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := ct.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	owner, ok := strataServers.Load(req.URL.Host)
	if !ok {
		return resp, nil
	}
	t, _ := req.Context().Value(testKey{}).(testing.TB)
	if t == nil {
		t = owner.(testing.TB)
	}
	body, readErr := io.ReadAll(resp.Body)
	resp.Body.Close()
	var rest io.Reader = bytes.NewReader(body)
	if readErr != nil {
		// A body cut short is the test's business: hand on what arrived,
		// then the same error.
		rest = io.MultiReader(rest, errReader{readErr})
		resp.Body = io.NopCloser(rest)
		return resp, nil
	}
	resp.Body = io.NopCloser(rest)
	c, err := contract()
	if err != nil {
		t.Errorf("the API contract: %v", err)
		return resp, nil
	}
	start := time.Now()
	err = c.Check(openapicheck.Request(req), resp.StatusCode, resp.Header, body)
	contractStats.add(time.Since(start))
	if err != nil {
		t.Errorf("the response does not match api/openapi.yaml: %v", err)
	}
	return resp, nil
}

// contractStats counts the responses checked and the time the checks took,
// which TestMain prints: the cost the check adds to the suite.
var contractStats checkStats

// checkStats is a count and a total duration, safe for concurrent use.
type checkStats struct {
	mu    sync.Mutex
	n     int
	spent time.Duration
}

func (s *checkStats) add(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.spent += d
}

// String says how many responses were checked and how long that took.
func (s *checkStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("api/openapi.yaml: %d responses checked in %v", s.n, s.spent.Round(time.Millisecond))
}

// errReader returns its error on every read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
