package duckdb

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/migrate"

	"strata/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		s, err := Open(context.Background(), t.TempDir(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestMigrationsApplyOnce reopens a data directory and checks that the
// recorded migrations are not applied again.
func TestMigrationsApplyOnce(t *testing.T) {
	dir := t.TempDir()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		s, err := Open(context.Background(), dir, Options{MemoryLimit: "256MB", Threads: 1})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		var n int
		if err := s.DB().QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(all) {
			t.Errorf("open %d: %d migrations recorded (%v), want %d", i, n, err, len(all))
		}
		s.Close()
	}
}

// TestCheckpointIfIdle checks that the store checkpoints once after ingest
// goes quiet, and not while it is busy or when nothing changed.
func TestCheckpointIfIdle(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "256MB", Threads: 1, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if did, err := s.CheckpointIfIdle(ctx, time.Second); did || err != nil {
		t.Errorf("nothing appended: checkpointed=%v err=%v", did, err)
	}
	if err := s.AppendEvents(ctx, []analytics.Event{userEvent(1, "a", clock)}); err != nil {
		t.Fatal(err)
	}
	if did, _ := s.CheckpointIfIdle(ctx, time.Second); did {
		t.Error("checkpointed while ingest was not yet idle")
	}
	clock = clock.Add(2 * time.Second)
	if did, err := s.CheckpointIfIdle(ctx, time.Second); !did || err != nil {
		t.Errorf("idle after an append: checkpointed=%v err=%v", did, err)
	}
	clock = clock.Add(2 * time.Second)
	if did, _ := s.CheckpointIfIdle(ctx, time.Second); did {
		t.Error("checkpointed again with nothing new")
	}
}

// TestReplaySessionsBackfill applies the migrations before 0024 to a
// database, stores sessions in it as those left them, and opens it: the
// migration counts each product's sessions, and the cap holds to them.
func TestReplaySessionsBackfill(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	before := slices.DeleteFunc(all, func(m migrate.Migration) bool { return m.Version >= 24 })
	db, err := sql.Open("duckdb", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(ctx, db, before, time.Now()); err != nil {
		t.Fatal(err)
	}
	storetest.SeedReplaySessions(t, db)
	db.Close()
	s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckReplaySessionsBackfill(t, s.DB(), s)
}
