package sqlmeta

import (
	"context"
	"fmt"

	"strata/internal/analytics"
)

// Session replay chunks (migration 0019, docs/replay.md): the replay store
// of servers whose metadata is in PostgreSQL. DuckDB runs the same
// statements in the conformance suite, but the embedded server keeps its
// chunks as files (package replayfs).

var _ analytics.ReplayStore = (*Store)(nil)

const replayMetaColumns = `session_id, window_id, chunk_index, distinct_id, first_ts, last_ts, encoding, pages, clicks, errors, size, received_at`

func scanReplayChunk(productID int64, withData bool) func(Scanner) (analytics.ReplayChunk, error) {
	return func(row Scanner) (analytics.ReplayChunk, error) {
		c := analytics.ReplayChunk{ProductID: productID}
		dest := []any{&c.SessionID, &c.WindowID, &c.Index, &c.DistinctID, &c.FirstTS, &c.LastTS, &c.Encoding,
			&c.Pages, &c.Clicks, &c.Errors, &c.Size, &c.ReceivedAt}
		if withData {
			dest = append(dest, &c.Data)
		}
		err := row.Scan(dest...)
		c.FirstTS, c.LastTS, c.ReceivedAt = c.FirstTS.UTC(), c.LastTS.UTC(), c.ReceivedAt.UTC()
		return c, err
	}
}

// AppendReplayChunks inserts the chunks in one transaction; a chunk
// already stored is left as it was (ON CONFLICT DO NOTHING).
func (s *Store) AppendReplayChunks(ctx context.Context, chunks []analytics.ReplayChunk) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing replay chunks: %w", err)
	}
	defer tx.Rollback()
	for _, c := range chunks {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO replay_chunks (product_id, `+replayMetaColumns+`, data)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			 ON CONFLICT (product_id, session_id, window_id, chunk_index) DO NOTHING`,
			c.ProductID, c.SessionID, c.WindowID, c.Index, c.DistinctID, c.FirstTS.UTC(), c.LastTS.UTC(), c.Encoding,
			c.Pages, c.Clicks, c.Errors, len(c.Data), c.ReceivedAt.UTC(), c.Data); err != nil {
			return fmt.Errorf("storing replay chunks: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storing replay chunks: %w", err)
	}
	return nil
}

// ListReplaySessions reads the metadata of the product's chunks (of the
// user's sessions only, when the filter names one) and summarizes them.
func (s *Store) ListReplaySessions(ctx context.Context, productID int64, f analytics.ReplayFilter) ([]analytics.ReplaySession, error) {
	chunks, err := QueryAll(ctx, s.db, "listing replay sessions", scanReplayChunk(productID, false),
		`SELECT `+replayMetaColumns+` FROM replay_chunks WHERE product_id = $1
		 AND ($2 = '' OR session_id IN (SELECT session_id FROM replay_chunks WHERE product_id = $1 AND distinct_id = $2))`,
		productID, f.DistinctID)
	if err != nil {
		return nil, err
	}
	return analytics.FilterReplay(analytics.SummarizeReplay(chunks), f), nil
}

// ReplayChunks reads a session's chunks with their data.
func (s *Store) ReplayChunks(ctx context.Context, productID int64, sessionID string) ([]analytics.ReplayChunk, error) {
	chunks, err := QueryAll(ctx, s.db, "reading a replay session", scanReplayChunk(productID, true),
		`SELECT `+replayMetaColumns+`, data FROM replay_chunks WHERE product_id = $1 AND session_id = $2`,
		productID, sessionID)
	if err != nil {
		return nil, err
	}
	if len(chunks) == 0 {
		return nil, fmt.Errorf("replay session %q: %w", sessionID, analytics.ErrNotFound)
	}
	return analytics.OrderReplayChunks(chunks), nil
}

// DeleteReplaySession deletes a session's chunks.
func (s *Store) DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM replay_chunks WHERE product_id = $1 AND session_id = $2`, productID, sessionID)
	if err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("replay session %q: %w", sessionID, analytics.ErrNotFound)
	}
	return nil
}

// ReplayProducts returns the products with chunks.
func (s *Store) ReplayProducts(ctx context.Context) ([]int64, error) {
	return QueryAll(ctx, s.db, "listing replay products", func(r Scanner) (id int64, err error) {
		err = r.Scan(&id)
		return id, err
	}, `SELECT DISTINCT product_id FROM replay_chunks ORDER BY product_id`)
}
