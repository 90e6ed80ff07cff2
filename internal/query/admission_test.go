package query

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/analytics"
)

// waitFor polls cond until it holds or a second passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// busyCode returns the code of a server_busy refusal and checks its
// status kind and Retry-After.
func busyCode(t *testing.T, err error) string {
	t.Helper()
	var e *analytics.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an analytics.Error", err)
	}
	if e.Kind != analytics.KindUnavailable || e.RetryAfter < time.Second || e.RetryAfter%time.Second != 0 {
		t.Errorf("refusal %+v: want KindUnavailable with a Retry-After of whole seconds", e)
	}
	return e.Code
}

func TestAdmissionRunsAtMostSlots(t *testing.T) {
	a := NewAdmission(2, 100, time.Minute)
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := a.Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(2 * time.Millisecond)
			running.Add(-1)
			release()
			release() // a second call gives nothing back
		}()
	}
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Errorf("%d queries ran at once, want 2", p)
	}
	if r, w := a.Load(); r != 0 || w != 0 {
		t.Errorf("after all: %d running, %d waiting", r, w)
	}
}

func TestAdmissionIsFIFO(t *testing.T) {
	a := NewAdmission(1, 10, time.Minute)
	hold, _ := a.Acquire(context.Background())
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 5 {
		// Each joins the queue before the next starts.
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := a.Acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			release()
		}()
		waitFor(t, "the query joined the queue", func() bool { _, w := a.Load(); return w == i+1 })
	}
	hold()
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("admitted in order %v, want arrival order", order)
		}
	}
}

func TestAdmissionRefusesWhenQueueFull(t *testing.T) {
	a := NewAdmission(1, 2, time.Minute)
	hold, _ := a.Acquire(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 2 {
		go a.Acquire(ctx)
	}
	waitFor(t, "two queries wait", func() bool { _, w := a.Load(); return w == 2 })
	start := time.Now()
	_, err := a.Acquire(context.Background())
	if code := busyCode(t, err); code != "server_busy" {
		t.Errorf("queue full: code %q, want server_busy", code)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("a full queue refused after %s; want at once", d)
	}
	hold()
}

func TestAdmissionRefusesAfterMaxWait(t *testing.T) {
	a := NewAdmission(1, 5, 50*time.Millisecond)
	hold, _ := a.Acquire(context.Background())
	defer hold()
	start := time.Now()
	_, err := a.Acquire(context.Background())
	if code := busyCode(t, err); code != "server_busy" {
		t.Errorf("wait over: code %q, want server_busy", code)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("refused after %s, before the 50ms wait", d)
	}
	if _, w := a.Load(); w != 0 {
		t.Errorf("%d still waiting after the refusal", w)
	}
}

// TestAdmissionCanceledLeavesQueue checks that a query whose request ended
// leaves the queue at once, and that the slot then goes to the next one.
func TestAdmissionCanceledLeavesQueue(t *testing.T) {
	a := NewAdmission(1, 5, time.Minute)
	hold, _ := a.Acquire(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := a.Acquire(ctx)
		gone <- err
	}()
	waitFor(t, "the first query waits", func() bool { _, w := a.Load(); return w == 1 })
	next := make(chan func(), 1)
	go func() {
		release, err := a.Acquire(context.Background())
		if err != nil {
			t.Error(err)
		}
		next <- release
	}()
	waitFor(t, "the second query waits", func() bool { _, w := a.Load(); return w == 2 })
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled wait returned %v, want context.Canceled", err)
	}
	if _, w := a.Load(); w != 1 {
		t.Errorf("%d waiting after the cancel, want 1", w)
	}
	hold()
	release := <-next
	if r, w := a.Load(); r != 1 || w != 0 {
		t.Errorf("after the hand-over: %d running, %d waiting; want 1, 0", r, w)
	}
	release()
}

// TestAdmissionRetryAfterFollowsThePace checks that Retry-After grows with
// how long queries hold their slots and how many wait.
func TestAdmissionRetryAfterFollowsThePace(t *testing.T) {
	a := NewAdmission(2, 1, time.Minute)
	for range 2 {
		if _, err := a.Acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	go a.Acquire(context.Background())
	waitFor(t, "a query waits", func() bool { _, w := a.Load(); return w == 1 })
	a.mu.Lock()
	a.held = 3 * time.Second // as if queries took three seconds each
	a.mu.Unlock()
	// One waits and two slots turn over every 3 s: about 3 s.
	_, err := a.Acquire(context.Background())
	var e *analytics.Error
	if !errors.As(err, &e) || e.RetryAfter != 3*time.Second {
		t.Errorf("Retry-After with one waiting, two slots, 3 s queries: %v, want 3s", err)
	}
}

// TestAdmissionCountsRefusals: Refused counts the server_busy refusals, a
// full queue's and a wait's, and not a caller that gave up.
func TestAdmissionCountsRefusals(t *testing.T) {
	a := NewAdmission(1, 1, 20*time.Millisecond)
	hold, _ := a.Acquire(context.Background())
	defer hold()
	if _, err := a.Acquire(context.Background()); err == nil { // waits, then refused
		t.Fatal("a query was admitted while the only slot was held")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.Acquire(ctx) // gives up: not a refusal
	waiting := make(chan struct{})
	go func() { close(waiting); a.Acquire(context.Background()) }()
	<-waiting
	for _, w := a.Load(); w == 0; _, w = a.Load() {
		time.Sleep(time.Millisecond)
	}
	if _, err := a.Acquire(context.Background()); err == nil { // the queue is full
		t.Fatal("a query was queued beyond the queue's bound")
	}
	for _, w := a.Load(); w != 0; _, w = a.Load() {
		time.Sleep(time.Millisecond)
	}
	if n := a.Refused(); n != 3 {
		t.Errorf("Refused() = %d; want 3 (a wait, a full queue, the queued one's wait)", n)
	}
}
