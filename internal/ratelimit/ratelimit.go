// Package ratelimit enforces per-key request budgets with token buckets kept
// in this process's memory, so a request never waits on a database.
//
// Several nodes hold one key's limit together through Sync: about once a
// second each node adds what it admitted per key to a total the nodes share
// (in the metadata store) and takes from its own buckets what the other
// nodes admitted since its last sync. Every bucket then sees every node's
// requests, at most two syncs late (the other node's and its own). The
// bound (docs/deploy.md): over any period T a key is admitted at most
// perMinute·(1 + T/1min) requests, plus what the other nodes admit for it
// within two sync intervals, plus one burst per node the first time each
// node sees the key.
package ratelimit

import (
	"context"
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
	// refused counts the requests Allow refused, for the metrics.
	refused uint64
}

type bucket struct {
	tokens float64
	limit  int
	last   time.Time
	// admitted counts requests allowed since the last Sync; seen is the
	// shared total at the last Sync, -1 before the first.
	admitted int64
	seen     int64
}

// Usage is the total the nodes share (the metadata store): AddUsage adds
// each id's newly admitted requests under a limiter's scope and returns the
// new totals.
type Usage interface {
	AddUsage(ctx context.Context, scope string, deltas map[int64]int64) (map[int64]int64, error)
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
		fresh := &bucket{tokens: float64(perMinute), limit: perMinute, last: now, seen: -1}
		if b != nil {
			fresh.admitted, fresh.seen = b.admitted, b.seen
		}
		b = fresh
		l.buckets[id] = b
	}
	rate := float64(perMinute) / 60 // tokens per second
	if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(float64(perMinute), b.tokens+elapsed*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		b.admitted++
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / rate * float64(time.Second))
	l.refused++
	return false, wait
}

// Refused is how many requests Allow refused since the limiter was made.
func (l *Limiter) Refused() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// Sync reports the requests this node admitted per id since the last Sync
// to u, under scope (one per limiter: its ids are keys, or workspaces), and
// debits each bucket with what the other nodes admitted in the meantime. A bucket may go below zero: the key then waits until the
// refill has paid for what the other nodes let through.
func (l *Limiter) Sync(ctx context.Context, u Usage, scope string) error {
	l.mu.Lock()
	deltas := make(map[int64]int64, len(l.buckets))
	for id, b := range l.buckets {
		deltas[id] = b.admitted
		b.admitted = 0
	}
	l.mu.Unlock()
	if len(deltas) == 0 {
		return nil
	}
	totals, err := u.AddUsage(ctx, scope, deltas)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		// Report the requests again next time.
		for id, d := range deltas {
			if b := l.buckets[id]; b != nil {
				b.admitted += d
			}
		}
		return err
	}
	for id, total := range totals {
		b := l.buckets[id]
		if b == nil {
			continue
		}
		if b.seen >= 0 {
			if others := total - b.seen - deltas[id]; others > 0 {
				b.tokens -= float64(others)
			}
		}
		b.seen = total
	}
	return nil
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
