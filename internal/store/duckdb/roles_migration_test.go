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
)

// TestOwnerBecomesAdmin applies migration 0031 to a data directory set up
// before roles existed, whose owner has the role "owner": the owner is an
// admin afterwards, so that the role check lets them do all they could.
func TestOwnerBecomesAdmin(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	all, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	before := slices.IndexFunc(all, func(m migrate.Migration) bool { return m.Version >= 31 })
	if before < 0 {
		t.Fatal("no migration 0031")
	}
	db, err := sql.Open("duckdb", filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Apply(ctx, db, all[:before], time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO workspaces (id, name, created_at) VALUES (1, 'Default', now())`,
		`INSERT INTO dashboard_users (id, email, password_hash, created_at) VALUES (1, 'owner@example.com', 'x', now())`,
		`INSERT INTO workspace_members (workspace_id, user_id, role, created_at) VALUES (1, 1, 'owner', now())`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(ctx, dir, Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ms, err := s.Memberships(ctx, 1); err != nil || !slices.Equal(ms, []analytics.Membership{{WorkspaceID: 1, Role: analytics.RoleAdmin}}) {
		t.Errorf("the owner's memberships after the migration = %+v, %v; want admin of workspace 1", ms, err)
	}
}
