package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
	"strata/internal/store/replayfs"
)

// leases is a lease store of one holder at a time.
type leases struct {
	holder  string
	expires time.Time
}

func (l *leases) AcquireLease(_ context.Context, _, holder string, now, expires time.Time) (bool, error) {
	if l.holder != "" && l.holder != holder && now.Before(l.expires) {
		return false, nil
	}
	l.holder, l.expires = holder, expires
	return true, nil
}

// clock is the injected time.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// record stores one chunk of size bytes for a session that started at
// start and was received then.
func record(t *testing.T, s analytics.ReplayStore, product int64, sid string, start time.Time, size int) {
	t.Helper()
	c := analytics.ReplayChunk{ProductID: product, SessionID: sid, WindowID: "w", DistinctID: "u-" + sid,
		FirstTS: start, LastTS: start.Add(time.Minute), Encoding: analytics.ReplayJSON, Data: make([]byte, size),
		ReceivedAt: start.Add(time.Minute)}
	if _, err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{c}, analytics.ReplayLimits{}); err != nil {
		t.Fatal(err)
	}
}

// du is what the files in dir take.
func du(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		info, _ := e.Info()
		n += info.Size()
	}
	return n
}

func ids(t *testing.T, s analytics.ReplayStore, product int64) string {
	t.Helper()
	list, err := s.ListReplaySessions(context.Background(), product, analytics.ReplayFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range list {
		out = append(out, x.SessionID)
	}
	return fmt.Sprint(out)
}

// TestRetention runs the job on the disk store with an injected clock:
// sessions go 30 days after their last chunk, not before; a product over
// its cap loses its oldest sessions first until it fits, and the other
// products keep theirs; only the lease holder deletes.
func TestRetention(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replay")
	s, err := replayfs.Open(dir, replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t0}
	l := &leases{}
	// The cap counts each chunk's data and its ReplayChunkOverhead.
	limit := int64(1000 + 4*analytics.ReplayChunkOverhead)
	job := &Job{Store: s, Leases: l, Node: "a", Interval: time.Minute, Retention: 30 * day, MaxBytes: limit, Now: clk.Now}

	record(t, s, 1, "old", t0, 100)
	record(t, s, 1, "mid", t0.Add(10*day), 100)
	record(t, s, 1, "new", t0.Add(20*day), 100)
	record(t, s, 2, "other", t0, 100)

	clk.t = t0.Add(30 * day) // "old" ended 30 days minus a minute ago
	if n, err := job.Round(context.Background()); err != nil || n != 0 {
		t.Fatalf("round at 30 days: deleted %d, %v", n, err)
	}
	clk.t = t0.Add(30*day + 2*time.Minute)
	if n, err := job.Round(context.Background()); err != nil || n != 2 {
		t.Fatalf("round past 30 days: deleted %d, %v; want old of both products", n, err)
	}
	if got := ids(t, s, 1); got != "[new mid]" {
		t.Errorf("product 1 keeps %s", got)
	}
	if got := ids(t, s, 2); got != "[]" {
		t.Errorf("product 2 keeps %s", got)
	}

	// The cap: 1000 bytes of data in four chunks. Product 1 has 200 in
	// two; three more of 300 take it to 1100 in five, so its oldest
	// ("mid") goes, and nothing else.
	for i, sid := range []string{"c1", "c2", "c3"} {
		record(t, s, 1, sid, clk.t.Add(time.Duration(i)*time.Hour), 300)
	}
	record(t, s, 3, "big", clk.t, 5000) // product 3 alone over the cap: its only session goes
	clk.t = clk.t.Add(3 * time.Hour)
	if n, err := job.Round(context.Background()); err != nil || n != 2 {
		t.Fatalf("cap round: deleted %d, %v", n, err)
	}
	if got := ids(t, s, 1); got != "[c3 c2 c1 new]" {
		t.Errorf("product 1 keeps %s, want the newest within 1000 bytes", got)
	}
	if got := ids(t, s, 3); got != "[]" {
		t.Errorf("product 3 keeps %s", got)
	}
	// The round compacted: product 3's only session left the disk.
	if n := du(t, filepath.Join(dir, "3")); n != 0 {
		t.Errorf("product 3's deleted session still takes %d bytes", n)
	}

	// Another node does nothing while the lease is held.
	other := *job
	other.Node = "b"
	other.MaxBytes = 1
	if n, err := other.Round(context.Background()); err != nil || n != 0 {
		t.Errorf("a node without the lease deleted %d, %v", n, err)
	}
}

// TestRetentionSessionsCap fills a product to its cap on sessions, which
// then refuses a new one; a round deletes its oldest sessions until a
// tenth of the cap is free, and the next new sessions are taken up to the
// cap again. A product under the cap less a tenth keeps every session.
func TestRetentionSessionsCap(t *testing.T) {
	s, err := replayfs.Open(filepath.Join(t.TempDir(), "replay"), replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t0.Add(time.Hour)}
	const max = 20
	job := &Job{Store: s, Leases: &leases{}, Node: "a", Interval: time.Minute, Retention: 24 * time.Hour, MaxSessions: max, Now: clk.Now}
	limits := analytics.ReplayLimits{Sessions: max}
	start := func(product int64, sid string, at time.Time) analytics.ReplayRefused {
		t.Helper()
		c := analytics.ReplayChunk{ProductID: product, SessionID: sid, WindowID: "w", DistinctID: "u",
			FirstTS: at, LastTS: at.Add(time.Second), Encoding: analytics.ReplayJSON, Data: []byte("[]"), ReceivedAt: at}
		refused, err := s.AppendReplayChunks(context.Background(), []analytics.ReplayChunk{c}, limits)
		if err != nil {
			t.Fatal(err)
		}
		return refused
	}
	for i := 0; i < max; i++ {
		if r := start(1, fmt.Sprintf("s%02d", i), t0.Add(time.Duration(i)*time.Minute)); r.Count() != 0 {
			t.Fatalf("session %d under the cap: refused %+v", i, r)
		}
	}
	for i := 0; i < max-max/10-1; i++ {
		start(2, fmt.Sprintf("s%02d", i), t0.Add(time.Duration(i)*time.Minute))
	}
	if r := start(1, "late", t0.Add(time.Hour)); fmt.Sprint(r.ProductFull) != "[0]" {
		t.Fatalf("a session past the cap: refused %+v; want it, as the product's", r)
	}
	if n, err := job.Round(context.Background()); err != nil || n != max/10 {
		t.Fatalf("the round deleted %d, %v; want the %d oldest of product 1", n, err, max/10)
	}
	want := "["
	for i := max - 1; i >= max/10; i-- {
		want += fmt.Sprintf("s%02d ", i)
	}
	if got := ids(t, s, 1); got != want[:len(want)-1]+"]" {
		t.Errorf("product 1 keeps %s", got)
	}
	if list, _ := s.ListReplaySessions(context.Background(), 2, analytics.ReplayFilter{}); len(list) != max-max/10-1 {
		t.Errorf("product 2, under the cap less a tenth, keeps %d sessions", len(list))
	}
	// Room for a tenth of the cap again.
	for i := 0; i < max/10; i++ {
		if r := start(1, fmt.Sprintf("late%d", i), t0.Add(time.Hour)); r.Count() != 0 {
			t.Errorf("new session %d after the round: refused %+v", i, r)
		}
	}
	if r := start(1, "later", t0.Add(time.Hour)); len(r.ProductFull) != 1 {
		t.Errorf("a session past the cap again: refused %+v", r)
	}
	// A cap of one leaves room for one.
	job.MaxSessions, limits.Sessions = 1, 1
	if n, err := job.Round(context.Background()); err != nil || n != 2*max-max/10-1 {
		t.Errorf("a round under a cap of one deleted %d, %v; want every session", n, err)
	}
	if r := start(1, "only", t0.Add(time.Hour)); r.Count() != 0 {
		t.Errorf("a session under a cap of one: refused %+v", r)
	}
}

// counting passes every call to the store it wraps, counting the
// deletions by kind.
type counting struct {
	analytics.ReplayStore
	one, many int
}

func (c *counting) DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error {
	c.one++
	return c.ReplayStore.DeleteReplaySession(ctx, productID, sessionID)
}

func (c *counting) DeleteReplaySessions(ctx context.Context, productID int64, ids []string) (int, error) {
	c.many++
	return c.ReplayStore.DeleteReplaySessions(ctx, productID, ids)
}

func (c *counting) CompactReplays(ctx context.Context) error {
	return c.ReplayStore.(analytics.ReplayCompactor).CompactReplays(ctx)
}

// TestRetentionDeletesAtOnce runs a round on the disk store that deletes
// a tenth of a product at its cap of 5,000 sessions and every session of
// another product that expired: each product's sessions go in one call of
// the store (one write of their tombstones and one sync), not one call,
// write and sync a session, and exactly the sessions the rules name go.
func TestRetentionDeletesAtOnce(t *testing.T) {
	s, err := replayfs.Open(filepath.Join(t.TempDir(), "replay"), replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const max, expired = 5000, 300
	var batch []analytics.ReplayChunk
	for i := 0; i < max; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		batch = append(batch, analytics.ReplayChunk{ProductID: 1, SessionID: fmt.Sprintf("s%04d", i), WindowID: "w", DistinctID: "u",
			FirstTS: at, LastTS: at, Encoding: analytics.ReplayJSON, Data: []byte("[]"), ReceivedAt: t0.Add(48 * time.Hour)})
		if i < expired {
			old := batch[len(batch)-1]
			old.ProductID, old.ReceivedAt = 2, t0
			batch = append(batch, old)
		}
		if len(batch) >= 500 || i == max-1 {
			if r, err := s.AppendReplayChunks(context.Background(), batch, analytics.ReplayLimits{}); err != nil || r.Count() > 0 {
				t.Fatalf("refused %+v, %v", r, err)
			}
			batch = batch[:0]
		}
	}
	store := &counting{ReplayStore: s}
	clk := &clock{t0.Add(49 * time.Hour)}
	job := &Job{Store: store, Leases: &leases{}, Node: "a", Interval: time.Minute, Retention: 24 * time.Hour, MaxSessions: max, Now: clk.Now}
	began := time.Now()
	n, err := job.Round(context.Background())
	t.Logf("a round deleting %d sessions of two products took %v", n, time.Since(began))
	if err != nil || n != max/10+expired {
		t.Fatalf("the round deleted %d, %v; want %d", n, err, max/10+expired)
	}
	if store.one != 0 || store.many != 2 {
		t.Errorf("the round deleted by %d calls of a session and %d of many; want one call a product", store.one, store.many)
	}
	list, _ := s.ListReplaySessions(context.Background(), 1, analytics.ReplayFilter{})
	if len(list) != max-max/10 || list[len(list)-1].SessionID != fmt.Sprintf("s%04d", max/10) {
		t.Errorf("product 1 keeps %d sessions, the oldest %s; want %d from s%04d", len(list), list[len(list)-1].SessionID, max-max/10, max/10)
	}
	if got := ids(t, s, 2); got != "[]" {
		t.Errorf("product 2 keeps %s", got)
	}
}

// TestRetentionPerProduct gives products their own replay periods in a
// real metadata store: a product with 7 days loses a session 7 days
// after its last chunk; one asking for 60 days keeps the server's 30 (the
// ceiling); one with none keeps the server's.
func TestRetentionPerProduct(t *testing.T) {
	ctx := context.Background()
	meta, err := duckdb.Open(ctx, t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer meta.Close()
	ws, err := meta.CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	var products [3]int64
	for i, days := range []int{7, 60, 0} {
		p, err := meta.CreateProduct(ctx, ws.ID, fmt.Sprint("P", i))
		if err != nil {
			t.Fatal(err)
		}
		if days > 0 {
			if err := meta.SetProductRetention(ctx, p.ID, analytics.DataRetention{ReplaysDays: days}); err != nil {
				t.Fatal(err)
			}
		}
		products[i] = p.ID
	}
	s, err := replayfs.Open(filepath.Join(t.TempDir(), "replay"), replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t0}
	job := &Job{Store: s, Leases: &leases{}, Products: meta, Node: "a", Interval: time.Minute, Retention: 30 * day, Now: clk.Now}
	for _, p := range products {
		record(t, s, p, "s", t0, 100)
	}
	for _, c := range []struct {
		at   time.Duration
		want [3]string
	}{
		{7 * day, [3]string{"[s]", "[s]", "[s]"}}, // the last chunk came a minute after t0
		{7*day + 2*time.Minute, [3]string{"[]", "[s]", "[s]"}},
		{30*day + 2*time.Minute, [3]string{"[]", "[]", "[]"}},
	} {
		clk.t = t0.Add(c.at)
		if _, err := job.Round(ctx); err != nil {
			t.Fatal(err)
		}
		for i, p := range products {
			if got := ids(t, s, p); got != c.want[i] {
				t.Errorf("after %v, product %d (%d) keeps %s; want %s", c.at, i, p, got, c.want[i])
			}
		}
	}
}
