package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"strata/internal/analytics"
)

// Session replay chunks (migrations 0019, 0022, 0023 and 0024, docs/replay.md): the
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
//
// A chunk that starts a session inserts the session's row first. Once
// every chunk is in, a transaction that started sessions adds them to its
// product's count of sessions (replay_products.sessions, migration 0024),
// which locks the product's row and returns the count, its own sessions
// among them; past limits.Sessions, the sessions it started last go again,
// chunks and row, and come off the count, and their chunks are refused.
// The lock holds until the commit, so that the next transaction that
// starts a session of the product counts this one's: on any number of
// nodes, a product never keeps more sessions than the cap. The count is
// kept whatever the cap (0 too), so that it is right when a cap is set.
func (s *Store) AppendReplayChunks(ctx context.Context, chunks []analytics.ReplayChunk, limits analytics.ReplayLimits) (analytics.ReplayRefused, error) {
	var refused analytics.ReplayRefused
	tx, err := s.begin(ctx)
	if err != nil {
		return refused, fmt.Errorf("storing replay chunks: %w", err)
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
	// The sessions this transaction started, by product in order, and
	// the chunks acknowledged in each.
	var started []*startedSession
	byKey := map[startedKey]*startedSession{}
	for _, i := range order {
		c := chunks[i]
		charge := analytics.ReplayChunkCharge(len(c.Data))
		if limits.SessionBytes > 0 && charge > limits.SessionBytes {
			refused.SessionFull = append(refused.SessionFull, i)
			continue
		}
		key := startedKey{c.ProductID, c.SessionID}
		res, err := tx.ExecContext(ctx,
			`INSERT INTO replay_chunks (product_id, `+replayMetaColumns+`, data)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
			 ON CONFLICT (product_id, session_id, window_id, chunk_index) DO NOTHING`,
			c.ProductID, c.SessionID, c.WindowID, c.Index, c.DistinctID, c.FirstTS.UTC(), c.LastTS.UTC(), c.Encoding,
			c.Pages, c.Clicks, c.Errors, len(c.Data), c.ReceivedAt.UTC(), c.Data)
		if err != nil {
			return refused, fmt.Errorf("storing replay chunks: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return refused, fmt.Errorf("storing replay chunks: %w", err)
		} else if n == 0 {
			// A retry: the first copy stays, charged once. Should it be
			// of a session this transaction started, it shares its fate.
			if st := byKey[key]; st != nil {
				st.chunks = append(st.chunks, i)
			}
			continue
		}
		res, err = tx.ExecContext(ctx,
			`INSERT INTO replay_sessions (product_id, session_id, bytes) VALUES ($1, $2, 0)
			 ON CONFLICT (product_id, session_id) DO NOTHING`, c.ProductID, c.SessionID)
		if err != nil {
			return refused, fmt.Errorf("charging a replay chunk to its session: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return refused, fmt.Errorf("charging a replay chunk to its session: %w", err)
		} else if n > 0 {
			st := &startedSession{startedKey: key}
			byKey[key] = st
			started = append(started, st)
		}
		res, err = tx.ExecContext(ctx,
			`UPDATE replay_sessions SET bytes = bytes + $3
			 WHERE product_id = $1 AND session_id = $2 AND ($4 = 0 OR bytes + $3 <= $4)`,
			c.ProductID, c.SessionID, charge, limits.SessionBytes)
		if err != nil {
			return refused, fmt.Errorf("charging a replay chunk to its session: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return refused, fmt.Errorf("charging a replay chunk to its session: %w", err)
		} else if n > 0 {
			if st := byKey[key]; st != nil {
				st.chunks = append(st.chunks, i)
			}
			continue
		}
		// The session is full: the chunk goes again.
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM replay_chunks WHERE product_id = $1 AND session_id = $2 AND window_id = $3 AND chunk_index = $4`,
			c.ProductID, c.SessionID, c.WindowID, c.Index); err != nil {
			return refused, fmt.Errorf("storing replay chunks: %w", err)
		}
		refused.SessionFull = append(refused.SessionFull, i)
	}
	for len(started) > 0 {
		// The sessions of the first product left; started is in product
		// order.
		n := 1
		for n < len(started) && started[n].product == started[0].product {
			n++
		}
		product := started[0].product
		count, err := s.addProductSessions(ctx, tx.Tx, product, n)
		if err != nil {
			return refused, err
		}
		over := 0
		if limits.Sessions > 0 {
			over = min(n, count-limits.Sessions)
		}
		for j := n - 1; j >= n-over; j-- {
			if err := s.unstart(ctx, tx.Tx, started[j]); err != nil {
				return refused, err
			}
			refused.ProductFull = append(refused.ProductFull, started[j].chunks...)
		}
		if over > 0 {
			if _, err := s.addProductSessions(ctx, tx.Tx, product, -over); err != nil {
				return refused, err
			}
		}
		started = started[n:]
	}
	if err := tx.Commit(); err != nil {
		return refused, fmt.Errorf("storing replay chunks: %w", err)
	}
	sort.Ints(refused.SessionFull)
	sort.Ints(refused.ProductFull)
	return refused, nil
}

// startedKey names a session; startedSession is one an append started,
// with the positions of its chunks in the append's chunks.
type startedKey struct {
	product int64
	session string
}

type startedSession struct {
	startedKey
	chunks []int
}

// addProductSessions adds n (negative: takes off -n) to the product's
// count of sessions, locking its row until the transaction ends, and
// returns the count. The row is inserted when the product has none.
func (s *Store) addProductSessions(ctx context.Context, tx *sql.Tx, productID int64, n int) (int, error) {
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO replay_products (product_id, sessions) VALUES ($1, 0) ON CONFLICT (product_id) DO NOTHING`, productID); err != nil {
		return 0, fmt.Errorf("counting a product's replay sessions: %w", err)
	}
	var count int
	if err := tx.QueryRowContext(ctx,
		`UPDATE replay_products SET sessions = sessions + $2 WHERE product_id = $1 RETURNING sessions`,
		productID, n).Scan(&count); err != nil {
		return 0, fmt.Errorf("counting a product's replay sessions: %w", err)
	}
	return count, nil
}

// unstart takes a session the transaction started out again: its chunks
// and its row.
func (s *Store) unstart(ctx context.Context, tx *sql.Tx, st *startedSession) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM replay_chunks WHERE product_id = $1 AND session_id = $2`, st.product, st.session); err != nil {
		return fmt.Errorf("refusing a replay session: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM replay_sessions WHERE product_id = $1 AND session_id = $2`, st.product, st.session); err != nil {
		return fmt.Errorf("refusing a replay session: %w", err)
	}
	return nil
}

// ListReplaySessions reads the metadata of the product's chunks (of the
// user's sessions only, when the filter names one) and summarizes them.
func (s *Store) ListReplaySessions(ctx context.Context, productID int64, f analytics.ReplayFilter) ([]analytics.ReplaySession, error) {
	chunks, err := QueryAll(ctx, s.conn(), "listing replay sessions", scanReplayChunk(productID),
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
	err := s.conn().QueryRowContext(ctx,
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
	next, err := QueryAll(ctx, s.conn(), "reading a replay session", scanReplayChunk(productID),
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
	rows, err := s.conn().QueryContext(ctx,
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

// DeleteReplaySession deletes a session's chunks and its row, and takes it
// off its product's count of sessions. The product's row is locked last,
// after the session's, as an append locks them, so that the two cannot
// wait for each other.
func (s *Store) DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error {
	tx, err := s.begin(ctx)
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
	res, err = tx.ExecContext(ctx, `DELETE FROM replay_sessions WHERE product_id = $1 AND session_id = $2`, productID, sessionID)
	if err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
	} else if n > 0 {
		if _, err := s.addProductSessions(ctx, tx.Tx, productID, -int(n)); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("deleting a replay session: %w", err)
	}
	return nil
}

// deleteBatch is how many sessions one statement of DeleteReplaySessions
// names, each a parameter: well within PostgreSQL's 65,535 parameters.
const deleteBatch = 5000

// DeleteReplaySessions deletes the product's sessions among ids, chunks
// and rows, in one transaction of a statement per table for each 5,000
// ids, and takes them off the product's count of sessions, whose row is
// locked last, as DeleteReplaySession does.
func (s *Store) DeleteReplaySessions(ctx context.Context, productID int64, ids []string) (int, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return 0, nil
	}
	tx, err := s.begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("deleting replay sessions: %w", err)
	}
	defer tx.Rollback()
	deleted := 0
	for len(ids) > 0 {
		batch := ids[:min(len(ids), deleteBatch)]
		ids = ids[len(batch):]
		args := make([]any, 0, len(batch)+1)
		args = append(args, productID)
		var in strings.Builder
		for i, id := range batch {
			if i > 0 {
				in.WriteString(", ")
			}
			args = append(args, id)
			in.WriteString("$" + strconv.Itoa(len(args)))
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM replay_chunks WHERE product_id = $1 AND session_id IN (`+in.String()+`)`, args...); err != nil {
			return 0, fmt.Errorf("deleting replay sessions: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM replay_sessions WHERE product_id = $1 AND session_id IN (`+in.String()+`)`, args...)
		if err != nil {
			return 0, fmt.Errorf("deleting replay sessions: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("deleting replay sessions: %w", err)
		}
		deleted += int(n)
	}
	if deleted > 0 {
		if _, err := s.addProductSessions(ctx, tx.Tx, productID, -deleted); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("deleting replay sessions: %w", err)
	}
	return deleted, nil
}

// ReplayProducts returns the products with chunks.
func (s *Store) ReplayProducts(ctx context.Context) ([]int64, error) {
	return QueryAll(ctx, s.conn(), "listing replay products", func(r Scanner) (id int64, err error) {
		err = r.Scan(&id)
		return id, err
	}, `SELECT DISTINCT product_id FROM replay_chunks ORDER BY product_id`)
}
