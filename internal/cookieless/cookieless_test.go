package cookieless_test

import (
	"context"
	"net/netip"
	"regexp"
	"testing"
	"time"

	"strata/internal/cookieless"
	"strata/internal/store/duckdb"
	"strata/internal/store/duckdb/duckdbtest"
)

const (
	firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
	safari  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1"
)

// TestVisitorIDs derives ids on a real metadata store: one visitor on one
// UTC day keeps its id; another day, product, address or browser gives
// another; two nodes sharing the store agree; and a day's salt is gone
// from the store two days later, so its ids cannot be derived again.
func TestVisitorIDs(t *testing.T) {
	store := duckdbtest.Open(t)
	node1, node2 := &cookieless.Visitors{Salts: store}, &cookieless.Visitors{Salts: store}
	a, b := netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::1")
	morning := time.Date(2026, 11, 27, 0, 0, 1, 0, time.UTC)
	evening := time.Date(2026, 11, 27, 23, 59, 59, 0, time.UTC)
	nextDay := evening.Add(2 * time.Second)

	id := func(v *cookieless.Visitors, at time.Time, product int64, addr netip.Addr, ua string) string {
		t.Helper()
		got, err := v.ID(at, product, addr, ua)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^cl_[0-9a-f]{32}$`).MatchString(got) {
			t.Fatalf("id %q is not cl_ and 32 hex digits", got)
		}
		return got
	}
	first := id(node1, morning, 1, a, firefox)
	if got := id(node1, evening, 1, a, firefox); got != first {
		t.Errorf("the same visitor later that day: %s, want %s", got, first)
	}
	if got := id(node2, evening, 1, a, firefox); got != first {
		t.Errorf("another node that day: %s, want %s", got, first)
	}
	// An IPv4 address written as IPv4-mapped IPv6 is the same client.
	if got := id(node1, morning, 1, netip.MustParseAddr("::ffff:203.0.113.7"), firefox); got != first {
		t.Errorf("the mapped address: %s, want %s", got, first)
	}
	seen := map[string]string{first: "first"}
	for name, got := range map[string]string{
		"next day":        id(node1, nextDay, 1, a, firefox),
		"other product":   id(node1, morning, 2, a, firefox),
		"other address":   id(node1, morning, 1, b, firefox),
		"other browser":   id(node1, morning, 1, a, safari),
		"next day, node2": id(node2, nextDay.Add(time.Hour), 2, a, firefox),
	} {
		if prev, dup := seen[got]; dup {
			t.Errorf("%s has the id of %s: %s", name, prev, got)
		}
		seen[got] = name
	}
	if a, b := id(node1, nextDay, 1, a, firefox), id(node2, nextDay, 1, a, firefox); a != b {
		t.Errorf("the two nodes disagree the next day: %s and %s", a, b)
	}

	// Two days on, the first day's salt was deleted: asking for that day
	// again (a node whose clock is far behind) makes a new salt, and the
	// visitor a new id.
	later := &cookieless.Visitors{Salts: store}
	id(later, morning.AddDate(0, 0, 2), 1, a, firefox)
	if got := id(&cookieless.Visitors{Salts: store}, morning, 1, a, firefox); got == first {
		t.Errorf("the first day's id could still be derived two days later: %s", got)
	}
}

// TestSaltUnavailable: a store that cannot answer gives an error, not an
// id made without the salt.
func TestSaltUnavailable(t *testing.T) {
	store, err := duckdb.Open(context.Background(), t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	v := &cookieless.Visitors{Salts: store, Timeout: time.Second}
	if id, err := v.ID(time.Now(), 1, netip.MustParseAddr("203.0.113.7"), firefox); err == nil {
		t.Errorf("ID on a closed store = %q; want an error", id)
	}
}
