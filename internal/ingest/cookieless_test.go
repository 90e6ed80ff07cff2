package ingest

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/cookieless"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestCookielessVisitor runs events sent in cookieless mode through the
// pipeline: the reserved distinct_id becomes the visitor derived from the
// request's address and the event's user agent (the same for both events
// of one browser, another for another browser), an $identify's
// $anon_distinct_id of the reserved value becomes the same id, a chosen
// distinct_id is left alone, and without an address or a salt store the
// events that carry the reserved value are refused, never stored with it.
func TestCookielessVisitor(t *testing.T) {
	const body = `{"batch":[
		{"event_name":"$pageview","distinct_id":"$cookieless"},
		{"event_name":"$pageview","distinct_id":"$cookieless","user_agent":"curl/8.5.0"},
		{"event_name":"$identify","distinct_id":"alice","properties":{"plan":"pro","$anon_distinct_id":"$cookieless","nested":{"$anon_distinct_id":"$cookieless"}}},
		{"event_name":"$pageview","distinct_id":"$cookieless"},
		{"event_name":"signup","distinct_id":"bob"}]}`
	visitors := &cookieless.Visitors{Salts: duckdbtest.Open(t)}
	firefox := "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
	req := Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now(), UserAgent: firefox, ClientAddr: netip.MustParseAddr("203.0.113.7")}

	p := &Pipeline{UA: ua.NewParser(100, bots.Default()), Visitors: visitors}
	env, err := ParseEnvelope([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	accepted, rejected := p.Process(env, req)
	if len(rejected) != 0 || len(accepted) != 5 {
		t.Fatalf("accepted %d, rejected %v", len(accepted), rejected)
	}
	want, err := visitors.ID(req.ReceivedAt, 1, req.ClientAddr, firefox)
	if err != nil {
		t.Fatal(err)
	}
	ev := func(i int) analytics.Event { return accepted[i].Event }
	if ev(0).DistinctID != want || ev(3).DistinctID != want || ev(0).UserID != UserID(want) {
		t.Errorf("the browser's page views: %q and %q (user %d); want %q", ev(0).DistinctID, ev(3).DistinctID, ev(0).UserID, want)
	}
	if curl := ev(1).DistinctID; curl == want || !strings.HasPrefix(curl, cookieless.IDPrefix) {
		t.Errorf("an event with its own user agent: %q; want a visitor of its own", curl)
	}
	if ev(4).DistinctID != "bob" {
		t.Errorf("a chosen distinct_id became %q", ev(4).DistinctID)
	}
	var props map[string]any
	if err := json.Unmarshal(ev(2).Properties, &props); err != nil {
		t.Fatal(err)
	}
	if ev(2).DistinctID != "alice" || props["$anon_distinct_id"] != want || props["plan"] != "pro" ||
		props["nested"].(map[string]any)["$anon_distinct_id"] != analytics.CookielessID {
		t.Errorf("$identify: %q with %s; want alice, $anon_distinct_id %s, the rest as sent", ev(2).DistinctID, ev(2).Properties, want)
	}

	for name, c := range map[string]struct {
		p   *Pipeline
		req Request
	}{
		"no address":    {p, Request{Product: 1, ReceivedAt: time.Now(), UserAgent: firefox}},
		"no salt store": {&Pipeline{UA: ua.NewParser(100, bots.Default())}, req},
	} {
		accepted, rejected := c.p.Process(env, c.req)
		// Only bob's event is kept: alice's $identify would link her to
		// the reserved id.
		if len(accepted) != 1 || len(rejected) != 4 {
			t.Fatalf("%s: accepted %d, rejected %v; want bob's event only", name, len(accepted), rejected)
		}
		for _, r := range rejected {
			if r.Code != RejectCookieless {
				t.Errorf("%s: event %d refused with %s; want %s", name, r.Index, r.Code, RejectCookieless)
			}
		}
	}
}

// BenchmarkCookieless measures Process on a 500-event batch of one browser
// whose events choose their distinct_id, and of one in cookieless mode,
// whose ids the pipeline derives (the day's salt held in memory after the
// first batch): what the mode costs ingest (docs/benchmarks.md,
// "Cookieless mode at ingest").
func BenchmarkCookieless(b *testing.B) {
	visitors := &cookieless.Visitors{Salts: duckdbtest.Open(b)}
	for _, mode := range []string{"chosen", "cookieless"} {
		b.Run(mode, func(b *testing.B) {
			var batch []map[string]any
			for i := 0; i < 500; i++ {
				id := fmt.Sprintf("user_%d", i)
				if mode == "cookieless" {
					id = analytics.CookielessID
				}
				batch = append(batch, map[string]any{"event_name": "$pageview", "distinct_id": id, "timestamp": "2026-11-23T10:00:00.123Z",
					"url": "https://shop.example.com/pricing?utm_source=newsletter", "referrer": "https://www.google.com/",
					"properties": map[string]any{"plan": "pro", "$viewport_width": 1280}})
			}
			body, _ := json.Marshal(map[string]any{"batch": batch})
			p := &Pipeline{UA: ua.NewParser(1000, bots.Default()), Visitors: visitors}
			req := Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now(), ClientAddr: netip.MustParseAddr("203.0.113.7"),
				UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"}
			b.ReportAllocs()
			for b.Loop() {
				env, err := ParseEnvelope(body)
				if err != nil {
					b.Fatal(err)
				}
				acc, rej := p.Process(env, req)
				if len(acc) != 500 || len(rej) != 0 {
					b.Fatalf("accepted %d, rejected %v", len(acc), rej)
				}
				Release(acc)
			}
			b.ReportMetric(float64(b.N*500)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
