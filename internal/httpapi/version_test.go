package httpapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"strata/api"
	"strata/internal/buildinfo"
)

// publicServer serves the route table with nothing behind it but what the
// public paths need: no store, no credential.
func publicServer(t *testing.T, build buildinfo.Info) *httptest.Server {
	t.Helper()
	s := &Server{Build: build, Pages: fakePages{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(srv.Close)
	return srv
}

// rawRequest sends one request with the headers given and reads the whole
// answer. Go's transport neither adds Accept-Encoding nor unzips, so that
// the test sees what the server sent.
func rawRequest(t *testing.T, method, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// TestVersion checks GET /api/v1/version: the build, without a credential,
// and without CORS headers even for a request from another origin.
func TestVersion(t *testing.T) {
	build := buildinfo.Info{Version: "v1.2.0", Commit: "bb4fc1d5f20c9410dc899dc5290b55e34b238808",
		CommitTime: "2026-11-25T00:32:51Z", Modified: true, Go: "go1.26.8"}
	srv := publicServer(t, build)
	res, body := rawRequest(t, "GET", srv.URL+"/api/v1/version", map[string]string{"Origin": "https://elsewhere.example"})
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Fatalf("GET /api/v1/version: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"version": "v1.2.0", "commit": "bb4fc1d5f20c9410dc899dc5290b55e34b238808",
		"commitTime": "2026-11-25T00:32:51Z", "modified": true, "go": "go1.26.8"}
	if len(got) != len(want) {
		t.Errorf("fields %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v; want %v", k, got[k], v)
		}
	}
	if h := res.Header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Errorf("Access-Control-Allow-Origin = %q; the path is same-origin", h)
	}
	if res, body := rawRequest(t, "POST", srv.URL+"/api/v1/version", nil); res.StatusCode != 404 || !bytes.Contains(body, []byte(`"not_found"`)) {
		t.Errorf("POST /api/v1/version: %d %s; want 404 not_found", res.StatusCode, body)
	}
}

// TestOpenAPISpec checks GET /api/v1/openapi.yaml: the embedded contract,
// as YAML, with an ETag and a 304, gzipped on request, same-origin.
func TestOpenAPISpec(t *testing.T) {
	srv := publicServer(t, buildinfo.Info{})
	url := srv.URL + "/api/v1/openapi.yaml"
	res, body := rawRequest(t, "GET", url, map[string]string{"Origin": "https://elsewhere.example"})
	if res.StatusCode != 200 || !bytes.Equal(body, api.OpenAPI) {
		t.Fatalf("GET %s: %d, %d bytes; want 200 with openapi.yaml's %d", url, res.StatusCode, len(body), len(api.OpenAPI))
	}
	for k, want := range map[string]string{
		"Content-Type":                "application/yaml; charset=utf-8",
		"Cache-Control":               "no-cache",
		"X-Content-Type-Options":      "nosniff",
		"Access-Control-Allow-Origin": "",
	} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q; want %q", k, got, want)
		}
	}
	etag := res.Header.Get("ETag")
	if len(etag) < 3 {
		t.Fatalf("ETag = %q", etag)
	}
	if res, body := rawRequest(t, "GET", url, map[string]string{"If-None-Match": etag}); res.StatusCode != 304 || len(body) != 0 {
		t.Errorf("revalidation: %d with %d bytes; want 304 and no body", res.StatusCode, len(body))
	}
	res, body = rawRequest(t, "GET", url, map[string]string{"Accept-Encoding": "gzip"})
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding = %q; want gzip", res.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, api.OpenAPI) {
		t.Error("the gzipped contract does not decompress to openapi.yaml")
	}
	if res, body := rawRequest(t, "HEAD", url, nil); res.StatusCode != 200 || len(body) != 0 {
		t.Errorf("HEAD: %d with %d bytes", res.StatusCode, len(body))
	}
}
