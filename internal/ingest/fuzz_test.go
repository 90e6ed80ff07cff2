package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
	"strata/internal/jsontext"
)

// describe renders a decoded event for comparison; absent and null
// properties are the same to ingest.
func describe(w *wireEvent) string {
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return strconv.Quote(*p)
	}
	props := string(w.Properties)
	if props == "null" {
		props = ""
	}
	return strings.Join([]string{str(w.EventName), str(w.DistinctID), str(w.Timestamp), str(w.UUID),
		str(w.UserAgent), str(w.URL), str(w.Referrer), props}, "|")
}

// FuzzProcess feeds arbitrary bodies through the envelope parser and the
// event pipeline. Whatever the input, nothing panics, every event of a
// parsed batch is either accepted or rejected exactly once, and what is
// accepted satisfies the limits storage relies on. `make test` runs it
// briefly on top of the seed corpus in testdata/fuzz/FuzzProcess.
func FuzzProcess(f *testing.F) {
	for _, seed := range []string{
		`{"batch":[{"event_name":"signup","distinct_id":"u1"}]}`,
		`{"batch":[{"event_name":"$pageview","distinct_id":"u1","url":"https://a.b/c?d","user_agent":"Mozilla/5.0 (compatible; GPTBot/1.2)","properties":{"a":[1,{"b":null}]}}],"sent_at":"2026-01-01T00:00:00Z"}`,
		`{"batch":[{"event_name":"e","distinct_id":"u","timestamp":"2026-01-01T00:00:00.5+02:00","uuid":"0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6d"}],"api_key":"st_live_x"}`,
		`{"batch":[{"event_name":"e","distinct_id":"u","properties":{"\u0024is_bot":1}}]}`,
		`{"batch":[1,"x",null,[],{"event_name":null}]}`,
		`{"batch":[{"event_name":"é😀","distinct_id":"\u0000"}]}`,
		`{"batch":[]}`, `{}`, `[]`, `null`, ``, `{"batch":[{`,
		// Shapes where two JSON decoders may disagree.
		`{"batch":[{"event_name":"a","event_name":"b","distinct_id":"u"}]}`,
		`{"BATCH":[{"Event_Name":"a","DISTINCT_ID":"u","Properties":null}]}`,
		`{"batch":[{"event_name":"\ud83d\ude00\u00e9\"\\\/","distinct_id":"\ud800"}]} `,
		`{"batch":[{"event_name":"a","distinct_id":"u","properties":{"a":1,"a":[1e999,-0.0]}}]}`,
		`{"batch":[{"event_name":"a","distinct_id":"u","url":null,"timestamp":null}],"sent_at":null,"api_key":null}`,
		`{"batch":[{"event_name":"a\x","distinct_id":"u"}]}`,
		`{"batch":[{"event_name":"a\u12","distinct_id":"u",}],}`,
		"\xef\xbb\xbf{\"batch\":[{\"event_name\":\"a\",\"distinct_id\":\"u\"}]}",
		`{"batch":[{"event_name":"a","distinct_id":"u"}]}}`,
		// Text rules: NUL anywhere in an event, lone surrogates, whole pairs.
		`{"batch":[{"event_name":"a","distinct_id":"u","properties":{"k\u0000":"v\u0000"}}]}`,
		`{"batch":[{"event_name":"s\ud800","distinct_id":"u"},{"event_name":"a","distinct_id":"u","properties":{"\udc00":1}}]}`,
		`{"batch":[{"event_name":"\ud83d\ude00","distinct_id":"\uD83D\uDE01","properties":{"e":"\ud83d\ude02\\ud800"}}]}`,
		// The SDKs' shape, which scanEnvelope decodes: whitespace, nulls,
		// properties with brackets and quotes in strings, any JSON value.
		` { "batch" : [ { "properties" : { "a" : "}]\"[{" , "b" : [ 1 , { } ] } , "event_name" : "e" , "distinct_id" : "u" } , {} ] , "api_key" : "k" , "sent_at" : null } `,
		`{"api_key":null,"batch":[{"event_name":"e","distinct_id":"u","properties":null,"url":null},{"event_name":"e","distinct_id":"u","properties":12},{"event_name":"e","distinct_id":"u","properties":"x"}]}`,
		`{"batch":[{"event_name":"e","distinct_id":"u","properties":{}}],"batch":[]}`,
		`{"batch":[{"event_name":"e","distinct_id":"u","properties":{"a":1}"}]}`,
		`{"batch":[{"event_name":"e","distinct_id":"u","properties":tru}]}`,
		`{"batch":[{"event_name":"e","distinct_id":"u","uuid":5}]}`,
	} {
		f.Add([]byte(seed))
	}
	p := &Pipeline{UA: ua.NewParser(1000, bots.Default())}
	received := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		env, err := ParseEnvelope(body)
		if err != nil {
			var e *analytics.Error
			if !errors.As(err, &e) || e.Code == "" || e.Message == "" {
				t.Fatalf("ParseEnvelope error %v is not a coded *analytics.Error", err)
			}
			return
		}
		// The fast decoder must never accept what encoding/json refuses.
		if err := stdlibDecode(body, &wireEnvelope{}); err != nil {
			t.Fatalf("goccy/go-json accepted a body encoding/json refuses: %v", err)
		}
		if env.Len() == 0 || env.Len() > MaxBatchEvents {
			t.Fatalf("parsed batch of %d events", env.Len())
		}
		accepted, rejected := p.Process(env, Request{Product: 7, Env: analytics.EnvLive, ReceivedAt: received})
		if len(accepted)+len(rejected) != env.Len() {
			t.Fatalf("%d accepted + %d rejected != %d events", len(accepted), len(rejected), env.Len())
		}
		seen := map[int]bool{}
		for _, r := range rejected {
			if seen[r.Index] || r.Index < 0 || r.Index >= env.Len() || r.Code == "" || r.Message == "" {
				t.Fatalf("bad rejection %+v", r)
			}
			seen[r.Index] = true
		}
		if env.events != nil {
			// The one-pass path must decode exactly what encoding/json does.
			var std typedEnvelope
			if err := stdlibDecode(body, &std); err != nil {
				t.Fatalf("fast path accepted a body encoding/json refuses: %v", err)
			}
			for i := range env.events {
				if a, b := describe(&env.events[i]), describe(&(*std.Batch)[i]); a != b {
					t.Fatalf("event %d: fast path decoded %s, encoding/json %s", i, a, b)
				}
			}
		}
		for _, a := range accepted {
			if i := a.Index; env.events == nil && stdlibDecode(env.Batch[i], &wireEvent{}) != nil {
				t.Fatalf("goccy/go-json accepted event %d that encoding/json refuses: %s", i, env.Batch[i])
			}
			e := a.Event
			n := utf8.RuneCountInString(e.Name)
			if n < 1 || n > maxNameChars || e.DistinctID == "" || e.ProductID != 7 {
				t.Fatalf("accepted invalid event %+v", e)
			}
			for _, s := range []string{e.Name, e.DistinctID, e.URL, e.Referrer, e.UserAgent} {
				if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
					t.Fatalf("accepted a string that is not UTF-8 or holds NUL: %q", s)
				}
			}
			if _, _, nul, _, _ := scanProperties(e.Properties); nul {
				t.Fatalf("accepted properties holding NUL: %s", e.Properties)
			}
			if i := jsontext.LoneSurrogate(e.Properties); i >= 0 {
				t.Fatalf("accepted properties with a lone surrogate: %s", e.Properties)
			}
			var props map[string]any
			if err := json.Unmarshal(e.Properties, &props); err != nil || props == nil {
				t.Fatalf("accepted properties %q are not a JSON object: %v", e.Properties, err)
			}
			if e.Name == "$bot_pageview" && !e.IsBot {
				t.Fatal("$bot_pageview without a bot")
			}
		}
	})
}

