package stacktrace

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand"
	"strings"
	"testing"
)

// fingerprints are the fingerprints of the captured stacks, by file, each
// over the error's type and message that captured.json records.
func fingerprints(t testing.TB, m manifest) map[string]string {
	fps := map[string]string{}
	for _, s := range m.Stacks {
		fps[s.File] = Fingerprint(s.Type, s.Message, Parse(readStack(t, s.File)), SDKFrame)
	}
	return fps
}

// browsers are the engines whose stacks of the same bug must share a
// group: they ran the same page, from the same URLs.
var browsers = []string{"chromium", "firefox", "firefox-asyncstack", "webkit"}

// TestSameBugSameGroup: each bug thrown in Chromium, Firefox (with and
// without async stacks) and WebKit lands in one group, but for "tail",
// whose callers JavaScriptCore leaves out of the stack (proper tail
// calls): its top frame is the same, the two below it are not.
func TestSameBugSameGroup(t *testing.T) {
	m := loadManifest(t)
	fps := fingerprints(t, m)
	bugs := map[string]bool{}
	for _, s := range m.Stacks {
		bugs[s.Bug] = true
	}
	for bug := range bugs {
		want := fps["chromium-a-"+bug+".txt"]
		for _, engine := range browsers {
			for _, build := range []string{"a", "b"} {
				file := engine + "-" + build + "-" + bug + ".txt"
				got, ok := fps[file]
				if !ok {
					if bug != "module" || engine != "node" {
						t.Errorf("no stack %s", file)
					}
					continue
				}
				if bug == "tail" && engine == "webkit" {
					if got == want {
						t.Errorf("%s: JavaScriptCore's tail calls no longer split the group: update docs/errors.md", file)
					}
					continue
				}
				if got != want {
					t.Errorf("bug %s: %s is in group %.12s, chromium-a in %.12s\n\t%s\n\t%s", bug, file, got, want,
						strings.Join(shortFrames(Parse(readStack(t, file))), "\n\t"), strings.Join(shortFrames(Parse(readStack(t, "chromium-a-"+bug+".txt"))), "\n\t"))
				}
			}
		}
	}
	if len(bugs) != 12 {
		t.Errorf("%d bugs captured, want 12", len(bugs))
	}
}

// TestRebuildSameGroup: every stack of build b, whose lines moved, is in
// the group of the same bug in build a, in every engine, Node included.
func TestRebuildSameGroup(t *testing.T) {
	m := loadManifest(t)
	fps := fingerprints(t, m)
	for _, s := range m.Stacks {
		if s.Build != "b" {
			continue
		}
		a := strings.Replace(s.File, "-b-", "-a-", 1)
		if fps[s.File] != fps[a] {
			t.Errorf("%s is not in the group of %s", s.File, a)
		}
	}
}

// TestDifferentBugsDiffer: no two bugs share a group, in any engine or
// across engines.
func TestDifferentBugsDiffer(t *testing.T) {
	m := loadManifest(t)
	fps := fingerprints(t, m)
	bugOf := map[string]string{}
	for _, s := range m.Stacks {
		fp := fps[s.File]
		if other, ok := bugOf[fp]; ok && other != s.Bug {
			t.Errorf("bugs %s and %s share group %.12s (%s)", other, s.Bug, fp, s.File)
		}
		bugOf[fp] = s.Bug
	}
}

// TestMDNSameGroup: MDN's three examples, as it prints them for
// JavaScriptCore, SpiderMonkey and V8, group by example, but that its
// "function" and "eval" examples share a group: both are an Error thrown
// by anonymous code (a new Function, an eval) called from filename.js's
// top-level code, which only lines and messages would tell apart.
func TestMDNSameGroup(t *testing.T) {
	seen := map[string]string{}
	for _, example := range []string{"calls", "function", "eval"} {
		var want string
		for _, engine := range []string{"safari", "spidermonkey", "v8"} {
			file := engine + "-mdn-" + example + ".txt"
			fp := Fingerprint("Error", "", Parse(readStack(t, file)), SDKFrame)
			if want == "" {
				want = fp
			} else if fp != want {
				t.Errorf("%s is not in the group of safari-mdn-%s.txt", file, example)
			}
		}
		seen[example] = want
	}
	if seen["calls"] == seen["function"] || seen["function"] != seen["eval"] {
		t.Errorf("groups by example: %v", seen)
	}
}

