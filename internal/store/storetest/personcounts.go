package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// testPersonEventCounts checks the people list's event counts: each id's
// events in the product, of both environments and bots included, none of
// another product's, an id without events absent, and an empty list.
func testPersonEventCounts(ctx context.Context, t *testing.T, s Events) {
	cs, ok := s.(analytics.PersonCountStore)
	if !ok {
		t.Fatalf("%T does not implement analytics.PersonCountStore", s)
	}
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var events []analytics.Event
	add := func(product int64, env analytics.Env, distinctID, name string) {
		e := analytics.Event{ProductID: product, Env: env, Timestamp: day.Add(time.Duration(len(events)) * time.Minute),
			ReceivedAt: day, Name: name, DistinctID: distinctID, UserID: ingest.UserID(distinctID), Path: "/p",
			URL: "https://x.example/p", Properties: json.RawMessage(`{}`)}
		e.UUID[0], e.UUID[1] = 0x71, byte(len(events))
		events = append(events, e)
	}
	const ann = "ann 'ü'"
	add(1, analytics.EnvLive, ann, "$pageview")
	add(1, analytics.EnvLive, ann, "clicked")
	add(1, analytics.EnvTest, ann, "$pageview")
	add(1, analytics.EnvLive, "bob", "$pageview")
	add(1, analytics.EnvLive, "carl", "$pageview")
	add(2, analytics.EnvLive, ann, "$pageview")
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	got, err := cs.PersonEventCounts(ctx, 1, []string{ann, "bob", "nobody"})
	if want := map[string]int64{ann: 3, "bob": 1}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("PersonEventCounts = %v, %v; want %v", got, err, want)
	}
	if got, err := cs.PersonEventCounts(ctx, 2, []string{ann, "bob"}); err != nil || !reflect.DeepEqual(got, map[string]int64{ann: 1}) {
		t.Errorf("product 2's counts = %v, %v", got, err)
	}
	if got, err := cs.PersonEventCounts(ctx, 1, nil); err != nil || len(got) != 0 {
		t.Errorf("no ids: %v, %v", got, err)
	}
}
