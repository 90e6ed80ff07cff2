package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/geo"
	"strata/internal/enrich/ua"
	"strata/internal/ingest"
	"strata/internal/store/duckdb"
	"strata/internal/store/spool"
)

// BenchmarkBatchPath measures the whole path of a 500-event batch in
// process, as the server runs it with the spool: envelope parse,
// validation and enrichment (the geo lookup included), the writer, the
// spool's record encode, write and fdatasync, and its loaders reading the
// records back and appending them to DuckDB. The timer stops once every
// event is in DuckDB. Two kinds of batch: as strata-bench sends them (each
// event names its user agent, so none is located, and no viewport width)
// and as the browser SDK sends them (the request's user agent and client
// address, a $viewport_width, so every event has a country, region, city
// and screen class). docs/benchmarks.md, "Geography at ingest".
func BenchmarkBatchPath(b *testing.B) {
	db, err := geo.Embedded()
	if err != nil {
		b.Fatal(err)
	}
	agent := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	for _, kind := range []string{"strata-bench", "browser"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			inner, err := duckdb.Open(ctx, dir, duckdb.Options{MemoryLimit: "1GB"})
			if err != nil {
				b.Fatal(err)
			}
			// The spool's Close closes inner.
			sp, err := spool.Open(ctx, inner, spool.Options{Dir: dir + "/spool"})
			if err != nil {
				inner.Close()
				b.Fatal(err)
			}
			defer sp.Close()
			w := ingest.NewWriter(sp, ingest.WriterOptions{})
			defer w.Close()
			p := &ingest.Pipeline{UA: ua.NewParser(1000, bots.Default()), Geo: db}
			req := ingest.Request{Product: 1, Env: analytics.EnvLive, UserAgent: agent,
				ClientAddr: netip.MustParseAddr("81.2.69.142")}
			bodies := make([][]byte, 16)
			for j := range bodies {
				bodies[j] = batchBody(kind == "browser", agent)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				body := freshUUIDs(bodies[i%len(bodies)])
				b.StartTimer()
				env, err := ingest.ParseEnvelope(body)
				if err != nil {
					b.Fatal(err)
				}
				req.ReceivedAt = time.Now()
				acc, rej := p.Process(env, req)
				if len(acc) != 500 || len(rej) != 0 {
					b.Fatalf("accepted %d, rejected %v", len(acc), rej)
				}
				if kind == "browser" && acc[0].Event.Country == "" {
					b.Fatal("a browser event was not located")
				}
				if err := w.Write(ctx, acc); err != nil {
					b.Fatal(err)
				}
				ingest.Release(acc)
			}
			if err := sp.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N*500)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// batchBody is a 500-event batch with uuid placeholders that freshUUIDs
// fills: as strata-bench's load generator builds it, or as the browser SDK
// sends events (no user agent of their own, a $session_id and a
// $viewport_width).
func batchBody(browser bool, agent string) []byte {
	pages := []string{"/", "/pricing", "/docs/getting-started", "/blog/launch", "/signup", "/app/dashboard"}
	batch := make([]map[string]any, 500)
	for i := range batch {
		ev := map[string]any{
			"uuid": uuid.Nil.String(), "event_name": "$pageview",
			"distinct_id": fmt.Sprintf("user_%d", i*7919%50000),
			"timestamp":   time.Now().UTC().Add(-time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano),
			"url":         "https://shop.example.com" + pages[i%len(pages)] + "?utm_source=newsletter",
			"referrer":    "https://www.google.com/",
			"properties":  map[string]any{"plan": "pro", "price": 49.5, "items": i % 5, "ab": map[string]any{"variant": "b"}},
		}
		if browser {
			ev["properties"].(map[string]any)["$session_id"] = "0192d0c4-5f1e-7a3b-9c4d-1e2f3a4b5c6f"
			ev["properties"].(map[string]any)["$viewport_width"] = 1280 + i%3*300
		} else {
			ev["user_agent"] = agent
		}
		batch[i] = ev
	}
	body, _ := json.Marshal(map[string]any{"batch": batch, "sent_at": time.Now().UTC().Format(time.RFC3339Nano)})
	return body
}

// freshUUIDs writes a new random uuid over each of body's, so that the
// writer's deduplication stores every batch.
func freshUUIDs(body []byte) []byte {
	nil36 := []byte(uuid.Nil.String())
	for i := 0; i+36 <= len(body); i++ {
		if body[i] == '0' && string(body[i:i+36]) == string(nil36) || i > 0 && body[i-1] == '"' && isUUIDAt(body[i:]) {
			copy(body[i:], uuid.NewString())
			i += 35
		}
	}
	return body
}

// isUUIDAt reports whether b starts with a uuid's 36 characters followed
// by a quote.
func isUUIDAt(b []byte) bool {
	if len(b) < 37 || b[36] != '"' {
		return false
	}
	for j, c := range b[:36] {
		if j == 8 || j == 13 || j == 18 || j == 23 {
			if c != '-' {
				return false
			}
		} else if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
