package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"strata/internal/analytics"
)

// Recovery from failed writes (docs/ingest.md, "A full disk").
//
// When a commit fails, on a full disk for instance, DuckDB 1.5 rolls the
// commit back in memory but leaves the table's string storage inconsistent:
// the next rows appended to the same table on the same instance can come
// out as garbage, the strings of many earlier rows run together under the
// first new row's uuid, and a checkpoint then writes them to the file. This
// was seen under a full-disk attack and reproduces in
// TestAppendAfterFailedCommit. A failure that DuckDB calls fatal (a
// checkpoint that could not write) invalidates the instance outright.
//
// So a write failure of that kind marks the store broken: from then on it
// refuses every operation with a 503 storage_unavailable instead of reaching
// the suspect instance, and Recover replaces the instance by opening the file
// again, which rebuilds the tables from what was committed (the file and its
// write-ahead log, both written only by commits that succeeded).

// errUnavailable is what every operation returns while the store is broken.
func errUnavailable(cause error) error {
	return &analytics.Error{Kind: analytics.KindUnavailable, Code: "storage_unavailable",
		Message:    "Storage failed to write (is the disk full?) and is being reopened; retry shortly.",
		RetryAfter: 5 * time.Second, Err: cause}
}

// needsReopen reports whether err is a failure after which the instance's
// memory can no longer be trusted: an I/O or fatal error, or a commit that
// failed for any reason but a constraint or a conflict between
// transactions, which are ordinary answers (two first-run setups racing)
// that DuckDB rolls back cleanly.
func needsReopen(err error) bool {
	if err == nil {
		return false
	}
	var de *duckdb.Error
	if errors.As(err, &de) && (de.Type == duckdb.ErrorTypeIO || de.Type == duckdb.ErrorTypeFatal) {
		return true
	}
	// The appender reports its errors as plain text, and a failed commit
	// is a transaction error whatever failed inside it.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "IO Error"), strings.Contains(msg, "FATAL Error"),
		strings.Contains(msg, "database has been invalidated"):
		return true
	case strings.Contains(msg, "Failed to commit"):
		lower := strings.ToLower(msg)
		return !strings.Contains(lower, "constraint") && !strings.Contains(lower, "conflict")
	}
	return false
}

// OutOfMemory reports whether err, or the failure that broke the store
// (Broken's error wraps it), is DuckDB running out of buffer-pool memory.
// DuckDB cannot roll back a commit, nor finish a checkpoint, that ran out
// of memory, and invalidates the instance (docs/security.md, "Reads never
// break writes"); the store is then reopened like after any failed write,
// but nothing is wrong with the disk, so what is acknowledged before it
// reaches the database (the spool) may go on being acknowledged meanwhile.
func OutOfMemory(err error) bool {
	if err == nil {
		return false
	}
	var de *duckdb.Error
	if errors.As(err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory {
		return true
	}
	// The appender and the invalidated instance report it as text.
	msg := err.Error()
	return strings.Contains(msg, "Out of Memory Error") || strings.Contains(msg, "failed to pin block") ||
		strings.Contains(msg, "could not allocate block") || strings.Contains(msg, "failed to allocate data")
}

// pool is the driver.Connector behind the store's *sql.DB and its appenders.
// It holds the current DuckDB instance and lets Recover replace it under
// handles that the rest of the program keeps: while the store is broken it
// refuses new connections, and connections of an instance that broke refuse
// further statements (driver.ErrBadConn, so database/sql drops them).
type pool struct {
	dsn string
	// gate, when set, says whether writes may reach DuckDB now
	// (Options.WriteGate, writes.go).
	gate func() error

	mu    sync.Mutex
	cur   *duckdb.Connector // nil while broken
	gen   uint64            // the instance's generation, bumped when it breaks
	cause error             // why it broke
	// retired is the instance that broke, closed once its last connection
	// is; open counts the connections of each generation.
	retired *duckdb.Connector
	open    map[uint64]int
}

var _ driver.Connector = (*pool)(nil)

func newPool(dsn string, gate func() error) (*pool, error) {
	c, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		return nil, err
	}
	return &pool{dsn: dsn, gate: gate, cur: c, open: map[uint64]int{}}, nil
}

// Connect opens a connection to the current instance, or refuses while the
// store is broken.
func (p *pool) Connect(ctx context.Context) (driver.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return nil, errUnavailable(p.cause)
	}
	c, err := p.cur.Connect(ctx)
	if err != nil {
		return nil, err
	}
	p.open[p.gen]++
	return &conn{Conn: c.(*duckdb.Conn), p: p, gen: p.gen}, nil
}

// Driver implements driver.Connector.
func (p *pool) Driver() driver.Driver { return duckdb.Driver{} }

// broken returns why the store is broken, or nil.
func (p *pool) broken() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return errUnavailable(p.cause)
	}
	return nil
}

// stale reports whether a connection of generation gen may no longer be
// used.
func (p *pool) stale(gen uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur == nil || gen != p.gen
}

// fail marks the store broken by cause, once.
func (p *pool) fail(cause error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return false
	}
	p.retired, p.cur, p.cause = p.cur, nil, cause
	p.gen++
	return true
}

// observe marks the store broken when err says the instance cannot be
// trusted, and returns err.
func (p *pool) observe(err error) error {
	if needsReopen(err) {
		p.fail(err)
	}
	return err
}

// closed records that a connection of generation gen was closed.
func (p *pool) closed(gen uint64) {
	p.mu.Lock()
	p.open[gen]--
	if p.open[gen] <= 0 {
		delete(p.open, gen)
	}
	p.mu.Unlock()
}

