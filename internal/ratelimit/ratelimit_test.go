package ratelimit

import (
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
