package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"strata/internal/analytics"
)

// testPersonCap checks what the persons cap relies on (docs/security.md,
// "Person profiles written from events"): CountPersons counts a product's
// own profiles, and an ExistingOnly update changes a person who exists
// (properties, first and last seen) and creates none, with or without
// properties, beside an ordinary update in the same call.
func testPersonCap(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	apply := func(us ...analytics.PersonUpdate) {
		t.Helper()
		if err := s.ApplyPersons(ctx, us); err != nil {
			t.Fatal(err)
		}
	}
	count := func(p analytics.Product) int64 {
		t.Helper()
		n, err := s.CountPersons(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(a); n != 0 {
		t.Fatalf("a new product has %d persons", n)
	}
	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: "ann", Set: map[string]json.RawMessage{"plan": json.RawMessage(`"free"`)}, FirstSeen: day, LastSeen: day},
		analytics.PersonUpdate{ProductID: a.ID, DistinctID: "bo", FirstSeen: day, LastSeen: day},
		analytics.PersonUpdate{ProductID: b.ID, DistinctID: "cy", FirstSeen: day, LastSeen: day})
	if na, nb := count(a), count(b); na != 2 || nb != 1 {
		t.Errorf("CountPersons = %d and %d, want 2 and 1", na, nb)
	}

	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: "ann", Set: map[string]json.RawMessage{"plan": json.RawMessage(`"pro"`)},
		FirstSeen: day.Add(time.Hour), LastSeen: day.Add(time.Hour), ExistingOnly: true},
		analytics.PersonUpdate{ProductID: a.ID, DistinctID: "bo", FirstSeen: day.Add(-time.Hour), LastSeen: day.Add(2 * time.Hour), ExistingOnly: true},
		analytics.PersonUpdate{ProductID: a.ID, DistinctID: "new, with traits", Set: map[string]json.RawMessage{"x": json.RawMessage(`1`)}, FirstSeen: day, LastSeen: day, ExistingOnly: true},
		analytics.PersonUpdate{ProductID: a.ID, DistinctID: "new, seen only", FirstSeen: day, LastSeen: day, ExistingOnly: true},
		analytics.PersonUpdate{ProductID: b.ID, DistinctID: "dee", FirstSeen: day, LastSeen: day})
	if na, nb := count(a), count(b); na != 2 || nb != 2 {
		t.Errorf("after ExistingOnly updates: %d and %d persons, want 2 and 2", na, nb)
	}
	for _, id := range []string{"new, with traits", "new, seen only"} {
		if _, err := s.Person(ctx, a.ID, id); !errors.Is(err, analytics.ErrNotFound) {
			t.Errorf("an ExistingOnly update created %q: %v", id, err)
		}
	}
	ann, err := s.Person(ctx, a.ID, "ann")
	if err != nil {
		t.Fatal(err)
	}
	var props map[string]string
	json.Unmarshal(ann.Properties, &props)
	if props["plan"] != "pro" || !ann.FirstSeen.Equal(day) || !ann.LastSeen.Equal(day.Add(time.Hour)) {
		t.Errorf("ann after an ExistingOnly update: %s, seen %v – %v", ann.Properties, ann.FirstSeen, ann.LastSeen)
	}
	bo, err := s.Person(ctx, a.ID, "bo")
	if err != nil {
		t.Fatal(err)
	}
	if !bo.FirstSeen.Equal(day.Add(-time.Hour)) || !bo.LastSeen.Equal(day.Add(2*time.Hour)) {
		t.Errorf("bo after an ExistingOnly update: seen %v – %v, want %v – %v", bo.FirstSeen, bo.LastSeen, day.Add(-time.Hour), day.Add(2*time.Hour))
	}
}
