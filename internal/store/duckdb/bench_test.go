package duckdb

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
)

// BenchmarkAppendEvents measures the store's commit path alone: 5000-event
// groups, as the ingest writer forms them under load.
func BenchmarkAppendEvents(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir(), Options{MemoryLimit: "1GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	events := make([]analytics.Event, 5000)
	for i := range events {
		did := "user_" + strconv.Itoa(i*7919%50000)
		events[i] = analytics.Event{
			ProductID: 1, Env: analytics.EnvLive, Timestamp: now, ReceivedAt: now,
			Name: "$pageview", DistinctID: did, UserID: uint64(i),
			URL: "https://shop.example.com/pricing?utm_source=x", Path: "/pricing",
			Referrer: "https://www.google.com/", UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
			Browser: "Chrome", OS: "Windows", DeviceType: "desktop",
			Properties: []byte(`{"plan":"pro","price":49.5,"items":3,"ab":{"variant":"b"}}`),
		}
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range events {
			events[i].UUID = uuid.New()
		}
		if err := s.AppendEvents(context.Background(), events); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(events))/b.Elapsed().Seconds(), "events/s")
}