// TestSDKFramesSkipped: the SDK's wrapper between a page's handler and
// its caller is left out, so its group is the one without the wrapper,
// whatever the SDK's release names its functions.
func TestSDKFramesSkipped(t *testing.T) {
	for _, file := range []string{"chromium-a-sdk.txt", "firefox-a-sdk.txt", "webkit-a-sdk.txt", "node-a-sdk.txt"} {
		frames := Parse(readStack(t, file))
		var page, renamed []Frame
		sdk := 0
		for _, f := range frames {
			if SDKFrame(f) {
				sdk++
				f.Function, f.Column = "t", 9931 // another release of the SDK
				renamed = append(renamed, f)
				continue
			}
			page = append(page, f)
			renamed = append(renamed, f)
		}
		if sdk != 1 {
			t.Errorf("%s: %d SDK frames, want 1", file, sdk)
		}
		fp := Fingerprint("Error", "save failed", frames, SDKFrame)
		if got := Fingerprint("Error", "save failed", page, nil); got != fp {
			t.Errorf("%s: the SDK's frame counts", file)
		}
		if got := Fingerprint("Error", "save failed", renamed, SDKFrame); got != fp {
			t.Errorf("%s: another SDK release is another group", file)
		}
		if got := Fingerprint("Error", "save failed", frames, nil); got == fp {
			t.Errorf("%s: without skip, the SDK's frame does not count", file)
		}
	}
}

