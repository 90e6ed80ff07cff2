package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"strata/internal/analytics"
)

// Session replay chunks (migrations 0019 and 0022, docs/replay.md): the
// replay store of servers whose metadata is in PostgreSQL. DuckDB runs the
// same statements in the conformance suite, but the embedded server keeps
// its chunks in segment files (package replayfs).

var _ analytics.ReplayStore = (*Store)(nil)

const replayMetaColumns = `session_id, window_id, chunk_index, distinct_id, first_ts, last_ts, encoding, pages, clicks, errors, size, received_at`

func scanReplayChunk(productID int64) func(Scanner) (analytics.ReplayChunk, error) {
	return func(row Scanner) (analytics.ReplayChunk, error) {
		c := analytics.ReplayChunk{ProductID: productID}
		err := row.Scan(&c.SessionID, &c.WindowID, &c.Index, &c.DistinctID, &c.FirstTS, &c.LastTS, &c.Encoding,
			&c.Pages, &c.Clicks, &c.Errors, &c.Size, &c.ReceivedAt)
		c.FirstTS, c.LastTS, c.ReceivedAt = c.FirstTS.UTC(), c.LastTS.UTC(), c.ReceivedAt.UTC()
		return c, err
	}
}

// AppendReplayChunks inserts the chunks in one transaction. A chunk
// already stored is left as it was (ON CONFLICT DO NOTHING); a new one is
// charged to its session's row of replay_sessions by a conditional
// increment, and taken out again when the increment would pass the cap.
// The increment locks the session's row until the transaction ends, so
// that concurrent requests, on this node or another, are counted one
// after the other and the cap is never passed.
func (s *Store) AppendReplayChunks(ctx context.Context, chunks []analytics.ReplayChunk, maxSessionBytes int64) ([]int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("storing replay chunks: %w", err)
	}
	defer tx.Rollback()
	// In one order of key in every transaction, so that two requests
	// with chunks of the same sessions wait for each other's row locks
	// rather than deadlock.
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := chunks[order[a]], chunks[order[b]]
		if x.ProductID != y.ProductID {
			return x.ProductID < y.ProductID
		}
		if x.SessionID != y.SessionID {
			return x.SessionID < y.SessionID
		}
		if x.WindowID != y.WindowID {
			return x.WindowID < y.WindowID
		}
		return x.Index < y.Index
	})
	var full []int
	for _, i := range order {
		c := chunks[i]
		charge := analytics.ReplayChunkCharge(len(c.Data))
		if maxSessionBytes > 0 && charge > maxSessionBytes {
			full = append(full, i)
			continue
		}
		res, err := tx.ExecContext(ctx,
			`INSERT INTO replay_chunks (product_id, `+replayMetaColumns+`, data)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			 ON CONFLICT (product_id, session_id, window_id, chunk_index) DO NOTHING`,
			c.ProductID, c.SessionID, c.WindowID, c.Index, c.DistinctID, c.FirstTS.UTC(), c.LastTS.UTC(), c.Encoding,
			c.Pages, c.Clicks, c.Errors, len(c.Data), c.ReceivedAt.UTC(), c.Data)
		if err != nil {
			return nil, fmt.Errorf("storing replay chunks: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("storing replay chunks: %w", err)
		} else if n == 0 {
			continue // a retry: the first copy stays, charged once
		}
		res, err = tx.ExecContext(ctx,
			`INSERT INTO replay_sessions (product_id, session_id, bytes) VALUES ($1, $2, $3)
			 ON CONFLICT (product_id, session_id) DO UPDATE SET bytes = replay_sessions.bytes + excluded.bytes
			 WHERE $4 = 0 OR replay_sessions.bytes + excluded.bytes <= $4`,
			c.ProductID, c.SessionID, charge, maxSessionBytes)
		if err != nil {
			return nil, fmt.Errorf("charging a replay chunk to its session: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("charging a replay chunk to its session: %w", err)
		} else if n > 0 {
			continue
		}
		// The session is full: the chunk goes again.
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM replay_chunks WHERE product_id = $1 AND session_id = $2 AND window_id = $3 AND chunk_index = $4`,
			c.ProductID, c.SessionID, c.WindowID, c.Index); err != nil {
			return nil, fmt.Errorf("storing replay chunks: %w", err)
		}
		full = append(full, i)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("storing replay chunks: %w", err)
	}
	sort.Ints(full)
	return full, nil
}

// ListReplaySessions reads the metadata of the product's chunks (of the
// user's sessions only, when the filter names one) and summarizes them.
func (s *Store) ListReplaySessions(ctx context.Context, productID int64, f analytics.ReplayFilter) ([]analytics.ReplaySession, error) {
	chunks, err := QueryAll(ctx, s.db, "listing replay sessions", scanReplayChunk(productID),
		`SELECT `+replayMetaColumns+` FROM replay_chunks WHERE product_id = $1
		 AND ($2 = '' OR session_id IN (SELECT session_id FROM replay_chunks WHERE product_id = $1 AND distinct_id = $2))`,
		productID, f.DistinctID)
	if err != nil {
		return nil, err
	}
	return analytics.FilterReplay(analytics.SummarizeReplay(chunks), f), nil
}

// ReplaySession sums a session's chunks' metadata in the database, so that
// what it holds does not grow with the session. DistinctIDs is left empty.
func (s *Store) ReplaySession(ctx context.Context, productID int64, sessionID string) (analytics.ReplaySession, error) {
	out := analytics.ReplaySession{SessionID: sessionID}
	var start, end, received sql.NullTime
	var user sql.NullString
	var size int64
	err := s.db.QueryRowContext(ctx,
		`SELECT count(*), min(first_ts), max(last_ts), CAST(coalesce(sum(pages), 0) AS BIGINT),
		 CAST(coalesce(sum(clicks), 0) AS BIGINT), CAST(coalesce(sum(errors), 0) AS BIGINT),
		 CAST(coalesce(sum(size), 0) AS BIGINT), max(received_at),
		 (SELECT distinct_id FROM replay_chunks WHERE product_id = $1 AND session_id = $2
		  ORDER BY last_ts DESC, received_at DESC, window_id DESC, chunk_index DESC LIMIT 1)
		 FROM replay_chunks WHERE product_id = $1 AND session_id = $2`,
		productID, sessionID).Scan(&out.Chunks, &start, &end, &out.Pages, &out.Clicks, &out.Errors, &size, &received, &user)
	if err != nil {
		return out, fmt.Errorf("reading a replay session: %w", err)
	}
	if out.Chunks == 0 {
		return out, fmt.Errorf("replay session %q: %w", sessionID, analytics.ErrNotFound)
	}
	out.Start, out.End, out.LastReceived = start.Time.UTC(), end.Time.UTC(), received.Time.UTC()
	out.DistinctID = user.String
	out.Bytes = size + int64(out.Chunks)*analytics.ReplayChunkOverhead
	return out, nil
}

// ReadReplayChunks reads a page: first the metadata of the chunks after
// the cursor, in playing order (each window placed by its first chunk),
// at most one more than a page holds; then the data of those the page
// takes, window by window, a row at a time.
func (s *Store) ReadReplayChunks(ctx context.Context, productID int64, sessionID string, after analytics.ReplayCursor, maxBytes int) ([]analytics.ReplayChunk, bool, error) {
	next, err := QueryAll(ctx, s.db, "reading a replay session", scanReplayChunk(productID),
		`WITH w AS (
			SELECT window_id, min(first_ts) AS w_first FROM replay_chunks
			WHERE product_id = $1 AND session_id = $2 GROUP BY window_id
		 ), cur AS (SELECT w_first FROM w WHERE window_id = $3)
		 SELECT c.session_id, c.window_id, c.chunk_index, c.distinct_id, c.first_ts, c.last_ts, c.encoding,
			c.pages, c.clicks, c.errors, c.size, c.received_at
		 FROM replay_chunks c JOIN w ON w.window_id = c.window_id
		 WHERE c.product_id = $1 AND c.session_id = $2 AND ($3 = ''
			OR w.w_first > (SELECT w_first FROM cur)
			OR (w.w_first = (SELECT w_first FROM cur) AND (c.window_id > $3 OR (c.window_id = $3 AND c.chunk_index > $4))))
		 ORDER BY w.w_first, c.window_id, c.chunk_index
		 LIMIT $5`,
		productID, sessionID, after.WindowID, after.Index, analytics.MaxReplayPageChunks+1)
	if err != nil {
		return nil, false, err
	}
	n := analytics.PageReplayChunks(func(i int) int { return next[i].Size }, len(next), maxBytes)
	page, more := next[:n], len(next) > n
	out := page[:0:0]
	for i := 0; i < len(page); {
		j := i
		for j < len(page) && page[j].WindowID == page[i].WindowID {
			j++
		}
		got, err := s.replayData(ctx, productID, sessionID, page[i:j])
		if err != nil {
			return nil, false, err
		}
		out = append(out, got...)
		i = j
	}
	return out, more, nil
}

// replayData fills in the data of chunks, which are of one window, by
// index; a chunk deleted meanwhile is left out.
func (s *Store) replayData(ctx context.Context, productID int64, sessionID string, chunks []analytics.ReplayChunk) ([]analytics.ReplayChunk, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT chunk_index, data FROM replay_chunks
		 WHERE product_id = $1 AND session_id = $2 AND window_id = $3 AND chunk_index >= $4 AND chunk_index <= $5
		 ORDER BY chunk_index`,
		productID, sessionID, chunks[0].WindowID, chunks[0].Index, chunks[len(chunks)-1].Index)
	if err != nil {
		return nil, fmt.Errorf("reading a replay session: %w", err)
	}
	defer rows.Close()
	out := chunks[:0:0]
	i := 0
	for rows.Next() {
		var index int
		var data []byte
		if err := rows.Scan(&index, &data); err != nil {
			return nil, fmt.Errorf("reading a replay session: %w", err)
		}
		for i < len(chunks) && chunks[i].Index < index {
			i++
		}
		if i < len(chunks) && chunks[i].Index == index {
			c := chunks[i]
			c.Data = data
			out = append(out, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading a replay session: %w", err)
	}
	return out, nil
}

// DeleteReplaySession deletes a session's chunks and its row.
func (s *Store) DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM replay_chunks WHERE product_id = $1 AND session_id = $2`, productID, sessionID)
	if err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("replay session %q: %w", sessionID, analytics.ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM replay_sessions WHERE product_id = $1 AND session_id = $2`, productID, sessionID); err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
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
