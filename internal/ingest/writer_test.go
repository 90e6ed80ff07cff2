package ingest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

func pending(product int64, name string, u uuid.UUID, client bool) Pending {
	return Pending{ClientUUID: client, Event: analytics.Event{
		UUID: u, ProductID: product, Env: analytics.EnvLive, Name: name, DistinctID: "u",
		Timestamp: time.Now(), ReceivedAt: time.Now(), Properties: []byte("{}"),
	}}
}

func countEvents(t *testing.T, st *duckdb.Store, where string, args ...any) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(`SELECT count(*) FROM events WHERE `+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWriterGroupCommitAndDedup runs concurrent writers against a real
// DuckDB file and checks that every acknowledged event is stored exactly
// once, duplicates by client uuid included.
func TestWriterGroupCommitAndDedup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := duckdb.Open(ctx, dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := NewWriter(st, WriterOptions{})

	shared := uuid.New()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 20; r++ {
				batch := []Pending{pending(1, "shared", shared, true)}
				for i := 0; i < 10; i++ {
					batch = append(batch, pending(1, "unique", uuid.New(), i%2 == 0))
				}
				if err := w.Write(ctx, batch); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	// Product 2 may reuse product 1's uuid.
	if err := w.Write(ctx, []Pending{pending(2, "shared", shared, true)}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	if n := countEvents(t, st, "event = 'unique'"); n != 8*20*10 {
		t.Errorf("unique events = %d, want %d", n, 8*20*10)
	}
	if n := countEvents(t, st, "event = 'shared' AND product_id = 1"); n != 1 {
		t.Errorf("shared uuid stored %d times in product 1, want 1", n)
	}
	if n := countEvents(t, st, "event = 'shared' AND product_id = 2"); n != 1 {
		t.Errorf("shared uuid stored %d times in product 2, want 1", n)
	}
	if err := w.Write(ctx, []Pending{pending(1, "late", uuid.New(), true)}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}

	// A new writer restores the window from the store.
	w2 := NewWriter(st, WriterOptions{})
	if n, err := w2.LoadRecent(ctx); err != nil || n == 0 {
		t.Fatalf("LoadRecent = %d, %v", n, err)
	}
	if err := w2.Write(ctx, []Pending{pending(1, "shared", shared, true)}); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	if n := countEvents(t, st, "event = 'shared' AND product_id = 1"); n != 1 {
		t.Errorf("after restart the shared uuid is stored %d times, want 1", n)
	}
}

// failingStore stands in for a failing disk, the one thing a test cannot
// make a real DuckDB do on demand.
type failingStore struct {
	analytics.EventStore
	fail bool
	got  int
}

func (f *failingStore) AppendEvents(_ context.Context, ev []analytics.Event) error {
	if f.fail {
		return errors.New("disk full")
	}
	f.got += len(ev)
	return nil
}

// TestWriterStoreFailure checks that a failed commit is reported to every
// request as unavailable and does not poison the dedup window: the retry of
// the same uuids is stored.
func TestWriterStoreFailure(t *testing.T) {
	fs := &failingStore{fail: true}
	w := NewWriter(fs, WriterOptions{})
	defer w.Close()
	batch := []Pending{pending(1, "e", uuid.New(), true), pending(1, "e", uuid.New(), true)}
	err := w.Write(context.Background(), batch)
	var e *analytics.Error
	if !errors.As(err, &e) || e.Kind != analytics.KindUnavailable || e.RetryAfter == 0 {
		t.Fatalf("Write on failing store = %v, want an unavailable error with Retry-After", err)
	}
	fs.fail = false
	if err := w.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if fs.got != 2 {
		t.Errorf("retry stored %d events, want 2", fs.got)
	}
}

func TestDedupSetWindowAndCapacity(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDedupSet(24*time.Hour, 1000, t0)
	d.add(1, t0)
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{time.Hour, true}, {24 * time.Hour, true}} {
		if got := d.has(1, t0.Add(c.at)); got != c.want {
			t.Errorf("has after %v = %v, want %v", c.at, got, c.want)
		}
	}
	// Keys added later keep the set rolling; the first key expires once its
	// generation is over a window old.
	for h := 0; h <= 31; h++ {
		d.add(uint64(100+h), t0.Add(time.Duration(h)*time.Hour))
	}
	if d.has(1, t0.Add(31*time.Hour)) {
		t.Error("key 1 is still remembered 31 hours later")
	}
	if !d.has(131, t0.Add(31*time.Hour)) || !d.has(110, t0.Add(31*time.Hour)) {
		t.Error("keys from the last 24 hours were forgotten")
	}

	// Capacity: memory stays bounded and the newest keys are kept.
	d = newDedupSet(24*time.Hour, 1000, t0)
	for k := uint64(0); k < 10000; k++ {
		d.add(k, t0)
	}
	if d.size > 1000+1000/dedupGenerations {
		t.Errorf("size %d over capacity", d.size)
	}
	if !d.has(9999, t0) {
		t.Error("newest key evicted")
	}
	if d.has(0, t0) {
		t.Error("oldest key kept past capacity")
	}
	if d.evictedEarly == 0 {
		t.Error("early evictions not counted")
	}
}

// TestWriterAdmit checks that a refusal from Admit (a full disk) answers
// every request of the group with its own error and stores nothing, and
// that writes go through once Admit allows them again.
func TestWriterAdmit(t *testing.T) {
	fs := &failingStore{}
	full := &analytics.Error{Kind: analytics.KindUnavailable, Code: "storage_full", RetryAfter: time.Minute}
	var mu sync.Mutex
	refuse := true
	w := NewWriter(fs, WriterOptions{Admit: func() error {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return full
		}
		return nil
	}})
	defer w.Close()
	if err := w.Write(context.Background(), []Pending{pending(1, "e", uuid.New(), true)}); err != full {
		t.Fatalf("Write while Admit refuses = %v, want its error", err)
	}
	if fs.got != 0 {
		t.Errorf("%d events stored while Admit refused", fs.got)
	}
	mu.Lock()
	refuse = false
	mu.Unlock()
	if err := w.Write(context.Background(), []Pending{pending(1, "e", uuid.New(), true)}); err != nil {
		t.Fatal(err)
	}
	if fs.got != 1 {
		t.Errorf("%d events stored once Admit allowed, want 1", fs.got)
	}
}
