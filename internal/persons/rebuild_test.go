package persons

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/store/duckdb"
)

// TestRebuildMatchesUpdater holds the profiles a rebuild writes from a real
// DuckDB store's events equal to those the updater wrote as it saw the same
// events, oldest first: every person, their properties ($identify traits,
// $set, $set_once, a $set after a $set_once) and first and last seen. The
// profiles are deleted between the two, as for events stored before
// profiles existed; another product's events make none.
func TestRebuildMatchesUpdater(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ws, _ := s.CreateWorkspace(ctx, "w")
	p, _ := s.CreateProduct(ctx, ws.ID, "p")
	other, _ := s.CreateProduct(ctx, ws.ID, "other")

	rng := rand.New(rand.NewPCG(7, 41))
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	kinds := []func(i int) (string, string){
		func(int) (string, string) { return "$pageview", `{"$current_url":"https://x.example/"}` },
		func(i int) (string, string) {
			return "$identify", fmt.Sprintf(`{"email":"u%d@x.example","plan":%q,"$anon_distinct_id":"a"}`, i, []string{"free", "pro"}[i%2])
		},
		func(i int) (string, string) {
			return "upgraded", fmt.Sprintf(`{"$set":{"plan":"team","seats":%d}}`, i%40)
		},
		func(i int) (string, string) {
			return "signup", fmt.Sprintf(`{"$set_once":{"source":"s%d","plan":"trial"}}`, i)
		},
		func(int) (string, string) {
			return "clicked", `{"$set":{"nested":{"a":[1,2]}},"$set_once":{"first_click":true}}`
		},
	}
	var events []analytics.Event
	for i := range 4000 {
		product := p.ID
		if i%10 == 9 {
			product = other.ID
		}
		id := fmt.Sprintf("person-%d", rng.IntN(300))
		name, props := kinds[rng.IntN(len(kinds))](i)
		at := day.Add(time.Duration(rng.Int64N(int64(20 * 24 * time.Hour)))).Truncate(time.Microsecond)
		e := analytics.Event{ProductID: product, Env: analytics.EnvLive, Timestamp: at, ReceivedAt: at, Name: name, DistinctID: id,
			UserID: ingest.UserID(id), Path: "/", URL: "https://x.example/", Properties: json.RawMessage(props)}
		e.UUID[0], e.UUID[1], e.UUID[2] = 0x72, byte(i>>8), byte(i)
		events = append(events, e)
	}
	slices.SortStableFunc(events, func(a, b analytics.Event) int { return a.Timestamp.Compare(b.Timestamp) })
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	// The reference: the updater, seeing every event oldest first, last
	// seen exact (a step of a nanosecond).
	u := New(Options{SeenStep: time.Nanosecond, Interval: time.Hour})
	u.Start(s)
	for start := 0; start < len(events); start += 250 {
		u.Observe(events[start:min(start+250, len(events))])
		if err := u.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	u.Close()
	want := profiles(t, s, p.ID)
	if len(want) < 250 {
		t.Fatalf("the updater wrote %d persons", len(want))
	}
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	for _, product := range []int64{p.ID, other.ID} {
		if _, err := s.DeletePersonProfiles(ctx, product, ids); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.CountPersons(ctx, p.ID); n != 0 {
		t.Fatalf("%d persons left after deleting the profiles", n)
	}

	report, err := Rebuild(ctx, s, s, p.ID, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if report.Persons != int64(len(want)) || report.TraitEvents < 1000 {
		t.Errorf("report %+v, want %d persons and the events that set properties", report, len(want))
	}
	got := profiles(t, s, p.ID)
	if len(got) != len(want) {
		t.Fatalf("rebuilt %d persons, want %d", len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		if string(g.Properties) != string(w.Properties) || !g.FirstSeen.Equal(w.FirstSeen) || !g.LastSeen.Equal(w.LastSeen) {
			t.Errorf("%s rebuilt as %s %v %v, want %s %v %v", id, g.Properties, g.FirstSeen, g.LastSeen, w.Properties, w.FirstSeen, w.LastSeen)
		}
	}
	if n, _ := s.CountPersons(ctx, other.ID); n != 0 {
		t.Errorf("the other product got %d persons", n)
	}
	// Again: nothing changes.
	if _, err := Rebuild(ctx, s, s, p.ID, Options{}); err != nil {
		t.Fatal(err)
	}
	again := profiles(t, s, p.ID)
	for id, w := range got {
		if g := again[id]; string(g.Properties) != string(w.Properties) || !g.LastSeen.Equal(w.LastSeen) {
			t.Errorf("a second rebuild changed %s", id)
		}
	}
}

// profiles reads every profile of a product, by distinct id.
func profiles(t *testing.T, s *duckdb.Store, product int64) map[string]analytics.Person {
	t.Helper()
	out := map[string]analytics.Person{}
	q := analytics.PersonQuery{ProductID: product, Limit: 200}
	for {
		page, err := s.ListPersons(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			out[p.DistinctID] = p
		}
		if len(page) < q.Limit {
			return out
		}
		last := page[len(page)-1]
		q.After = &analytics.PersonCursor{LastSeen: last.LastSeen, DistinctID: last.DistinctID}
	}
}
