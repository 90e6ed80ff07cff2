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
// less than a floor of free space (--min-free-disk) or of free inodes
// (--min-free-inodes): what was already acknowledged still has to reach
// the database from the spool and be checkpointed, and a DuckDB write that
// meets a full disk breaks the instance (internal/store/duckdb, recover.go).
// Below the floor the database refuses every write but reads go on
// (duckdb.Options.WriteGate), so queries and the dashboard still answer.
// Should a write fail anyway (something else filled the disk), the store
// refuses work until recover reopens it, which it does once the floor is
// free again.
type storageGuard struct {
	dir        string
	floor      uint64 // bytes
	inodeFloor uint64
	// store is set once the database is open, before anything serves;
	// spooled says whether the spool takes events in front of it
	// (AdmitIngest).
	store   *duckdb.Store
	spooled bool
	log     *slog.Logger

	mu    sync.Mutex
	short string // what the last check found short ("", "space" or "inodes"), to log each crossing once
	// unread is whether the last reading of the free space failed, to
	// log each failure once: aboveFloor runs for every database statement.
	unread bool
}

func newStorageGuard(dir string, floor, inodeFloor uint64, log *slog.Logger) *storageGuard {
	return &storageGuard{dir: dir, floor: floor, inodeFloor: inodeFloor, log: log}
}

// diskFree is what is free on a filesystem.
type diskFree struct {
	// bytes is the space an unprivileged writer may still use.
	bytes uint64
	// inodes is how many files may still be created, and totalInodes how
	// many the filesystem has: 0 on filesystems that allocate inodes as
	// they go and report none (btrfs), which have no inode floor.
	inodes, totalInodes uint64
}

// readFree reads what is free on dir's filesystem.
func readFree(dir string) (diskFree, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return diskFree{}, fmt.Errorf("reading free space of %s: %w", dir, err)
	}
	return diskFree{bytes: st.Bavail * uint64(st.Bsize), inodes: st.Ffree, totalInodes: st.Files}, nil
}

// errStorageFull answers ingest, and every database write, below the
// byte floor.
func errStorageFull(free, floor uint64) error {
	return &analytics.Error{Kind: analytics.KindUnavailable, Code: analytics.CodeStorageFull,
		Message: fmt.Sprintf("The server's disk is nearly full (%d MB free, it keeps %d MB); events and changes are not stored until space is freed. Retry later.",
			free>>20, floor>>20),
		RetryAfter: 30 * time.Second}
}

// errInodesFull answers them below the inode floor.
func errInodesFull(free, floor uint64) error {
	return &analytics.Error{Kind: analytics.KindUnavailable, Code: analytics.CodeStorageFull,
		Message: fmt.Sprintf("The server's disk is nearly out of inodes (%d files may still be created, it keeps %d); events and changes are not stored until files are deleted. Retry later.",
			free, floor),
		RetryAfter: 30 * time.Second}
}

// Admit returns nil when events may be committed to the database now: the
// store is sound and the floor is free. It is the spool loaders' gate.
func (g *storageGuard) Admit() error { return g.admit(false) }

// AdmitIngest returns nil when events may be acknowledged now: the ingest
// writer's Admit and the replay chunks'. With the spool in front of the
// database it is Admit, except that a store broken by a write that ran out
// of DuckDB's memory does not refuse: that store is reopened within a
// second (recover) while the disk has room, and the spool keeps what is
// acknowledged meanwhile, so that a read that filled the buffer pool never
// makes ingest refuse events (docs/security.md, "Reads never break
// writes"). Without the spool the events go to the database itself, and
// it is Admit.
func (g *storageGuard) AdmitIngest() error { return g.admit(g.spooled) }

func (g *storageGuard) admit(despiteMemory bool) error {
	if g.store != nil {
		if err := g.store.Broken(); err != nil && !(despiteMemory && duckdb.OutOfMemory(err)) {
			return err
		}
	}
	return g.aboveFloor()
}

// aboveFloor checks the free space and inodes against their floors. It
// reads them afresh each time (one statfs, about a microsecond): it runs
// once per group commit, per load and per database write, and a reading
// kept even a tenth of a second lets a burst of ingest, or another
// program, take the margin meanwhile.
func (g *storageGuard) aboveFloor() error {
	if g.floor == 0 && g.inodeFloor == 0 {
		return nil
	}
	free, err := readFree(g.dir)
	if err != nil {
		// Unknown free space is not a reason to refuse events; a write
		// that fails is caught by the store itself.
		g.mu.Lock()
		if !g.unread {
			g.log.Warn("cannot read the data directory's free space; not refusing writes for it until it can be read", "err", err)
		}
		g.unread = true
		g.mu.Unlock()
		return nil
	}
	short, refusal := g.check(free)
	g.mu.Lock()
	g.unread = false
	if short != g.short {
		switch short {
		case "space":
			g.log.Warn("the data directory's disk is nearly full: refusing events and database writes until space is freed",
				"free_mb", free.bytes>>20, "min_free_mb", g.floor>>20)
		case "inodes":
			g.log.Warn("the data directory's disk is nearly out of inodes: refusing events and database writes until files are deleted",
				"free_inodes", free.inodes, "min_free_inodes", g.inodeFloor)
		default:
			g.log.Info("the data directory's disk has room again: accepting events", "free_mb", free.bytes>>20, "free_inodes", free.inodes)
		}
		g.short = short
	}
	g.mu.Unlock()
	return refusal
}

// check compares free with the floors and returns what is short ("space"
// or "inodes", or "") and the refusal to answer with. A filesystem that
// reports no inodes has none to run out of.
func (g *storageGuard) check(free diskFree) (string, error) {
	switch {
	case g.floor > 0 && free.bytes < g.floor:
		return "space", errStorageFull(free.bytes, g.floor)
	case g.inodeFloor > 0 && free.totalInodes > 0 && free.inodes < g.inodeFloor:
		return "inodes", errInodesFull(free.inodes, g.inodeFloor)
	}
	return "", nil
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

// limitSpill bounds the embedded database's temporary files to what they
// hold plus what is free above the floor, so that a query that spills
// cannot take the room kept for events: it fails alone, 503
// query_too_large (internal/store/duckdb, spill.go). It runs at start and
// every second from the server's chore loop; without a floor, DuckDB's own
// bound stands.
func (g *storageGuard) limitSpill(ctx context.Context) {
	if g.store == nil || g.floor == 0 {
		return
	}
	free, err := readFree(g.dir)
	if err != nil {
		return // aboveFloor logs the unreadable disk
	}
	if err := g.store.LimitSpill(ctx, free.bytes, g.floor); err != nil {
		g.log.Debug("bounding the temporary files failed", "err", err)
	}
}
