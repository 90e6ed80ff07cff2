package duckdb

import (
	"context"
	"fmt"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"strata/internal/analytics"
)

// AppendEvents appends events through DuckDB's appender and flushes, which
// commits them in one transaction. The appender is the fastest way into
// DuckDB (no SQL parsing per row); on any error it is discarded and rebuilt
// for the next call so that half-appended rows are never committed later.
func (s *Store) AppendEvents(ctx context.Context, events []analytics.Event) error {
	if len(events) == 0 {
		return nil
	}
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	if err := s.ensureAppender(ctx); err != nil {
		return err
	}
	if err := s.dictionaries(ctx); err != nil {
		return err
	}
	ids, fresh := s.number(events)
	if err := s.storeEntries(ctx, fresh); err != nil {
		return err
	}
	if err := appendRows(s.appender, events, ids); err != nil {
		s.resetAppender()
		return err
	}
	if err := s.appender.Flush(); err != nil {
		s.resetAppender()
		return fmt.Errorf("committing %d events: %w", len(events), err)
	}
	s.lastAppend.Store(s.now().UnixNano())
	return nil
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
	return true, nil
}

// appendRows adds events to an appender of a table shaped like events.
func appendRows(app *duckdb.Appender, events []analytics.Event, ids denseIDs) error {
	for i := range events {
		e := &events[i]
		err := app.AppendRow(
			duckdb.UUID(e.UUID),
			e.ProductID,
			string(e.Env),
			e.Timestamp.UTC(),
			e.ReceivedAt.UTC(),
			e.Name,
			e.DistinctID,
			e.UserID,
			nullable(e.URL),
			nullable(e.Path),
			nullable(e.Referrer),
			nullable(e.UserAgent),
			nullable(e.Browser),
			nullable(e.OS),
			nullable(e.DeviceType),
			e.IsBot,
			nullable(e.BotName),
			nullable(e.BotCategory),
			string(e.Properties),
			ids.uid[i],
			ids.eid[i],
		)
		if err != nil {
			return fmt.Errorf("appending event %d: %w", i, err)
		}
	}
	return nil
}

// AppendMissing stores the events whose (product, uuid) the table does not
// hold yet, in one statement. It serves crash recovery (the spool replays
// its log, some of which may already be stored), so it favours exactness
// over speed: rows are staged in a scratch table and anti-joined.
func (s *Store) AppendMissing(ctx context.Context, events []analytics.Event) error {
	if len(events) == 0 {
		return nil
	}
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	if err := s.dictionaries(ctx); err != nil {
		return err
	}
	ids, fresh := s.number(events)
	if err := s.storeEntries(ctx, fresh); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `CREATE OR REPLACE TABLE spool_replay AS SELECT * FROM events LIMIT 0`); err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	defer s.db.ExecContext(context.Background(), `DROP TABLE IF EXISTS spool_replay`)
	con, err := s.connector.Connect(ctx)
	if err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	defer con.Close()
	app, err := duckdb.NewAppenderFromConn(con, "", "spool_replay")
	if err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	if err := appendRows(app, events, ids); err != nil {
		app.Close()
		return err
	}
	if err := app.Close(); err != nil {
		return fmt.Errorf("staging replay: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO events
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

func (s *Store) ensureAppender(ctx context.Context) error {
	if s.appender != nil {
		return nil
	}
	con, err := s.connector.Connect(ctx)
	if err != nil {
		return fmt.Errorf("connecting appender: %w", err)
	}
	app, err := duckdb.NewAppenderFromConn(con, "", "events")
	if err != nil {
		con.Close()
		return fmt.Errorf("creating appender: %w", err)
	}
	s.appendCon, s.appender = con, app
	return nil
}

// resetAppender throws the appender away after a failure. Closing it may
// try to flush the rows it still holds, which is exactly what must not
// happen, so its connection is closed first.
func (s *Store) resetAppender() {
	if s.appendCon != nil {
		s.appendCon.Close()
	}
	if s.appender != nil {
		s.appender.Close()
	}
	s.appender, s.appendCon = nil, nil
}

// nullable stores empty optional strings as NULL, so that "is set" filters
// mean "was sent" rather than "was sent and not empty".
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
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
