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
// events go (a name), the kept visits that lose one are built again from
// their events left, one or more each (thinVisits); where that cannot be
// done, the mark is the earliest deleted event's time.
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
	where := `product_id = $1 AND ts < $2::TIMESTAMP`
	args := []any{productID, before}
	id := noEvent
	if name != "" {
		if id = s.eventID(name); id == noEvent {
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
	// The kept counts of the product are dropped, and none kept until
	// the deletion has committed (counts.go).
	defer s.visits.counts.changing(productID)()
	// Queries that meet the deletion answer from events alone.
	k.table.Lock()
	defer k.table.Unlock()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	thin := false
	if name != "" {
		if thin, err = s.noteThinned(ctx, tx, productID, id, before, first); err != nil {
			return 0, err
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE `+where, args...)
	if err != nil {
		return 0, fmt.Errorf("dropping events of product %d: %w", productID, err)
	}
	n, _ := res.RowsAffected()
	cut := false
	switch {
	case name == "":
		cut, err = s.cutVisits(ctx, tx, productID, before, first)
	case thin:
		cut, err = s.thinVisits(ctx, tx, productID, first)
	}
	if err != nil {
		return 0, err
	}
	if name == "" && !cut {
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND "end" < $2::TIMESTAMP`, productID, before); err != nil {
			return 0, fmt.Errorf("dropping kept visits of product %d: %w", productID, err)
		}
	}
	// Before the commit, as visits.go asks of every deletion; kept
	// visits that cutVisits or thinVisits made exact need no mark.
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
	horizons, ok := s.keptHorizons(product, envs)
	if !ok {
		return false, nil
	}
	for _, h := range horizons {
		if !cut.Before(h) {
			return false, nil
		}
	}
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
	if ok, err = piecesBefore(ctx, tx, "visits_cut", horizons); err != nil {
		return false, err
	}
	if ok {
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND start < $2::TIMESTAMP`, product, cut); err != nil {
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

// noteThinned notes, in tx and before the events named eid before cut are
// deleted, the kept visits of product that hold one (the temporary table
// visits_thin), for thinVisits. It reports false, noting nothing, when a
// scope's visits are not kept.
func (s *Store) noteThinned(ctx context.Context, tx *sql.Tx, product int64, eid uint32, cut time.Time, envs map[analytics.Env]time.Time) (bool, error) {
	if _, ok := s.keptHorizons(product, envs); !ok {
		return false, nil
	}
	var b builder
	session, err := b.property(analytics.Property{Key: analytics.SessionIDProperty})
	if err != nil {
		return false, err
	}
	b.Write(`CREATE OR REPLACE TEMP TABLE visits_thin AS SELECT DISTINCT v.env, v.uid, v.sid, v.start, v."end" FROM visits v JOIN`,
		` (SELECT env, uid, coalesce(`, session, `, '') AS sid, ts FROM events WHERE product_id = `, b.arg(product),
		` AND eid = `, b.eid(eid), ` AND ts < `, b.arg(cut), ` AND NOT is_bot) d`,
		` ON d.env = v.env AND d.uid = v.uid AND d.sid = v.sid AND d.ts >= v.start AND d.ts <= v."end" WHERE v.product_id = `, b.arg(product))
	if _, err := tx.ExecContext(ctx, b.SQL(), b.Args()...); err != nil {
		return false, fmt.Errorf("noting kept visits to thin: %w", err)
	}
	return true, nil
}

// thinVisits builds again, in tx and after the deletion, the kept visits
// noteThinned noted from their events left, and reports whether it could.
// A visit that lost an event keeps its others, between its start and end:
// one visit still, or several where the deleted event bridged a gap of 30
// minutes or more, or none when it had no other; each is split with the
// refresh's rule and figures. It cannot when a piece would start at or
// after its scope's horizon, where the statement, not the table, answers.
func (s *Store) thinVisits(ctx context.Context, tx *sql.Tx, product int64, envs map[analytics.Env]time.Time) (bool, error) {
	// The noted visits and their pieces go with the transaction's
	// connection back to the pool: drop them whatever happens.
	defer func() {
		tx.ExecContext(context.Background(), `DROP TABLE IF EXISTS visits_thinned`)
		tx.ExecContext(context.Background(), `DROP TABLE IF EXISTS visits_thin`)
	}()
	horizons, ok := s.keptHorizons(product, envs)
	if !ok {
		return false, nil
	}
	var b builder
	session, err := b.property(analytics.Property{Key: analytics.SessionIDProperty})
	if err != nil {
		return false, err
	}
	b.Write(`CREATE OR REPLACE TEMP TABLE visits_thinned AS WITH e0 AS (SELECT env, uid, coalesce(`, session, `, '') AS sid, ts,`,
		` coalesce(path, '') AS path, `)
	s.writeVisitKind(&b)
	b.Write(` AS kind FROM events WHERE product_id = `, b.arg(product), ` AND NOT is_bot`,
		` AND ts >= (SELECT min(start) FROM visits_thin) AND ts <= (SELECT max("end") FROM visits_thin)),`,
		` e AS (SELECT e0.*, t.start AS was FROM e0 JOIN visits_thin t`,
		` ON e0.env = t.env AND e0.uid = t.uid AND e0.sid = t.sid AND e0.ts >= t.start AND e0.ts <= t."end"),`,
		` g AS (SELECT *, CASE WHEN epoch_us(ts) - epoch_us(lag(ts) OVER w) < `, b.arg(analytics.SessionGap.Microseconds()),
		` THEN 0 ELSE 1 END AS new FROM e WINDOW w AS (PARTITION BY env, uid, sid, was ORDER BY ts)),`,
		` n AS (SELECT *, sum(new) OVER (PARTITION BY env, uid, sid, was ORDER BY ts) AS vn FROM g)`,
		` SELECT env, uid, sid, min(ts) AS start, max(ts) AS "end", `, visitFigures, ` FROM n GROUP BY env, uid, sid, was, vn`)
	if _, err := tx.ExecContext(ctx, b.SQL(), b.Args()...); err != nil {
		return false, fmt.Errorf("thinning kept visits: %w", err)
	}
	if ok, err = piecesBefore(ctx, tx, "visits_thinned", horizons); err != nil || !ok {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND EXISTS (SELECT 1 FROM visits_thin t
		WHERE t.env = visits.env AND t.uid = visits.uid AND t.sid = visits.sid AND t.start = visits.start)`, product); err != nil {
		return false, fmt.Errorf("thinning kept visits: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO visits SELECT $1, env, uid, sid, start, "end", pageviews, interactions, entry, exit
		FROM visits_thinned ORDER BY start`, product); err != nil {
		return false, fmt.Errorf("thinning kept visits: %w", err)
	}
	return true, nil
}

// keptHorizons returns the horizons of product's scopes in envs, by env,
// or false when one is not kept.
func (s *Store) keptHorizons(product int64, envs map[analytics.Env]time.Time) (map[string]time.Time, bool) {
	k := &s.visits
	k.mu.Lock()
	defer k.mu.Unlock()
	horizons := map[string]time.Time{}
	for env := range envs {
		st := k.scopes[visitScope{product, env}]
		if st == nil || !st.kept {
			return nil, false
		}
		horizons[string(env)] = st.horizon
	}
	return horizons, true
}

// piecesBefore reports whether every visit of table starts before its
// environment's horizon.
func piecesBefore(ctx context.Context, tx *sql.Tx, table string, horizons map[string]time.Time) (bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT env, max(start) FROM `+table+` GROUP BY env`)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", table, err)
	}
	defer rows.Close()
	ok := true
	for rows.Next() {
		var env string
		var last time.Time
		if err := rows.Scan(&env, &last); err != nil {
			return false, fmt.Errorf("reading %s: %w", table, err)
		}
		if h, kept := horizons[env]; !kept || !last.Before(h) {
			ok = false
		}
	}
	return ok, rows.Err()
}
