package importer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkImportFast is `strata import --fast` in process: a PostHog
// export of 200,000 page views and sign-ups (the shape of
// docs/benchmarks.md's figure) mapped, validated, enriched, checked
// against the store and appended to a real DuckDB file in batches of
// 10,000. It reports events/s; the issue asks for 100,000.
func BenchmarkImportFast(b *testing.B) {
	const events = 200_000
	path := filepath.Join(b.TempDir(), "export.jsonl")
	writeBenchExport(b, path, events)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f := newImportFixture(b)
		b.StartTimer()
		start := time.Now()
		rep, err := Run(context.Background(), f.sink, Options{Source: PostHog{}, Batch: 10000}, path)
		if err != nil || rep.Imported != events {
			b.Fatalf("imported %d, %v", rep.Imported, err)
		}
		b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
	}
}

// writeBenchExport writes n PostHog JSON lines: 50,000 users, 50 pages,
// four weeks.
func writeBenchExport(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(1, 2))
	enc := json.NewEncoder(w)
	for i := 0; i < n; i++ {
		name := "$pageview"
		if i%4 == 0 {
			name = "signup"
		}
		enc.Encode(map[string]any{"uuid": fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64()), "event": name,
			"distinct_id": fmt.Sprintf("u%d", r.IntN(50000)),
			"timestamp":   time.Date(2026, 10, 1+i*28/n, r.IntN(24), r.IntN(60), 0, 0, time.UTC).Format(time.RFC3339),
			"properties": map[string]any{"$current_url": fmt.Sprintf("https://ex.com/p%d", r.IntN(50)), "$referrer": "$direct",
				"$browser": "Chrome", "$session_id": fmt.Sprintf("s%d", r.IntN(200000))}})
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
}
