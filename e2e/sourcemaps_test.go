package e2e

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"os"
	"strconv"
	"strings"
	"testing"
)

// sourcemapForm builds a multipart upload from fields, in order.
func sourcemapForm(t *testing.T, fields [][2]string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		if f[0] == "file" || f[0] == "minified" {
			part, _ := w.CreateFormFile(f[0], f[0]+".js.map")
			part.Write([]byte(f[1]))
		} else {
			w.WriteField(f[0], f[1])
		}
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// minifiedAppURL is where the tests serve the esbuild build of
// internal/sourcemap/testdata from.
const minifiedAppURL = "https://shop.example.com/assets/app.min.js"

// minifiedApp is that build as the tests send its errors: its map, and the
// stack of the error it throws at "marker-checkout" (in u, called at
// "marker-add").
type minifiedApp struct {
	mapText string
	// checkout is the stack down to u's frame; caller is the frame that
	// follows, of u's caller.
	checkout, caller string
}

// loadMinifiedApp reads the build and its map from the testdata.
func loadMinifiedApp(t *testing.T) minifiedApp {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile("../internal/sourcemap/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	minified := read("app.min.js")
	col := strings.Index(minified, `"marker-checkout"`) + 1
	caller := strings.Index(minified, `"marker-add"`) + 1
	return minifiedApp{
		mapText:  read("app.min.js.map"),
		checkout: "RangeError: marker-checkout\n    at u (" + minifiedAppURL + ":1:" + strconv.Itoa(col) + ")",
		caller:   "\n    at " + minifiedAppURL + ":1:" + strconv.Itoa(caller),
	}
}

// onerror is the error of release 2.0.0 as the browser SDK's onerror
// handler sends it for user id: with its source and the whole stack.
func (m minifiedApp) onerror(id string) map[string]any {
	e := minifiedException(id, m.checkout+m.caller)
	e["properties"].(map[string]any)["$exception_source"] = "onerror"
	return e
}

// minifiedException is the error of release 2.0.0 thrown at
// "marker-checkout", for user id, with stack.
func minifiedException(id, stack string) map[string]any {
	return map[string]any{"event_name": "$exception", "distinct_id": id, "properties": map[string]any{
		"$exception_type": "RangeError", "$exception_message": "marker-checkout", "$release": "2.0.0", "$exception_stack": stack}}
}

// upload uploads the map of release 2.0.0 through s with the credential
// cred, and stops the test unless it is stored.
func (m minifiedApp) upload(t *testing.T, s *server, cred string) {
	t.Helper()
	body, ctype := sourcemapForm(t, [][2]string{{"release", "2.0.0"}, {"url", minifiedAppURL}, {"file", m.mapText}})
	if r := do(t, "POST", s.URL+"/api/v1/sourcemaps", body, map[string]string{"Content-Type": ctype, "Authorization": "Bearer " + cred}); r.Status != 201 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
}

// TestSourcemaps drives the upload API over HTTP: an API key (as a deploy
// script has) or a query token uploads; the same release and URL replace;
// every bad upload is refused with its field named and nothing stored;
// listing and deleting take a token, never a key; products are apart; and
// nothing of it is CORS-open.
func TestSourcemaps(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	const app = "https://shop.example.com/assets/app.min.js"
	const good = `{"version":3,"sources":["src/app.ts"],"names":[],"mappings":"AAAA"}`
	upload := func(cred string, fields [][2]string, header map[string]string) response {
		t.Helper()
		body, ctype := sourcemapForm(t, fields)
		h := map[string]string{"Content-Type": ctype, "Authorization": "Bearer " + cred}
		for k, v := range header {
			h[k] = v
		}
		return do(t, "POST", s.URL+"/api/v1/sourcemaps", body, h)
	}
	list := func(cred, release string) []map[string]any {
		t.Helper()
		res := annCall(t, s, cred, "GET", "/api/v1/sourcemaps?release="+release, nil)
		var out struct{ Items []map[string]any }
		if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != 200 {
			t.Fatalf("list: %d %s", res.Status, res.Body)
		}
		return out.Items
	}

	res := upload(a.Live, [][2]string{{"release", "1.4.2"}, {"url", app}, {"file", good}}, map[string]string{"Origin": "https://shop.example.com"})
	if res.Status != 201 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("upload with the API key: %d %s (CORS %q)", res.Status, res.Body, res.Header.Get("Access-Control-Allow-Origin"))
	}
	res = upload(a.Token, [][2]string{{"release", "1.4.2"}, {"url", app}, {"file", good}, {"minified", "function a(){throw new Error}"}}, nil)
	if res.Status != 201 || !strings.Contains(string(res.Body), `"minified":true`) {
		t.Fatalf("upload with a token: %d %s", res.Status, res.Body)
	}
	if items := list(a.Token, "1.4.2"); len(items) != 1 || items[0]["minified"] != true || items[0]["url"] != app {
		t.Errorf("after the replacing upload: %v", items)
	}

	// Bad uploads, each refused with its field named, none stored.
	big := `{"version":3,"mappings":"` + strings.Repeat("A", 10<<20) + `"}`
	for _, c := range []struct {
		fields       [][2]string
		status       int
		code, field  string
		messageBitOf string
	}{
		{[][2]string{{"url", app}, {"file", good}}, 400, "invalid_request", "release", ""},
		{[][2]string{{"release", "2.0"}, {"file", good}}, 400, "invalid_request", "url", ""},
		{[][2]string{{"release", "2.0"}, {"url", app}}, 400, "invalid_request", "file", ""},
		{[][2]string{{"release", "2.0"}, {"url", app}, {"file", "not json"}}, 400, "invalid_request", "file", "JSON"},
		{[][2]string{{"release", "2.0"}, {"url", app}, {"file", `{"version":2,"mappings":""}`}}, 400, "invalid_request", "file", "version 3"},
		{[][2]string{{"release", "2.0"}, {"url", app}, {"file", `{"version":3,"sections":[]}`}}, 400, "invalid_request", "file", "sections"},
		{[][2]string{{"release", "2.0"}, {"url", app}, {"file", good}, {"extra", "x"}}, 400, "invalid_request", "extra", ""},
		{[][2]string{{"release", "2.0"}, {"url", app}, {"file", big}}, 413, "payload_too_large", "", ""},
	} {
		res := upload(a.Live, c.fields, nil)
		wantError(t, res, c.status, c.code, c.field)
		if c.messageBitOf != "" && !strings.Contains(string(res.Body), c.messageBitOf) {
			t.Errorf("%v: the message does not say %q: %s", c.fields, c.messageBitOf, res.Body)
		}
	}
	if items := list(a.Token, "2.0"); len(items) != 0 {
		t.Errorf("a bad upload was stored: %v", items)
	}
	wantError(t, do(t, "POST", s.URL+"/api/v1/sourcemaps", []byte(good), map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + a.Live}),
		400, "invalid_request", "body")
	if res := upload("st_live_"+strings.Repeat("x", 32), [][2]string{{"release", "2.0"}, {"url", app}, {"file", good}}, nil); res.Status != 401 {
		t.Errorf("a wrong key: %d %s", res.Status, res.Body)
	}

	// Reading and deleting: a token, never a key; each product its own.
	wantError(t, annCall(t, s, a.Live, "GET", "/api/v1/sourcemaps", nil), 403, "key_not_allowed", "")
	wantError(t, annCall(t, s, a.Live, "DELETE", "/api/v1/sourcemaps?release=1.4.2", nil), 403, "key_not_allowed", "")
	if items := list(b.Token, ""); len(items) != 0 {
		t.Errorf("the other product sees %v", items)
	}
	wantError(t, annCall(t, s, a.Token, "DELETE", "/api/v1/sourcemaps", nil), 400, "invalid_request", "release")
	if res := annCall(t, s, b.Token, "DELETE", "/api/v1/sourcemaps?release=1.4.2", nil); string(bytes.TrimSpace(res.Body)) != `{"deleted":0}` {
		t.Errorf("delete through the other product: %s", res.Body)
	}
	if res := annCall(t, s, a.Token, "DELETE", "/api/v1/sourcemaps?release=1.4.2", nil); string(bytes.TrimSpace(res.Body)) != `{"deleted":1}` {
		t.Errorf("delete: %s", res.Body)
	}
	if items := list(a.Token, ""); len(items) != 0 {
		t.Errorf("after the delete: %v", items)
	}
}

