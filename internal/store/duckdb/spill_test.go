package duckdb

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/testdisk"
)

// spillQuery groups ten million distinct keys, whose hash table is far
// larger than a 64 MB pool: it spilled 144 MB at most here.
const spillQuery = "SELECT count(*) FROM (SELECT hash(i) AS h, count(*) FROM range(10000000) t(i) GROUP BY h)"

func freeBytes(t *testing.T, dir string) uint64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return st.Bavail * uint64(st.Bsize)
}

// TestLimitSpillKeepsTheFloor runs a query that must spill on a small disk
// whose floor leaves it too little room: bounded by LimitSpill, the query
// fails as out of memory (what the server answers 503 query_too_large), the
// floor stays free, and the store is not broken: events are still taken.
// Unbounded, DuckDB's own bound (nine tenths of the free disk) lets the
// query spill into the floor. With room above the floor, the same query
// answers.
func TestLimitSpillKeepsTheFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("spills hundreds of megabytes")
	}
	ctx := context.Background()
	dir := testdisk.Mount(t, "size=200m")
	s, err := Open(ctx, dir, Options{MemoryLimit: "64MB", Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const floor = 120 << 20
	if err := s.LimitSpill(ctx, freeBytes(t, dir), floor); err != nil {
		t.Fatal(err)
	}
	// The lowest free space seen while the query runs.
	low := freeBytes(t, dir)
	done := make(chan error, 1)
	go func() {
		var n int64
		done <- s.DB().QueryRowContext(ctx, spillQuery).Scan(&n)
	}()
	for err = nil; ; {
		select {
		case err = <-done:
		default:
			low = min(low, freeBytes(t, dir))
			continue
		}
		break
	}
	if !errors.Is(err, analytics.ErrOutOfMemory) {
		t.Fatalf("the query got %v, want it marked out of memory", err)
	}
	if low < floor {
		t.Errorf("the spill left %d MB free, below the %d MB floor", low>>20, floor>>20)
	}
	if err := s.Broken(); err != nil {
		t.Fatalf("the store broke: %v", err)
	}
	if err := s.AppendEvents(ctx, []analytics.Event{userEvent(1, "after", time.Now())}); err != nil {
		t.Fatalf("events after the refused query: %v", err)
	}

	// Room above the floor: the query answers.
	if err := s.LimitSpill(ctx, freeBytes(t, dir), 0); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := s.DB().QueryRowContext(ctx, spillQuery).Scan(&n); err != nil || n != 10_000_000 {
		t.Fatalf("with room the query answered %d, %v", n, err)
	}
}

// TestLimitSpillBelowTheFloor lowers the bound while the write gate
// refuses, which is when it matters most: a SET writes nothing, so the gate
// lets it through.
func TestLimitSpillBelowTheFloor(t *testing.T) {
	ctx := context.Background()
	var gate error
	s, err := Open(ctx, t.TempDir(), Options{WriteGate: func() error { return gate }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gate = errors.New("below the floor")
	if err := s.LimitSpill(ctx, 10<<20, 256<<20); err != nil {
		t.Fatalf("below the floor: %v", err)
	}
	var limit string
	if err := s.DB().QueryRowContext(ctx, "SELECT current_setting('max_temp_directory_size')").Scan(&limit); err != nil {
		t.Fatal(err)
	}
	if limit != "0 bytes" {
		t.Errorf("max_temp_directory_size is %q, want nothing more than the files hold (none)", limit)
	}
	if _, err := s.DB().ExecContext(ctx, "CREATE TABLE t (i INTEGER)"); err == nil {
		t.Error("a write went through the refusing gate")
	}
}
