package duckdb

import (
	"context"
	"path/filepath"
	"testing"
)

// TestBackupTo copies a database whose tables reference each other (a
// product's rows after its workspace's) while it stays open, opens the
// copy as a data directory's database and checks that it holds the rows,
// is at the same schema version, and draws new ids after the copied ones.
func TestBackupTo(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws, err := s.CreateWorkspace(ctx, "W")
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, name := range []string{"a", "b", "c"} {
		p, err := s.CreateProduct(ctx, ws.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		last = p.ID
	}
	restored := t.TempDir()
	version, err := s.BackupTo(ctx, filepath.Join(restored, FileName))
	if err != nil {
		t.Fatalf("BackupTo: %v", err)
	}
	want, err := s.SchemaVersion(ctx)
	if err != nil || version != want || version == 0 {
		t.Fatalf("the copy is at schema version %d, the database at %d (%v)", version, want, err)
	}
	// The source takes writes after the copy, which the copy lacks.
	if _, err := s.CreateProduct(ctx, ws.ID, "after"); err != nil {
		t.Fatal(err)
	}

	b, err := Open(ctx, restored, Options{})
	if err != nil {
		t.Fatalf("opening the copy: %v", err)
	}
	defer b.Close()
	ps, err := b.ListProducts(ctx, ws.ID)
	if err != nil || len(ps) != 3 {
		t.Fatalf("the copy lists %d products (%v), want 3", len(ps), err)
	}
	p, err := b.CreateProduct(ctx, ws.ID, "new")
	if err != nil {
		t.Fatalf("a product in the copy: %v", err)
	}
	if p.ID <= last {
		t.Errorf("the copy's next product id is %d, not after the copied %d", p.ID, last)
	}
}
