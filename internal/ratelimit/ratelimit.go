// Package ratelimit enforces per-key request budgets with token buckets kept
// in this process's memory. Each node keeps its own buckets, so across N
// nodes behind a balancer a key can get at most N times its budget; the
// limit itself lives in the metadata store and is the same on every node.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter holds one token bucket per key. A bucket holds up to perMinute
// tokens and refills at perMinute/60 tokens a second, so a key may burst its
// whole minute's budget and then continues at the steady rate.
type Limiter struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[int64]*bucket
	lastGC  time.Time
}

type bucket struct {
	tokens float64
	limit  int
	last   time.Time
}

// New returns a limiter that reads time from now.
func New(now func() time.Time) *Limiter {
	return &Limiter{now: now, buckets: map[int64]*bucket{}, lastGC: now()}
}

// Allow takes one token from the bucket of key id with a budget of perMinute
// requests a minute. When the bucket is empty it returns false and how long
// until a token is available.
func (l *Limiter) Allow(id int64, perMinute int) (bool, time.Duration) {
	if perMinute <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gc(now)
	b := l.buckets[id]
	if b == nil || b.limit != perMinute {
		// A new key, or its limit changed: start with a full bucket.
		b = &bucket{tokens: float64(perMinute), limit: perMinute, last: now}
		l.buckets[id] = b
	}
	rate := float64(perMinute) / 60 // tokens per second
	if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(float64(perMinute), b.tokens+elapsed*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
	return false, wait
}

// gc drops buckets that have been full for a while, so that keys no longer
// in use do not accumulate. A dropped bucket comes back full, which is what
// it would have been anyway.
func (l *Limiter) gc(now time.Time) {
	if now.Sub(l.lastGC) < 5*time.Minute {
		return
	}
	l.lastGC = now
	for id, b := range l.buckets {
		if now.Sub(b.last) > 2*time.Minute {
			delete(l.buckets, id)
		}
	}
}
