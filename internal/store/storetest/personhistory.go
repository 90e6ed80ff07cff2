package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// testPersonHistory holds the streams a rebuild of person profiles reads
// (analytics.PersonHistoryStore) equal to a plain reading of random
// events: each distinct id of the product with its first and last event
// (every environment, never another product's, never the empty id), and
// the events that may set properties, oldest first, with their names,
// times and properties byte for byte.
func testPersonHistory(ctx context.Context, t *testing.T, s Events) {
	hs, ok := s.(analytics.PersonHistoryStore)
	if !ok {
		t.Fatalf("%T does not implement analytics.PersonHistoryStore", s)
	}
	rng := rand.New(rand.NewPCG(41, 5))
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	props := []string{`{}`, `{"$set":{"plan":"pro"}}`, `{"$set_once":{"first":"x"},"n":1}`, `{"plan":"free","seats":3}`,
		`{"note":"has \"$set in text"}`, `{"$current_url":"https://x.example/a"}`}
	names := []string{"$pageview", "$identify", "signup", "clicked"}
	var events []analytics.Event
	for i := range 3000 {
		product := int64(1 + rng.IntN(10)/9) // 2 for one event in ten
		id := fmt.Sprintf("user-%d", rng.IntN(200))
		if rng.IntN(50) == 0 {
			id = ""
		}
		at := day.Add(time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))).Truncate(time.Microsecond)
		env := analytics.EnvLive
		if rng.IntN(8) == 0 {
			env = analytics.EnvTest
		}
		e := analytics.Event{ProductID: product, Env: env, Timestamp: at, ReceivedAt: at, Name: names[rng.IntN(len(names))],
			DistinctID: id, UserID: ingest.UserID(id), Path: "/p", URL: "https://x.example/p",
			Properties: json.RawMessage(props[rng.IntN(len(props))])}
		e.UUID[0], e.UUID[1], e.UUID[2] = 0x71, byte(i>>8), byte(i)
		events = append(events, e)
	}
	for start := 0; start < len(events); start += 500 {
		if err := s.AppendEvents(ctx, events[start:min(start+500, len(events))]); err != nil {
			t.Fatal(err)
		}
	}

	type seen struct{ first, last time.Time }
	want := map[string]seen{}
	var wantTraits []analytics.Event
	for _, e := range events {
		if e.ProductID != 1 || e.DistinctID == "" {
			continue
		}
		w, ok := want[e.DistinctID]
		if !ok || e.Timestamp.Before(w.first) {
			w.first = e.Timestamp
		}
		if e.Timestamp.After(w.last) {
			w.last = e.Timestamp
		}
		want[e.DistinctID] = w
		if e.Name == "$identify" || bytes.Contains(e.Properties, []byte(`"$set`)) {
			wantTraits = append(wantTraits, e)
		}
	}
	got := map[string]seen{}
	if err := hs.EachPersonSeen(ctx, 1, func(id string, first, last time.Time) error {
		if _, twice := got[id]; twice {
			t.Errorf("%q streamed twice", id)
		}
		got[id] = seen{first, last}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) < 150 {
		t.Fatalf("%d persons streamed, want %d", len(got), len(want))
	}
	for id, w := range want {
		if g := got[id]; !g.first.Equal(w.first) || !g.last.Equal(w.last) {
			t.Errorf("%s: first and last %v %v, want %v %v", id, g.first, g.last, w.first, w.last)
		}
	}

	var gotTraits []analytics.Event
	if err := hs.EachTraitEvent(ctx, 1, func(e analytics.Event) error {
		gotTraits = append(gotTraits, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(gotTraits, func(a, b analytics.Event) int { return a.Timestamp.Compare(b.Timestamp) }) {
		t.Error("the events that set properties are not oldest first")
	}
	key := func(e analytics.Event) string {
		return fmt.Sprintf("%s|%s|%s|%s", e.DistinctID, e.Timestamp.UTC().Format(time.RFC3339Nano), e.Name, e.Properties)
	}
	count := func(list []analytics.Event) map[string]int {
		m := map[string]int{}
		for _, e := range list {
			m[key(e)]++
		}
		return m
	}
	if g, w := count(gotTraits), count(wantTraits); len(wantTraits) < 500 || !mapsEqual(g, w) {
		t.Errorf("%d events that set properties streamed, want %d (the same)", len(gotTraits), len(wantTraits))
	}
	for _, e := range gotTraits {
		if e.ProductID != 1 {
			t.Fatalf("an event of product %d streamed for product 1", e.ProductID)
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
