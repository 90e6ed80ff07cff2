// Package postgres is Strata's metadata store at scale: workspaces,
// products, API keys, query tokens and saved queries in PostgreSQL, shared
// by every strata node of a deployment (events go to ClickHouse).
//
// The package adds only what is PostgreSQL's own; the rest is shared with
// the embedded DuckDB store:
//
//   - Statements: none here. Store embeds sqlmeta.Store, the same code
//     that serves metadata from DuckDB, reaching PostgreSQL through pgx's
//     database/sql driver (github.com/jackc/pgx/v5/stdlib). The statements
//     are written in the PostgreSQL dialect that DuckDB also runs, so no
//     per-dialect hook was needed: ids come from sequences with INSERT …
//     RETURNING in both, and a duplicate credential hash is an error in
//     both without either store having to recognise its error code.
//   - Migrations: the metadata migrations are sqlmeta's (sqlmeta.Migrations),
//     the one copy the DuckDB store applies too; versions that create
//     DuckDB's event tables are absent, and migrations/ adds the few of
//     PostgreSQL's own (an index for the people list's order, 0042). They are applied and recorded in
//     schema_migrations by internal/store/migrate, like DuckDB's, so both
//     stores number and record schema versions the same way.
//   - Concurrent starts: several nodes may start at once against one
//     database, so Open holds a session-level advisory lock on a connection
//     of its own while it migrates. A second node waits on the lock, then
//     finds every migration recorded and applies none. The lock is released
//     by closing that connection, so it cannot outlive Open in a pool.
//
// Timestamps are TIMESTAMP (without time zone) columns holding UTC, as in
// DuckDB; pgx reads them back as UTC times.
//
// Tests run against a real server started by the pgtest package, which
// skips them when PostgreSQL is not installed.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"strata/internal/analytics"
	"strata/internal/store/migrate"
	"strata/internal/store/sqlmeta"
)

// migrationLock is the advisory-lock key that serialises migrations among
// nodes; advisory locks are per database, so it only needs to be distinct
// from other locks Strata takes in it. The bytes spell "strata" and a 1.
const migrationLock int64 = 0x7374726174610001

// Store implements analytics.MetaStore and analytics.SavedQueryStore on a
// PostgreSQL database; the methods are sqlmeta.Store's. It is safe for
// concurrent use, including by other nodes on the same database.
type Store struct {
	*sqlmeta.Store
	db *sql.DB
}

var (
	_ analytics.MetaStore       = (*Store)(nil)
	_ analytics.SavedQueryStore = (*Store)(nil)
	_ analytics.AnnotationStore = (*Store)(nil)
)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as libpq and pgx accept) and applies any pending
// migrations, waiting for another node that is migrating the same database.
// Errors name the host and database, never the URL, which may hold a
// password.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parsing postgres url: %w", err)
	}
	where := fmt.Sprintf("postgres database %q on %s:%d", cfg.Database, cfg.Host, cfg.Port)
	migrations, err := Migrations()
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg)
	if err := migrateLocked(ctx, cfg, db, migrations, time.Now()); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating %s: %w", where, err)
	}
	return &Store{Store: sqlmeta.New(db, time.Now), db: db}, nil
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations are the metadata migrations (sqlmeta.Migrations) and the
// few of PostgreSQL's own (an index DuckDB would not use), in one order.
func Migrations() ([]migrate.Migration, error) {
	meta, err := sqlmeta.Migrations()
	if err != nil {
		return nil, err
	}
	own, err := migrate.Load(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	return migrate.Merge(meta, own)
}

// migrateLocked applies migrations while holding the migration lock. The
// lock lives on a connection outside db's pool and ends with it: were it
// taken on a pooled connection, a failed unlock would leave it held by an
// idle connection and every other node would wait for it forever.
func migrateLocked(ctx context.Context, cfg *pgx.ConnConfig, db *sql.DB, migrations []migrate.Migration, now time.Time) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer func() {
		// Closing the session releases its advisory locks, so no
		// pg_advisory_unlock is needed, even on the error paths.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn.Close(ctx)
	}()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("taking the migration lock: %w", err)
	}
	_, err = migrate.Apply(ctx, db, migrations, now)
	return err
}

// DB exposes the underlying handle for tests.
func (s *Store) DB() *sql.DB { return s.db }

// Close closes the connection pool, waiting for queries in progress.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing postgres: %w", err)
	}
	return nil
}
