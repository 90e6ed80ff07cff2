package errtrack

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
	"strata/internal/store/duckdb/duckdbtest"
)

const appURL = "https://shop.example.com/assets/app.min.js"

// stackOf writes the V8 stack a browser would give for an error thrown at
// marker in the esbuild build of internal/sourcemap/testdata/app.ts: one
// frame at the marker's place in app.min.js, under the minifier's name fn,
// then the SDK's wrapper and a native frame.
func stackOf(t *testing.T, minified, errType, marker, fn string) string {
	t.Helper()
	i := strings.Index(minified, marker)
	if i < 0 {
		t.Fatalf("%s is not in the build", marker)
	}
	return errType + ": " + strings.Trim(marker, `"`) + "\n" +
		"    at " + fn + " (" + appURL + "?v=3:1:" + strconv.Itoa(i+1) + ")\n" +
		"    at Array.map (<anonymous>)\n" +
		"    at HTMLDocument.w (https://analytics.example.com/sdk/v1/sdk.min.js:1:4242)"
}

// enriched decodes what Enrich added.
type enriched struct {
	Frames      []Frame `json:"$exception_frames"`
	Resolution  string  `json:"$exception_resolution"`
	Fingerprint string  `json:"$exception_fingerprint"`
}

// TestEnrich runs $exception properties through the processor on a real
// store: without a sourcemap the frames stay minified and the event says
// why; once the release's map is uploaded, the frame names the original
// file, line, function and source line; the SDK's and native frames are
// not the app's; the fingerprint is the same for two builds' errors of one
// bug, differs between bugs, and a client's own fingerprint wins.
func TestEnrich(t *testing.T) {
	ctx := context.Background()
	st, product := duckdbtest.Product(t)
	minified, _ := os.ReadFile("../sourcemap/testdata/app.min.js")
	mapText, _ := os.ReadFile("../sourcemap/testdata/app.min.js.map")
	p := NewProcessor(st, 1<<20)

	run := func(props map[string]any) enriched {
		t.Helper()
		raw, _ := json.Marshal(props)
		out := p.Enrich(ctx, product.ID, raw)
		var e enriched
		var all map[string]any
		if err := json.Unmarshal(out, &e); err != nil || json.Unmarshal(out, &all) != nil {
			t.Fatalf("not JSON: %s", out)
		}
		for k, v := range props {
			if k != PropFingerprint && all[k] != v {
				t.Errorf("the property %s changed: %v, was %v", k, all[k], v)
			}
		}
		return e
	}
	checkout := map[string]any{"$exception_type": "RangeError", "$exception_message": "marker-checkout", "$release": "1.0.0",
		"$exception_stack": stackOf(t, string(minified), "RangeError", `"marker-checkout"`, "u")}

	e := run(checkout)
	if len(e.Frames) != 3 || e.Frames[0].Resolved || e.Frames[0].Function != "u" || !e.Frames[0].InApp || e.Frames[1].InApp || e.Frames[2].InApp ||
		e.Resolution != "no sourcemap for release 1.0.0 and "+appURL+"?v=3" {
		t.Fatalf("without a map: %+v", e)
	}
	minifiedFingerprint := e.Fingerprint

	sm := analytics.Sourcemap{ProductID: product.ID, Release: "1.0.0", URL: appURL}
	if err := st.PutSourcemap(ctx, &sm, mapText, minified, analytics.SourcemapAmount{}); err != nil {
		t.Fatal(err)
	}
	p.Uploaded(product.ID, "1.0.0", appURL+"?v=3")
	p.Uploaded(product.ID, "1.0.0", appURL)
	e = run(checkout)
	f := e.Frames[0]
	if !f.Resolved || f.File != "app.ts" || f.Line != 22 || f.Function != "checkout" || !strings.Contains(f.SourceLine, "marker-checkout") || e.Resolution != "" {
		t.Fatalf("with the map (found without the query string): %+v, %q", e.Frames, e.Resolution)
	}
	if e.Fingerprint == minifiedFingerprint {
		t.Error("the de-minified frame did not change the fingerprint")
	}

	// Another build names the function differently and puts it elsewhere:
	// resolved through its own release's map, it is the same bug.
	rebuilt := map[string]any{}
	for k, v := range checkout {
		rebuilt[k] = v
	}
	rebuilt["$exception_stack"] = strings.Replace(checkout["$exception_stack"].(string), "at u (", "at zz (", 1)
	if got := run(rebuilt); got.Fingerprint != e.Fingerprint {
		t.Errorf("a renamed minified function split the group: %s and %s", got.Fingerprint, e.Fingerprint)
	}
	for marker, fn := range map[string]string{`"marker-add"`: "add", `"marker-reduce"`: "total", `"marker-load"`: "load"} {
		other := run(map[string]any{"$exception_type": "Error", "$exception_message": "x", "$release": "1.0.0",
			"$exception_stack": stackOf(t, string(minified), "Error", marker, "q")})
		if other.Frames[0].Function != fn || other.Fingerprint == e.Fingerprint {
			t.Errorf("%s: function %q (want %q), fingerprint %s", marker, other.Frames[0].Function, fn, other.Fingerprint)
		}
	}

	// Another release has no map; a client's fingerprint is kept.
	checkout["$release"], checkout[PropFingerprint] = "1.0.1", "mine"
	e = run(checkout)
	if e.Fingerprint != "mine" || e.Frames[0].Resolved || !strings.Contains(e.Resolution, "release 1.0.1") {
		t.Errorf("release 1.0.1 with a client fingerprint: %+v", e)
	}
}

