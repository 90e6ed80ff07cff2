package ingest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
)

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
	} {
		f.Add([]byte(seed))
	}
	p := &Pipeline{UA: ua.NewParser(1000), Bots: bots.Default()}
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
		if len(env.Batch) == 0 || len(env.Batch) > MaxBatchEvents {
			t.Fatalf("parsed batch of %d events", len(env.Batch))
		}
		accepted, rejected := p.Process(env, Request{Product: 7, Env: analytics.EnvLive, ReceivedAt: received})
		if len(accepted)+len(rejected) != len(env.Batch) {
			t.Fatalf("%d accepted + %d rejected != %d events", len(accepted), len(rejected), len(env.Batch))
		}
		seen := map[int]bool{}
		for _, r := range rejected {
			if seen[r.Index] || r.Index < 0 || r.Index >= len(env.Batch) || r.Code == "" || r.Message == "" {
				t.Fatalf("bad rejection %+v", r)
			}
			seen[r.Index] = true
		}
		for _, a := range accepted {
			if i := a.Index; stdlibDecode(env.Batch[i], &wireEvent{}) != nil {
				t.Fatalf("goccy/go-json accepted event %d that encoding/json refuses: %s", i, env.Batch[i])
			}
			e := a.Event
			n := utf8.RuneCountInString(e.Name)
			if n < 1 || n > maxNameChars || e.DistinctID == "" || e.ProductID != 7 {
				t.Fatalf("accepted invalid event %+v", e)
			}
			for _, s := range []string{e.Name, e.DistinctID, e.URL, e.Referrer, e.UserAgent} {
				if !utf8.ValidString(s) {
					t.Fatalf("accepted a string that is not UTF-8: %q", s)
				}
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