// TestExceptionsAreDeminified sends the real server an $exception thrown
// in the esbuild build of internal/sourcemap/testdata, before and after its
// release's map is uploaded, and reads what was stored: the first keeps
// minified frames and says why, the second names the original file, line
// and function; both carry a fingerprint, and a client's frames are refused.
func TestExceptionsAreDeminified(t *testing.T) {
	s := startServer(t, t.TempDir())
	a := newTenant(t, s, "Shop")
	m := loadMinifiedApp(t)
	if r := postEvents(t, s, a.Live, m.onerror("before")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	m.upload(t, s, a.Live)
	if r := postEvents(t, s, a.Live, m.onerror("after")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	forged := m.onerror("forger")
	forged["properties"].(map[string]any)["$exception_frames"] = []any{}
	if r := postEvents(t, s, a.Live, forged); r.Status != 400 || !strings.Contains(string(r.Body), "reserved_property") {
		t.Errorf("client frames: %d %s", r.Status, r.Body)
	}
	s.Stop()

	db := openStore(t, s.dataDir)
	props := map[string]string{}
	rows, err := db.Query(`SELECT distinct_id, properties FROM events WHERE event = '$exception'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, p string
		rows.Scan(&id, &p)
		props[id] = p
	}
	rows.Close()
	type stored struct {
		Stack       string `json:"$exception_stack"`
		Fingerprint string `json:"$exception_fingerprint"`
		Resolution  string `json:"$exception_resolution"`
		Frames      []struct {
			Function, File string
			Line           int
			Resolved       bool
		} `json:"$exception_frames"`
	}
	var before, after stored
	json.Unmarshal([]byte(props["before"]), &before)
	json.Unmarshal([]byte(props["after"]), &after)
	if len(before.Frames) != 2 || before.Frames[0].Resolved || before.Resolution != "no sourcemap for release 2.0.0 and "+minifiedAppURL || before.Fingerprint == "" ||
		!strings.HasPrefix(before.Stack, "RangeError: marker-checkout\n    at u (") {
		t.Errorf("before the upload: %s", props["before"])
	}
	if len(after.Frames) != 2 || !after.Frames[0].Resolved || after.Frames[0].File != "app.ts" || after.Frames[0].Line != 22 ||
		!after.Frames[1].Resolved || after.Frames[1].Function != "add" ||
		after.Frames[0].Function != "checkout" || after.Resolution != "" || after.Fingerprint == "" {
		t.Errorf("after the upload: %s", props["after"])
	}
}
