package persons

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
)

// BenchmarkObserve is what the updater adds to each stored event on the
// loader's path: 500-event batches of page views by 50,000 users, one in
// a hundred events an identify, as the ingest benchmark's load plus
// traits, the events a millisecond apart; the store discards what the
// updater writes every 10,000 events, which counts. The timestamps cycle
// (200 batches), so after the first cycle most events fall within the
// last-seen step of their person, as a real load's do.
func BenchmarkObserve(b *testing.B) {
	u := New(Options{MaxPending: 1 << 30})
	u.Start(&fake{discard: true})
	defer u.Close()
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	batches := make([][]analytics.Event, 200)
	n := 0
	for j := range batches {
		batches[j] = make([]analytics.Event, 500)
		for i := range batches[j] {
			n++
			e := analytics.Event{ProductID: 1, Name: "$pageview", DistinctID: "user_" + strconv.Itoa(n*7919%50000),
				Timestamp: at.Add(time.Duration(n) * time.Millisecond), Properties: json.RawMessage(`{"plan":"pro","$session_id":"s"}`)}
			if n%100 == 0 {
				e.Name, e.Properties = "$identify", json.RawMessage(`{"email":"a@x.example","plan":"pro","$anon_distinct_id":"x"}`)
			}
			batches[j][i] = e
		}
	}
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		batch := batches[events/500%len(batches)]
		u.Observe(batch)
		events += len(batch)
		if events%10_000 == 0 {
			u.Flush(context.Background())
		}
	}
}
