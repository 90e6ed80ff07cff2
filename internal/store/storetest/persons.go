package storetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// testDeletePersons checks the event store's part of deleting a person
// (docs/privacy.md): DeletePersons removes every event of the ids in the
// product (pageviews with a session, an exception, a custom event) and
// nothing else — not the same id in another product, not another user —,
// queries after it find nothing of theirs and give the others' answers
// unchanged, an id never seen is no error, and the id's next event counts
// as a new user.
func testDeletePersons(ctx context.Context, t *testing.T, s Events) {
	ps, ok := s.(analytics.PersonEventStore)
	if !ok {
		t.Fatalf("%T does not implement analytics.PersonEventStore", s)
	}
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var events []analytics.Event
	add := func(product int64, distinctID, name string, at time.Duration, props string) {
		e := analytics.Event{ProductID: product, Env: analytics.EnvLive, Timestamp: day.Add(at), ReceivedAt: day.Add(at),
			Name: name, DistinctID: distinctID, UserID: ingest.UserID(distinctID), Path: "/p", URL: "https://x.example/p",
			Properties: json.RawMessage(props)}
		e.UUID[0], e.UUID[1] = 0x70, byte(len(events))
		events = append(events, e)
	}
	const alice, bob = "alice 'ä'", "bob"
	add(1, alice, "$pageview", time.Hour, `{"$session_id":"sa"}`)
	add(1, alice, "$pageview", time.Hour+time.Minute, `{"$session_id":"sa"}`)
	add(1, alice, "$exception", time.Hour+2*time.Minute, `{"$session_id":"sa","$exception_type":"TypeError","$exception_message":"x"}`)
	add(1, bob, "$pageview", 2*time.Hour, `{"$session_id":"sb"}`)
	add(1, bob, "clicked", 2*time.Hour+time.Minute, `{"$session_id":"sb"}`)
	add(2, alice, "$pageview", 3*time.Hour, `{"$session_id":"sc"}`)
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	scope := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: day, To: day.AddDate(0, 0, 1)}
	trend := func() map[int]int64 {
		t.Helper()
		rows, err := s.Trend(ctx, analytics.TrendQuery{EventRange: scope, Interval: analytics.Day, Series: []analytics.TrendSeries{
			{Event: "$pageview"}, {Event: "$pageview", UniqueUsers: true}, {Event: "clicked"}, {Event: "$exception"}}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[int]int64{}
		for _, r := range rows {
			if r.Series == 1 && !r.Total {
				continue // the distinct users are the range's total row
			}
			out[r.Series] += r.Value
		}
		return out
	}
	visitors := func() (int64, int64) {
		t.Helper()
		a, err := s.Sessions(ctx, analytics.SessionsQuery{EventRange: scope, Interval: analytics.Day, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return a.Visitors, a.Totals.Visits
	}
	exported := func(product int64, id string) int {
		t.Helper()
		n := 0
		if err := ps.PersonEvents(ctx, product, id, func(e analytics.ExportedEvent) error {
			if e.DistinctID != id || e.UUID == "" || len(e.Properties) == 0 {
				t.Errorf("exported event %+v: want %q's, with a uuid and properties", e, id)
			}
			n++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := exported(1, alice); got != 3 {
		t.Fatalf("alice's events before = %d, want 3", got)
	}
	if got := trend(); got[0] != 3 || got[1] != 2 || got[2] != 1 || got[3] != 1 {
		t.Fatalf("trend before = %v, want pageviews 3, users 2, clicked 1, exceptions 1", got)
	}

	n, err := ps.DeletePersons(ctx, 1, []string{alice, "never seen"})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("DeletePersons = %d, want alice's 3 events of product 1", n)
	}
	if got := exported(1, alice); got != 0 {
		t.Errorf("alice's events after = %d, want none", got)
	}
	if got := exported(2, alice); got != 1 {
		t.Errorf("alice's events in product 2 = %d, want 1: a deletion is of one product", got)
	}
	if got := exported(1, bob); got != 2 {
		t.Errorf("bob's events = %d, want 2", got)
	}
	ue, err := s.UserEvents(ctx, analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvLive, DistinctID: alice, Limit: 10})
	if err != nil || len(ue) != 0 {
		t.Errorf("alice's user events after = %v, %v; want none", ue, err)
	}
	if got := trend(); got[0] != 1 || got[1] != 1 || got[2] != 1 || got[3] != 0 {
		t.Errorf("trend after = %v, want bob's: pageviews 1, users 1, clicked 1, exceptions 0", got)
	}
	if v, visits := visitors(); v != 1 || visits != 1 {
		t.Errorf("sessions after: %d visitors, %d visits; want bob's 1 and 1", v, visits)
	}
	if n, err := ps.DeletePersons(ctx, 1, []string{alice}); err != nil || n != 0 {
		t.Errorf("deleting alice again = %d, %v; want 0, nil", n, err)
	}

	// Alice comes back: a new user, counted once, with only the new event.
	events = events[:0]
	add(1, alice, "$pageview", 5*time.Hour, `{"$session_id":"sd"}`)
	events[0].UUID[0] = 0x71
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	if got := trend(); got[0] != 2 || got[1] != 2 {
		t.Errorf("trend after alice's return = %v, want pageviews 2, users 2", got)
	}
	if got := exported(1, alice); got != 1 {
		t.Errorf("alice's events after her return = %d, want 1", got)
	}
}
