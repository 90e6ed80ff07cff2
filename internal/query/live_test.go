package query

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/analytics"
)

// liveStore answers LiveVisitors with its product's id plus the number of
// times it was asked, after gate lets it through; every other method is
// stubStore's.
type liveStore struct {
	stubStore
	gate  chan struct{}
	calls atomic.Int64
	mu    sync.Mutex
	asked []analytics.EventRange
}

func (s *liveStore) LiveVisitors(ctx context.Context, sc analytics.EventRange) (int64, error) {
	n := s.calls.Add(1)
	s.mu.Lock()
	s.asked = append(s.asked, sc)
	s.mu.Unlock()
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return sc.ProductID*1000 + n, nil
}

// TestLiveWindow checks the range the engine asks the store for: the five
// minutes before its clock's now and the minute after.
func TestLiveWindow(t *testing.T) {
	now := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	st := &liveStore{}
	e := &Engine{Store: st, Now: func() time.Time { return now }}
	res, err := e.LiveVisitors(context.Background(), analytics.EventRange{ProductID: 1, Env: analytics.EnvTest})
	if err != nil || res.Visitors != 1001 || res.WindowSeconds != 300 || !res.At.Equal(now) {
		t.Fatalf("LiveVisitors = %+v, %v", res, err)
	}
	want := analytics.EventRange{ProductID: 1, Env: analytics.EnvTest, From: now.Add(-5 * time.Minute), To: now.Add(time.Minute)}
	if st.asked[0] != want {
		t.Errorf("asked %+v, want %+v", st.asked[0], want)
	}
}

// TestLiveCache sends a hundred requests for one product at once, as a
// hundred open dashboards would: the store is asked once, every request
// gets its answer, and the answer is reused until the TTL has passed on
// the (fake) clock, then asked again. Another product and another
// environment have answers of their own.
func TestLiveCache(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := &liveStore{gate: make(chan struct{})}
	e := &Engine{Store: st, Now: clock, Live: NewLive(3 * time.Second)}
	ctx := context.Background()
	live := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}

	var wg sync.WaitGroup
	answers := make([]int64, 100)
	for i := range answers {
		wg.Go(func() {
			res, err := e.LiveVisitors(ctx, live)
			if err != nil {
				t.Error(err)
			}
			answers[i] = res.Visitors
		})
	}
	waitFor(t, "the count to start", func() bool { return st.calls.Load() == 1 })
	close(st.gate)
	wg.Wait()
	for i, n := range answers {
		if n != 1001 {
			t.Fatalf("request %d got %d, want the one count 1001", i, n)
		}
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("the store was asked %d times for 100 requests, want 1", n)
	}

	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	if res, _ := e.LiveVisitors(ctx, live); res.Visitors != 1001 || st.calls.Load() != 1 {
		t.Errorf("within the TTL: %+v after %d counts, want the cached 1001", res, st.calls.Load())
	}
	if res, _ := e.LiveVisitors(ctx, analytics.EventRange{ProductID: 2, Env: analytics.EnvLive}); res.Visitors != 2002 {
		t.Errorf("another product got %d, want its own count 2002", res.Visitors)
	}
	if res, _ := e.LiveVisitors(ctx, analytics.EventRange{ProductID: 1, Env: analytics.EnvTest}); res.Visitors != 1003 {
		t.Errorf("the test environment got %d, want its own count 1003", res.Visitors)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if res, _ := e.LiveVisitors(ctx, live); res.Visitors != 1004 || !res.At.Equal(clock()) {
		t.Errorf("after the TTL: %+v, want a new count 1004 taken now", res)
	}
}

// TestLiveBesideHeavyQueries fills every query slot and the queue, as
// heavy funnels would: a live count still answers at once, and it took
// no slot.
func TestLiveBesideHeavyQueries(t *testing.T) {
	st := &liveStore{}
	adm := NewAdmission(1, 0, time.Minute)
	release, err := adm.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	e := &Engine{Store: st, Admission: adm, Live: NewLive(time.Second)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if res, err := e.LiveVisitors(ctx, analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}); err != nil || res.Visitors != 1001 {
		t.Fatalf("live count with every slot taken: %+v, %v", res, err)
	}
	if running, waiting := adm.Load(); running != 1 || waiting != 0 {
		t.Errorf("admission after the live count: %d running, %d waiting, want 1 and 0", running, waiting)
	}
}

// TestLiveErrorNotCached checks that a failed count is not reused: the
// next request asks the store again.
func TestLiveErrorNotCached(t *testing.T) {
	oom := &liveFailing{}
	e := &Engine{Store: oom, Live: NewLive(time.Hour)}
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	if _, err := e.LiveVisitors(context.Background(), sc); err == nil {
		t.Fatal("the failing count succeeded")
	}
	waitFor(t, "the failed count to be dropped", func() bool {
		e.Live.mu.Lock()
		defer e.Live.mu.Unlock()
		return len(e.Live.answers) == 0
	})
	oom.ok = true
	if res, err := e.LiveVisitors(context.Background(), sc); err != nil || res.Visitors != 7 {
		t.Errorf("after a failure: %+v, %v, want a new count 7", res, err)
	}
}

// liveFailing fails with ErrOutOfMemory until ok is set, then counts 7.
type liveFailing struct {
	stubStore
	ok bool
}

func (s *liveFailing) LiveVisitors(context.Context, analytics.EventRange) (int64, error) {
	if s.ok {
		return 7, nil
	}
	return 0, analytics.ErrOutOfMemory
}
