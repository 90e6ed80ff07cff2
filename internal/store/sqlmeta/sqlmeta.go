// Package sqlmeta is the metadata store shared by Strata's SQL backends:
// workspaces, products, API keys, query tokens, saved queries and
// annotations.
//
// Every statement here is written once, in the PostgreSQL dialect that
// DuckDB also runs, with $n parameters and nothing else interpolated. The
// embedded DuckDB store and the PostgreSQL store both embed a *Store over
// their own *sql.DB, so a change to the metadata SQL is made in one place
// and checked against both databases by the storetest conformance suite.
// The tables these statements expect are created by the migrations in
// migrations/, which both backends apply (Migrations); each backend owns
// its connection and its Close.
//
// The statements rely on nothing that differs between the two databases:
// ids come from sequences as column defaults and are read back with
// INSERT … RETURNING, timestamps are TIMESTAMP columns that hold UTC
// (both drivers read them back as UTC), and a missing row is told apart
// by sql.ErrNoRows or zero rows affected rather than by an error code.
package sqlmeta

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"sync"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/migrate"
	"strata/internal/store/sqlbuild"
)

// Store implements analytics.MetaStore, analytics.SavedQueryStore and
// analytics.AnnotationStore with the shared statements. It holds no state
// of its own besides the handle and the clock; the backend that creates it
// closes the handle.
type Store struct {
	db *sql.DB
	// tx is the transaction every statement runs in when InTx scoped the
	// store to one, nil otherwise (conn, begin).
	tx  *sql.Tx
	now func() time.Time

	// shared is what a store and the stores InTx scopes from it share.
	*shared
}

type shared struct {
	// stmts are the statements prepared once for the hot paths (prepared).
	mu    sync.Mutex
	stmts map[string]*sql.Stmt

	// uploads are the turns of sourcemap uploads in this process, a
	// product's by its id modulo their number (PutSourcemap).
	uploads [16]sync.Mutex
}

// Querier is what *sql.DB and *sql.Tx share: a statement runs on either.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn is where s's statements run: its transaction when it has one.
func (s *Store) conn() Querier {
	if s.tx != nil {
		return s.tx
	}
	return s.db
}

// txn is the transaction a method writes in: its own, or, in a store that
// InTx scoped, that one, which it joins. A joined transaction is committed
// or rolled back by InTx alone, as the whole change it belongs to.
type txn struct {
	*sql.Tx
	joined bool
}

func (t txn) Commit() error {
	if t.joined {
		return nil
	}
	return t.Tx.Commit()
}

func (t txn) Rollback() error {
	if t.joined {
		return nil
	}
	return t.Tx.Rollback()
}

// begin starts the transaction of one method (txn).
func (s *Store) begin(ctx context.Context) (txn, error) {
	if s.tx != nil {
		return txn{Tx: s.tx, joined: true}, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	return txn{Tx: tx}, err
}

// InTx runs fn with a store whose every statement runs in one transaction,
// committed when fn returns nil and rolled back when it returns an error
// or panics: a change that writes several entities (a campaign with its
// flag and experiment, a winner applied with the flag's change) is made
// whole or not at all (docs/architecture.md, "One transaction per
// change"). The methods that make a transaction of their own join it. A
// statement that fails inside it fails the whole transaction, on
// PostgreSQL as on DuckDB, so fn returns on the first error rather than
// trying another write (a flag key that is taken, say) in the same one.
func (s *Store) InTx(ctx context.Context, fn func(analytics.MetaTx) error) error {
	if s.tx != nil {
		return fn(s)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting a transaction: %w", err)
	}
	defer tx.Rollback()
	if err := fn(&Store{db: s.db, tx: tx, now: s.now, shared: s.shared}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing a change: %w", err)
	}
	return nil
}

var (
	_ analytics.MetaStore       = (*Store)(nil)
	_ analytics.SavedQueryStore = (*Store)(nil)
	_ analytics.AnnotationStore = (*Store)(nil)
)

// New returns a store over db, whose schema the caller has migrated. now
// is the clock for created_at and updated_at columns; nil means time.Now.
func New(db *sql.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now, shared: &shared{}}
}

// prepared returns query prepared on s's handle, preparing it the first
// time. database/sql prepares it again on each connection that runs it,
// once. PostgreSQL's driver caches statements by itself; DuckDB's does not,
// and preparing costs it as much as running a point lookup.
func (s *Store) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.stmts[query]
	if !ok {
		var err error
		if st, err = s.db.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts[query] = st
	}
	if s.tx != nil {
		// The statement as part of the transaction, closed with it.
		return s.tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

// stamp is the current time as stored: UTC, to the microsecond that both
// databases keep, so that a value handed back to the caller equals the one
// read later.
func (s *Store) stamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Scanner is what *sql.Row and *sql.Rows share.
type Scanner interface{ Scan(...any) error }

// QueryAll runs a query and scans every row with scan; what names the
// operation in errors.
func QueryAll[T any](ctx context.Context, db Querier, what string, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return sqlbuild.Collect(what, rows, func(r *sql.Rows) (T, error) { return scan(r) })
}

// queryOne runs a query that selects at most one row and scans it with
// scan. No row is analytics.ErrNotFound; what names the row in errors.
func queryOne[T any](ctx context.Context, db Querier, what string, scan func(Scanner) (T, error), query string, args ...any) (T, error) {
	v, err := scan(db.QueryRowContext(ctx, query, args...))
	if err != nil {
		return v, notFound(err, what)
	}
	return v, nil
}

// notFound wraps sql.ErrNoRows as analytics.ErrNotFound so that callers need
// not know which database answered.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, analytics.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations are the metadata tables' migrations, one copy for every SQL
// store: PostgreSQL applies them alone, DuckDB with its event tables'.
func Migrations() ([]migrate.Migration, error) {
	return migrate.Load(migrationFS, "migrations")
}
