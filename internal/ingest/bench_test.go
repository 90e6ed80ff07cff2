package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/geo"
	"strata/internal/enrich/ua"
)

// BenchmarkParseAndProcess measures the CPU ingest spends per 500-event
// batch before storage: envelope parsing, validation and enrichment.
func BenchmarkParseAndProcess(b *testing.B) {
	var batch []map[string]any
	for i := 0; i < 500; i++ {
		batch = append(batch, map[string]any{
			"uuid": "0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6d", "event_name": "$pageview",
			"distinct_id": fmt.Sprintf("user_%d", i), "timestamp": "2026-11-23T10:00:00.123Z",
			"url": "https://shop.example.com/pricing?utm_source=newsletter", "referrer": "https://www.google.com/",
			"user_agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			"properties": map[string]any{"plan": "pro", "price": 49.5, "items": 3, "ab": map[string]any{"variant": "b"}},
		})
	}
	body, _ := json.Marshal(map[string]any{"batch": batch, "sent_at": "2026-11-23T10:00:01Z"})
	p := &Pipeline{UA: ua.NewParser(1000, bots.Default())}
	req := Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now()}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		env, err := ParseEnvelope(body)
		if err != nil {
			b.Fatal(err)
		}
		if acc, rej := p.Process(env, req); len(acc) != 500 || len(rej) != 0 {
			b.Fatalf("accepted %d, rejected %v", len(acc), rej)
		}
	}
	b.ReportMetric(float64(b.N*500)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkGeo measures what the location costs Process, for a 500-event
// batch and for a single event (one lookup a request either way), each
// with the browser SDK's $viewport_width: without a database, and with the
// shipped one and a public client address. Run with -count to compare the
// pairs side by side (docs/benchmarks.md, "Geography at ingest").
func BenchmarkGeo(b *testing.B) {
	db, err := geo.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{500, 1} {
		var batch []map[string]any
		for i := range n {
			batch = append(batch, map[string]any{
				"uuid": "0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6d", "event_name": "$pageview",
				"distinct_id": fmt.Sprintf("user_%d", i), "timestamp": "2026-11-23T10:00:00.123Z",
				"url": "https://shop.example.com/pricing?utm_source=newsletter", "referrer": "https://www.google.com/",
				"properties": map[string]any{"plan": "pro", "$session_id": "0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6f", "$viewport_width": 1280},
			})
		}
		body, _ := json.Marshal(map[string]any{"batch": batch, "sent_at": "2026-11-23T10:00:01Z"})
		for _, c := range []struct {
			name string
			db   *geo.DB
		}{{"no database", nil}, {"lookup", db}} {
			b.Run(fmt.Sprintf("%d events, %s", n, c.name), func(b *testing.B) {
				p := &Pipeline{UA: ua.NewParser(1000, bots.Default()), Geo: c.db}
				// As the browser SDK sends them: the user agent is the
				// request's header, so the events are the client's own.
				req := Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now(), ClientAddr: netip.MustParseAddr("193.0.14.129"),
					UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"}
				b.ReportAllocs()
				for b.Loop() {
					env, err := ParseEnvelope(body)
					if err != nil {
						b.Fatal(err)
					}
					acc, _ := p.Process(env, req)
					if len(acc) != n || acc[0].Event.Country != map[bool]string{true: "", false: "NL"}[c.db == nil] {
						b.Fatalf("accepted %d", len(acc))
					}
					Release(acc)
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// BenchmarkParseEnvelopeSingle measures decoding one event as the browser
// SDK sends it, the body of most requests.
func BenchmarkParseEnvelopeSingle(b *testing.B) {
	body := []byte(`{"batch":[{"uuid":"0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6d","event_name":"$pageview","distinct_id":"0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6e",` +
		`"timestamp":"2026-11-23T10:00:00.123Z","url":"https://shop.example.com/pricing?utm_source=newsletter","referrer":"https://www.google.com/",` +
		`"properties":{"$session_id":"0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6f","$window_id":"0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c70","title":"Pricing"}}],"sent_at":"2026-11-23T10:00:01Z"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if env, err := ParseEnvelope(body); err != nil || env.Len() != 1 {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadRRWeb measures reading a replay chunk's rrweb events: a
// chunk as the recorder sends it (mouse moves, clicks and DOM mutations
// with their text, about 400 KB once decompressed), and one of 32 MiB of
// spaces, which the JSON decoder once took seconds to skip
// (squeezeSpace).
func BenchmarkReadRRWeb(b *testing.B) {
	var events []map[string]any
	for i := range 1000 {
		ts := 1700000000000 + int64(i)*50
		switch i % 4 {
		case 0:
			events = append(events, map[string]any{"type": 3, "timestamp": ts, "data": map[string]any{"source": 1,
				"positions": []map[string]any{{"x": i % 800, "y": i % 600, "id": 42, "timeOffset": -20}, {"x": i%800 + 3, "y": i%600 + 1, "id": 42, "timeOffset": 0}}}})
		case 1:
			events = append(events, map[string]any{"type": 3, "timestamp": ts, "data": map[string]any{"source": 2, "type": 2, "id": 57, "x": 120, "y": 48}})
		default:
			events = append(events, map[string]any{"type": 3, "timestamp": ts, "data": map[string]any{"source": 0,
				"texts": []any{}, "attributes": []map[string]any{{"id": 88, "attributes": map[string]any{"class": "cart-item cart-item--active", "style": "display: block"}}},
				"removes": []any{}, "adds": []map[string]any{{"parentId": 80, "nextId": nil, "node": map[string]any{"type": 3, "textContent": "Added to your cart: Blue shoes, size 42 ", "id": 1000 + i}}}}})
		}
	}
	typical, _ := json.MarshalIndent(events, "", "  ")
	for _, c := range []struct {
		name string
		json []byte
	}{
		{"a recorded chunk", typical},
		{"32 MiB of spaces", []byte("[" + strings.Repeat(" ", analytics.MaxReplayChunkJSON-64) + "{\"type\":4,\"timestamp\":1}]")},
	} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(c.json)
		zw.Close()
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.json)))
			b.ReportAllocs()
			for b.Loop() {
				if rej := readRRWeb(&analytics.ReplayChunk{Encoding: analytics.ReplayGzipJSON, Data: buf.Bytes()}); rej != nil {
					b.Fatal(rej)
				}
			}
		})
	}
}
