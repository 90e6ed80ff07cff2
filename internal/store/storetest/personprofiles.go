package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
)

// testPersonProfiles checks person profiles (docs/ingest.md, "Person
// profiles"): Set overwrites keys and SetOnce sets only missing ones,
// first seen only moves earlier and last seen only later, an update
// applied twice changes nothing, the list is latest seen first and paged
// by its cursor, searched by id prefix or by the email or name trait and
// filtered by properties, every method is scoped to its product, and
// profiles are deleted.
func testPersonProfiles(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	raw := func(v any) json.RawMessage {
		j, _ := json.Marshal(v)
		return j
	}
	set := func(kv ...any) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = raw(kv[i+1])
		}
		return m
	}
	props := func(p analytics.Person) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(p.Properties, &m); err != nil {
			t.Fatalf("properties %s: %v", p.Properties, err)
		}
		return m
	}
	apply := func(us ...analytics.PersonUpdate) {
		t.Helper()
		if err := s.ApplyPersons(ctx, us); err != nil {
			t.Fatal(err)
		}
	}
	get := func(product int64, id string) analytics.Person {
		t.Helper()
		p, err := s.Person(ctx, product, id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	const alice = "alice 'ä'"
	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: alice, Set: set("email", "Alice@Example.com", "plan", "free"),
		SetOnce: set("source", "ads"), FirstSeen: day.Add(time.Hour), LastSeen: day.Add(2 * time.Hour)})
	p := get(a.ID, alice)
	if want := map[string]any{"email": "Alice@Example.com", "plan": "free", "source": "ads"}; !reflect.DeepEqual(props(p), want) {
		t.Errorf("new person's properties = %v, want %v", props(p), want)
	}
	if !p.FirstSeen.Equal(day.Add(time.Hour)) || !p.LastSeen.Equal(day.Add(2*time.Hour)) {
		t.Errorf("new person seen %v – %v", p.FirstSeen, p.LastSeen)
	}
	// A later update: $set overwrites, $set_once of a key held does not,
	// of a new key does; an earlier first seen moves it, an earlier last
	// seen does not. Two updates of one person in one call apply in order.
	up := analytics.PersonUpdate{ProductID: a.ID, DistinctID: alice, Set: set("plan", "pro", "seats", 5),
		SetOnce: set("source", "organic", "referrer", "x.example"), FirstSeen: day, LastSeen: day.Add(time.Minute)}
	later := analytics.PersonUpdate{ProductID: a.ID, DistinctID: alice, Set: set("seats", 7), FirstSeen: day.Add(3 * time.Hour), LastSeen: day.Add(3 * time.Hour)}
	apply(up, later)
	p = get(a.ID, alice)
	want := map[string]any{"email": "Alice@Example.com", "plan": "pro", "seats": 7.0, "source": "ads", "referrer": "x.example"}
	if !reflect.DeepEqual(props(p), want) {
		t.Errorf("merged properties = %v, want %v", props(p), want)
	}
	if !p.FirstSeen.Equal(day) || !p.LastSeen.Equal(day.Add(3*time.Hour)) {
		t.Errorf("merged person seen %v – %v, want %v – %v", p.FirstSeen, p.LastSeen, day, day.Add(3*time.Hour))
	}
	apply(later)
	if again := get(a.ID, alice); !reflect.DeepEqual(props(again), want) || !again.LastSeen.Equal(p.LastSeen) {
		t.Errorf("an update applied again changed the person: %s %v", again.Properties, again.LastSeen)
	}

	// An update without properties (most of them) only widens first and
	// last seen, and keeps the properties.
	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: alice, FirstSeen: day.Add(time.Hour), LastSeen: day.Add(2 * time.Hour)})
	if got := get(a.ID, alice); !got.FirstSeen.Equal(day) || !got.LastSeen.Equal(day.Add(3*time.Hour)) || !reflect.DeepEqual(props(got), want) {
		t.Errorf("a narrower seen-only update changed the person: %s %v – %v", got.Properties, got.FirstSeen, got.LastSeen)
	}
	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: alice, FirstSeen: day.Add(-time.Hour), LastSeen: day.Add(3*time.Hour + time.Second)})
	if got := get(a.ID, alice); !got.FirstSeen.Equal(day.Add(-time.Hour)) || !got.LastSeen.Equal(day.Add(3*time.Hour+time.Second)) || !reflect.DeepEqual(props(got), want) {
		t.Errorf("a wider seen-only update: %s %v – %v", got.Properties, got.FirstSeen, got.LastSeen)
	}
	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: alice, FirstSeen: day, LastSeen: day.Add(3 * time.Hour)},
		analytics.PersonUpdate{ProductID: a.ID, DistinctID: alice, FirstSeen: day, LastSeen: day.Add(3 * time.Hour)})

	// The same id in product b is another person.
	if _, err := s.Person(ctx, b.ID, alice); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("person of product a read in b: %v", err)
	}
	apply(analytics.PersonUpdate{ProductID: b.ID, DistinctID: alice, Set: set("plan", "other"), FirstSeen: day, LastSeen: day.AddDate(0, 0, 5)})
	if got := props(get(a.ID, alice)); !reflect.DeepEqual(got, want) {
		t.Errorf("product b's update changed a's person: %v", got)
	}

	// More persons, seen one hour apart: u0 last, so u9 first in the list.
	for i := range 10 {
		u := analytics.PersonUpdate{ProductID: a.ID, DistinctID: fmt.Sprintf("u%d", i), FirstSeen: day, LastSeen: day.Add(time.Duration(4+i) * time.Hour)}
		switch i % 3 {
		case 0:
			u.Set = set("plan", "pro", "name", fmt.Sprintf("User Number%d", i))
		case 1:
			u.Set = set("plan", "free", "seats", i)
		}
		apply(u)
	}
	// Two persons seen at the same instant are ordered by id.
	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: "tie-b", FirstSeen: day, LastSeen: day.Add(30 * time.Minute)},
		analytics.PersonUpdate{ProductID: a.ID, DistinctID: "tie-a", FirstSeen: day, LastSeen: day.Add(30 * time.Minute)})
	// A value sent with escapes JSON does not need is found by its
	// characters; one with a quote by its quote.
	apply(analytics.PersonUpdate{ProductID: a.ID, DistinctID: "esc", FirstSeen: day, LastSeen: day.Add(20 * time.Minute),
		Set: map[string]json.RawMessage{"name": json.RawMessage(`"\u00c4nne \"Q\" \/ 12345678901234567890"`),
			"big": json.RawMessage(`12345678901234567890`), "city": json.RawMessage(`"M\u00fcnchen"`), "\u00fcber": json.RawMessage(`true`)}})
	if got := props(get(a.ID, "esc")); got["name"] != `Änne "Q" / 12345678901234567890` {
		t.Errorf("escaped name stored as %q", got["name"])
	}
	if got := string(get(a.ID, "esc").Properties); !strings.Contains(got, `"big":12345678901234567890`) {
		t.Errorf("a large number stored as %s", got)
	}
	ids := func(q analytics.PersonQuery) []string {
		t.Helper()
		q.ProductID = a.ID
		if q.Limit == 0 {
			q.Limit = 100
		}
		list, err := s.ListPersons(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, p := range list {
			out = append(out, p.DistinctID)
		}
		return out
	}
	all := []string{"u9", "u8", "u7", "u6", "u5", "u4", "u3", "u2", "u1", "u0", alice, "tie-a", "tie-b", "esc"}
	if got := ids(analytics.PersonQuery{}); !reflect.DeepEqual(got, all) {
		t.Errorf("list = %v, want %v", got, all)
	}
	var paged []string
	var after *analytics.PersonCursor
	for range 10 {
		list, err := s.ListPersons(ctx, analytics.PersonQuery{ProductID: a.ID, Limit: 4, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			paged = append(paged, p.DistinctID)
		}
		if len(list) < 4 {
			break
		}
		last := list[len(list)-1]
		after = &analytics.PersonCursor{LastSeen: last.LastSeen, DistinctID: last.DistinctID}
	}
	if !reflect.DeepEqual(paged, all) {
		t.Errorf("paged list = %v, want %v", paged, all)
	}
	checks := []struct {
		q    analytics.PersonQuery
		want []string
	}{
		{analytics.PersonQuery{Search: "u1"}, []string{"u1"}},
		{analytics.PersonQuery{Search: "tie"}, []string{"tie-a", "tie-b"}},
		{analytics.PersonQuery{Search: "alice@example"}, []string{alice}}, // email, case-insensitive
		{analytics.PersonQuery{Search: "number6"}, []string{"u6"}},        // name, case-insensitive
		{analytics.PersonQuery{Search: "lice"}, []string{alice}},          // a substring of the email only
		{analytics.PersonQuery{Search: "%"}, []string{}},                  // no pattern characters
		{analytics.PersonQuery{Search: "Änne"}, []string{"esc"}},          // in a name sent escaped (case folding beyond ASCII is the database's)
		{analytics.PersonQuery{Search: `"q" /`}, []string{"esc"}},
		{analytics.PersonQuery{Search: "ß"}, []string{}}, // not a prefix, not in a trait
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "plan", Operator: analytics.OpEq, Value: "pro"}}}, []string{"u9", "u6", "u3", "u0", alice}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "plan", Operator: analytics.OpNeq, Value: "pro"}}}, []string{"u8", "u7", "u5", "u4", "u2", "u1", "tie-a", "tie-b", "esc"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "seats", Operator: analytics.OpEq, Value: "7"}}}, []string{"u7", alice}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "name", Operator: analytics.OpContains, Value: "NUMBER"}}}, []string{"u9", "u6", "u3", "u0"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "big", Operator: analytics.OpEq, Value: "12345678901234567890"}}}, []string{"esc"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "seats", Operator: analytics.OpIsSet}}}, []string{"u7", "u4", "u1", alice}},
		// Filters whose value or key was sent escaped: eq, contains and
		// is_set look for the characters in the stored text first.
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "city", Operator: analytics.OpEq, Value: "München"}}}, []string{"esc"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "city", Operator: analytics.OpContains, Value: "ünCH"}}}, []string{"esc"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "name", Operator: analytics.OpEq, Value: `Änne "Q" / 12345678901234567890`}}}, []string{"esc"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "über", Operator: analytics.OpIsSet}}}, []string{"esc"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "über", Operator: analytics.OpEq, Value: "true"}}}, []string{"esc"}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "plan", Operator: analytics.OpEq, Value: "pr"}}}, []string{}},
		{analytics.PersonQuery{Filters: []analytics.PersonFilter{{Key: "plan", Operator: analytics.OpIsNotSet}}}, []string{"u8", "u5", "u2", "tie-a", "tie-b", "esc"}},
		{analytics.PersonQuery{Search: "u", Filters: []analytics.PersonFilter{{Key: "plan", Operator: analytics.OpEq, Value: "free"},
			{Key: "seats", Operator: analytics.OpNeq, Value: "4"}}}, []string{"u7", "u1"}},
	}
	for _, c := range checks {
		if got := ids(c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("list %+v = %v, want %v", c.q, got, c.want)
		}
	}
	if list, err := s.ListPersons(ctx, analytics.PersonQuery{ProductID: b.ID, Limit: 10}); err != nil || len(list) != 1 || props(list[0])["plan"] != "other" {
		t.Errorf("product b's list = %v, %v", list, err)
	}

	// Deleting removes the profiles of the ids in the product only.
	n, err := s.DeletePersonProfiles(ctx, a.ID, []string{alice, "u1", "never seen"})
	if err != nil || n != 2 {
		t.Errorf("DeletePersonProfiles = %d, %v; want 2", n, err)
	}
	if _, err := s.Person(ctx, a.ID, alice); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleted person read: %v", err)
	}
	if got := ids(analytics.PersonQuery{Search: "u1"}); len(got) != 0 {
		t.Errorf("deleted person listed: %v", got)
	}
	get(b.ID, alice)
}