// TestEnrichAnyStack gives the processor stacks of every bad shape: it
// never fails, keeps the event, and groups by type and message.
func TestEnrichAnyStack(t *testing.T) {
	p := &Processor{}
	for _, stack := range []any{"", strings.Repeat("\x00garbage\n", 100000), 42, nil, map[string]any{"a": 1}} {
		raw, _ := json.Marshal(map[string]any{"$exception_type": "TypeError", "$exception_message": "boom", "$exception_stack": stack})
		var e enriched
		if err := json.Unmarshal(p.Enrich(context.Background(), 1, raw), &e); err != nil || e.Fingerprint == "" || len(e.Frames) != 0 {
			t.Errorf("stack %.40v: %+v %v", stack, e, err)
		}
	}
	a, _ := json.Marshal(map[string]any{"$exception_type": "TypeError", "$exception_message": "boom"})
	b, _ := json.Marshal(map[string]any{"$exception_type": "TypeError", "$exception_message": "bang"})
	var ea, eb enriched
	json.Unmarshal(p.Enrich(context.Background(), 1, a), &ea)
	json.Unmarshal(p.Enrich(context.Background(), 1, b), &eb)
	if ea.Fingerprint == eb.Fingerprint {
		t.Error("two messages without frames share a group")
	}
}

// TestEnrichTooComplexMap stores, as a map uploaded before uploads were
// measured would be, a map over sourcemap.MaxSize parsed: an event of its
// release keeps its minified frames and says why, as without a map, and a
// map of the same release under the limit still resolves.
func TestEnrichTooComplexMap(t *testing.T) {
	ctx := context.Background()
	st, product := duckdbtest.Product(t)
	// 3.5 million one-field segments: 70,000,000 bytes (66.8 MB) parsed,
	// from 7 MB of text.
	dense := []byte(`{"version":3,"sources":["a.js"],"names":[],"mappings":"A` + strings.Repeat(",A", 3_500_000) + `"}`)
	sm := analytics.Sourcemap{ProductID: product.ID, Release: "1.0.0", URL: "https://shop.example.com/dense.js"}
	if err := st.PutSourcemap(ctx, &sm, dense, nil, analytics.SourcemapAmount{}); err != nil {
		t.Fatal(err)
	}
	mapText, _ := os.ReadFile("../sourcemap/testdata/app.min.js.map")
	minified, _ := os.ReadFile("../sourcemap/testdata/app.min.js")
	sm = analytics.Sourcemap{ProductID: product.ID, Release: "1.0.0", URL: appURL}
	if err := st.PutSourcemap(ctx, &sm, mapText, nil, analytics.SourcemapAmount{}); err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(st, 1<<20)
	stack := stackOf(t, string(minified), "RangeError", `"marker-checkout"`, "u") +
		"\n    at k (https://shop.example.com/dense.js:1:5)"
	raw, _ := json.Marshal(map[string]any{"$exception_type": "RangeError", "$exception_message": "marker-checkout", "$release": "1.0.0", "$exception_stack": stack})
	var e enriched
	if err := json.Unmarshal(p.Enrich(ctx, product.ID, raw), &e); err != nil {
		t.Fatal(err)
	}
	want := "the sourcemap of https://shop.example.com/dense.js (release 1.0.0) is not used: its parsed form would take 66.8 MB, over the limit of 64 MB; upload a smaller map"
	if len(e.Frames) != 4 || !e.Frames[0].Resolved || e.Frames[3].Resolved || e.Frames[3].File != "https://shop.example.com/dense.js" || e.Resolution != want {
		t.Errorf("frames %+v, resolution %q", e.Frames, e.Resolution)
	}
}

