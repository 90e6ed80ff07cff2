package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/testdisk"
)

// errTestFull stands for the server's floor refusing writes.
var errTestFull = errors.New("test: the disk is nearly full")

// floorGate is a WriteGate that refuses while full is set.
func floorGate(full *atomic.Bool) func() error {
	return func() error {
		if full.Load() {
			return errTestFull
		}
		return nil
	}
}

// TestWriteGate checks that while the WriteGate refuses, nothing that could
// write reaches DuckDB (a metadata write, an append of events, a replay, a
// checkpoint, a string of statements, a write prepared before), that reads
// go on and the store stays sound, and that writes go through again once
// it allows. Closed while it refuses, the store keeps its write-ahead log
// rather than checkpoint, and the next Open reads it.
func TestWriteGate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var full atomic.Bool
	s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1, WriteGate: floorGate(&full)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateWorkspace(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC()
	if err := s.AppendEvents(ctx, []analytics.Event{userEvent(1, "a", at)}); err != nil {
		t.Fatal(err)
	}
	insert, err := s.DB().PrepareContext(ctx, `INSERT INTO workspaces (name, created_at) VALUES ($1, now())`)
	if err != nil {
		t.Fatal(err)
	}
	defer insert.Close()

	full.Store(true)
	refused := map[string]error{}
	_, refused["metadata write"] = s.CreateWorkspace(ctx, "during")
	refused["append"] = s.AppendEvents(ctx, []analytics.Event{userEvent(1, "b", at)})
	refused["replay"] = s.AppendMissing(ctx, []analytics.Event{userEvent(1, "c", at)})
	_, refused["checkpoint"] = s.DB().ExecContext(ctx, "CHECKPOINT")
	_, refused["statements"] = s.DB().ExecContext(ctx, "SELECT 1; CREATE TABLE sneaky (x INTEGER)")
	_, refused["prepared write"] = insert.ExecContext(ctx, "prepared")
	for what, err := range refused {
		if !errors.Is(err, errTestFull) {
			t.Errorf("%s while the gate refuses: %v; want the gate's error", what, err)
		}
	}
	if ws, err := s.ListWorkspaces(ctx); err != nil || len(ws) != 1 || ws[0].Name != "before" {
		t.Errorf("reading while the gate refuses: %+v, %v; want the one workspace", ws, err)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil || n != 1 {
		t.Errorf("counting events while the gate refuses: %d, %v; want 1", n, err)
	}
	if err := s.Broken(); err != nil {
		t.Errorf("a refused write broke the store: %v", err)
	}
	var tables int
	s.DB().QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_name = 'sneaky'`).Scan(&tables)
	if tables != 0 {
		t.Error("the first of two statements ran while the gate refused")
	}

	full.Store(false)
	if _, err := s.CreateWorkspace(ctx, "after"); err != nil {
		t.Errorf("a metadata write once the gate allows: %v", err)
	}
	if _, err := insert.ExecContext(ctx, "prepared"); err != nil {
		t.Errorf("the prepared write once the gate allows: %v", err)
	}
	if err := s.AppendEvents(ctx, []analytics.Event{userEvent(1, "d", at)}); err != nil {
		t.Errorf("an append once the gate allows: %v", err)
	}

	full.Store(true)
	if err := s.Close(); err != nil {
		t.Fatalf("closing while the gate refuses: %v", err)
	}
	if info, err := os.Stat(filepath.Join(dir, FileName+".wal")); err != nil || info.Size() == 0 {
		t.Fatalf("closed while the gate refused, the write-ahead log is gone (%v): DuckDB checkpointed", err)
	}
	s, err = Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1, WriteGate: floorGate(&full)})
	if err != nil {
		t.Fatalf("reopening an up-to-date database while the gate refuses: %v", err)
	}
	defer s.Close()
	ws, err := s.ListWorkspaces(ctx)
	if err != nil || len(ws) != 3 || ws[2].Name != "prepared" {
		t.Errorf("after reopening: %+v, %v; want before, after and the one prepared once the gate allowed", ws, err)
	}
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil || n != 2 {
		t.Errorf("events after reopening: %d, %v; want 2", n, err)
	}
}

// TestWriteGateMidReplay crosses the floor between the statements of a
// replay (AppendMissing stages the events, then inserts them): the refusal
// never reached DuckDB, so it is answered as a refusal, the store stays
// sound and its reads go on, and the replay succeeds once writes may go
// ahead.
func TestWriteGateMidReplay(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	refuseAfter := int64(1 << 62)
	gate := func() error {
		if calls.Add(1) > atomic.LoadInt64(&refuseAfter) {
			return errTestFull
		}
		return nil
	}
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "256MB", Threads: 1, WriteGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Now().UTC()
	events := []analytics.Event{userEvent(1, "a", at), userEvent(1, "b", at.Add(time.Second))}
	// The first gate of the replay allows it; the next statement is refused.
	calls.Store(0)
	atomic.StoreInt64(&refuseAfter, 1)
	if err := s.AppendMissing(ctx, events); !errors.Is(err, errTestFull) {
		t.Fatalf("a replay refused half-way: %v, want the gate's refusal", err)
	}
	atomic.StoreInt64(&refuseAfter, 1<<62)
	if err := s.Broken(); err != nil {
		t.Fatalf("the store is broken by a refusal that never reached DuckDB: %v", err)
	}
	if _, err := s.ListWorkspaces(ctx); err != nil {
		t.Fatalf("a read after the refusal: %v", err)
	}
	if err := s.AppendMissing(ctx, events); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM events`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d events stored (%v), want 2", n, err)
	}
}

