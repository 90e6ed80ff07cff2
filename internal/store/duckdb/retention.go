package duckdb

import (
	"context"
	"database/sql"
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
// When every event before before goes, the kept visits stay exact without
// a late mark, so that the next refresh has nothing to build again: those
// that end before the cut go (their events are all deleted), and each that
// straddles it becomes the visit of its events left (cutVisits). Where
// that cannot be done (visits not kept yet, a cut past the horizon), the
// visits that end before it go and the late mark is the cut: the next
// refresh builds again from the first straddling visit on. When only some
// events go (a name), a visit anywhere before before may lose one, or be
// split in two, so the mark is the earliest deleted event's time.
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
	cut := false
	if name == "" {
		if cut, err = s.cutVisits(ctx, tx, productID, before, first); err != nil {
			return 0, err
		}
	}
	if name == "" && !cut {
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND "end" < $2`, productID, before); err != nil {
			return 0, fmt.Errorf("dropping kept visits of product %d: %w", productID, err)
		}
	}
	// Before the commit, as visits.go asks of every deletion; a cut that
	// cutVisits made exact needs no mark.
	for env, at := range first {
		if name == "" {
			at = before
		}
		if !cut {
			s.eventsChanged(productID, env, at)
		}
	}
	if err := s.commit(tx.Commit); err != nil {
		return 0, fmt.Errorf("dropping events of product %d: %w", productID, err)
	}
	return n, nil
}

// cutVisits makes the kept visits of product exact after its events
// before cut were deleted in tx, and reports whether it could. A visit that
// ends before the cut had all its events deleted, and goes. A visit that
// straddles it keeps its events from the cut to its end: a run whose gaps
// are all under 30 minutes, of a user and session whose other visits are
// 30 minutes or more away, so one visit still, with nothing before it to
// join; its row is computed again from them, with the refresh's figures
// (visitFigures). It cannot when a scope's visits are not kept (the next
// refresh builds them all), or when a visit would then start at or after
// its scope's horizon, where the statement, not the table, answers.
func (s *Store) cutVisits(ctx context.Context, tx *sql.Tx, product int64, cut time.Time, envs map[analytics.Env]time.Time) (bool, error) {
	k := &s.visits
	horizons := map[string]time.Time{}
	k.mu.Lock()
	for env := range envs {
		st := k.scopes[visitScope{product, env}]
		if st == nil || !st.kept || !cut.Before(st.horizon) {
			k.mu.Unlock()
			return false, nil
		}
		horizons[string(env)] = st.horizon
	}
	k.mu.Unlock()
	var b builder
	session, err := b.property(analytics.Property{Key: analytics.SessionIDProperty})
	if err != nil {
		return false, err
	}
	b.Write(`CREATE OR REPLACE TEMP TABLE visits_cut AS WITH v AS (SELECT env, uid, sid, "end" FROM visits WHERE product_id = `, b.arg(product),
		` AND start < `, b.arg(cut), ` AND "end" >= `, b.arg(cut), `), e AS (SELECT env, uid, coalesce(`, session, `, '') AS sid, ts,`,
		` coalesce(path, '') AS path, `)
	s.writeVisitKind(&b)
	b.Write(` AS kind FROM events WHERE product_id = `, b.arg(product), ` AND ts >= `, b.arg(cut),
		` AND ts <= (SELECT max("end") FROM v) AND NOT is_bot)`,
		` SELECT env, uid, sid, min(ts) AS start, v."end", `, visitFigures,
		` FROM v JOIN e USING (env, uid, sid) WHERE ts <= v."end" GROUP BY env, uid, sid, v."end"`)
	if _, err := tx.ExecContext(ctx, b.SQL(), b.Args()...); err != nil {
		return false, fmt.Errorf("cutting kept visits: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT env, max(start) FROM visits_cut GROUP BY env`)
	if err != nil {
		return false, fmt.Errorf("cutting kept visits: %w", err)
	}
	ok := true
	for rows.Next() {
		var env string
		var last time.Time
		if err := rows.Scan(&env, &last); err != nil {
			rows.Close()
			return false, fmt.Errorf("cutting kept visits: %w", err)
		}
		if h, kept := horizons[env]; !kept || !last.Before(h) {
			ok = false
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("cutting kept visits: %w", err)
	}
	if ok {
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND start < $2`, product, cut); err != nil {
			return false, fmt.Errorf("cutting kept visits: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO visits SELECT $1, env, uid, sid, start, "end", pageviews, interactions, entry, exit
			FROM visits_cut ORDER BY start`, product); err != nil {
			return false, fmt.Errorf("cutting kept visits: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE visits_cut`); err != nil {
		return false, fmt.Errorf("cutting kept visits: %w", err)
	}
	return ok, nil
}
