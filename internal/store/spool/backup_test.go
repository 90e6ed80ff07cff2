package spool

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestBackupPrepareLoadsWhatWasAppended appends events that the loaders
// would linger over, and checks that once BackupPrepare returns they are
// all in the store a snapshot would be taken of, with no segment copied.
func TestBackupPrepareLoadsWhatWasAppended(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openDuck(t, dir)
	sp, err := Open(ctx, unclosed{st}, Options{Dir: filepath.Join(dir, "spool"), LoadLinger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer sp.Close()
	for range 5 {
		if err := sp.AppendEvents(ctx, events(20, "acked")); err != nil {
			t.Fatal(err)
		}
	}
	n, err := sp.BackupPrepare(ctx, filepath.Join(t.TempDir(), "spool"))
	if err != nil || n != 0 {
		t.Fatalf("BackupPrepare = %d, %v; want 0 segments copied", n, err)
	}
	if got := count(t, st, "acked"); got != 100 {
		t.Errorf("%d of 100 acknowledged events in the store after BackupPrepare", got)
	}
}

// TestBackupPrepareCopiesLeftSegments opens a spool over the log a crash
// left while the gate refuses (so the log is not replayed, and Sync does
// not wait for it): BackupPrepare copies the left segment, and a spool
// opened over the copy in front of a store that has the events loaded
// before the crash stores every event once.
func TestBackupPrepareCopiesLeftSegments(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	spoolDir := filepath.Join(dir, "spool")
	st := openDuck(t, dir)
	left := crashLog(t, st, spoolDir, "left", 300)
	if err := st.AppendEvents(ctx, left[:100]); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	refuse := true
	gate := func() error {
		mu.Lock()
		defer mu.Unlock()
		if refuse {
			return errors.New("disk nearly full")
		}
		return nil
	}
	sp, err := Open(ctx, unclosed{st}, Options{Dir: spoolDir, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	backupSpool := filepath.Join(t.TempDir(), "spool")
	n, err := sp.BackupPrepare(ctx, backupSpool)
	if err != nil || n != 1 {
		t.Fatalf("BackupPrepare = %d, %v; want the left segment copied", n, err)
	}
	sp.Close()
	st.Close()

	// The restored side: a store with the 100 loaded before, and the
	// copied segment.
	restored := t.TempDir()
	st2 := openDuck(t, restored)
	defer st2.Close()
	if err := st2.AppendEvents(ctx, left[:100]); err != nil {
		t.Fatal(err)
	}
	sp2, err := Open(ctx, unclosed{st2}, Options{Dir: backupSpool})
	if err != nil {
		t.Fatal(err)
	}
	defer sp2.Close()
	if got := count(t, st2, "left"); got != 300 {
		t.Errorf("%d of the 300 acknowledged events after replaying the copied segment", got)
	}
	var dup int
	st2.DB().QueryRow(`SELECT count(*) - count(DISTINCT uuid) FROM events`).Scan(&dup)
	if dup != 0 {
		t.Errorf("%d events stored twice", dup)
	}
}
