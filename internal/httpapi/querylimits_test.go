package httpapi

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/ratelimit"
	"strata/internal/replay"
	"strata/internal/store/replayfs"
)

// TestQueryRateLimitPerCredential checks that each credential has its own
// query budget: the dashboard user who spent theirs gets 429 rate_limited
// with Retry-After on every route that reads events, while a query token of
// the same product still gets answers; routes that read no events are not
// counted.
func TestQueryRateLimitPerCredential(t *testing.T) {
	d := newDash(t)
	d.setup()
	var mu sync.Mutex
	clock := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	d.api.QueryLimiter = ratelimit.New(func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	d.api.QueryRateLimit = 3
	funnel := map[string]any{"steps": []string{"a", "b"}}
	for i := range 3 {
		if r := d.do("POST", "/api/v1/query/funnel?product=1", funnel, nil); r.status != 200 {
			t.Fatalf("query %d within the budget: %d %v", i+1, r.status, r.body)
		}
	}
	// Listing saved queries reads no events and costs nothing.
	if r := d.do("GET", "/api/v1/queries?product=1", nil, nil); r.status != 200 {
		t.Errorf("saved queries list after the budget: %d %v", r.status, r.body)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/query/funnel?product=1"},
		{"POST", "/api/v1/query/trend?product=1"},
		{"POST", "/api/v1/query/retention?product=1"},
		{"GET", "/api/v1/query/bots?product=1"},
		{"GET", "/api/v1/query/events?product=1"},
		{"POST", "/api/v1/queries/1/run?product=1"},
	} {
		r := d.do(c.method, c.path, nil, nil)
		if r.status != 429 || r.code() != "rate_limited" {
			t.Errorf("%s %s over the budget: %d %v; want 429 rate_limited", c.method, c.path, r.status, r.body)
		}
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 20 {
			t.Errorf("%s %s: Retry-After %q; want the 20 s until the next query", c.method, c.path, r.header.Get("Retry-After"))
		}
	}
	// A query token of the same product has a budget of its own.
	tok, _, err := d.api.Admin.CreateToken(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	bearer := map[string]string{"Authorization": "Bearer " + tok}
	if r := d.do("POST", "/api/v1/query/funnel", funnel, bearer); r.status != 200 {
		t.Errorf("another credential of the same product: %d %v", r.status, r.body)
	}
	// The budget refills at QueryRateLimit a minute.
	mu.Lock()
	clock = clock.Add(20 * time.Second)
	mu.Unlock()
	if r := d.do("POST", "/api/v1/query/funnel?product=1", funnel, nil); r.status != 200 {
		t.Errorf("20 s later: %d %v", r.status, r.body)
	}
}

// TestServerBusyOverHTTP checks that a query refused by admission control
// is answered 503 server_busy with Retry-After.
func TestServerBusyOverHTTP(t *testing.T) {
	d := newDash(t)
	d.setup()
	d.api.Queries.Admission = query.NewAdmission(1, 0, time.Second)
	release, err := d.api.Queries.Admission.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := d.do("POST", "/api/v1/query/trend?product=1", map[string]any{"series": []map[string]string{{"event": "a"}}}, nil)
	if r.status != 503 || r.code() != "server_busy" || r.header.Get("Retry-After") == "" {
		t.Errorf("with every slot taken and no queue: %d %v %v; want 503 server_busy with Retry-After", r.status, r.body, r.header)
	}
	release()
	if r := d.do("POST", "/api/v1/query/trend?product=1", map[string]any{"series": []map[string]string{{"event": "a"}}}, nil); r.status != 200 {
		t.Errorf("with the slot free: %d %v", r.status, r.body)
	}
}

// TestReplayReadsTakeAdmission checks that the replay list and a session's
// page are read under the query admission, like the other metadata reads
// whose cost grows with what is stored: with every slot taken and no
// queue, both are 503 server_busy with Retry-After; with the slot free,
// both are answered.
func TestReplayReadsTakeAdmission(t *testing.T) {
	d := newDash(t)
	d.setup()
	replays, err := replayfs.Open(filepath.Join(t.TempDir(), "replay"), replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { replays.Close() })
	d.api.ReplayOps = &replay.Service{Store: replays}
	at := time.Now().UTC()
	c := analytics.ReplayChunk{ProductID: 1, SessionID: "s1", WindowID: "w", DistinctID: "u", FirstTS: at, LastTS: at,
		Encoding: analytics.ReplayJSON, Data: []byte(`[{"type":4,"timestamp":1}]`), ReceivedAt: at}
	if _, err := replays.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{c}, analytics.ReplayLimits{}); err != nil {
		t.Fatal(err)
	}
	d.api.Queries.Admission = query.NewAdmission(1, 0, time.Second)
	release, err := d.api.Queries.Admission.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/api/v1/replays?product=1", "/api/v1/replays/s1?product=1"}
	for _, path := range paths {
		if r := d.do("GET", path, nil, nil); r.status != 503 || r.code() != "server_busy" || r.header.Get("Retry-After") == "" {
			t.Errorf("GET %s with every slot taken: %d %v; want 503 server_busy with Retry-After", path, r.status, r.body)
		}
	}
	release()
	for _, path := range paths {
		if r := d.do("GET", path, nil, nil); r.status != 200 {
			t.Errorf("GET %s with the slot free: %d %v", path, r.status, r.body)
		}
	}
}
