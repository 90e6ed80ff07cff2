package duckdb

import (
	"context"
	"database/sql"
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
	err = s.copyInto(ctx, conn, catalog, alias)
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

// copyInto copies catalog's schema and rows into the attached database
// alias in one transaction. COPY FROM DATABASE copies the tables in an
// order that breaks foreign keys (a table's rows before those of the table
// it references), so it copies only the schema here (with the sequences,
// at their current values) and the rows follow table by table, each after
// the tables it references. The transaction's snapshot of catalog starts
// at its first statement: every row the copy holds was committed before,
// so every id drawn from a sequence for one was drawn before the sequence
// was copied, and the restored database never draws it again.
func (s *Store) copyInto(ctx context.Context, conn *sql.Conn, catalog, alias string) (err error) {
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	defer func() {
		end := "COMMIT"
		if err != nil {
			end = "ROLLBACK"
		}
		if _, cerr := conn.ExecContext(context.WithoutCancel(ctx), end); err == nil {
			err = cerr
		}
	}()
	if _, err := conn.ExecContext(ctx, "COPY FROM DATABASE "+ident(catalog)+" TO "+alias+" (SCHEMA)"); err != nil {
		return err
	}
	tables, err := tablesInOrder(ctx, conn, catalog)
	if err != nil {
		return err
	}
	for _, t := range tables {
		q := fmt.Sprintf("INSERT INTO %s.%s.%s SELECT * FROM %s.%s.%s",
			alias, ident(t.schema), ident(t.name), ident(catalog), ident(t.schema), ident(t.name))
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("copying table %s: %w", t.name, err)
		}
	}
	return nil
}

type table struct{ schema, name string }

// tablesInOrder lists catalog's tables, each after the tables its foreign
// keys reference.
func tablesInOrder(ctx context.Context, conn *sql.Conn, catalog string) ([]table, error) {
	rows, err := conn.QueryContext(ctx, `SELECT schema_name, table_name FROM duckdb_tables()
		WHERE database_name = ? AND NOT temporary ORDER BY schema_name, table_name`, catalog)
	if err != nil {
		return nil, err
	}
	var all []table
	for rows.Next() {
		var t table
		if err := rows.Scan(&t.schema, &t.name); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	refs := map[table][]table{}
	rows, err = conn.QueryContext(ctx, `SELECT schema_name, table_name, referenced_table FROM duckdb_constraints()
		WHERE database_name = ? AND constraint_type = 'FOREIGN KEY'`, catalog)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var t table
		var ref string
		if err := rows.Scan(&t.schema, &t.name, &ref); err != nil {
			rows.Close()
			return nil, err
		}
		refs[t] = append(refs[t], table{t.schema, ref})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []table
	state := map[table]int{} // 1 visiting, 2 done
	var visit func(t table) error
	visit = func(t table) error {
		switch state[t] {
		case 1:
			return fmt.Errorf("foreign keys form a cycle at table %s", t.name)
		case 2:
			return nil
		}
		state[t] = 1
		for _, r := range refs[t] {
			if r != t {
				if err := visit(r); err != nil {
					return err
				}
			}
		}
		state[t] = 2
		out = append(out, t)
		return nil
	}
	for _, t := range all {
		if err := visit(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// quote is a SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ident is a SQL identifier.
func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