// TestEnrichAfterAStoreError enriches an event while the metadata store
// fails (closed): its frame stays minified and says the map could not be
// read; once the store answers again, the next event's frame resolves at
// once, the error not kept for the 30 seconds a map that does not parse is.
func TestEnrichAfterAStoreError(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	down, err := duckdb.Open(ctx, t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	down.Close()
	ws, _ := st.CreateWorkspace(ctx, "W")
	product, _ := st.CreateProduct(ctx, ws.ID, "P")
	sm := analytics.Sourcemap{ProductID: product.ID, Release: "1.0.0", URL: appURL}
	if err := st.PutSourcemap(ctx, &sm, []byte(`{"version":3,"sources":["app.ts"],"mappings":"AAAA"}`), nil, analytics.SourcemapAmount{}); err != nil {
		t.Fatal(err)
	}
	p := NewProcessor(down, 1<<20)
	enrich := func() enriched {
		raw, _ := json.Marshal(map[string]any{"$exception_type": "Error", "$exception_message": "x", "$release": "1.0.0",
			"$exception_stack": "Error: x\n    at f (" + appURL + ":1:1)"})
		var e enriched
		if err := json.Unmarshal(p.Enrich(ctx, product.ID, raw), &e); err != nil || len(e.Frames) != 1 {
			t.Fatalf("%+v %v", e, err)
		}
		return e
	}
	if e := enrich(); e.Frames[0].Resolved || !strings.HasPrefix(e.Resolution, "the sourcemap of "+appURL+" could not be read: ") {
		t.Errorf("while the store fails: %+v", e)
	}
	p.Store = st
	if e := enrich(); !e.Frames[0].Resolved || e.Frames[0].File != "app.ts" || e.Resolution != "" {
		t.Errorf("once the store answers again: %+v", e)
	}
}

// TestUpload checks the upload's own checks on a real store: a map over
// the parsed-size limit is 413 sourcemap_too_complex, one the parser
// cannot read is 400 naming the file, an upload over the quota stores
// nothing, and an upload takes effect at once on this node.
func TestUpload(t *testing.T) {
	ctx := context.Background()
	st, product := duckdbtest.Product(t)
	p := NewProcessor(st, 1<<20)
	p.Quota = analytics.SourcemapAmount{Count: 1}
	upload := func(url, mapText string) error {
		sm := analytics.Sourcemap{ProductID: product.ID, Release: "1.0.0", URL: url}
		return p.Upload(ctx, &sm, []byte(mapText), nil)
	}
	code := func(err error) string { return analytics.AsError(err).Code }
	dense := `{"version":3,"sources":["a.js"],"mappings":"A` + strings.Repeat(",A", 3_500_000) + `"}`
	if err := upload(appURL, dense); code(err) != "sourcemap_too_complex" || !strings.Contains(err.Error(), "66.8 MB of memory once parsed, over the limit of 64 MB") {
		t.Errorf("a dense map: %v", err)
	}
	if err := upload(appURL, `{"version":3,"mappings":"","names":7}`); code(err) != "invalid_request" || !strings.HasPrefix(analytics.AsError(err).Message, "file: ") {
		t.Errorf("names that are not a list: %v", err)
	}
	stack := func() string {
		raw, _ := json.Marshal(map[string]any{"$exception_type": "Error", "$exception_message": "x", "$release": "1.0.0",
			"$exception_stack": "Error: x\n    at f (" + appURL + ":1:1)"})
		var e enriched
		json.Unmarshal(p.Enrich(ctx, product.ID, raw), &e)
		return e.Frames[0].File
	}
	if f := stack(); f != appURL {
		t.Fatalf("without a map: %s", f)
	}
	if err := upload(appURL, `{"version":3,"sources":["app.ts"],"mappings":"AAAA"}`); err != nil {
		t.Fatal(err)
	}
	if f := stack(); f != "app.ts" {
		t.Errorf("the upload did not take effect at once: %s", f)
	}
	if err := upload(appURL+"2", `{"version":3,"sources":["b.ts"],"mappings":"AAAA"}`); code(err) != "quota_exceeded" {
		t.Errorf("over the quota: %v", err)
	}
	if u, _ := st.SourcemapUsage(ctx, product.ID); u.Count != 1 {
		t.Errorf("usage %+v after a refused upload", u)
	}
}

// TestResolutionNamesOnlyMinifiedFiles checks the note on frames that
// stayed minified: it names the minified file without a map, never the
// page's own inline script (whose frames carry the page's URL) nor a
// script served as written, and an event whose frames are all readable
// has no note, with a release or without one.
func TestResolutionNamesOnlyMinifiedFiles(t *testing.T) {
	ctx := context.Background()
	st, product := duckdbtest.Product(t)
	p := NewProcessor(st, 1<<20)
	resolution := func(release, stack string) string {
		t.Helper()
		raw, _ := json.Marshal(map[string]any{"$exception_type": "TypeError", "$exception_message": "x", "$release": release, "$exception_stack": stack})
		var e enriched
		if err := json.Unmarshal(p.Enrich(ctx, product.ID, raw), &e); err != nil {
			t.Fatal(err)
		}
		return e.Resolution
	}
	const (
		inline   = "    at checkout (https://shop.example.com/checkout?step=2:41:13)\n"
		html     = "    at onclick (https://shop.example.com/index.html:12:9)\n"
		plain    = "    at sum (https://shop.example.com/assets/cart.js:14:21)\n"
		hashed   = "    at e (https://shop.example.com/assets/app.3f9c1a.js:1:48213)\n"
		minified = "    at t (https://shop.example.com/assets/vendor.min.js:1:120)\n"
	)
	cases := []struct {
		release, stack, want string
	}{
		{"1.0.0", "TypeError: x\n" + inline + html + plain, ""},
		{"", "TypeError: x\n" + inline + plain, ""},
		{"1.0.0", "TypeError: x\n" + inline + minified + plain, "no sourcemap for release 1.0.0 and https://shop.example.com/assets/vendor.min.js"},
		{"1.0.0", "TypeError: x\n" + hashed + inline, "no sourcemap for release 1.0.0 and https://shop.example.com/assets/app.3f9c1a.js"},
		{"", "TypeError: x\n" + inline + minified, "no $release on the event, so no sourcemap applies"},
	}
	for _, c := range cases {
		if got := resolution(c.release, c.stack); got != c.want {
			t.Errorf("release %q, stack\n%s: resolution %q, want %q", c.release, c.stack, got, c.want)
		}
	}
}

// TestFramesMarkedMinifiedOnlyInMinifiedFiles: the group page tags a frame
// "minified" from its minified flag, so only the frames a missing map
// leaves unreadable carry it, never the page's inline script or a script
// served as it was written (issue 35, item 4).
func TestFramesMarkedMinifiedOnlyInMinifiedFiles(t *testing.T) {
	ctx := context.Background()
	st, product := duckdbtest.Product(t)
	p := NewProcessor(st, 1<<20)
	stack := "TypeError: x\n" +
		"    at checkout (https://shop.example.com/checkout?step=2:41:13)\n" +
		"    at sum (https://shop.example.com/assets/cart.js:14:21)\n" +
		"    at e (https://shop.example.com/assets/app.3f9c1a.js:1:48213)\n" +
		"    at t (https://shop.example.com/assets/vendor.min.js:1:120)\n"
	for _, release := range []string{"1.0.0", ""} {
		raw, _ := json.Marshal(map[string]any{"$exception_type": "TypeError", "$exception_message": "x", "$release": release, "$exception_stack": stack})
		var e struct {
			Frames []map[string]any `json:"$exception_frames"`
		}
		if err := json.Unmarshal(p.Enrich(ctx, product.ID, raw), &e); err != nil {
			t.Fatal(err)
		}
		var got []bool
		for _, f := range e.Frames {
			m, ok := f["minified"].(bool)
			if !ok {
				t.Fatalf("release %q: frame %v has no minified flag", release, f)
			}
			got = append(got, m)
		}
		if want := []bool{false, false, true, true}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("release %q: minified flags %v, want %v (inline, cart.js, app.3f9c1a.js, vendor.min.js)", release, got, want)
		}
	}
}
