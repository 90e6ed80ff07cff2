package duckdb

import (
	"context"
	"testing"

	"strata/internal/query/querytest"
	"strata/internal/store/storetest"
)

// TestDeletePersonsKeptVisits deletes a person whose visits are kept
// (visits.go): the answers after it, before and after the next refresh,
// equal the reference built from the others' events alone, and the dense
// id's entry is gone from the table as from memory.
func TestDeletePersonsKeptVisits(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	const product = 990
	events := []querytest.Event{pageview("a", at(9, 0), "/a"), pageview("a", at(9, 20), "/b"),
		pageview("b", at(7, 0), "/c"), pageview("b", at(10, 0), "/d")}
	if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, events, visitDay, visitDay, "day", 5, "kept") {
		t.Fatal("the answer did not read kept visits")
	}
	n, err := s.DeletePersons(ctx, product, []string{"a"})
	if err != nil || n != 2 {
		t.Fatalf("DeletePersons = %d, %v; want 2, nil", n, err)
	}
	left := events[2:]
	checkSessions(t, s, product, left, visitDay, visitDay, "day", 5, "after the deletion")
	var rows int
	if err := s.DB().QueryRow(`SELECT (SELECT count(*) FROM users WHERE product_id = $1 AND distinct_id = 'a')
		+ (SELECT count(*) FROM visits v WHERE product_id = $1 AND uid NOT IN (SELECT uid FROM users WHERE product_id = $1))`,
		product).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d rows of the person's dense id or kept visits left, want 0", rows)
	}
	if s.userID(product, "a") != noUser {
		t.Error("the person's dense id is still in memory")
	}
	if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, left, visitDay, visitDay, "day", 5, "after the next refresh") {
		t.Error("the answer did not read kept visits after the refresh")
	}
}
