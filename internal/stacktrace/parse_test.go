package stacktrace

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// manifest is testdata/captured.json, written by testdata/capture.
type manifest struct {
	Shift   int               `json:"shift"`
	Engines map[string]string `json:"engines"`
	Stacks  []struct {
		File, Engine, Build, Bug, Type, Message string
	} `json:"stacks"`
}

// loadManifest reads testdata/captured.json.
func loadManifest(t testing.TB) manifest {
	t.Helper()
	b, err := os.ReadFile("testdata/captured.json")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Shift <= 0 || len(m.Stacks) == 0 {
		t.Fatalf("captured.json has shift %d and %d stacks", m.Shift, len(m.Stacks))
	}
	return m
}

// readStack reads one stack of testdata.
func readStack(t testing.TB, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shortFrames writes frames as shortFrame does.
func shortFrames(frames []Frame) []string {
	s := []string{}
	for _, f := range frames {
		s = append(s, shortFrame(f))
	}
	return s
}

// captured are the frames of every stack of build a, written out by hand
// from the files (shortFrame's form). The firefox-asyncstack stacks not
// listed are byte for byte firefox's, which TestParseCaptured checks.
var captured = map[string][]string{
	// Chromium 148 (V8).
	"chromium-a-async.txt": {
		"fetchProfile bugs.js:67:9",
		"loadUser bugs.js:70:19 async=async",
		"bugAsync bugs.js:74:16 async=async",
	},
	"chromium-a-constructor.txt": {
		"Widget bugs.js:113:33",
		"bugConstructor bugs.js:118:18",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-eval.txt": {
		"evalBug bugs.js:80:18 eval",
		"_ bugs.js:80:18 eval",
		"runScript bugs.js:80:18",
		"bugEval bugs.js:84:18",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-json.txt": {
		"parse _ native",
		"parseSettings bugs.js:90:25",
		"bugJSON bugs.js:94:20",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-map.txt": {
		"formatPrice bugs.js:101:14",
		"map _ native",
		"formatPrices bugs.js:100:28",
		"bugMap bugs.js:106:21",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-method.txt": {
		"sum bugs.js:31:35",
		"total bugs.js:27:22",
		"bugMethod bugs.js:36:28",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-module.txt": {
		"_ module.mjs:4:3",
	},
	"chromium-a-named.txt": {
		"computeTotal bugs.js:14:21",
		"bugNamed bugs.js:17:17",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-object.txt": {
		"save bugs.js:43:24",
		"bugObject bugs.js:48:20",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-sdk.txt": {
		"onSave bugs.js:124:9",
		"_ sdk.min.js:1:72",
		"bugSDK bugs.js:127:51",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-tail.txt": {
		"readName bugs.js:134:23",
		"displayName bugs.js:137:10",
		"bugTail bugs.js:140:10",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
	},
	"chromium-a-timeout.txt": {
		"_ bugs.js:57:16",
	},
	// Firefox 153 ESR (SpiderMonkey), default settings.
	"firefox-a-async.txt": {
		"fetchProfile bugs.js:67:9",
	},
	"firefox-a-constructor.txt": {
		"Widget bugs.js:113:33",
		"bugConstructor bugs.js:118:18",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-eval.txt": {
		"evalBug bugs.js:80:0 eval",
		"_ bugs.js:80:0 eval",
		"runScript bugs.js:80:18",
		"bugEval bugs.js:84:27",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-json.txt": {
		"parseSettings bugs.js:90:25",
		"bugJSON bugs.js:94:33",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-map.txt": {
		"formatPrice bugs.js:101:5",
		"formatPrices bugs.js:100:28",
		"bugMap bugs.js:106:33",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-method.txt": {
		"sum bugs.js:31:35",
		"total bugs.js:27:22",
		"bugMethod bugs.js:36:28",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-module.txt": {
		"_ module.mjs:4:3",
	},
	"firefox-a-named.txt": {
		"computeTotal bugs.js:14:3",
		"bugNamed bugs.js:17:29",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-object.txt": {
		"save bugs.js:43:16",
		"bugObject bugs.js:48:20",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-sdk.txt": {
		"onSave bugs.js:124:9",
		"_ sdk.min.js:1:72",
		"bugSDK bugs.js:127:51",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-tail.txt": {
		"readName bugs.js:134:3",
		"displayName bugs.js:137:10",
		"bugTail bugs.js:140:10",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-a-timeout.txt": {
		"_ bugs.js:57:7",
	},
	// Firefox with async stacks recorded: the same stacks as firefox-a-*, but for the frames past an async boundary.
	"firefox-asyncstack-a-async.txt": {
		"fetchProfile bugs.js:67:9",
		"loadUser bugs.js:70:25 async=async",
		"bugAsync bugs.js:74:22",
		"run bugs.js:165:20",
		"_ bugs.js:180:6",
	},
	"firefox-asyncstack-a-timeout.txt": {
		"_ bugs.js:57:7",
		"bugTimeout bugs.js:55:13 async=setTimeout handler",
		"run bugs.js:161:8",
		"_ bugs.js:180:6",
	},
	// Node.js 20 (V8), running bugs.js from /tmp/strata-stacks.
	"node-a-async.txt": {
		"fetchProfile bugs.js:67:9",
		"loadUser bugs.js:70:19 async=async",
		"bugAsync bugs.js:74:16 async=async",
	},
	"node-a-constructor.txt": {
		"Widget bugs.js:113:33",
		"bugConstructor bugs.js:118:18",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
		"require node:internal/modules/cjs/loader:1289:19",
		"require node:internal/modules/helpers:182:18",
	},
	"node-a-eval.txt": {
		"evalBug bugs.js:80:18 eval",
		"_ bugs.js:80:18 eval",
		"runScript bugs.js:80:18",
		"bugEval bugs.js:84:18",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
	},
	"node-a-json.txt": {
		"parse _ native",
		"parseSettings bugs.js:90:25",
		"bugJSON bugs.js:94:20",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
		"require node:internal/modules/cjs/loader:1289:19",
	},
	"node-a-map.txt": {
		"formatPrice bugs.js:101:14",
		"map _ native",
		"formatPrices bugs.js:100:28",
		"bugMap bugs.js:106:21",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
	},
	"node-a-method.txt": {
		"sum bugs.js:31:35",
		"total bugs.js:27:22",
		"bugMethod bugs.js:36:28",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
		"require node:internal/modules/cjs/loader:1289:19",
	},
	"node-a-named.txt": {
		"computeTotal bugs.js:14:21",
		"bugNamed bugs.js:17:17",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
		"require node:internal/modules/cjs/loader:1289:19",
		"require node:internal/modules/helpers:182:18",
	},
	"node-a-object.txt": {
		"save bugs.js:43:24",
		"bugObject bugs.js:48:20",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
		"require node:internal/modules/cjs/loader:1289:19",
		"require node:internal/modules/helpers:182:18",
	},
	"node-a-sdk.txt": {
		"onSave bugs.js:124:9",
		"_ sdk.min.js:1:72",
		"bugSDK bugs.js:127:51",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
		"require node:internal/modules/cjs/loader:1289:19",
	},
	"node-a-tail.txt": {
		"readName bugs.js:134:23",
		"displayName bugs.js:137:10",
		"bugTail bugs.js:140:10",
		"run bugs.js:165:20",
		"_ bugs.js:180:3",
		"_compile node:internal/modules/cjs/loader:1521:14",
		"js node:internal/modules/cjs/loader:1623:10",
		"load node:internal/modules/cjs/loader:1266:32",
		"_load node:internal/modules/cjs/loader:1091:12",
		"require node:internal/modules/cjs/loader:1289:19",
	},
	"node-a-timeout.txt": {
		"_onTimeout bugs.js:57:16",
		"listOnTimeout node:internal/timers:581:17",
		"processTimers node:internal/timers:519:7",
	},
	// WebKitGTK 2.50 (JavaScriptCore, Safari's engine). Eval'd code has no location; native functions are "[native code]".
	"webkit-a-async.txt": {
		"fetchProfile bugs.js:67:18",
	},
	"webkit-a-constructor.txt": {
		"Widget bugs.js:113:46",
		"bugConstructor bugs.js:118:28",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-eval.txt": {
		"evalBug _",
		"_ _ eval",
		"eval _ native",
		"runScript bugs.js:80:22",
		"bugEval bugs.js:84:27",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-json.txt": {
		"parse _ native",
		"parseSettings bugs.js:90:30",
		"bugJSON bugs.js:94:33",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-map.txt": {
		"formatPrice bugs.js:101:13",
		"map _ native",
		"formatPrices bugs.js:100:31",
		"bugMap bugs.js:106:33",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-method.txt": {
		"sum bugs.js:31:49",
		"total bugs.js:27:25",
		"bugMethod bugs.js:36:33",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-module.txt": {
		"_ module.mjs:4:17",
	},
	"webkit-a-named.txt": {
		"computeTotal bugs.js:14:20",
		"bugNamed bugs.js:17:29",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-object.txt": {
		"save bugs.js:43:23",
		"bugObject bugs.js:48:24",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-sdk.txt": {
		"onSave bugs.js:124:18",
		"_ sdk.min.js:1:77",
		"bugSDK bugs.js:127:51",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-tail.txt": {
		"readName bugs.js:134:22",
		"run bugs.js:165:23",
		"_ bugs.js:180:6",
	},
	"webkit-a-timeout.txt": {
		"_ bugs.js:57:23",
	},
}

// TestParseCaptured reads every captured stack of build a and compares its
// frames with those written out in captured.
func TestParseCaptured(t *testing.T) {
	m := loadManifest(t)
	seen := map[string]bool{}
	for _, s := range m.Stacks {
		if s.Build != "a" {
			continue
		}
		stack := readStack(t, s.File)
		want, ok := captured[s.File]
		if !ok && s.Engine == "firefox-asyncstack" {
			same := strings.Replace(s.File, "firefox-asyncstack-", "firefox-", 1)
			if other := readStack(t, same); other != stack {
				t.Errorf("%s differs from %s: write its frames out in captured", s.File, same)
				continue
			}
			want, ok = captured[same]
		}
		if !ok {
			t.Errorf("%s: no expected frames in captured", s.File)
			continue
		}
		seen[s.File] = true
		if got := shortFrames(Parse(stack)); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%s) =\n\t%s\nwant\n\t%s", s.File, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
	for file := range captured {
		if !seen[file] {
			t.Errorf("captured lists %s, which captured.json does not", file)
		}
	}
}

// TestParseKeepsURLs checks what shortFrame shortens: URLs are kept as the
// engines wrote them, query and all.
func TestParseKeepsURLs(t *testing.T) {
	for _, c := range []struct {
		file  string
		frame int
		url   string
	}{
		{"chromium-a-named.txt", 0, "http://127.0.0.1:8765/assets/bugs.js?build=a"},
		{"firefox-a-eval.txt", 0, "http://127.0.0.1:8765/assets/bugs.js?build=a"},
		{"webkit-a-named.txt", 0, "http://127.0.0.1:8765/assets/bugs.js"}, // WebKit leaves the query out
		{"chromium-a-sdk.txt", 1, "http://127.0.0.1:8765/sdk/v1/sdk.min.js"},
		{"node-a-named.txt", 0, "/tmp/strata-stacks/app/bugs.js"},
		{"node-a-named.txt", 4, "node:internal/modules/cjs/loader"},
	} {
		frames := Parse(readStack(t, c.file))
		if len(frames) <= c.frame || frames[c.frame].URL != c.url {
			t.Errorf("%s: frame %d's URL is not %q: %+v", c.file, c.frame, c.url, frames)
		}
	}
}

// TestParseRebuild: build b is build a moved down by m.Shift lines, and
// so are its frames, and nothing else of them.
func TestParseRebuild(t *testing.T) {
	m := loadManifest(t)
	n := 0
	for _, s := range m.Stacks {
		if s.Build != "b" {
			continue
		}
		a := Parse(readStack(t, strings.Replace(s.File, "-b-", "-a-", 1)))
		b := Parse(readStack(t, s.File))
		if len(a) != len(b) || len(a) == 0 {
			t.Errorf("%s: %d frames, build a %d", s.File, len(b), len(a))
			continue
		}
		for i := range a {
			want := a[i]
			want.URL = strings.Replace(want.URL, "?build=a", "?build=b", 1)
			if file := shortURL(want.URL); (file == "bugs.js" || file == "module.mjs") && want.Line != 0 {
				want.Line += m.Shift
			}
			if b[i] != want {
				t.Errorf("%s, frame %d: %+v, want %+v", s.File, i, b[i], want)
			}
		}
		n++
	}
	if n < 50 {
		t.Errorf("only %d stacks of build b", n)
	}
}

// TestParseMDN reads the examples of MDN's page on Error.prototype.stack
// for each engine (testdata/README.md).
func TestParseMDN(t *testing.T) {
	for file, want := range map[string][]string{
		"safari-mdn-calls.txt":          {"baz filename.js:10:24", "bar filename.js:6:6", "foo filename.js:2:6", "_ filename.js:13:4"},
		"spidermonkey-mdn-calls.txt":    {"baz filename.js:10:15", "bar filename.js:6:3", "foo filename.js:2:3", "_ filename.js:13:1"},
		"v8-mdn-calls.txt":              {"baz filename.js:10:15", "bar filename.js:6:3", "foo filename.js:2:3", "_ filename.js:13:1"},
		"safari-mdn-function.txt":       {"_ _", "_ filename.js:1:65"},
		"spidermonkey-mdn-function.txt": {"_ filename.js:1:0 eval", "_ filename.js:1:65"},
		"v8-mdn-function.txt":           {"_ filename.js:1:13 eval", "_ filename.js:1:65"},
		"safari-mdn-eval.txt":           {"_ _ eval", "eval _ native", "_ filename.js:3:17"},
		"spidermonkey-mdn-eval.txt":     {"_ filename.js:3:0 eval", "_ filename.js:3:13"},
		"v8-mdn-eval.txt":               {"_ filename.js:3:13 eval", "_ filename.js:3:13"},
	} {
		if got := shortFrames(Parse(readStack(t, file))); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%s) = %q, want %q", file, got, want)
		}
	}
}

