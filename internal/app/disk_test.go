package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
	"strata/internal/testdisk"
)

// TestGuardFloors checks which floor each reading crosses: free space
// first, then free inodes, which a filesystem that counts none (btrfs
// reports zero of zero) never crosses, and neither when its floor is 0.
func TestGuardFloors(t *testing.T) {
	g := newStorageGuard(t.TempDir(), 256<<20, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, c := range []struct {
		name       string
		free       diskFree
		inodeFloor uint64
		short      string
		says       string
	}{
		{"room", diskFree{bytes: 1 << 30, inodes: 50_000, totalInodes: 100_000}, 10_000, "", ""},
		{"space short", diskFree{bytes: 100 << 20, inodes: 50_000, totalInodes: 100_000}, 10_000, "space", "100 MB free, it keeps 256 MB"},
		{"both short", diskFree{bytes: 100 << 20, inodes: 10, totalInodes: 100_000}, 10_000, "space", "100 MB free"},
		{"inodes short", diskFree{bytes: 1 << 30, inodes: 9_999, totalInodes: 100_000}, 10_000, "inodes", "9999 files may still be created, it keeps 10000"},
		{"no inode count", diskFree{bytes: 1 << 30, inodes: 0, totalInodes: 0}, 10_000, "", ""},
		{"inode floor off", diskFree{bytes: 1 << 30, inodes: 0, totalInodes: 100_000}, 0, "", ""},
	} {
		g.inodeFloor = c.inodeFloor
		short, err := g.check(c.free)
		var e *analytics.Error
		switch {
		case short != c.short:
			t.Errorf("%s: short of %q; want %q", c.name, short, c.short)
		case c.says == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.says != "" && (!errors.As(err, &e) || e.Code != "storage_full" || e.Kind != analytics.KindUnavailable ||
			e.RetryAfter == 0 || !strings.Contains(e.Message, c.says)):
			t.Errorf("%s: %v; want 503 storage_full with Retry-After saying %q", c.name, err, c.says)
		}
	}
}

// TestGuardInodeFloor exhausts the inodes of a real tmpfs that has bytes
// to spare: the guard refuses below the inode floor and allows again once
// files are deleted.
func TestGuardInodeFloor(t *testing.T) {
	mnt := testdisk.Mount(t, "size=16m,nr_inodes=300")
	g := newStorageGuard(mnt, 1<<20, 100, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := g.Admit(); err != nil {
		t.Fatalf("an empty disk: %v", err)
	}
	files := testdisk.FillInodes(t, mnt, 50)
	if err := g.Admit(); !analytics.IsStorageFull(err) || !strings.Contains(err.Error(), "inodes") {
		t.Errorf("50 inodes free of a floor of 100: %v; want storage_full naming inodes", err)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Admit(); err != nil {
		t.Errorf("once the files are deleted: %v", err)
	}
}

// TestGuardUnreadableDisk checks that a data directory whose free space
// cannot be read allows writes and says so once, not at every database
// statement that asks, and again after a reading succeeded between.
func TestGuardUnreadableDisk(t *testing.T) {
	var logs strings.Builder
	dir := t.TempDir()
	g := newStorageGuard(dir+"/gone", 1<<20, 100, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 100 {
		if err := g.aboveFloor(); err != nil {
			t.Fatalf("an unreadable disk refused: %v", err)
		}
	}
	if n := strings.Count(logs.String(), "cannot read the data directory's free space"); n != 1 {
		t.Fatalf("%d warnings for 100 failed readings, want 1:\n%s", n, logs.String())
	}
	if err := os.Mkdir(dir+"/gone", 0o700); err != nil {
		t.Fatal(err)
	}
	g.aboveFloor()
	os.Remove(dir + "/gone")
	g.aboveFloor()
	if n := strings.Count(logs.String(), "cannot read the data directory's free space"); n != 2 {
		t.Errorf("%d warnings after the disk was read again and then lost, want 2", n)
	}
}

// TestGuardLimitsSpill checks the bound the guard gives the embedded
// database's temporary files on a real small disk: what is free above the
// floor (none are spilled yet), and nothing without a floor, where
// DuckDB's own bound stands.
func TestGuardLimitsSpill(t *testing.T) {
	ctx := context.Background()
	dir := testdisk.Mount(t, "size=64m")
	st, err := duckdb.Open(ctx, dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	limit := func() string {
		var v string
		if err := st.DB().QueryRowContext(ctx, "SELECT current_setting('max_temp_directory_size')").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	unset := limit()
	off := newStorageGuard(dir, 0, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	off.store = st
	off.limitSpill(ctx)
	if got := limit(); got != unset {
		t.Errorf("without a floor the bound became %q; DuckDB's was %q", got, unset)
	}

	g := newStorageGuard(dir, 16<<20, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	g.store = st
	g.limitSpill(ctx)
	free, err := readFree(dir)
	if err != nil {
		t.Fatal(err)
	}
	// DuckDB shows the bound in binary units with one decimal.
	want := float64(free.bytes-16<<20) / (1 << 20)
	var got float64
	if _, err := fmt.Sscanf(limit(), "%f MiB", &got); err != nil || got < want-1 || got > want+1 {
		t.Errorf("the bound is %q; want about %.1f MiB (free %d MiB less the 16 MiB floor)", limit(), want, free.bytes>>20)
	}
}
