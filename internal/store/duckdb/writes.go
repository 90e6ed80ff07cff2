package duckdb

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/duckdb/duckdb-go/v2"
)

// Writes on a nearly full disk (docs/ingest.md, "A full disk").
//
// A write that meets a full disk breaks the instance until it is reopened
// (recover.go), and the instance cannot be reopened until there is room
// again, so one failed write (a sign-in's session row, a job's lease) would
// take every read down with it. A checkpoint that meets a full disk can do
// worse: leave a file that no longer opens. So while Options.WriteGate
// refuses, nothing that could write reaches DuckDB: statements that could
// write and appends of events get the gate's error (503 storage_full), the
// checkpoint DuckDB makes when it closes is skipped (the write-ahead log is
// replayed by the next Open instead, which needs no room: opening a file
// with a log on a full disk reads the log into memory), and Open applies no
// migration. Reads go on, so a server on a full disk still answers queries
// and the dashboard.

// writable returns the gate's refusal, or nil when writes may go ahead.
func (p *pool) writable() error {
	if p.gate == nil {
		return nil
	}
	if err := p.gate(); err != nil {
		return refused{err}
	}
	return nil
}

// refused is the gate's refusal of a write, which never reached DuckDB: a
// commit that meets it (the floor crossed between two of a replay's
// statements, say) leaves the instance sound, unlike one DuckDB failed.
type refused struct{ err error }

func (r refused) Error() string { return r.err.Error() }
func (r refused) Unwrap() error { return r.err }

// mayRun returns the gate's refusal when query could write, and nil when
// it only reads or writes may go ahead. Only DuckDB knows what a statement
// does, once it has prepared it, which costs about as much as a point
// lookup; so it is asked only while the gate refuses.
func (c *conn) mayRun(query string) error {
	refusal := c.p.writable()
	if refusal == nil {
		return nil
	}
	// Prepare, unlike PrepareContext, refuses a string of several
	// statements without running any of them; such a string is taken for
	// a write.
	st, err := c.Conn.Prepare(query)
	if err != nil {
		return refusal
	}
	defer st.Close()
	if t, err := st.(*duckdb.Stmt).StatementType(); err == nil && (readOnly(t) || t == duckdb.STATEMENT_TYPE_SET) {
		// A SET changes a setting of the instance, which is never written
		// to the file; the bound on spilled files (spill.go) must be
		// lowered precisely while the disk is short.
		return nil
	}
	return refusal
}

// readOnly reports whether statements of type t never write. CHECKPOINT is
// a PRAGMA statement, so only queries count.
func readOnly(t duckdb.StmtType) bool {
	return t == duckdb.STATEMENT_TYPE_SELECT || t == duckdb.STATEMENT_TYPE_EXPLAIN
}

// gated returns a prepared statement that asks the gate each time it runs,
// unless it only reads.
func (p *pool) gated(st driver.Stmt) driver.Stmt {
	ds, ok := st.(*duckdb.Stmt)
	if p.gate == nil || !ok {
		return st
	}
	if t, err := ds.StatementType(); err == nil && readOnly(t) {
		return st
	}
	return &gatedStmt{Stmt: ds, p: p}
}

// gatedStmt is a prepared statement that could write.
type gatedStmt struct {
	*duckdb.Stmt
	p *pool
}

var (
	_ driver.StmtExecContext  = (*gatedStmt)(nil)
	_ driver.StmtQueryContext = (*gatedStmt)(nil)
)

// ExecContext implements driver.StmtExecContext.
func (s *gatedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.p.writable(); err != nil {
		return nil, err
	}
	return s.Stmt.ExecContext(ctx, args)
}

// QueryContext implements driver.StmtQueryContext.
func (s *gatedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.p.writable(); err != nil {
		return nil, err
	}
	return s.Stmt.QueryContext(ctx, args)
}

// skipCheckpointIfFull tells DuckDB not to checkpoint when it closes while
// the gate refuses writes: the write-ahead log stays in place and the next
// Open reads it, with no room needed, instead of a checkpoint meeting the
// full disk.
func (s *Store) skipCheckpointIfFull() error {
	if s.pool.writable() == nil || s.pool.broken() != nil {
		return nil
	}
	ctx := context.Background()
	c, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("keeping the write-ahead log: %w", err)
	}
	defer c.Close()
	// The pragma writes nothing; it goes around the gate, which refuses
	// every PRAGMA.
	err = c.Raw(func(dc any) error {
		_, err := dc.(*conn).Conn.ExecContext(ctx, "PRAGMA disable_checkpoint_on_shutdown", nil)
		return err
	})
	if err != nil {
		return fmt.Errorf("keeping the write-ahead log: %w", err)
	}
	return nil
}
