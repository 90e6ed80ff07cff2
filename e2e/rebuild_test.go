package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/duckdb"
	"strata/internal/store/postgres/pgtest"
)

// personRow is a person of GET /api/v1/persons.
type personRow struct {
	DistinctID string          `json:"distinctId"`
	Properties json.RawMessage `json:"properties"`
	FirstSeen  time.Time       `json:"firstSeen"`
	LastSeen   time.Time       `json:"lastSeen"`
}

// rebuildEvents sends events with traits to product key, an hour ago, and
// returns when the three persons they make are listed.
func rebuildEvents(t *testing.T, s *server, tn tenant) map[string]personRow {
	t.Helper()
	now := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	at := func(m int) string { return now.Add(time.Duration(m) * time.Minute).Format(time.RFC3339) }
	if r := postEvents(t, s, tn.Live,
		map[string]any{"event_name": "$identify", "distinct_id": "alice", "timestamp": at(1), "properties": map[string]any{"email": "a@x.example", "plan": "free"}},
		map[string]any{"event_name": "upgraded", "distinct_id": "alice", "timestamp": at(2),
			"properties": map[string]any{"$set": map[string]any{"plan": "pro"}, "$set_once": map[string]any{"source": "ads"}}},
		map[string]any{"event_name": "visited", "distinct_id": "alice", "timestamp": at(9), "properties": map[string]any{"$set_once": map[string]any{"source": "organic"}}},
		map[string]any{"event_name": "$identify", "distinct_id": "bob", "timestamp": at(4), "properties": map[string]any{"name": "Bob"}},
		map[string]any{"event_name": "$pageview", "distinct_id": "carol", "timestamp": at(5)},
		map[string]any{"event_name": "$pageview", "distinct_id": "carol", "timestamp": at(30)},
	); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	var rows map[string]personRow
	waitFor(t, 20*time.Second, "three persons listed", func() bool { rows = listPersons(t, s, tn); return len(rows) == 3 })
	return rows
}

func listPersons(t *testing.T, s *server, tn tenant) map[string]personRow {
	t.Helper()
	r := annCall(t, s, tn.Token, "GET", "/api/v1/persons", nil)
	var page struct{ Items []personRow }
	if err := json.Unmarshal(r.Body, &page); r.Status != 200 || err != nil {
		t.Fatalf("persons: %d %s", r.Status, r.Body)
	}
	out := map[string]personRow{}
	for _, p := range page.Items {
		out[p.DistinctID] = p
	}
	return out
}

// TestRebuildPersons deletes a product's profiles on the stopped embedded
// store, as for events stored before profiles existed, and has `strata
// persons rebuild` write them again from the events: the same properties
// and first and last seen as the updater wrote. Through the running
// server's socket a second rebuild changes nothing.
func TestRebuildPersons(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	tn := newTenant(t, s, "Rebuild")
	before := rebuildEvents(t, s, tn)
	if !strings.Contains(string(before["alice"].Properties), `"plan":"pro"`) || !strings.Contains(string(before["alice"].Properties), `"source":"ads"`) {
		t.Fatalf("alice before: %s", before["alice"].Properties)
	}
	s.Stop()

	ctx := context.Background()
	db, err := duckdb.Open(ctx, dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var product int64
	fmt.Sscan(tn.ProductFlag, &product)
	if n, err := db.DeletePersonProfiles(ctx, product, []string{"alice", "bob", "carol"}); err != nil || n != 3 {
		t.Fatalf("deleting the profiles: %d %v", n, err)
	}
	db.Close()

	if out := cli(t, dir, "persons", "rebuild", "--product", tn.ProductFlag); !strings.Contains(out, "rebuilt 3 persons of product "+tn.ProductFlag) ||
		!strings.Contains(out, "(4 events set properties)") {
		t.Errorf("rebuild on the stopped store: %q", out)
	}
	s = startServer(t, dir)
	after := listPersons(t, s, tn)
	for id, b := range before {
		a := after[id]
		if string(a.Properties) != string(b.Properties) || !a.FirstSeen.Equal(b.FirstSeen) || !a.LastSeen.Equal(b.LastSeen) {
			t.Errorf("%s rebuilt as %s %v %v, want %s %v %v", id, a.Properties, a.FirstSeen, a.LastSeen, b.Properties, b.FirstSeen, b.LastSeen)
		}
	}
	if out := cli(t, dir, "persons", "rebuild", "--product", tn.ProductFlag); !strings.Contains(out, "rebuilt 3 persons") {
		t.Errorf("rebuild through the socket: %q", out)
	}
	if again := listPersons(t, s, tn); string(again["alice"].Properties) != string(before["alice"].Properties) {
		t.Errorf("a second rebuild changed alice: %s", again["alice"].Properties)
	}
	if _, errOut, code := cliResult(dir, "persons", "rebuild"); code != 2 || !strings.Contains(errOut, "--product") {
		t.Errorf("rebuild without a product: exit %d, %s", code, errOut)
	}
}

// TestRebuildPersonsClickHouse rebuilds through the socket of a server on
// ClickHouse and PostgreSQL: every person of the events is written, and
// the profiles stay what the updater wrote.
func TestRebuildPersonsClickHouse(t *testing.T) {
	chtest.Skip(t)
	ch := chtest.Shared(t)
	meta := pgtest.Start(t)
	dir := t.TempDir()
	s := startServer(t, dir, "--events", ch.URL(fmt.Sprintf("strata_rebuild_%d", time.Now().UnixNano()), ""), "--meta", meta)
	tn := newTenant(t, s, "Rebuild")
	before := rebuildEvents(t, s, tn)
	if out := cli(t, dir, "persons", "rebuild", "--product", tn.ProductFlag); !strings.Contains(out, "rebuilt 3 persons") ||
		!strings.Contains(out, "(4 events set properties)") {
		t.Errorf("rebuild: %q", out)
	}
	after := listPersons(t, s, tn)
	for id, b := range before {
		if a := after[id]; string(a.Properties) != string(b.Properties) || !a.FirstSeen.Equal(b.FirstSeen) {
			t.Errorf("%s after the rebuild: %s %v, want %s %v", id, a.Properties, a.FirstSeen, b.Properties, b.FirstSeen)
		}
	}
}