func TestSDKFrame(t *testing.T) {
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"https://analytics.example.com/sdk/v1/sdk.min.js", true},
		{"https://analytics.example.com/sdk/v1/sdk.min.js?v=3#x", true},
		{"/srv/app/node_modules/@strata/browser/dist/index.js", true},
		{"webpack://shop/./node_modules/@strata/browser/src/errors.ts", true},
		{"https://shop.example.com/assets/app.js", false},
		{"https://shop.example.com/sdk/v1/sdk.min.js.map", false},
		{"", false},
	} {
		if got := SDKFrame(Frame{URL: c.url}); got != c.want {
			t.Errorf("SDKFrame(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}

// TestFingerprintBytes pins the bytes hashed, as docs/errors.md states
// them.
func TestFingerprintBytes(t *testing.T) {
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return hex.EncodeToString(h[:])
	}
	frames := Parse(readStack(t, "chromium-a-named.txt"))
	want := sum("27:strata-error-fingerprint-v1,9:TypeError,6:frames," +
		"12:computeTotal,15:/assets/bugs.js,8:bugNamed,15:/assets/bugs.js,3:run,15:/assets/bugs.js,")
	if got := Fingerprint(" TypeError ", "any message", frames, SDKFrame); got != want {
		t.Errorf("Fingerprint = %s, want %s", got, want)
	}
	if docs := "2e28de57f742cb5b012b25e57fcf06c26331a2538ced93159c059392571b2d3a"; want != docs {
		t.Errorf("docs/errors.md gives %s for these bytes, not %s", docs, want)
	}
	want = sum("27:strata-error-fingerprint-v1,10:QuotaError,7:message,24:order 0 failed for user0,")
	if got := Fingerprint("QuotaError", "  order 1234\n failed  for user42 ", nil, SDKFrame); got != want {
		t.Errorf("Fingerprint without frames = %s, want %s", got, want)
	}
}

// TestFingerprintWithoutFrames: an error with no usable frame is grouped
// by its type and message, whatever its stack held: nothing, garbage,
// native frames only, or only frames past an async boundary.
func TestFingerprintWithoutFrames(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	garbage := make([]byte, 1<<20)
	r.Read(garbage)
	const typ, msg = "TypeError", "order 1234 failed"
	want := Fingerprint(typ, msg, nil, nil)
	for name, stack := range map[string]string{
		"empty":           "",
		"1 MB of garbage": string(garbage),
		"binary":          "\x00\x01\xff\xfe\x89PNG\r\n\x1a\n",
		"one huge line":   strings.Repeat("at fn (", 1<<17),
		"message only":    "TypeError: order 1234 failed",
		"native only":     "TypeError: x\n    at JSON.parse (<anonymous>)\n[native code]",
		"async only":      "async*fn@http://x.test/a.js:1:2\nrun@http://x.test/a.js:3:4",
		"empty frames":    "eval code@\nanonymous@",
	} {
		if got := Fingerprint(typ, msg, Parse(stack), SDKFrame); got != want {
			t.Errorf("%s: not grouped by type and message: %+v", name, Parse(stack))
		}
	}
	for _, c := range []struct {
		name      string
		typ, msg  string
		sameGroup bool
	}{
		{"another number", typ, "order 1235 failed", true},
		{"other white space", typ, " order  1234\tfailed\n", true},
		{"another message", typ, "order failed", false},
		{"another type", "RangeError", msg, false},
		{"no message", typ, "", false},
	} {
		if got := Fingerprint(c.typ, c.msg, nil, nil); (got == want) != c.sameGroup {
			t.Errorf("%s: same group %v, want %v", c.name, got == want, c.sameGroup)
		}
	}
}

// TestFingerprintLeavesOut: the message, lines and columns, the query,
// host and scheme of URLs, and frames below the third do not count; the
// type, names and paths do.
func TestFingerprintLeavesOut(t *testing.T) {
	base := []Frame{
		{Function: "sum", URL: "https://shop.example.com/assets/cart.js?v=1", Line: 31, Column: 35},
		{Function: "total", URL: "https://shop.example.com/assets/cart.js?v=1", Line: 27, Column: 22},
		{Function: "checkout", URL: "https://shop.example.com/assets/app.js", Line: 5, Column: 1},
		{Function: "onClick", URL: "https://shop.example.com/assets/app.js", Line: 90, Column: 7},
	}
	want := Fingerprint("RangeError", "empty cart", base, nil)
	change := func(i int, edit func(*Frame)) []Frame {
		frames := append([]Frame(nil), base...)
		edit(&frames[i])
		return frames
	}
	for _, c := range []struct {
		name      string
		typ, msg  string
		frames    []Frame
		sameGroup bool
	}{
		{"another message", "RangeError", "cart is empty", base, true},
		{"moved lines", "RangeError", "", change(0, func(f *Frame) { f.Line, f.Column = 40, 2 }), true},
		{"another host", "RangeError", "", change(0, func(f *Frame) { f.URL = "https://cdn.example.net:8443/assets/cart.js" }), true},
		{"another query and hash", "RangeError", "", change(1, func(f *Frame) { f.URL = "https://shop.example.com/assets/cart.js?v=2#top" }), true},
		{"V8's receiver", "RangeError", "", change(0, func(f *Frame) { f.Function = "Cart.sum" }), true},
		{"a fourth frame", "RangeError", "", change(3, func(f *Frame) { f.Function = "onSubmit" }), true},
		{"a native frame between", "RangeError", "", append([]Frame{base[0], {Function: "reduce", Native: true}}, base[1:]...), true},
		{"another type", "TypeError", "", base, false},
		{"another function", "RangeError", "", change(0, func(f *Frame) { f.Function = "sumAll" }), false},
		{"another file", "RangeError", "", change(1, func(f *Frame) { f.URL = "https://shop.example.com/assets/invoice.js" }), false},
		{"another caller", "RangeError", "", change(2, func(f *Frame) { f.Function = "preview" }), false},
		{"a renamed file", "RangeError", "", change(2, func(f *Frame) { f.URL = "https://shop.example.com/assets/app.3f9c1a.js" }), false},
	} {
		if got := Fingerprint(c.typ, c.msg, c.frames, nil); (got == want) != c.sameGroup {
			t.Errorf("%s: same group %v, want %v", c.name, got == want, c.sameGroup)
		}
	}
}

func TestPath(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:8765/assets/bugs.js?build=a", "/assets/bugs.js"},
		{"https://cdn.example.net/assets/bugs.js#L3", "/assets/bugs.js"},
		{"https://user:pw@example.com:8443/a/./b/../c.js", "/a/c.js"},
		{"https://example.com", "/"},
		{"https://example.com?x=1", "/"},
		{"file:///C:/example.html", "/C:/example.html"},
		{"webpack://shop/./src/cart.ts", "/src/cart.ts"},
		{"chrome-extension://abcdef/content.js", "/content.js"},
		{"blob:https://example.com/550e8400-e29b-41d4-a716-446655440000", "blob:"},
		{"data:text/javascript,throw new Error(1)", "data:"},
		{"/srv/app/index.js", "/srv/app/index.js"},
		{"node:internal/timers", "node:internal/timers"},
		{`C:\app\x.js`, `C:\app\x.js`},
		{"filename.js", "filename.js"},
		{"<anonymous>", "<anonymous>"},
		{"  /a.js  ", "/a.js"},
		{"", ""},
	} {
		if got := Path(c.url); got != c.want {
			t.Errorf("Path(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

func TestMessage(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"  plain text  ", "plain text"},
		{"a\n\tb   c", "a b c"},
		{"order 1234 failed", "order 0 failed"},
		{"user42 and v2", "user0 and v0"},
		{"id 3f9c1a not found", "id 0 not found"},
		{"deadbeef", "deadbeef"},
		{"550e8400-e29b-41d4-a716-446655440000", "0-0-0-0-0"},
		{"Cannot read properties of undefined (reading 'length')", "Cannot read properties of undefined (reading 'length')"},
		{"at position 12 (line 1 column 13)", "at position 0 (line 0 column 0)"},
		{"1.5e3", "0.0"},
		{"\xff\x00bad", "\uFFFDbad"},
		{strings.Repeat("é", 600), strings.Repeat("é", 512)},
	} {
		if got := Message(c.in); got != c.want {
			t.Errorf("Message(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func BenchmarkFingerprint(b *testing.B) {
	frames := Parse(readStack(b, "chromium-a-map.txt"))
	b.ReportAllocs()
	for range b.N {
		Fingerprint("TypeError", "Cannot read properties of null (reading 'toFixed')", frames, SDKFrame)
	}
}
