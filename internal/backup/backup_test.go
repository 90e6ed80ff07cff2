package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
	"strata/internal/store/replayfs"
)

func code(err error) string {
	var e *analytics.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TestTakeAndRestore backs up a database and a replay store, and checks
// what Restore accepts and refuses: a backup into a directory that is not
// empty, a restore into one, a backup without its manifest, and one whose
// file no longer matches its checksum.
func TestTakeAndRestore(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := duckdb.Open(ctx, data, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	files, err := replayfs.Open(filepath.Join(data, "replay"), replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	if _, err := files.AppendReplayChunks(ctx, []analytics.ReplayChunk{{ProductID: 1, SessionID: "s1", WindowID: "w1",
		Data: []byte("[]"), DistinctID: "u"}}, analytics.ReplayLimits{}); err != nil {
		t.Fatal(err)
	}
	r := &Runner{DB: db, Replays: files}
	dir := filepath.Join(t.TempDir(), "b")
	m, err := r.Take(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion == 0 || m.ReplayBytes == 0 || len(m.Files) != 2 {
		t.Fatalf("manifest %+v", m)
	}
	if _, err := r.Take(ctx, dir); code(err) != "backup_target_not_empty" {
		t.Errorf("a second backup into the same directory: %v", err)
	}

	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "x"), nil, 0o600)
	if _, err := Restore(dir, busy); code(err) != "restore_target_not_empty" {
		t.Errorf("a restore into a non-empty directory: %v", err)
	}
	to := filepath.Join(t.TempDir(), "data")
	if _, err := Restore(dir, to); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	for _, f := range m.Files {
		if _, err := os.Stat(filepath.Join(to, f.Path)); err != nil {
			t.Errorf("restored %s: %v", f.Path, err)
		}
	}
	restored, err := replayfs.Open(filepath.Join(to, "replay"), replayfs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restored.ReplaySession(ctx, 1, "s1"); err != nil {
		t.Errorf("the restored replay: %v", err)
	}
	restored.Close()

	// A damaged backup: one byte of the replay segment changed.
	seg := filepath.Join(dir, filepath.FromSlash(m.Files[1].Path))
	b, _ := os.ReadFile(seg)
	b[len(b)-1] ^= 1
	os.WriteFile(seg, b, 0o600)
	empty := filepath.Join(t.TempDir(), "data")
	if _, err := Restore(dir, empty); code(err) != "backup_corrupt" {
		t.Errorf("a damaged backup: %v", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a refused restore left %d entries behind", len(entries))
	}
	os.Remove(filepath.Join(dir, ManifestName))
	if _, err := Restore(dir, empty); code(err) != "backup_incomplete" {
		t.Errorf("a backup without its manifest: %v", err)
	}
}
