package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// TestPeople drives person profiles over HTTP on the real binary:
// identify with traits and $set / $set_once events become a profile once
// the spool's loader has stored them (polled), the list is searched,
// filtered, paged and limited to the token's product, API keys are
// refused, and the profiles survive a restart (the stop writes the
// pending updates).
func TestPeople(t *testing.T) {
	dir := t.TempDir()
	checkPeople(t, func() *server { return startServer(t, dir) })
}

// TestPeopleClickHouse is the same with events in ClickHouse and the
// profiles in PostgreSQL.
func TestPeopleClickHouse(t *testing.T) {
	chtest.Skip(t)
	ch := chtest.Shared(t)
	meta := pgtest.Start(t)
	dir, events := t.TempDir(), ch.URL(fmt.Sprintf("strata_people_%d", time.Now().UnixNano()), "")
	checkPeople(t, func() *server { return startServer(t, dir, "--events", events, "--meta", meta) })
}

func checkPeople(t *testing.T, start func() *server) {
	s := start()
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	now := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	at := func(m int) string { return now.Add(time.Duration(m) * time.Minute).Format(time.RFC3339) }
	res := postEvents(t, s, a.Live,
		map[string]any{"event_name": "$identify", "distinct_id": "alice", "timestamp": at(1),
			"properties": map[string]any{"email": "Alice@Example.com", "plan": "free", "$anon_distinct_id": "anon-1"}},
		map[string]any{"event_name": "upgraded", "distinct_id": "alice", "timestamp": at(2),
			"properties": map[string]any{"$set": map[string]any{"plan": "pro"}, "$set_once": map[string]any{"source": "ads"}}},
		map[string]any{"event_name": "visited", "distinct_id": "alice", "timestamp": at(3),
			"properties": map[string]any{"$set_once": map[string]any{"source": "organic"}}},
		map[string]any{"event_name": "$identify", "distinct_id": "bob", "timestamp": at(4),
			"properties": map[string]any{"name": "Bob Builder", "plan": "free"}},
		map[string]any{"event_name": "$pageview", "distinct_id": "carol", "timestamp": at(5)},
	)
	if res.Status != 202 {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	if res := postEvents(t, s, b.Live, map[string]any{"event_name": "$identify", "distinct_id": "alice", "timestamp": at(1),
		"properties": map[string]any{"email": "other@blog.example"}}); res.Status != 202 {
		t.Fatalf("ingest B: %d %s", res.Status, res.Body)
	}

	type row struct {
		DistinctID string         `json:"distinctId"`
		Properties map[string]any `json:"properties"`
		FirstSeen  time.Time      `json:"firstSeen"`
		LastSeen   time.Time      `json:"lastSeen"`
		EventCount int64          `json:"eventCount"`
	}
	type page struct {
		Items      []row   `json:"items"`
		NextCursor *string `json:"nextCursor"`
	}
	list := func(token, query string) page {
		t.Helper()
		res := annCall(t, s, token, "GET", "/api/v1/persons?"+query, nil)
		var p page
		if err := json.Unmarshal(res.Body, &p); res.Status != 200 || err != nil {
			t.Fatalf("list %s: %d %s", query, res.Status, res.Body)
		}
		return p
	}
	ids := func(p page) []string {
		out := []string{}
		for _, r := range p.Items {
			out = append(out, r.DistinctID)
		}
		return out
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(list(a.Token, "").Items) < 3 || len(list(b.Token, "").Items) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("profiles not written: %+v", list(a.Token, ""))
		}
		time.Sleep(100 * time.Millisecond)
	}
	check := func(s *server) {
		t.Helper()
		res := annCall(t, s, a.Token, "GET", "/api/v1/persons/alice", nil)
		var p row
		if err := json.Unmarshal(res.Body, &p); res.Status != 200 || err != nil {
			t.Fatalf("person: %d %s", res.Status, res.Body)
		}
		if want := map[string]any{"email": "Alice@Example.com", "plan": "pro", "source": "ads"}; !reflect.DeepEqual(p.Properties, want) {
			t.Errorf("alice's properties = %v, want %v", p.Properties, want)
		}
		if !p.FirstSeen.Equal(now.Add(time.Minute)) || !p.LastSeen.Equal(now.Add(3*time.Minute)) {
			t.Errorf("alice seen %v – %v", p.FirstSeen, p.LastSeen)
		}
	}
	check(s)
	all := list(a.Token, "")
	if got := ids(all); !reflect.DeepEqual(got, []string{"carol", "bob", "alice"}) {
		t.Errorf("list = %v", got)
	} else if counts := []int64{all.Items[0].EventCount, all.Items[1].EventCount, all.Items[2].EventCount}; !reflect.DeepEqual(counts, []int64{1, 1, 3}) {
		t.Errorf("event counts = %v, want [1 1 3]", counts)
	}
	for q, want := range map[string][]string{
		"search=ali":     {"alice"},
		"search=example": {"alice"},
		"search=builder": {"bob"},
		"where=" + url.QueryEscape(`[{"key":"plan","operator":"eq","value":"free"}]`): {"bob"},
		"where=" + url.QueryEscape(`[{"key":"plan","operator":"is_not_set"}]`):        {"carol"},
	} {
		if got := ids(list(a.Token, q)); !reflect.DeepEqual(got, want) {
			t.Errorf("list %s = %v, want %v", q, got, want)
		}
	}
	first := list(a.Token, "limit=2&columns=plan")
	if got := ids(first); !reflect.DeepEqual(got, []string{"carol", "bob"}) || first.NextCursor == nil ||
		!reflect.DeepEqual(first.Items[1].Properties, map[string]any{"plan": "free"}) {
		t.Fatalf("first page: %+v", first)
	}
	if next := list(a.Token, "limit=2&cursor="+url.QueryEscape(*first.NextCursor)); !reflect.DeepEqual(ids(next), []string{"alice"}) || next.NextCursor != nil {
		t.Errorf("second page: %+v", next)
	}
	// B's token sees B's alice only; A's carol is not B's.
	if got := list(b.Token, ""); len(got.Items) != 1 || got.Items[0].Properties["email"] != "other@blog.example" {
		t.Errorf("B's list: %+v", got)
	}
	if res := annCall(t, s, b.Token, "GET", "/api/v1/persons/carol", nil); res.Status != 404 {
		t.Errorf("A's person read with B's token: %d %s", res.Status, res.Body)
	}
	for _, path := range []string{"/api/v1/persons", "/api/v1/persons/alice"} {
		if res := annCall(t, s, a.Live, "GET", path, nil); res.Status != 403 {
			t.Errorf("%s with the API key: %d %s", path, res.Status, res.Body)
		}
	}
	for _, q := range []string{
		"where=" + url.QueryEscape(`[{"key":"$browser","operator":"eq","value":"x"}]`),
		"where=" + url.QueryEscape(`[{"key":"plan","operator":"gt","value":"1"}]`),
		"where=notjson", "cursor=zzz", "limit=500",
	} {
		if res := annCall(t, s, a.Token, "GET", "/api/v1/persons?"+q, nil); res.Status != 400 {
			t.Errorf("list %s: %d %s", q, res.Status, res.Body)
		}
	}

	// An event right before a stop is in the profile after the restart.
	if res := postEvents(t, s, a.Live, map[string]any{"event_name": "x", "distinct_id": "dave", "timestamp": at(6),
		"properties": map[string]any{"$set": map[string]any{"plan": "team"}}}); res.Status != 202 {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	s.Stop()
	s = start()
	check(s)
	if got := list(a.Token, "search=dave"); len(got.Items) != 1 || got.Items[0].Properties["plan"] != "team" {
		t.Errorf("dave after the restart: %+v", got)
	}
}