// reopen closes the broken instance once none of its connections is open
// (waiting for them up to ctx) and opens the file again.
func (p *pool) reopen(ctx context.Context) error {
	for {
		p.mu.Lock()
		if p.cur != nil {
			p.mu.Unlock()
			return nil
		}
		old := 0
		for gen, n := range p.open {
			if gen < p.gen {
				old += n
			}
		}
		if old == 0 {
			break
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d connections of the broken database to close: %w", old, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	defer p.mu.Unlock()
	if p.retired != nil {
		// Nothing of the broken instance is written back: it checkpoints
		// only when sound, and then only what was committed.
		p.retired.Close()
		p.retired = nil
	}
	c, err := duckdb.NewConnector(p.dsn, nil)
	if err != nil {
		return fmt.Errorf("reopening the database: %w", err)
	}
	p.cur, p.cause = c, nil
	return nil
}

// close closes the current or broken instance for good.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range []*duckdb.Connector{p.cur, p.retired} {
		if c != nil {
			c.Close()
		}
	}
	p.cur, p.retired = nil, nil
	if p.cause == nil {
		p.cause = errors.New("the store is closed")
	}
}

// conn is a connection that reports the failures it sees to its pool and
// refuses work once its instance broke. It embeds duckdb-go's connection,
// so database/sql sees the same optional interfaces.
type conn struct {
	*duckdb.Conn
	p   *pool
	gen uint64
}

var (
	_ driver.ExecerContext  = (*conn)(nil)
	_ driver.QueryerContext = (*conn)(nil)
	_ driver.ConnBeginTx    = (*conn)(nil)
	_ driver.Validator      = (*conn)(nil)
)

// ExecContext implements driver.ExecerContext.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.p.stale(c.gen) {
		return nil, driver.ErrBadConn
	}
	if err := c.mayRun(query); err != nil {
		return nil, err
	}
	res, err := c.Conn.ExecContext(ctx, query, args)
	return res, c.p.observe(err)
}

// QueryContext implements driver.QueryerContext.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.p.stale(c.gen) {
		return nil, driver.ErrBadConn
	}
	if err := c.mayRun(query); err != nil {
		return nil, err
	}
	rows, err := c.Conn.QueryContext(ctx, query, args)
	err = c.p.observe(err)
	// A read that ran out of buffer-pool memory says so in the error's
	// chain, for the metadata reads as for the event queries, so that the
	// query engine answers it as query_too_large (query.ReadMeta).
	markOutOfMemory(&err)
	return rows, err
}

// PrepareContext implements driver.ConnPrepareContext.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if c.p.stale(c.gen) {
		return nil, driver.ErrBadConn
	}
	// PrepareContext runs all but the last of several statements.
	if err := c.mayRun(query); err != nil {
		return nil, err
	}
	st, err := c.Conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return c.p.gated(st), nil
}

// BeginTx implements driver.ConnBeginTx; the commit's failure is observed.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.p.stale(c.gen) {
		return nil, driver.ErrBadConn
	}
	tx, err := c.Conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, c.p.observe(err)
	}
	return observedTx{tx, c.p}, nil
}

// IsValid implements driver.Validator: database/sql closes a connection of
// a broken instance instead of pooling it.
func (c *conn) IsValid() bool { return !c.p.stale(c.gen) }

// Close implements driver.Conn.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.p.closed(c.gen)
	return err
}

type observedTx struct {
	driver.Tx
	p *pool
}

func (t observedTx) Commit() error { return t.p.observe(t.Tx.Commit()) }

// defaultIdleConns is database/sql's default number of idle connections,
// restored after Recover emptied the pool.
const defaultIdleConns = 2

// Broken returns a storage_unavailable error while a failed write has the
// store refusing work, and nil while it is sound.
func (s *Store) Broken() error { return s.pool.broken() }

// fail marks the store broken when err is a write failure that makes the
// instance suspect (needsReopen), and returns err.
func (s *Store) fail(err error) error { return s.pool.observe(err) }

// Recover reopens a broken store: it waits for the appends and queries in
// progress, drops the appenders and the dense-id dictionaries (reloaded
// from the reopened file on first use) and opens the database file again,
// which replays its write-ahead log. It reports whether it reopened; an
// error (the disk still full, say) leaves the store broken, to be tried
// again later. Safe to call at any time; a sound store is left alone.
func (s *Store) Recover(ctx context.Context) (bool, error) {
	if s.pool.broken() == nil {
		return false, nil
	}
	s.numberMu.Lock()
	defer s.numberMu.Unlock()
	slots := make([]*eventAppender, 0, cap(s.appenders))
	defer func() {
		for _, a := range slots {
			s.appenders <- a
		}
	}()
	for range cap(s.appenders) {
		select {
		case a := <-s.appenders:
			slots = append(slots, a)
			a.discard()
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	// The dictionaries' appenders hold connections of the broken
	// instance. The numberings stay in place for queries meanwhile and are
	// read again from the reopened file below: an entry whose commit
	// failed may or may not be in it.
	s.dictLoad.Lock()
	defer s.dictLoad.Unlock()
	if s.uids != nil {
		s.uids.app.discard()
		s.names.app.discard()
	}

	// Idle connections of the broken instance close now; those in use
	// close when they are returned, which reopen waits for.
	s.db.SetMaxIdleConns(0)
	defer s.db.SetMaxIdleConns(defaultIdleConns)
	if err := s.pool.reopen(ctx); err != nil {
		return false, err
	}
	if s.uids != nil {
		users, names, err := s.loadDictionaries(ctx)
		if err != nil {
			s.pool.fail(err)
			return false, fmt.Errorf("reading dense ids after reopening: %w", err)
		}
		s.dictMu.Lock()
		s.uids, s.names = users, names
		s.dictMu.Unlock()
	}
	// The reopened file may lack what the kept visits' horizons assume.
	s.visits.forgetVisits()
	return true, nil
}
