package duckdb

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// BackupTo writes a consistent copy of the whole database (the event
// tables and the metadata tables alike) to a new DuckDB file at path, which
// must not exist, and returns the schema version it holds: the highest
// migration applied (docs/operations.md, "Backup and restore").
//
// The copy is one statement, COPY FROM DATABASE into the file attached on
// one of the store's connections, so it reads one snapshot of every table:
// DuckDB's transactions are snapshots, and a commit that lands while the
// copy runs is not in it. Writers are not held up: appends and metadata
// writes commit meanwhile (DuckDB only postpones its automatic checkpoint
// until the copy's transaction ends). The copy is written in DuckDB's own
// format by the same DuckDB, with the sequences at their current values, so
// the file opens as a data directory's database. While the write gate
// refuses (the data directory's disk is nearly full), the copy is refused
// with the gate's error, like every statement that could write.
func (s *Store) BackupTo(ctx context.Context, path string) (int, error) {
	if _, err := os.Stat(path); err == nil {
		return 0, fmt.Errorf("backing up the database: %s exists", path)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("backing up the database: %w", err)
	}
	defer conn.Close()
	var catalog string
	if err := conn.QueryRowContext(ctx, "SELECT current_database()").Scan(&catalog); err != nil {
		return 0, fmt.Errorf("backing up the database: %w", err)
	}
	const alias = "strata_backup"
	if _, err := conn.ExecContext(ctx, "ATTACH "+quote(path)+" AS "+alias); err != nil {
		return 0, fmt.Errorf("backing up the database: attaching %s: %w", path, err)
	}
	// DETACH also runs when the copy failed, so that the connection goes
	// back to the pool without the file attached; a fresh context, since
	// ctx may be what ended the copy.
	detach := func() error {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), "DETACH "+alias)
		return err
	}
	var version int
	_, err = conn.ExecContext(ctx, "COPY FROM DATABASE "+ident(catalog)+" TO "+alias)
	if err == nil {
		// Read from the copy, not the source: it is what the backup holds.
		err = conn.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM "+alias+".schema_migrations").Scan(&version)
	}
	if err == nil {
		// Fold the copy's write-ahead log into its file, so that the
		// backup is one file.
		_, err = conn.ExecContext(ctx, "CHECKPOINT "+alias)
	}
	if derr := detach(); err == nil && derr != nil {
		err = derr
	}
	if err != nil {
		os.Remove(path)
		os.Remove(path + ".wal")
		return 0, fmt.Errorf("backing up the database: %w", err)
	}
	return version, nil
}

// SchemaVersion is the highest migration applied to the database: the
// on-disk format's version (docs/operations.md, "Upgrades").
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}

// quote is a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ident is a SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
