package duckdb

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
)

// BenchmarkAppendEvents measures the store's commit path alone: 5000-event
// groups, as the ingest writer forms them under load.
func BenchmarkAppendEvents(b *testing.B) {
	benchAppend(b, benchEvents())
}

// BenchmarkAppendUnlocated is BenchmarkAppendEvents with events as
// strata-bench sends them: each names its own user_agent, so none is
// located, and none has a viewport width; country, region, city and
// screen_class are NULL in every row (docs/benchmarks.md, "Geography at
// ingest: the four columns split out").
func BenchmarkAppendUnlocated(b *testing.B) {
	events := benchEvents()
	for i := range events {
		events[i].Country, events[i].ScreenClass = "", ""
	}
	benchAppend(b, events)
}

// benchAppend commits events again and again, each time with new uuids.
func benchAppend(b *testing.B, events []analytics.Event) {
	s, err := Open(context.Background(), b.TempDir(), Options{MemoryLimit: "1GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
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

// BenchmarkAppendEventsParallel is BenchmarkAppendEvents with two callers
// at once, as the spool's two loaders call it: filling chunks overlaps, and
// commits take their turns.
func BenchmarkAppendEventsParallel(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir(), Options{MemoryLimit: "1GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var done atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 2 {
		events := benchEvents()
		wg.Go(func() {
			for done.Add(1) <= int64(b.N) {
				for i := range events {
					events[i].UUID = uuid.New()
				}
				if err := s.AppendEvents(context.Background(), events); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N*5000)/b.Elapsed().Seconds(), "events/s")
}

// benchEvents is a 5,000-event group of page views, as the ingest writer
// forms them under load.
func benchEvents() []analytics.Event {
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
			Country: "DE", ScreenClass: "laptop",
			Properties: []byte(`{"plan":"pro","price":49.5,"items":3,"ab":{"variant":"b"}}`),
		}
	}
	return events
}

// BenchmarkFill measures filling one chunk of 2,048 events, the appender's
// own work before DuckDB takes the chunk: events as strata-bench sends
// them (no location or screen class: those four columns are NULL) and as
// the browser SDK's are (all four set). docs/benchmarks.md, "Geography at
// ingest".
func BenchmarkFill(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir(), Options{MemoryLimit: "1GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a := <-s.appenders
	defer func() { s.appenders <- a }()
	if err := a.open(context.Background(), s.pool); err != nil {
		b.Fatal(err)
	}
	defer a.discard()
	n := 2048
	ids := make([]uint32, n)
	for _, located := range []bool{false, true} {
		events := benchEvents()[:n]
		for i := range events {
			events[i].Country, events[i].ScreenClass = "", ""
			if located {
				events[i].Country, events[i].Region, events[i].City, events[i].ScreenClass = "GB", "England", "London", "laptop"
			}
		}
		b.Run(map[bool]string{false: "not located", true: "located"}[located], func(b *testing.B) {
			for b.Loop() {
				if err := a.fill(events, ids, ids); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