// FuzzURLPath holds urlPath's shortcut to url.Parse's answer: whenever
// simplePath takes a URL, its path must be parsedPath's.
func FuzzURLPath(f *testing.F) {
	for _, s := range []string{
		"https://shop.example.com/pricing", "https://example.com", "http://example.com:8080/a/b?x=1",
		"https://example.com?x=1", "https://example.com/a%20b", "https://example.com/a?b=%zz",
		"https://example.com/a#frag", "https://user@example.com/a", "https://[::1]/a", "https://ex ample.com/",
		"https://example.com:80x/", "https://example.com:/a", "HTTPS://example.com/a", "https://", "https:///a",
		"https://example.com/\x7f", "https://example.com/a\\b", "https://exämple.com/a", "/relative", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if got, ok := simplePath(raw); ok {
			if want := parsedPath(raw); got != want {
				t.Errorf("simplePath(%q) = %q, url.Parse says %q", raw, got, want)
			}
		}
	})
}

// FuzzSqueezeSpace holds squeezeSpace to "the same JSON": an input is
// valid exactly when what squeezeSpace makes of it is, and then both
// compact to the same bytes. It reads one byte at a time, so that a run of
// whitespace, a string or an escape across two reads is covered too.
func FuzzSqueezeSpace(f *testing.F) {
	for _, s := range []string{
		`[ {"a" :  "x  \"  y"} ,\n\n 1 ]`, `{"a\\":  [1 , 2]}`, `"  "`, `[1  2]`, " \t\r\n[]\n ",
		`{"a":"\u0020 \\\"  "}  `, `[  "`, `"\`, `  `, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := io.ReadAll(&squeezeSpace{r: iotest.OneByteReader(strings.NewReader(in))})
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > len(in) {
			t.Fatalf("squeezed %q into %q, which is longer", in, out)
		}
		if json.Valid([]byte(in)) != json.Valid(out) {
			t.Fatalf("%q is valid JSON: %v; squeezed into %q: %v", in, json.Valid([]byte(in)), out, json.Valid(out))
		}
		if !json.Valid(out) {
			return
		}
		var want, got bytes.Buffer
		json.Compact(&want, []byte(in))
		json.Compact(&got, out)
		if want.String() != got.String() {
			t.Errorf("%q compacts to %q, squeezed %q to %q", in, want.String(), out, got.String())
		}
	})
}

// TestSqueezeSpace checks what squeezeSpace keeps, whatever the reads.
func TestSqueezeSpace(t *testing.T) {
	for in, want := range map[string]string{
		`[ {"a" :  "x  \"  y"} ,` + "\n\n 1 ]":   `[ {"a" : "x  \"  y"} ,` + "\n1 ]",
		`{"a\\":  [1 ,  2]}`:                     `{"a\\": [1 , 2]}`,
		" \t\r\n[]\n \t":                         " []\n",
		`"  \\"  "  "`:                           `"  \\" "  "`,
		"[" + strings.Repeat(" ", 100_000) + "]": "[ ]",
	} {
		for name, r := range map[string]io.Reader{"whole": strings.NewReader(in), "one byte a read": iotest.OneByteReader(strings.NewReader(in))} {
			got, err := io.ReadAll(&squeezeSpace{r: r})
			if err != nil || string(got) != want {
				t.Errorf("%s: squeezed %.40q into %q, %v; want %q", name, in, got, err, want)
			}
		}
	}
}

// TestSimplePathTakesTheCommonShapes checks that the shortcut is taken for
// the URLs the SDKs send most, so that it cannot fall out of use unnoticed.
func TestSimplePathTakesTheCommonShapes(t *testing.T) {
	for raw, want := range map[string]string{
		"https://shop.example.com/pricing":               "/pricing",
		"https://shop.example.com/":                      "/",
		"https://shop.example.com":                       "/",
		"http://localhost:3000/docs/intro?utm_source=x":  "/docs/intro",
		"https://shop.example.com?ref=nav":               "/",
		"https://app.example.com/p/42/edit?tab=a%20b&x=": "/p/42/edit",
	} {
		if got, ok := simplePath(raw); !ok || got != want {
			t.Errorf("simplePath(%q) = %q, %v; want %q, true", raw, got, ok, want)
		}
	}
}
