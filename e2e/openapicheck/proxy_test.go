package openapicheck

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// violations collects what a proxy reports.
type violations struct {
	mu   sync.Mutex
	list []Violation
}

func (v *violations) add(x Violation) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.list = append(v.list, x)
}

func (v *violations) get() []Violation {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Violation(nil), v.list...)
}

// startProxy starts a proxy in front of upstream and returns its address
// and what it reports.
func startProxy(t *testing.T, upstream http.Handler) (*Proxy, string, *violations) {
	t.Helper()
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	target, _ := url.Parse(up.URL)
	got := &violations{}
	p := NewProxy(target, contract(t), got.add)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return p, front.URL, got
}

// get sends a GET through the proxy and reads the whole answer.
func get(t *testing.T, u string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestProxyReportsViolations sends answers through the proxy that break
// api/openapi.yaml (a body missing a required field, plain and gzipped; a
// status the operation does not list) and one that keeps it: each broken
// one is reported with its method, path, status and the schema's complaint,
// the good one is not, and every client still gets the server's answer
// byte for byte.
func TestProxyReportsViolations(t *testing.T) {
	const good = `{"version":"(devel)","commit":"","commitTime":"","modified":false,"go":"go1.26.0"}`
	const bad = `{"version":"v1.0.0"}`
	p, front, got := startProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("answer") {
		case "good":
			io.WriteString(w, good)
		case "bad":
			io.WriteString(w, bad)
		case "gzip":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, bad)
			zw.Close()
		case "teapot":
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, `{}`)
		}
	}))
	for _, answer := range []string{"good", "bad", "gzip", "teapot"} {
		resp, body := get(t, front+"/api/v1/version?answer="+answer, http.Header{"Accept-Encoding": {"gzip"}})
		if answer == "gzip" {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("the gzipped answer reached the client with Content-Encoding %q", resp.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("the gzipped answer: %v", err)
			}
			body, _ = io.ReadAll(zr)
		}
		want := map[string]string{"good": good, "bad": bad, "gzip": bad, "teapot": `{}`}[answer]
		if string(body) != want {
			t.Errorf("answer %s reached the client as %q, want %q", answer, body, want)
		}
	}
	list := got.get()
	if len(list) != 3 {
		t.Fatalf("reported %d violations, want 3 (bad, gzip, teapot): %+v", len(list), list)
	}
	for i, want := range []struct {
		status int
		says   []string
	}{
		{200, []string{"getVersion", "commit"}},
		{200, []string{"getVersion", "commit"}},
		{418, []string{"getVersion", "418", "does not list"}},
	} {
		v := list[i]
		if v.Method != "GET" || v.Path != "/api/v1/version" || v.Status != want.status {
			t.Errorf("violation %d is %+v, want GET /api/v1/version %d", i, v, want.status)
		}
		for _, s := range want.says {
			if !strings.Contains(v.Error, s) {
				t.Errorf("violation %d does not name %q: %s", i, s, v.Error)
			}
		}
	}
	// Four checked, all from getVersion; the teapot's body has no schema
	// to meet, since its status is not listed.
	if got, want := p.Counts(), (Counts{Checked: 4, Described: 4, Schema: 3}); got != want {
		t.Errorf("counted %+v, want %+v", got, want)
	}
}

// TestProxyIsTransparent checks what the suites behind the proxy rely on:
// the server sees the Host and Origin the client sent, the client gets
// the server's CORS headers untouched, and a streamed export reaches the
// client chunk by chunk while the server is still writing it.
func TestProxyIsTransparent(t *testing.T) {
	release := make(chan struct{})
	_, front, got := startProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/e":
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Content-Encoding, X-API-Key")
			w.Header().Set("X-Seen-Host", r.Host)
			w.WriteHeader(http.StatusNoContent)
		case "/api/v1/campaigns/1/survey.csv":
			w.Header().Set("Content-Type", "text/csv")
			io.WriteString(w, "response_id,answered_at\n")
			w.(http.Flusher).Flush()
			<-release
			io.WriteString(w, "1,2026-11-27T10:00:00Z\n")
		}
	}))
	req, _ := http.NewRequest("OPTIONS", front+"/e", nil)
	req.Header.Set("Origin", "http://site.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header.Get("Access-Control-Allow-Origin"); h != "*" {
		t.Errorf("Access-Control-Allow-Origin %q, want *", h)
	}
	if h := resp.Header.Get("Access-Control-Allow-Headers"); h != "Content-Type, Content-Encoding, X-API-Key" {
		t.Errorf("Access-Control-Allow-Headers %q", h)
	}
	if h, want := resp.Header.Get("X-Seen-Host"), strings.TrimPrefix(front, "http://"); h != want {
		t.Errorf("the server saw Host %q, want the proxy's %q", h, want)
	}

	resp, err = http.Get(front + "/api/v1/campaigns/1/survey.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		if line != "response_id,answered_at\n" {
			t.Errorf("the first chunk is %q", line)
		}
	case <-time.After(5 * time.Second):
		t.Error("the first chunk of the export did not reach the client while the server held the rest")
	}
	close(release)
	if list := got.get(); len(list) != 0 {
		t.Errorf("reported answers the document allows: %+v", list)
	}
}
