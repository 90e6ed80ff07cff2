package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"strata/internal/analytics"
)

// AppendEvents appends events through DuckDB's appender and flushes, which
// commits them in one transaction. The appender is the fastest way into
// DuckDB (no SQL parsing per row); on any error it is discarded and rebuilt
// for the next call so that half-appended rows are never committed later.
// Up to Options.Appenders calls run at once, each on its own appender.
// While Options.WriteGate refuses, it returns the gate's error.
func (s *Store) AppendEvents(ctx context.Context, events []analytics.Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := s.pool.writable(); err != nil {
		return err
	}
	// Before the commit: a query must never read a late event without
	// its mark (visits.go).
	defer s.visits.noteAppend(events)()
	ids, err := s.numberAndStore(ctx, events)
	if err != nil {
		return err
	}
	var slot *eventAppender
	select {
	case slot = <-s.appenders:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { s.appenders <- slot }()
	if err := slot.open(ctx, s.pool); err != nil {
		return err
	}
	if err := slot.append(events, ids); err != nil {
		slot.discard()
		return s.fail(err)
	}
	if err := s.commit(slot.flush); err != nil {
		slot.discard()
		return fmt.Errorf("committing %d events: %w", len(events), err)
	}
	s.lastAppend.Store(s.now().UnixNano())
	return nil
}

// commit runs a commit of events unless the store is broken, and marks it
// broken when the commit fails: once one commit failed, no other may follow
// it on the same instance (recover.go). Any failure counts, as the events
// table has no constraint that a sound commit could break, but the write
// gate's refusal, which never reached DuckDB (writes.go).
func (s *Store) commit(fn func() error) error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.pool.broken(); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if !errors.As(err, new(refused)) {
			s.pool.fail(err)
		}
		return err
	}
	return nil
}

// numberAndStore gives events their dense ids and commits the users and
// names seen for the first time, under numberMu so that an entry is
// committed before any call can append events numbered with it.
func (s *Store) numberAndStore(ctx context.Context, events []analytics.Event) (denseIDs, error) {
	s.numberMu.Lock()
	defer s.numberMu.Unlock()
	if err := s.dictionaries(ctx); err != nil {
		return denseIDs{}, err
	}
	ids, fresh := s.number(events)
	if err := s.storeEntries(ctx, fresh); err != nil {
		return denseIDs{}, err
	}
	return ids, nil
}

// CheckpointIfIdle writes the write-ahead log into the database file when
// events were appended since the last checkpoint but none for idle. DuckDB
// checkpoints on its own only when the log reaches checkpoint_threshold, so
// after a burst of ingest the newest rows would otherwise stay in the log,
// uncompressed and without zone maps, until the next burst; queries over
// them measured up to a fifth slower. It reports whether it checkpointed.
func (s *Store) CheckpointIfIdle(ctx context.Context, idle time.Duration) (bool, error) {
	last := s.lastAppend.Load()
	if last == 0 || last <= s.checkpointed.Load() || s.now().Sub(time.Unix(0, last)) < idle {
		return false, nil
	}
	if _, err := s.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return false, fmt.Errorf("checkpointing: %w", err)
	}
	s.checkpointed.Store(last)
	// The checkpoint freed the uncompressed rows; give their memory back.
	releaseMemory()
	return true, nil
}

// AppendMissing stores the events whose (product, uuid) the table does not
// hold yet, in one statement. It serves crash recovery (the spool replays
// its log, some of which may already be stored), so it favours exactness
// over speed: rows are staged in a scratch table and anti-joined.
func (s *Store) AppendMissing(ctx context.Context, events []analytics.Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := s.pool.writable(); err != nil {
		return err
	}
	defer s.visits.noteAppend(events)()
	ids, err := s.numberAndStore(ctx, events)
	if err != nil {
		return err
	}
	// One replay at a time (they share the scratch table), and none after
	// a failed commit.
	return s.commit(func() error { return s.replay(ctx, events, ids) })
}

// replay stages events in the scratch table and inserts those missing.
func (s *Store) replay(ctx context.Context, events []analytics.Event, ids denseIDs) error {
	if _, err := s.db.ExecContext(ctx, `CREATE OR REPLACE TABLE spool_replay AS SELECT * FROM events LIMIT 0`); err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	defer s.db.ExecContext(context.Background(), `DROP TABLE IF EXISTS spool_replay`)
	app := &eventAppender{table: "spool_replay"}
	if err := app.open(ctx, s.pool); err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	defer app.discard()
	if err := app.append(events, ids); err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	if err := app.flush(); err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO events
		SELECT r.* FROM spool_replay r
		WHERE NOT EXISTS (
			SELECT 1 FROM events e
			WHERE e.product_id = r.product_id AND e.uuid = r.uuid
			  AND e.received_at >= (SELECT min(received_at) FROM spool_replay))`)
	if err != nil {
		return fmt.Errorf("replaying events: %w", err)
	}
	return nil
}

// tableAppender is an appender on one table and the connection it owns,
// opened on first use. The events appenders and the numbering tables each
// have one.
type tableAppender struct {
	table string // a constant of this package, never caller input
	con   driver.Conn
	app   *duckdb.Appender
}

func (a *tableAppender) open(ctx context.Context, p *pool) error {
	if a.app != nil {
		return nil
	}
	con, err := p.Connect(ctx)
	if err != nil {
		return fmt.Errorf("connecting %s appender: %w", a.table, err)
	}
	app, err := duckdb.NewAppenderFromConn(con.(*conn).Conn, "", a.table)
	if err != nil {
		con.Close()
		return fmt.Errorf("creating %s appender: %w", a.table, err)
	}
	a.con, a.app = con, app
	return nil
}

// discard throws the appender away after a failure. Closing it may try to
// flush the rows it still holds, which is exactly what must not happen, so
// its connection is closed first.
func (a *tableAppender) discard() error {
	if a.app == nil {
		return nil
	}
	err := a.con.Close()
	a.app.Close()
	a.app, a.con = nil, nil
	return err
}

// RecentUUIDs streams the uuids of events received since a moment, for the
// ingest writer's deduplication window.
func (s *Store) RecentUUIDs(ctx context.Context, since time.Time, limit int, fn func(productID int64, uuid [16]byte) error) error {
	rows, err := s.db.QueryContext(ctx,
		`SELECT product_id, uuid FROM events WHERE received_at >= $1 ORDER BY received_at DESC LIMIT $2`,
		since.UTC(), limit)
	if err != nil {
		return fmt.Errorf("reading recent uuids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid int64
		var u duckdb.UUID
		if err := rows.Scan(&pid, &u); err != nil {
			return fmt.Errorf("reading recent uuids: %w", err)
		}
		if err := fn(pid, [16]byte(u)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading recent uuids: %w", err)
	}
	return nil
}
