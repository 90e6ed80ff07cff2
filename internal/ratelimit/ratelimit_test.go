package ratelimit

import (
	"context"
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(func() time.Time { return now })
	// A fresh key may burst its whole minute.
	for i := 0; i < 60; i++ {
		if ok, _ := l.Allow(1, 60); !ok {
			t.Fatalf("request %d of the first minute refused", i+1)
		}
	}
	ok, wait := l.Allow(1, 60)
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("61st request: ok=%v wait=%v; want refused with a wait of at most 1s", ok, wait)
	}
	// Other keys have their own buckets.
	if ok, _ := l.Allow(2, 60); !ok {
		t.Error("key 2 limited by key 1's use")
	}
	// The bucket refills at 60/minute: one token a second.
	now = now.Add(time.Second)
	if ok, _ := l.Allow(1, 60); !ok {
		t.Error("no token after a second")
	}
	if ok, _ := l.Allow(1, 60); ok {
		t.Error("two tokens after a second")
	}
	// A changed limit starts a full bucket of the new size.
	for i := 0; i < 100; i++ {
		if ok, _ := l.Allow(1, 100); !ok {
			t.Fatalf("after raising the limit, request %d refused", i+1)
		}
	}
	// Zero or negative means unlimited.
	if ok, _ := l.Allow(3, 0); !ok {
		t.Error("limit 0 refused")
	}
	// Idle buckets are forgotten after a while and come back full.
	now = now.Add(10 * time.Minute)
	l.Allow(4, 10)
	if len(l.buckets) != 1 {
		t.Errorf("%d buckets kept after 10 idle minutes, want only the new one", len(l.buckets))
	}
}

// sharedTotal is the total nodes share, as the metadata store keeps it
// (the stores' own AddUsage is tested in the storage conformance suite).
type sharedTotal struct{ used map[int64]int64 }

func (s *sharedTotal) AddUsage(_ context.Context, _ string, deltas map[int64]int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	for id, d := range deltas {
		s.used[id] += d
		out[id] = s.used[id]
	}
	return out, nil
}

// TestSyncHoldsTheLimitAcrossNodes gives two nodes one key of 60 a minute
// and checks that, once they have synced, what one node admitted is taken
// from the other's budget.
func TestSyncHoldsTheLimitAcrossNodes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a, b := New(clock), New(clock)
	shared := &sharedTotal{used: map[int64]int64{}}
	ctx := context.Background()
	sync := func(l *Limiter) {
		if err := l.Sync(ctx, shared, "key"); err != nil {
			t.Fatal(err)
		}
	}
	allow := func(l *Limiter, n int) int {
		ok := 0
		for i := 0; i < n; i++ {
			if allowed, _ := l.Allow(1, 60); allowed {
				ok++
			}
		}
		return ok
	}
	allow(a, 1)
	allow(b, 1)
	sync(a)
	sync(b)
	if got := allow(a, 39); got != 39 {
		t.Fatalf("node a admitted %d of 39", got)
	}
	sync(a)
	sync(b)
	// b has 59 left of its own; a's 39 are taken from it, and a's first
	// request, admitted before b's first sync, is the one-sync overshoot.
	if got := allow(b, 100); got != 20 {
		t.Errorf("node b admitted %d after a used 40; want 20", got)
	}
	if shared.used[1] != 41 {
		t.Errorf("shared total %d, want 41", shared.used[1])
	}
	// b's 20 reach a; a minute of refill then pays back the one request
	// the nodes overshot, so over two minutes the key got exactly 2·60.
	sync(b)
	sync(a)
	now = now.Add(time.Minute)
	if got := allow(a, 100); got != 59 {
		t.Errorf("after a minute node a admitted %d, want 59", got)
	}
}

// TestRefused: Refused counts the requests Allow refused, over every id.
func TestRefused(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(func() time.Time { return now })
	for id := int64(1); id <= 2; id++ {
		for range 5 {
			l.Allow(id, 3)
		}
	}
	if n := l.Refused(); n != 4 {
		t.Errorf("Refused() = %d after 5 requests on each of 2 buckets of 3; want 4", n)
	}
}