// TestParseFormats reads one line of each form the engines write,
// including those the captured stacks do not have.
func TestParseFormats(t *testing.T) {
	for _, c := range []struct {
		name, line, want string
	}{
		// V8 (Chrome, Edge, Node).
		{"V8 function", "    at fn (http://x.test/a.js:1:2)", "fn http://x.test/a.js:1:2"},
		{"V8 anonymous", "    at http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2"},
		{"V8 async", "    at async fn (http://x.test/a.js:1:2)", "fn http://x.test/a.js:1:2 async=async"},
		{"V8 async anonymous", "    at async http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2 async=async"},
		{"V8 constructor", "    at new Foo (http://x.test/a.js:1:2)", "Foo http://x.test/a.js:1:2"},
		{"V8 method", "    at Foo.bar (http://x.test/a.js:1:2)", "bar http://x.test/a.js:1:2"},
		{"V8 alias", "    at Foo.bar [as baz] (http://x.test/a.js:1:2)", "bar http://x.test/a.js:1:2"},
		{"V8 getter", "    at Foo.get total [as total] (http://x.test/a.js:1:2)", "total http://x.test/a.js:1:2"},
		{"V8 Node module code", "    at Object.<anonymous> (/srv/app/index.js:1:2)", "_ /srv/app/index.js:1:2"},
		{"V8 event listener", "    at HTMLButtonElement.<anonymous> (https://app.example.com/assets/app.3f9c1a.js:1:18233)",
			"_ https://app.example.com/assets/app.3f9c1a.js:1:18233"},
		{"V8 computed", "    at Object.<computed> [as save] (http://x.test/a.js:1:2)", "_ http://x.test/a.js:1:2"},
		{"V8 eval", "    at eval (eval at run (http://x.test/a.js:5:6), <anonymous>:1:2)", "_ http://x.test/a.js:5:6 eval"},
		{"V8 function in eval", "    at f (eval at run (http://x.test/a.js:5:6), <anonymous>:1:2)", "f http://x.test/a.js:5:6 eval"},
		{"V8 nested eval", "    at f (eval at g (eval at h (http://x.test/a.js:5:6), <anonymous>:1:1), <anonymous>:2:2)",
			"f http://x.test/a.js:5:6 eval"},
		{"V8 new Function", "    at eval (eval at <anonymous> (filename.js:1:13), <anonymous>:1:8)", "_ filename.js:1:13 eval"},
		{"V8 native, old", "    at JSON.parse (native)", "parse _ native"},
		{"V8 native", "    at Array.map (<anonymous>)", "map _ native"},
		{"V8 native constructor", "    at new Promise (<anonymous>)", "Promise _ native"},
		{"V8 Promise.all", "    at async Promise.all (index 0)", "all _ native async=async"},
		{"V8 script without a name", "    at <anonymous>:1:5", "_ _:1:5"},
		{"V8 parentheses in the URL", "    at fn (http://x.test/a(1).js:1:2)", "fn http://x.test/a(1).js:1:2"},
		{"V8 Windows path", `    at fn (C:\app\x.js:3:4)`, `fn C:\app\x.js:3:4`},
		{"V8 file URL", "    at file:///C:/app/x.js:3:4", "_ file:///C:/app/x.js:3:4"},
		{"V8 tab", "\tat fn (http://x.test/a.js:1:2)", "fn http://x.test/a.js:1:2"},
		{"V8 CRLF", "    at fn (http://x.test/a.js:1:2)\r", "fn http://x.test/a.js:1:2"},
		{"Chakra (old Edge)", "   at Global code (http://x.test/a.js:1:2)", "_ http://x.test/a.js:1:2"},
		// SpiderMonkey (Firefox).
		{"SM function", "fn@http://x.test/a.js:1:2", "fn http://x.test/a.js:1:2"},
		{"SM top-level code", "@http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2"},
		{"SM anonymous inner", "fn/<@http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2"},
		{"SM anonymous inner, twice", "fn/</<@http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2"},
		{"SM inferred inner", "outer/obj.handler@http://x.test/a.js:1:2", "handler http://x.test/a.js:1:2"},
		{"SM contributes to", "outer/x<@http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2"},
		{"SM async", "async*fn@http://x.test/a.js:1:2", "fn http://x.test/a.js:1:2 async=async"},
		{"SM async anonymous", "async*@http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2 async=async"},
		{"SM setTimeout", "setTimeout handler*fn@http://x.test/a.js:1:2", "fn http://x.test/a.js:1:2 async=setTimeout handler"},
		{"SM promise callback", "promise callback*fn@http://x.test/a.js:1:2", "fn http://x.test/a.js:1:2 async=promise callback"},
		{"SM eval", "fn@http://x.test/a.js line 7 > eval:2:3", "fn http://x.test/a.js:7:0 eval"},
		{"SM eval code", "@http://x.test/a.js line 7 > eval:2:3", "_ http://x.test/a.js:7:0 eval"},
		{"SM nested eval", "@http://x.test/a.js line 7 > eval line 1 > eval:1:1", "_ http://x.test/a.js:7:0 eval"},
		{"SM new Function", "anonymous@http://x.test/a.js line 7 > Function:1:8", "_ http://x.test/a.js:7:0 eval"},
		{"SM without column (Firefox 14-29)", "fn@http://x.test/a.js:48", "fn http://x.test/a.js:48:0"},
		{"SM self-hosted", "map@self-hosted:221:17", "map self-hosted:221:17 native"},
		{"SM getter", "get total@http://x.test/a.js:1:2", "total http://x.test/a.js:1:2"},
		{"SM computed", `obj["a key"]@http://x.test/a.js:1:2`, `obj["a key"] http://x.test/a.js:1:2`},
		{"SM user info in the URL", "fn@http://me@x.test/a.js:1:2", "fn http://me@x.test/a.js:1:2"},
		// JavaScriptCore (Safari).
		{"JSC function", "fn@http://x.test/a.js:1:2", "fn http://x.test/a.js:1:2"},
		{"JSC global code", "global code@http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2"},
		{"JSC module code", "module code@http://x.test/a.js:1:2", "_ http://x.test/a.js:1:2"},
		{"JSC global code without a source", "global code", "_ _"},
		{"JSC eval code", "eval code@", "_ _ eval"},
		{"JSC eval code, bare", "eval code", "_ _ eval"},
		{"JSC function in eval", "evalBug@", "evalBug _"},
		{"JSC method in eval", "Cart.sum@", "sum _"},
		{"JSC non-ASCII name in eval", "grüße@", "grüße _"},
		{"JSC new Function", "anonymous@", "_ _"},
		{"JSC native", "map@[native code]", "map _ native"},
		{"JSC native, bare", "[native code]", "_ _ native"},
		{"JSC without column (Safari 6)", "@http://x.test/a.js:48", "_ http://x.test/a.js:48:0"},
	} {
		frames := Parse(c.line)
		if len(frames) != 1 || shortFrame(frames[0]) != c.want {
			t.Errorf("%s: Parse(%q) = %q, want %q", c.name, c.line, shortFrames(frames), c.want)
		}
	}
}

