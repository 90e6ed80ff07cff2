package duckdb

import (
	"context"
	"fmt"
	"time"

	"strata/internal/analytics"
)

var _ analytics.RetentionStore = (*Store)(nil)

// DropEventsBefore deletes a product's events before before, or only its
// events named name (docs/privacy.md, "Retention"). It keeps the kept
// visits exact (visits.go): it runs between two refreshes, never during
// one, and while it changes the tables no query reads the kept visits.
//
// When every event before before goes, the visits that end before it go
// with them (their events are all deleted) and the late mark is before
// itself: the only kept visits it can touch are those that straddle it,
// which the next refresh builds again from the events left. When only
// some events go (a name), a visit anywhere before before may lose one,
// so the mark is the earliest deleted event's time.
//
// The users whose events are all gone keep their entry in the dense-id
// dictionary (denseids.go): a user seen again gets the same number, and
// the entry counts no event in any answer.
func (s *Store) DropEventsBefore(ctx context.Context, productID int64, name string, before time.Time) (int64, error) {
	if err := s.pool.writable(); err != nil {
		return 0, err
	}
	if err := s.dictionaries(ctx); err != nil {
		return 0, err
	}
	before = before.UTC()
	where := `product_id = $1 AND ts < $2`
	args := []any{productID, before}
	if name != "" {
		id := s.eventID(name)
		if id == noEvent {
			return 0, nil // never stored
		}
		where += ` AND eid = $3`
		args = append(args, id)
	}
	k := &s.visits
	k.refresh.Lock()
	defer k.refresh.Unlock()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	// The environments that lose events, and the earliest time each
	// loses: nothing to do (the usual round) costs one scan of the zone
	// maps.
	rows, err := conn.QueryContext(ctx, `SELECT env, min(ts) FROM events WHERE `+where+` GROUP BY env`, args...)
	if err != nil {
		return 0, fmt.Errorf("reading events to drop: %w", err)
	}
	first := map[analytics.Env]time.Time{}
	for rows.Next() {
		var env string
		var at time.Time
		if err := rows.Scan(&env, &at); err != nil {
			rows.Close()
			return 0, fmt.Errorf("reading events to drop: %w", err)
		}
		first[analytics.Env(env)] = at.UTC()
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("reading events to drop: %w", err)
	}
	if len(first) == 0 {
		return 0, nil
	}
	// Queries that meet the deletion answer from events alone.
	k.table.Lock()
	defer k.table.Unlock()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE `+where, args...)
	if err != nil {
		return 0, fmt.Errorf("dropping events of product %d: %w", productID, err)
	}
	n, _ := res.RowsAffected()
	if name == "" {
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND "end" < $2`, productID, before); err != nil {
			return 0, fmt.Errorf("dropping kept visits of product %d: %w", productID, err)
		}
	}
	// Before the commit, as visits.go asks of every deletion.
	for env, at := range first {
		if name == "" {
			at = before
		}
		s.eventsChanged(productID, env, at)
	}
	if err := s.commit(tx.Commit); err != nil {
		return 0, fmt.Errorf("dropping events of product %d: %w", productID, err)
	}
	return n, nil
}
