package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that keeps what the check reports.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestContractTransportReports sends through httpClient to a loopback
// server registered as a strata server that answers /api/v1/version with a
// body the document rejects: the test that sent the request is told, and
// the caller still reads the body unchanged.
func TestContractTransportReports(t *testing.T) {
	const body = `{"version":"v1.0.0"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	owner, sender := &recorder{TB: t}, &recorder{TB: t}
	strataServers.Store(host, owner)
	defer strataServers.Delete(host)

	r := do(sender, "GET", srv.URL+"/api/v1/version", nil, nil)
	if string(r.Body) != body {
		t.Errorf("the caller read %q, want %q", r.Body, body)
	}
	if len(sender.errors) != 1 || !strings.Contains(sender.errors[0], "getVersion") {
		t.Errorf("the sending test was told %q, want one failure naming getVersion", sender.errors)
	}
	// A request sent without a test is reported to the server's owner.
	resp, err := httpClient.Get(srv.URL + "/api/v1/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(owner.errors) != 1 {
		t.Errorf("the server's owner was told %q, want one failure", owner.errors)
	}
}
