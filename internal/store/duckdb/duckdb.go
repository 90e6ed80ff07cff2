// Package duckdb is Strata's embedded storage: events and metadata in one
// DuckDB file inside the data directory. It is the zero-configuration
// default; ClickHouse and PostgreSQL take over the same interfaces at scale.
package duckdb

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/migrate"
	"strata/internal/store/sqlmeta"
)

// migrationFS holds the migrations of the event tables, DuckDB's own; the
// metadata tables' are sqlmeta's, shared with PostgreSQL (migrations).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations are every migration the embedded database applies: the
// metadata tables' and the event tables', in version order.
func migrations() ([]migrate.Migration, error) {
	meta, err := sqlmeta.Migrations()
	if err != nil {
		return nil, err
	}
	events, err := migrate.Load(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	return migrate.Merge(meta, events)
}

// FileName is the database file inside the data directory.
const FileName = "strata.duckdb"

// Options tunes the embedded database. The zero value uses DuckDB's defaults.
type Options struct {
	// MemoryLimit caps DuckDB's buffer pool, e.g. "1GB". Empty keeps
	// DuckDB's default of 80% of RAM, which is too greedy for a server that
	// shares its machine.
	MemoryLimit string
	// Threads caps DuckDB's worker threads; zero means one per core.
	Threads int
	// CheckpointThreshold is the write-ahead-log size that triggers a
	// checkpoint; empty means 128MB. Rows not yet checkpointed are held in
	// memory uncompressed, so this also bounds that memory. DuckDB's 16MB
	// default checkpoints every fraction of a second under heavy ingest and
	// rewrites the same partial row groups each time, which measured 30%
	// slower with commits stalling for most of a second (see
	// docs/benchmarks.md).
	CheckpointThreshold string
	// Appenders is how many AppendEvents calls may load events at once,
	// each through its own appender and connection; zero means two.
	Appenders int
	// Now is the clock used for created_at columns; nil means time.Now.
	Now func() time.Time
	// WriteGate, when set, is asked before the store writes: while it
	// refuses (the disk is nearly full), every statement that could write
	// and every append of events gets its error without reaching DuckDB,
	// reads go on, and Open applies no migration (writes.go).
	WriteGate func() error
}

// Store implements analytics.EventStore, analytics.MetaStore and
// analytics.SavedQueryStore on one DuckDB database. The metadata methods
// are those of the embedded sqlmeta.Store, shared with PostgreSQL.
type Store struct {
	*sqlmeta.Store

	db *sql.DB
	// pool is the connector behind db and the appenders; it refuses work
	// once a failed write broke the instance, until Recover reopens it
	// (recover.go).
	pool *pool
	now  func() time.Time

	// traceSQL, set only by tests, sees every event query's statement and
	// parameters before it runs (the golden SQL files in testdata/sql).
	traceSQL func(sql string, args []any)

	// appenders holds the event appenders, each on its own connection, so
	// that AppendEvents calls can fill and flush batches in parallel: both
	// happen outside DuckDB's commit lock (see docs/benchmarks.md). A slot
	// is taken for the length of a call.
	appenders chan *eventAppender

	// numberMu serialises numbering new users and names with storing them
	// (denseids.go), so that entries are committed before any events that
	// carry their numbers, whichever appender commits those.
	numberMu sync.Mutex

	// commitMu serialises the commits of events, so that no commit follows
	// a failed one on the same instance: each checks, holding it, that the
	// store is not broken (recover.go). Appenders still fill their chunks
	// in parallel; DuckDB serialises most of a commit anyway.
	commitMu sync.Mutex

	// uids and names give users and event names dense ids (denseids.go).
	// They change under numberMu and dictMu and are read under dictMu.
	// lastAppend and checkpointed (Unix nanoseconds) let the server
	// checkpoint once ingest goes quiet (CheckpointIfIdle).
	lastAppend, checkpointed atomic.Int64

	// visits keeps the visits of the settled past for the sessions
	// query (visits.go).
	visits visitKeeper

	dictLoad sync.Mutex // serialises the first load of the dense ids (denseids.go)
	dictMu   sync.RWMutex
	uids     *dictionary
	names    *dictionary
}

var (
	_ analytics.EventStore      = (*Store)(nil)
	_ analytics.MetaStore       = (*Store)(nil)
	_ analytics.SavedQueryStore = (*Store)(nil)
	_ analytics.AnnotationStore = (*Store)(nil)
)

// Open opens (creating if needed) the database in dataDir and applies any
// pending migrations. DuckDB allows one writing process per file, so a
// second Open of the same directory from another process fails.
func Open(ctx context.Context, dataDir string, opt Options) (*Store, error) {
	path := filepath.Join(dataDir, FileName)
	q := url.Values{}
	if opt.MemoryLimit != "" {
		q.Set("memory_limit", opt.MemoryLimit)
	}
	if opt.CheckpointThreshold == "" {
		opt.CheckpointThreshold = "128MB"
	}
	q.Set("checkpoint_threshold", opt.CheckpointThreshold)
	// Joins, aggregates and sorts that outgrow the pool spill here. It is
	// DuckDB's default for a database file, named so that it never moves
	// off the data directory's filesystem, whose free space the storage
	// guard watches (--min-free-disk; docs/queries.md, "Memory").
	q.Set("temp_directory", path+".tmp")
	// Group by dense user ids with an array rather than a hash table up to
	// 2^20 ids (DuckDB's default stops at 2^12); see migration 0004.
	q.Set("perfect_ht_threshold", strconv.Itoa(perfectHashBits))
	if opt.Threads > 0 {
		q.Set("threads", fmt.Sprint(opt.Threads))
	}
	dsn := path
	if len(q) > 0 {
		dsn += "?" + q.Encode()
	}
	p, err := newPool(dsn, opt.WriteGate)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	s := &Store{db: sql.OpenDB(p), pool: p, now: opt.Now}
	if s.now == nil {
		s.now = time.Now
	}
	s.Store = sqlmeta.New(s.db, s.now)
	if opt.Appenders <= 0 {
		opt.Appenders = 2
	}
	s.appenders = make(chan *eventAppender, opt.Appenders)
	for range opt.Appenders {
		s.appenders <- &eventAppender{table: "events"}
	}
	if err := s.migrate(ctx, path); err != nil {
		s.db.Close()
		p.close()
		return nil, err
	}
	if err := s.loadVisits(ctx); err != nil {
		s.db.Close()
		p.close()
		return nil, err
	}
	return s, nil
}

// migrate applies the migrations the database lacks. It writes only when
// there are some: a server whose disk is full opens a database that is up
// to date (writes.go) but not one that would need writing first, which it
// refuses with an error that says so rather than half-start.
func (s *Store) migrate(ctx context.Context, path string) error {
	all, err := migrations()
	if err != nil {
		return err
	}
	pending, err := migrate.Pending(ctx, s.db, all)
	if err != nil {
		return fmt.Errorf("migrating %s: %w", path, err)
	}
	if len(pending) == 0 {
		return nil
	}
	if err := s.pool.writable(); err != nil {
		// The one error of a start that the command prints: its message
		// says all.
		why := err.Error()
		var e *analytics.Error
		if errors.As(err, &e) {
			why = e.Message
		}
		return &analytics.Error{Kind: analytics.KindUnavailable, Code: analytics.CodeStorageFull,
			Message: fmt.Sprintf("%s needs %d migrations applied (%s to %s), which write to its disk, and the disk has no room: %s The server does not start until there is room.",
				path, len(pending), pending[0].Name, pending[len(pending)-1].Name, why),
			Err: err}
	}
	if _, err := migrate.Apply(ctx, s.db, all, s.now()); err != nil {
		return fmt.Errorf("migrating %s: %w", path, err)
	}
	// Write what the migrations did into the database file at once, so
	// that the write-ahead log never holds them: DuckDB cannot replay an
	// ALTER TABLE of a table whose column defaults to nextval(…) (migration
	// 0012 on experiments) after a crash ("GetDefaultDatabase with no
	// default database set"), and the server would not start again.
	if _, err := s.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpointing %s after its migrations: %w", path, err)
	}
	return nil
}

// DB exposes the underlying handle for tests and benchmarks that compare
// Strata's queries with hand-written SQL on the same data.
func (s *Store) DB() *sql.DB { return s.db }

// Close releases the appenders and the database, waiting for appends in
// progress. DuckDB checkpoints its write-ahead log into the file on a
// clean close, unless the WriteGate refuses: then the log stays, to be
// replayed by the next Open (writes.go).
func (s *Store) Close() error {
	s.numberMu.Lock()
	defer s.numberMu.Unlock()
	var errs []error
	for range cap(s.appenders) {
		// Every AppendEvents flushes before it hands its appender back, so
		// none holds rows here.
		errs = append(errs, (<-s.appenders).discard())
	}
	if s.uids != nil {
		errs = append(errs, s.uids.app.discard(), s.names.app.discard())
	}
	// No append is left: the kept visits' horizons can be saved for the
	// next open (visits.go, "Across a restart"). Failing costs a rebuild.
	if s.pool.broken() == nil {
		errs = append(errs, s.saveVisits(context.Background()))
	}
	errs = append(errs, s.skipCheckpointIfFull())
	errs = append(errs, s.db.Close())
	s.pool.close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("closing duckdb: %w", err)
	}
	return nil
}
