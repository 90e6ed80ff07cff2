package duckdb

import (
	"context"
	"testing"

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
	all, err := migrate.Load(migrationFS, "migrations")
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