// TestParseSkipsWhatIsNoFrame: text that is no frame gives none, though it
// has an "@", an "at " or a location in it.
func TestParseSkipsWhatIsNoFrame(t *testing.T) {
	for _, line := range []string{
		"TypeError: Cannot read properties of undefined (reading 'x')",
		"Error",
		"Error: mail me@example.com:8080",
		"Error: see fn@http://x.test/a.js:1:2",
		"contact support@example.com:25",
		"at least one item is required",
		"    at the end (of the day)",
		"    at fn (http://x.test/a.js)",
		"    at (http://x.test/a.js:1:2)",
		"    at fn (http://x.test/a.js:1:2",
		"    at fn ((native)",
		"fn@bar",
		"fn@http://x.test/a.js",
		"fn@http://x.test/a.js:1234567890:1",
		"trace()@file:///C:/example.html:9",
		"    at ",
		"@@@",
		"hello there@",
		"Error!@",
	} {
		if frames := Parse(line); frames != nil {
			t.Errorf("Parse(%q) = %q, want no frame", line, shortFrames(frames))
		}
	}
}

// TestParseV8MessageLines: V8 puts the message first, over as many lines
// as it has; those lines are skipped.
func TestParseV8MessageLines(t *testing.T) {
	stack := "Error: first line\nsecond line: 42\n  third, indented\n    at fn (http://x.test/a.js:1:2)\n    at http://x.test/a.js:3:4"
	want := []string{"fn http://x.test/a.js:1:2", "_ http://x.test/a.js:3:4"}
	if got := shortFrames(Parse(stack)); !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %q, want %q", got, want)
	}
}

