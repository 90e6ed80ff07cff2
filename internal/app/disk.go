package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

// storageGuard says whether the embedded store may take events now, and
// brings it back after a failed write (docs/ingest.md, "A full disk").
//
// Ingest stops acknowledging while the data directory's filesystem has
// less than a floor of free space (--min-free-disk): what was already
// acknowledged still has to reach the database from the spool and be
// checkpointed, and a DuckDB write that meets a full disk breaks the
// instance (internal/store/duckdb, recover.go). Should a write fail anyway
// (something else filled the disk), the store refuses work until recover
// reopens it, which it does once the floor is free again.
type storageGuard struct {
	dir   string
	floor uint64
	store *duckdb.Store
	log   *slog.Logger

	mu   sync.Mutex
	full bool // whether the last check found the floor crossed, to log each crossing once
}

func newStorageGuard(dir string, floor uint64, store *duckdb.Store, log *slog.Logger) *storageGuard {
	return &storageGuard{dir: dir, floor: floor, store: store, log: log}
}

// freeBytes is the space an unprivileged writer may still use on dir's
// filesystem.
func freeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("reading free space of %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// errStorageFull answers ingest below the floor.
func errStorageFull(free, floor uint64) error {
	return &analytics.Error{Kind: analytics.KindUnavailable, Code: "storage_full",
		Message: fmt.Sprintf("The server's disk is nearly full (%d MB free, it keeps %d MB); events are not accepted until space is freed. Retry later.",
			free>>20, floor>>20),
		RetryAfter: 30 * time.Second}
}

// Admit returns nil when events may be committed now: the store is sound
// and the floor is free. It is the ingest writer's Admit.
func (g *storageGuard) Admit() error {
	if g.store != nil {
		if err := g.store.Broken(); err != nil {
			return err
		}
	}
	return g.aboveFloor()
}

// aboveFloor checks the free space against the floor. It reads it afresh
// each time (one statfs, about a microsecond): it runs once per group
// commit and per load, and a reading kept even a tenth of a second lets a
// burst of ingest, or another program, take the margin meanwhile.
func (g *storageGuard) aboveFloor() error {
	if g.floor == 0 {
		return nil
	}
	free, err := freeBytes(g.dir)
	if err != nil {
		// Unknown free space is not a reason to refuse events; a write
		// that fails is caught by the store itself.
		g.log.Warn("cannot read the data directory's free space", "err", err)
		return nil
	}
	full := free < g.floor
	g.mu.Lock()
	switch {
	case full && !g.full:
		g.log.Warn("the data directory's disk is nearly full: refusing events until space is freed",
			"free_mb", free>>20, "min_free_mb", g.floor>>20)
	case !full && g.full:
		g.log.Info("the data directory's disk has room again: accepting events", "free_mb", free>>20)
	}
	g.full = full
	g.mu.Unlock()
	if full {
		return errStorageFull(free, g.floor)
	}
	return nil
}

// recover reopens the store when a failed write broke it and the floor is
// free again. It runs from the server's chore loop, never beside shutdown.
func (g *storageGuard) recover(ctx context.Context) {
	if g.store == nil {
		return
	}
	err := g.store.Broken()
	if err == nil || g.aboveFloor() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	g.log.Warn("reopening the database after a failed write", "err", err)
	start := time.Now()
	if ok, err := g.store.Recover(ctx); err != nil {
		g.log.Error("reopening the database failed; trying again shortly", "err", err)
	} else if ok {
		g.log.Info("database reopened; storage recovered", "took", time.Since(start).Round(time.Millisecond))
	}
}
