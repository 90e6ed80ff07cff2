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
	for i := range events {
		e := &events[i]
		err := s.appender.AppendRow(
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
		)
		if err != nil {
			s.resetAppender()
			return fmt.Errorf("appending event %d: %w", i, err)
		}
	}
	if err := s.appender.Flush(); err != nil {
		s.resetAppender()
		return fmt.Errorf("committing %d events: %w", len(events), err)
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