// TestParseBadInput: stacks of any shape are read without failing, within
// the bounds, and give text.
func TestParseBadInput(t *testing.T) {
	frame := "fn@http://x.test/a.js:1:2\n"
	r := rand.New(rand.NewSource(1))
	garbage := make([]byte, 1<<20)
	r.Read(garbage)
	for _, c := range []struct {
		name  string
		stack string
		want  int // frames
	}{
		{"empty", "", 0},
		{"blank lines", "\n\n \t\r\n", 0},
		{"1 MB of random bytes", string(garbage), -1},
		{"1 MB on one line", strings.Repeat("a", 1<<20), 0},
		{"a frame on a line of 1 MB", "fn@http://x.test/" + strings.Repeat("a", 1<<20) + ".js:1:2", 0},
		{"a frame just under the line bound", "fn@http://x.test/" + strings.Repeat("a", maxLine-30) + ".js:1:2", 1},
		{"a frame after a huge line", strings.Repeat("x", 1<<20) + "\n" + frame, 1},
		{"1 MB of frames", strings.Repeat(frame, (1<<20)/len(frame)), maxFrames},
		{"1 MB of V8 frames", strings.Repeat("    at fn (http://x.test/a.js:1:2)\n", 30000), maxFrames},
		{"1 MB of parentheses", "    at " + strings.Repeat("(", 1<<19) + strings.Repeat(")", 1<<19), 0},
		{"1 MB of at signs", strings.Repeat("@", 1<<20), 0},
		{"1 MB of evals", "    at eval (" + strings.Repeat("eval at f (", 1<<16) + "x:1:2)", 0},
		{"NULs", "fn@http://x.test/\x00a.js:1:2", 0},
		{"invalid UTF-8", "fn@http://x.test/a\xfe.js:1:2", 0},
		{"control characters", "    at f\x1bn (http://x.test/a.js:1:2)", 0},
		{"frames between binary lines", "\x00\x01\n" + frame + "\xff\xfe\n" + frame, 2},
	} {
		frames := Parse(c.stack)
		if c.want >= 0 && len(frames) != c.want {
			t.Errorf("%s: %d frames, want %d", c.name, len(frames), c.want)
		}
		if len(frames) > maxFrames {
			t.Errorf("%s: %d frames", c.name, len(frames))
		}
		for _, f := range frames {
			for _, s := range []string{f.Function, f.URL, f.Async} {
				if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
					t.Errorf("%s: %q is not text", c.name, s)
				}
			}
		}
	}
}

