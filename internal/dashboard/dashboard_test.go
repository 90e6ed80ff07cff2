package dashboard

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"
	"testing/fstest"
)

var testFS = fstest.MapFS{
	"dist/index.html":             {Data: []byte(`<!doctype html><title>Strata</title><script type="module" src="/assets/index-abc.js"></script>`)},
	"dist/assets/index-abc.js":    {Data: []byte(strings.Repeat("console.log('dashboard');\n", 100))},
	"dist/assets/index-def.css":   {Data: []byte("body{margin:0}")},
	"dist/favicon.svg":            {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`)},
	"dist/assets/nested/font.bin": {Data: []byte{0, 1, 2}},
	"dist/message-preview.html":   {Data: []byte(`<!doctype html><title>Message preview</title><script src="/message-preview.js"></script>`)},
}

func get(t *testing.T, h *Handler, path string, header map[string]string) (*httptest.ResponseRecorder, bool) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	return w, h.ServePage(w, r)
}

func TestPages(t *testing.T) {
	off, err := newHandler(testFS, "dist", false)
	if err != nil {
		t.Fatal(err)
	}
	on, _ := newHandler(testFS, "dist", true)
	html := map[string]string{"Accept": "text/html,application/xhtml+xml"}
	cases := []struct {
		name   string
		h      *Handler
		path   string
		header map[string]string
		served bool
		status int
		want   string // a substring of the body, or the content type
	}{
		{"overview", off, "/", nil, true, 200, "<title>Strata</title>"},
		{"a chart page", off, "/trends", nil, true, 200, "<title>Strata</title>"},
		{"every listed page", off, "/flags", nil, true, 200, "<title>Strata</title>"},
		{"a settings subpage", off, "/settings/products/12", nil, true, 200, "<title>Strata</title>"},
		{"an experiment's page", off, "/experiments/7", nil, true, 200, "<title>Strata</title>"},
		{"a flag's page", off, "/flags/3", nil, true, 200, "<title>Strata</title>"},
		{"a campaign's page", off, "/messages/12", nil, true, 200, "<title>Strata</title>"},
		{"the new campaign's editor", off, "/messages/new", nil, true, 200, "<title>Strata</title>"},
		{"the API reference", off, "/api-reference", nil, true, 200, "<title>Strata</title>"},
		{"below the API reference is not a page", off, "/api-reference/x", nil, false, 0, ""},
		{"errors while the flag is off, from a browser", off, "/errors", html, true, 404, "<title>Strata</title>"},
		{"errors while the flag is off, from a program", off, "/errors", nil, false, 0, ""},
		{"errors while the flag is on", on, "/errors", nil, true, 200, "<title>Strata</title>"},
		{"an error group while the flag is on", on, "/errors/2e28de57f742cb5b012b25e57fcf06c26331a2538ced93159c059392571b2d3a", nil, true, 200, "<title>Strata</title>"},
		{"an error group named by a client's fingerprint", on, "/errors/checkout%2Fcart%20total", nil, true, 200, "<title>Strata</title>"},
		{"an error group while the flag is off, from a browser", off, "/errors/2e28de57f742cb5b", html, true, 404, "<title>Strata</title>"},
		{"an error group while the flag is off, from a program", off, "/errors/2e28de57f742cb5b", nil, false, 0, ""},
		{"a prefix of errors that is not a page", on, "/errorsx", nil, false, 0, ""},
		{"an unknown path from a browser", off, "/nowhere", html, true, 404, "<title>Strata</title>"},
		{"an unknown path from a program", off, "/nowhere", nil, false, 0, ""},
		{"a prefix that is not a page", off, "/trendsetter", nil, false, 0, ""},
		{"an asset", off, "/assets/index-def.css", nil, true, 200, "body{margin:0}"},
		{"a missing asset, even from a browser", off, "/assets/gone.js", html, false, 0, ""},
		{"a root file", off, "/favicon.svg", nil, true, 200, "<svg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, served := get(t, c.h, c.path, c.header)
			if served != c.served {
				t.Fatalf("served = %v; want %v", served, c.served)
			}
			if !served {
				return
			}
			if w.Code != c.status || !strings.Contains(w.Body.String(), c.want) {
				t.Errorf("%d %q; want %d with %q", w.Code, w.Body.String(), c.status, c.want)
			}
		})
	}
}

func TestHeaders(t *testing.T) {
	h, err := newHandler(testFS, "dist", false)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := get(t, h, "/retention", nil)
	for k, want := range map[string]string{
		"Content-Type":    "text/html; charset=utf-8",
		"Cache-Control":   "no-cache",
		"X-Frame-Options": "DENY",
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("page %s = %q; want %q", k, got, want)
		}
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}

	// The message preview frame is framed by the dashboard, and its
	// renderer's shadow root holds an inline stylesheet.
	w, _ = get(t, h, "/message-preview.html", nil)
	if got := w.Header().Get("X-Frame-Options"); got != "SAMEORIGIN" {
		t.Errorf("preview X-Frame-Options = %q", got)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "style-src 'self' 'unsafe-inline'") ||
		!strings.Contains(csp, "frame-ancestors 'self'") {
		t.Errorf("preview Content-Security-Policy = %q", csp)
	}

	// A replay's page admits the recorded page's inline styles and outside
	// images, and still this origin's scripts only; the list keeps the
	// strict policy.
	w, _ = get(t, h, "/replays/s-123", nil)
	if csp := w.Header().Get("Content-Security-Policy"); w.Code != 200 || !strings.Contains(csp, "script-src 'self';") ||
		!strings.Contains(csp, "style-src 'self' 'unsafe-inline'") || !strings.Contains(csp, "img-src 'self' data: blob: https:") ||
		!strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("replay page %d, Content-Security-Policy = %q", w.Code, csp)
	}
	w, _ = get(t, h, "/replays", nil)
	if csp := w.Header().Get("Content-Security-Policy"); w.Code != 200 || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("replay list %d, Content-Security-Policy = %q", w.Code, csp)
	}
	// The person pages (a user's events and replays) link to the player
	// but keep the strict policy themselves; an id may hold a slash.
	for _, p := range []string{"/users", "/users/ann", "/users/ann%2F%C3%BC"} {
		w, _ = get(t, h, p, nil)
		if csp := w.Header().Get("Content-Security-Policy"); w.Code != 200 || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: %d, Content-Security-Policy = %q", p, w.Code, csp)
		}
	}

	w, _ = get(t, h, "/assets/index-abc.js", map[string]string{"Accept-Encoding": "gzip, br"})
	if got := w.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
		t.Errorf("asset Cache-Control = %q", got)
	}
	if w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || w.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("asset headers %v", w.Header())
	}
	zr, err := gzip.NewReader(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(zr); !bytes.Equal(body, testFS["dist/assets/index-abc.js"].Data) {
		t.Error("the gzipped asset does not decompress to the file")
	}
	etag := w.Header().Get("ETag")
	w, _ = get(t, h, "/assets/index-abc.js", map[string]string{"If-None-Match": etag})
	if w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("revalidation = %d with %d bytes; want 304", w.Code, w.Body.Len())
	}
	w, _ = get(t, h, "/favicon.svg", nil)
	if got := w.Header().Get("Cache-Control"); got != "public, max-age=3600" {
		t.Errorf("root file Cache-Control = %q", got)
	}
}

// TestEmbedded checks the build committed in dist/: it loads, its page
// names the script it needs, and every other script is a chunk that a
// script of the build loads on demand (the API reference's).
func TestEmbedded(t *testing.T) {
	h, err := New(false)
	if err != nil {
		t.Fatal(err)
	}
	w, served := get(t, h, "/", nil)
	if !served || w.Code != 200 || !strings.Contains(w.Body.String(), `<script type="module"`) {
		t.Fatalf("index: %v %d %q", served, w.Code, w.Body.String())
	}
	loadedBy := func(p string) bool {
		if strings.Contains(w.Body.String(), p) {
			return true
		}
		for other, f := range h.files {
			if other != p && strings.HasSuffix(other, ".js") && bytes.Contains(f.Body, []byte(path.Base(p))) {
				return true
			}
		}
		return false
	}
	for p, f := range h.files {
		if f.immutable && strings.HasSuffix(p, ".js") && !loadedBy(p) {
			t.Errorf("asset %s is embedded but neither index.html nor a script loads it: a stale build?", p)
		}
	}
}

func TestMissingIndex(t *testing.T) {
	if _, err := newHandler(fstest.MapFS{"dist/assets/x.js": {Data: []byte("x")}}, "dist", false); err == nil {
		t.Error("a build without index.html was accepted")
	}
}
