// Package migrate applies versioned SQL migrations embedded in the binary and
// records each one in the schema_migrations table of the same database. It is
// shared by every SQL backend so that they number and record migrations the
// same way.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migration is one numbered SQL file, named NNNN_description.sql.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load reads every *.sql file of dir in fsys and returns the migrations in
// version order. It refuses duplicate or unnumbered file names, because a
// silently skipped migration is worse than a failed start.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and an underscore", name)
		}
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share version %d", prev, name, v)
		}
		seen[v] = name
		body, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Apply runs, in order and each in its own transaction, every migration whose
// version is not yet recorded in schema_migrations, and returns how many it
// applied. A database that has a version newer than the binary knows is
// refused: an older binary must not write to a newer schema.
func Apply(ctx context.Context, db *sql.DB, migrations []Migration, now time.Time) (int, error) {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       VARCHAR NOT NULL,
		applied_at TIMESTAMP NOT NULL
	)`); err != nil {
		return 0, fmt.Errorf("creating schema_migrations: %w", err)
	}
	pending, err := Pending(ctx, db, migrations)
	if err != nil {
		return 0, err
	}
	for i, m := range pending {
		if err := applyOne(ctx, db, m, now); err != nil {
			return i, err
		}
	}
	return len(pending), nil
}

// Pending returns, in order, the migrations that Apply would run, without
// writing anything: a database without schema_migrations has them all to
// run. A server that may not write (its disk is full) asks first, so that
// it can start when there is nothing to apply. Like Apply, it refuses a
// database with a version newer than the binary knows.
func Pending(ctx context.Context, db *sql.DB, migrations []Migration) ([]Migration, error) {
	var tables int
	if err := db.QueryRowContext(ctx,
		`SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'`).Scan(&tables); err != nil {
		return nil, fmt.Errorf("looking for schema_migrations: %w", err)
	}
	if tables == 0 {
		return migrations, nil
	}
	applied := map[int]bool{}
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	maxApplied := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading schema_migrations: %w", err)
		}
		applied[v] = true
		maxApplied = max(maxApplied, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	if n := len(migrations); n > 0 && maxApplied > migrations[n-1].Version {
		return nil, fmt.Errorf("database schema version %d is newer than this binary's %d", maxApplied, migrations[n-1].Version)
	}
	var pending []Migration
	for _, m := range migrations {
		if !applied[m.Version] {
			pending = append(pending, m)
		}
	}
	return pending, nil
}

func applyOne(ctx context.Context, db *sql.DB, m Migration, now time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %s: %w", m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.Version, m.Name, now.UTC()); err != nil {
		return fmt.Errorf("recording migration %s: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing migration %s: %w", m.Name, err)
	}
	return nil
}

// Merge joins sets of migrations that one database applies together, such
// as the metadata migrations every SQL store shares and a store's own, in
// version order. A version two sets both use is refused, as Load refuses
// two files with one version.
func Merge(sets ...[]Migration) ([]Migration, error) {
	var out []Migration
	seen := map[int]string{}
	for _, set := range sets {
		for _, m := range set {
			if prev, dup := seen[m.Version]; dup {
				return nil, fmt.Errorf("migrations %s and %s share version %d", prev, m.Name, m.Version)
			}
			seen[m.Version] = m.Name
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}