func TestName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"computeTotal", "computeTotal"},
		{"Cart.sum", "sum"},
		{"Object.save", "save"},
		{"a.b.c", "c"},
		{"new Widget", "Widget"},
		{"async loadUser", "loadUser"},
		{"Foo.bar [as baz]", "bar"},
		{"bugTimeout/<", ""},
		{"wrap/</<", ""},
		{"outer/inner", "inner"},
		{"outer/obj.handler", "handler"},
		{"Object.<anonymous>", ""},
		{"<anonymous>", ""},
		{"Object.<computed> [as x]", ""},
		{"get total", "total"},
		{"Cart.set total", "total"},
		{"get new Foo", "Foo"},
		{"global code", ""},
		{"eval code", ""},
		{"module code", ""},
		{"anonymous", ""},
		{"Global code", ""},
		{"Anonymous function", ""},
		{"  spaced  ", "spaced"},
		{"Module._extensions..js", "js"},
	} {
		got := Name(c.in)
		if got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := Name(got); again != got {
			t.Errorf("Name(Name(%q)) = %q, not %q", c.in, again, got)
		}
	}
}

// BenchmarkParse measures a real stack and megabytes of the inputs that
// cost Parse most: random bytes, one long line, many short lines, many
// frames (it stops at maxFrames), lines at the length bound built to make
// it scan (nested "eval at", colons).
func BenchmarkParse(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	garbage := make([]byte, 1<<20)
	r.Read(garbage)
	chromium, err := os.ReadFile("testdata/chromium-a-eval.txt")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, stack string }{
		{"chromium-eval", string(chromium)},
		{"1MB-random", string(garbage)},
		{"1MB-one-line", strings.Repeat("a", 1<<20)},
		{"1MB-short-lines", strings.Repeat("Error: x\n", (1<<20)/9)},
		{"1MB-frames", strings.Repeat("    at fn (http://x.test/a.js:1:2)\n", (1<<20)/36)},
		{"1MB-nested-evals", strings.Repeat("    at eval ("+strings.Repeat("eval at f (", 370)+"x)\n", 256)},
		{"1MB-at-lines", strings.Repeat("fn@"+strings.Repeat("x:", 2000)+"\n", 256)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.stack)))
			b.ReportAllocs()
			for range b.N {
				Parse(c.stack)
			}
		})
	}
}

// FuzzParse: whatever the input, Parse returns at most maxFrames frames of
// text with normalised names, and Fingerprint hashes them.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{"", "@", "at (", "    at eval (eval at ", "fn@x line 1 > eval:", "a*b*c@d:1:2", "\xff@\x00:1:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stack string) {
		frames := Parse(stack)
		if len(frames) > maxFrames {
			t.Fatalf("%d frames", len(frames))
		}
		for _, fr := range frames {
			for _, s := range []string{fr.Function, fr.URL, fr.Async} {
				if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
					t.Fatalf("%q is not text", s)
				}
			}
			if fr.Line < 0 || fr.Column < 0 {
				t.Fatalf("negative position %+v", fr)
			}
			if Name(fr.Function) != fr.Function {
				t.Fatalf("Function %q is not normalised: %q", fr.Function, Name(fr.Function))
			}
		}
		if fp := Fingerprint("Error", stack, frames, SDKFrame); len(fp) != 64 {
			t.Fatalf("fingerprint %q", fp)
		}
	})
}