// TestOpenRefusesMigrationsWhenFull checks that a database that needs
// migrations is not opened while the gate refuses, with an error that says
// why, and that nothing was written to it.
func TestOpenRefusesMigrationsWhenFull(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var full atomic.Bool
	full.Store(true)
	_, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1, WriteGate: floorGate(&full)})
	if !errors.Is(err, errTestFull) || !strings.Contains(err.Error(), "migrations") {
		t.Fatalf("Open of a new database while the gate refuses: %v; want the gate's error, naming the migrations", err)
	}
	// Nothing was written: the file, if DuckDB made one, holds no table.
	raw, err := sql.Open("duckdb", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	var tables int
	err = raw.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables`).Scan(&tables)
	raw.Close()
	if err != nil || tables != 0 {
		t.Fatalf("after the refused Open the database holds %d tables (%v), want none", tables, err)
	}
	full.Store(false)
	s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1, WriteGate: floorGate(&full)})
	if err != nil {
		t.Fatalf("Open once the gate allows: %v", err)
	}
	defer s.Close()
	if _, err := s.CreateWorkspace(ctx, "w"); err != nil {
		t.Error(err)
	}
}

// TestWriteGateOnFullDisk fills a real disk to its last byte. Without a
// gate, one metadata write breaks the store and reads fail with it; with
// the gate refusing, the same write is refused and reads go on.
func TestWriteGateOnFullDisk(t *testing.T) {
	ctx := context.Background()
	for _, gated := range []bool{false, true} {
		dir := testdisk.Mount(t, "size=24m")
		var full atomic.Bool
		opt := Options{MemoryLimit: "256MB", Threads: 1}
		if gated {
			opt.WriteGate = floorGate(&full)
		}
		s, err := Open(ctx, dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		testdisk.Fill(t, dir, 0)
		full.Store(true)
		_, werr := s.CreateWorkspace(ctx, strings.Repeat("w", 64<<10))
		_, rerr := s.ListWorkspaces(ctx)
		switch {
		case !gated && (werr == nil || s.Broken() == nil || rerr == nil):
			t.Errorf("without a gate, a write on the full disk: %v; broken: %v; a read after it: %v; want all three to fail (else this test shows nothing)",
				werr, s.Broken(), rerr)
		case gated && (!errors.Is(werr, errTestFull) || s.Broken() != nil || rerr != nil):
			t.Errorf("with the gate, a write on the full disk: %v; broken: %v; a read after it: %v; want the gate's error, a sound store, a read",
				werr, s.Broken(), rerr)
		}
		s.Close()
	}
}

// BenchmarkWriteGate measures what the gate adds to a point lookup of the
// metadata (a product by id): nothing without a gate; one statfs with the
// server's floor allowing; a prepare to learn the statement's kind while
// it refuses.
func BenchmarkWriteGate(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	statfs := func() error {
		var st syscall.Statfs_t
		return syscall.Statfs(dir, &st)
	}
	for _, c := range []struct {
		name string
		gate func() error
	}{
		{"no gate", nil},
		{"allowing", statfs},
		{"refusing", func() error { statfs(); return errTestFull }},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := Open(ctx, b.TempDir(), Options{MemoryLimit: "256MB", Threads: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ws, err := s.CreateWorkspace(ctx, "w")
			if err != nil {
				b.Fatal(err)
			}
			s.pool.gate = c.gate
			b.ResetTimer()
			for range b.N {
				var name string
				if err := s.DB().QueryRowContext(ctx, `SELECT name FROM workspaces WHERE id = $1`, ws.ID).Scan(&name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
