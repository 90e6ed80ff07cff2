package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
)

// Visits kept, not recomputed (docs/queries.md, "Sessions"). The sessions
// statement builds every visit of a range from its events with two window
// passes, seconds over millions of events. The settled past does not
// change, so a refresher (RefreshVisits, run every minute by the server)
// keeps its visits in the table visits (migration 0030), and Sessions
// reads the part of a range before a horizon from there and builds only
// the rest from events with the statement.
//
// The horizon S of a product and environment is such that every visit
// that starts before S is in the table, exactly as the statement would
// build it from all the events stored. A refresh up to a settled time H
// builds the visits that start at S or later from the events before H
// (those starting before S are left out by the statement's look-back, as
// those before a range are), keeps the ones that closed before H (their
// last event 30 minutes or more before H: no later event can join them),
// and moves S to the earliest start of one still open, or to H − 30
// minutes.
//
// An event stored later with a time before the settled H (an import, an
// SDK's offline queue) may join, extend or merge kept visits. Each append
// notes, before it commits, the earliest such time per product and
// environment (a late mark, in memory: a map lookup per event); the next
// query computes from the table the earliest visit the mark can touch
// (the mark itself, or the start of a kept visit that ends less than 30
// minutes before it) and takes that as its horizon, and the next refresh
// deletes the kept visits from there on and lowers S to it. A deletion or
// rewrite of events must do the same through eventsChanged (none exists
// yet on this store). The marks live in memory: a clean close saves the
// horizons with what the marks can touch dropped, and the next open trusts
// the table from them ("Across a restart" below); a crash, or a reopening
// after a failed write, builds a scope's visits again from its first event.
//
// Filters fall back to the statement: a visit counts when any of its
// events passes them, which a row per visit cannot tell. So does a range
// whose end cuts a kept visit (the statement reads events only up to
// SessionLookahead past the range), and a query that meets a refresh
// changing the table, or an append marking a late event while it ran.

// visitSettle is how far behind the clock the refresher's settled time
// H is. Anything works for exactness (late marks cover later events); it
// keeps the visits of the last hour, those still growing, out of the
// table.
const visitSettle = analytics.SessionGap

// checkpointVisits is how many visits a refresh adds before it
// checkpoints (RefreshVisits): the first after a start adds them all.
const checkpointVisits = 100_000

// visitScope is the product and environment visits are kept for.
type visitScope struct {
	product int64
	env     analytics.Env
}

// visitState is what the keeper knows of one scope's kept visits.
type visitState struct {
	// kept says the table's rows of the scope are trusted below horizon;
	// until the first refresh after the store opened, they are not.
	kept    bool
	horizon time.Time
	// settled is the latest H a refresh took: an event stored with an
	// earlier time is late.
	settled time.Time
	// late is the earliest late event's time not yet applied by a
	// refresh, when hasLate; lateGen counts the marks, so that a query
	// can tell that one came while it ran.
	late    time.Time
	hasLate bool
	lateGen uint64
	// counted is the settled time once every append that saw an older
	// one has committed: the hours before it may be counted and kept
	// (counts.go). An event stored later with an earlier time drops them.
	counted time.Time
}

// visitKeeper holds the horizons and late marks of every scope.
type visitKeeper struct {
	mu     sync.Mutex // guards scopes and listed
	scopes map[visitScope]*visitState
	// listed says the scopes of the events stored before the store
	// opened were read; appends add new ones as they come.
	listed bool
	// table is held shared by each query that reads the table and alone
	// by a refresh while it changes the table and a horizon.
	table sync.RWMutex
	// appends is held shared by each append from noting its events to the
	// end of its commit, and taken alone once by a refresh after it raised
	// the settled times: every append that saw an older one has then
	// committed, and is in what the refresh reads.
	appends sync.RWMutex
	refresh sync.Mutex // one refresh at a time
	// answered counts the answers that read kept visits (for tests).
	answered atomic.Int64
	// restored counts the scopes whose horizons an open read back from a
	// clean close (for tests).
	restored atomic.Int64
	// stale says visit_horizons may hold rows of an earlier close that the
	// open could not delete: a refresh deletes them before it changes the
	// table. Guarded by refresh.
	stale bool
	// counts are the page views kept by hour (counts.go); their late
	// events are noted with the visits'.
	counts countCache
}

// state returns sc's state, made on first use; k.mu must be held.
func (k *visitKeeper) state(sc visitScope) *visitState {
	if k.scopes == nil {
		k.scopes = map[visitScope]*visitState{}
	}
	st := k.scopes[sc]
	if st == nil {
		st = &visitState{}
		// The key outlives the append that named it, whose strings may
		// be views of a buffer the caller reuses (the spool's load): the
		// map keeps its own copy.
		sc.env = analytics.Env(strings.Clone(string(sc.env)))
		k.scopes[sc] = st
	}
	return st
}

// noteAppend marks the late events among events before they are
// committed, and returns what the caller must call once the commit has
// returned (whatever its outcome: a mark of events never stored only
// costs a rebuild).
func (k *visitKeeper) noteAppend(events []analytics.Event) (done func()) {
	k.appends.RLock()
	k.mu.Lock()
	defer k.mu.Unlock()
	var sc visitScope
	var st *visitState
	counts := false // a late event for the kept counts
	for i := range events {
		e := &events[i]
		if e.IsBot {
			continue // kept visits and counts are of human events only
		}
		if st == nil || e.ProductID != sc.product || e.Env != sc.env {
			sc = visitScope{e.ProductID, e.Env}
			st = k.state(sc)
		}
		if st.kept && e.Timestamp.Before(st.settled) {
			k.markLate(st, e.Timestamp)
		}
		if e.Timestamp.Before(st.counted) {
			if !counts {
				k.counts.mu.Lock()
				k.counts.busy++
				counts = true
			}
			k.counts.dropFrom(sc.product, sc.env, hourOf(e.Timestamp))
		}
	}
	if !counts {
		return k.appends.RUnlock
	}
	k.counts.mu.Unlock()
	return func() {
		k.appends.RUnlock()
		k.counts.lateDone()
	}
}

// markLate lowers st's late mark to t; k.mu must be held.
func (k *visitKeeper) markLate(st *visitState, t time.Time) {
	if !st.hasLate || t.Before(st.late) {
		st.late, st.hasLate = t, true
	}
	st.lateGen++
}

// eventsChanged is what a deletion or rewrite of a scope's events at from
// or later must call before it commits: the kept visits it can touch are
// then not read again, and the next refresh rebuilds them.
func (s *Store) eventsChanged(product int64, env analytics.Env, from time.Time) {
	k := &s.visits
	k.mu.Lock()
	defer k.mu.Unlock()
	if st := k.state(visitScope{product, env}); st.kept {
		k.markLate(st, from)
	}
}

// forgetVisits stops trusting every kept visit: after a reopening, the
// file may not hold what was noted.
func (k *visitKeeper) forgetVisits() {
	k.table.Lock()
	defer k.table.Unlock()
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, st := range k.scopes {
		st.kept, st.counted = false, time.Time{}
	}
	// Then the kept counts: a query that read the old counted time keeps
	// nothing (counts.go).
	k.counts.changing(0)()
}

// reach is the earliest start of a visit that an event at late can touch:
// late itself, or the start of a kept visit of sc that ends less than
// SessionGap before it. k.table must be held.
func (s *Store) reach(ctx context.Context, q querier, sc visitScope, late time.Time) (time.Time, error) {
	var first sql.NullTime
	err := q.QueryRowContext(ctx, `SELECT min(start) FROM visits WHERE product_id = $1 AND env = $2 AND "end" > $3::TIMESTAMP`,
		sc.product, string(sc.env), late.Add(-analytics.SessionGap).UTC()).Scan(&first)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading kept visits: %w", err)
	}
	if first.Valid && first.Time.Before(late) {
		return first.Time.UTC(), nil
	}
	return late, nil
}

// querier is what reach reads through: the database or one connection.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// keptSessions answers q with the kept visits before the horizon and the
// statement from there on, or says (false) that the statement must answer
// it all.
func (s *Store) keptSessions(ctx context.Context, q analytics.SessionsQuery) (analytics.SessionsAnswer, bool, error) {
	// A filter keeps a visit when any of its events passes, which one row
	// per visit cannot tell; an entry or exit page filter could be read
	// from the row, but is rare enough to take the statement too.
	if len(q.Filters) > 0 || len(q.Pages) > 0 {
		return analytics.SessionsAnswer{}, false, nil
	}
	k := &s.visits
	if !k.table.TryRLock() {
		return analytics.SessionsAnswer{}, false, nil // a refresh is changing the table
	}
	defer k.table.RUnlock()
	sc := visitScope{q.ProductID, q.Env}
	k.mu.Lock()
	st := k.scopes[sc]
	if st == nil || !st.kept {
		k.mu.Unlock()
		return analytics.SessionsAnswer{}, false, nil
	}
	horizon, late, hasLate, gen := st.horizon, st.late, st.hasLate, st.lateGen
	k.mu.Unlock()
	if hasLate {
		r, err := s.reach(ctx, s.db, sc, late)
		if err != nil {
			return analytics.SessionsAnswer{}, false, err
		}
		horizon = minTime(horizon, r)
	}
	if !horizon.After(q.From) {
		return analytics.SessionsAnswer{}, false, nil
	}
	until := minTime(horizon, q.To)
	// The statement reads events up to SessionLookahead past the range,
	// which cuts a visit running longer; the table holds it whole. (The
	// casts type the parameters: see builder.ts.)
	var cut bool
	err := s.db.QueryRowContext(ctx, `SELECT count(*) > 0 FROM visits WHERE product_id = $1 AND env = $2
		AND start >= $3::TIMESTAMP AND start < $4::TIMESTAMP AND "end" >= $5::TIMESTAMP`, q.ProductID, string(q.Env), q.From.UTC(), until.UTC(),
		q.To.Add(analytics.SessionLookahead).UTC()).Scan(&cut)
	if err != nil {
		return analytics.SessionsAnswer{}, false, fmt.Errorf("reading kept visits: %w", err)
	}
	if cut {
		return analytics.SessionsAnswer{}, false, nil
	}
	res, err := s.sessions(ctx, q, until)
	if err != nil {
		return analytics.SessionsAnswer{}, false, err
	}
	k.mu.Lock()
	changed := st.lateGen != gen
	k.mu.Unlock()
	if changed {
		// An append marked a late event while the statement ran, which
		// may have read it without the horizon it lowers.
		return analytics.SessionsAnswer{}, false, nil
	}
	k.answered.Add(1)
	return res, true, nil
}

// keptVisits returns a SELECT of the kept visits of q's scope that start
// in the range before until, as rows of the statement's visits. Its
// parameters are bound once, so the text may be used more than once.
func keptVisits(b *builder, q analytics.SessionsQuery, until time.Time) string {
	return "SELECT uid, start, epoch_us(\"end\") - epoch_us(start), pageviews," +
		" (pageviews <= 1 AND interactions = 0)::BIGINT, entry, exit FROM visits WHERE " + keptWhere(b, q, until)
}

// keptWhere is the condition of the kept visits of q's scope that start in
// the range before until.
func keptWhere(b *builder, q analytics.SessionsQuery, until time.Time) string {
	return "product_id = " + b.arg(q.ProductID) + " AND env = " + b.arg(string(q.Env)) +
		" AND start >= " + b.ts(q.From) + " AND start < " + b.ts(until)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// RefreshVisits extends the kept visits of every product and environment
// up to the settled time settled (the server passes now − 30 minutes):
// it applies the late marks, then keeps the visits that closed before
// settled. It reports how many visits it added. Queries go on meanwhile;
// those that meet it changing the table answer from events alone.
func (s *Store) RefreshVisits(ctx context.Context, settled time.Time) (int64, error) {
	k := &s.visits
	k.refresh.Lock()
	defer k.refresh.Unlock()
	if err := s.dictionaries(ctx); err != nil {
		return 0, err
	}
	if err := s.listScopes(ctx); err != nil {
		return 0, err
	}
	k.mu.Lock()
	scopes := make([]visitScope, 0, len(k.scopes))
	for sc := range k.scopes {
		scopes = append(scopes, sc)
	}
	k.mu.Unlock()
	slices.SortFunc(scopes, func(a, b visitScope) int {
		if a.product != b.product {
			return int(a.product - b.product)
		}
		return compareStrings(string(a.env), string(b.env))
	})
	var added int64
	for _, sc := range scopes {
		n, err := s.refreshScope(ctx, sc, settled.UTC())
		added += n
		if err != nil {
			return added, fmt.Errorf("keeping visits of product %d (%s): %w", sc.product, sc.env, err)
		}
	}
	if added >= checkpointVisits {
		// Rows in the write-ahead log are read uncompressed, without zone
		// maps, and deleted ones still scanned: after building many, fold
		// them into the file as the idle checkpoint does for events. A
		// checkpoint that cannot run now is left to the next one.
		s.db.ExecContext(ctx, "CHECKPOINT")
	}
	return added, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// listScopes reads, once, the products and environments of the events
// stored before the store opened.
func (s *Store) listScopes(ctx context.Context) error {
	k := &s.visits
	k.mu.Lock()
	listed := k.listed
	k.mu.Unlock()
	if listed {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT product_id, env FROM events`)
	if err != nil {
		return fmt.Errorf("listing event scopes: %w", err)
	}
	defer rows.Close()
	var scopes []visitScope
	for rows.Next() {
		var sc visitScope
		var env string
		if err := rows.Scan(&sc.product, &env); err != nil {
			return fmt.Errorf("listing event scopes: %w", err)
		}
		sc.env = analytics.Env(env)
		scopes = append(scopes, sc)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing event scopes: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, sc := range scopes {
		k.state(sc)
	}
	k.listed = true
	return nil
}

// refreshScope is RefreshVisits for one scope.
func (s *Store) refreshScope(ctx context.Context, sc visitScope, settled time.Time) (added int64, err error) {
	k := &s.visits
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	// Any failure leaves the scope's rows untrusted until a refresh
	// builds them again.
	k.mu.Lock()
	st := k.state(sc)
	k.mu.Unlock()
	defer func() {
		if err != nil {
			k.mu.Lock()
			st.kept = false
			k.mu.Unlock()
		}
	}()

	// 1. Forget the horizons an earlier close saved if the open could not,
	// then apply the late marks, or start over.
	if k.stale {
		if _, err := conn.ExecContext(ctx, `DELETE FROM visit_horizons`); err != nil {
			return 0, fmt.Errorf("dropping saved horizons: %w", err)
		}
		k.stale = false
	}
	horizon, err := s.applyLate(ctx, conn, sc, st)
	if err != nil {
		return 0, err
	}
	if !settled.Add(-analytics.SessionGap).After(horizon) {
		return 0, nil
	}
	// 2. From now on an append of an event before settled is late; wait
	// for the appends that took the older settled time to commit.
	k.mu.Lock()
	if settled.After(st.settled) {
		st.settled = settled
	}
	k.mu.Unlock()
	k.appends.Lock()
	k.appends.Unlock() //nolint:staticcheck // an empty critical section: a barrier
	k.mu.Lock()
	if settled.After(st.counted) {
		st.counted = settled
	}
	k.mu.Unlock()
	// 3. Build the visits that start at the horizon or later from the
	// events before settled, outside the table's lock.
	var b builder
	session, err := b.property(analytics.Property{Key: analytics.SessionIDProperty})
	if err != nil {
		return 0, err
	}
	b.Write("CREATE OR REPLACE TEMP TABLE visits_new AS WITH e AS (SELECT uid, coalesce(", session, ", '') AS sid, ts,",
		" coalesce(path, '') AS path, ")
	s.writeVisitKind(&b)
	b.Write(" AS kind FROM events WHERE product_id = ", b.arg(sc.product), " AND env = ", b.arg(string(sc.env)),
		" AND ts < ", b.arg(settled))
	if !horizon.IsZero() {
		b.Write(" AND ts >= ", b.arg(horizon.Add(-analytics.SessionGap)))
	}
	// The same visits as the sessions statement's (sessions.go).
	b.Write(" AND NOT is_bot)",
		", g AS (SELECT *, CASE WHEN epoch_us(ts) - epoch_us(lag(ts) OVER w) < ", b.arg(analytics.SessionGap.Microseconds()),
		" THEN 0 ELSE 1 END AS new FROM e WINDOW w AS (PARTITION BY uid, sid ORDER BY ts))",
		", n AS (SELECT *, sum(new) OVER (PARTITION BY uid, sid ORDER BY ts) AS vn FROM g)",
		" SELECT uid, sid, min(ts) AS start, max(ts) AS \"end\", ", visitFigures, ",",
		" epoch_us(max(ts)) + ", b.arg(analytics.SessionGap.Microseconds()), " <= epoch_us(", b.arg(settled), "::TIMESTAMP) AS closed",
		" FROM n GROUP BY uid, sid, vn HAVING min(ts) >= ", b.arg(horizon))
	if _, err := conn.ExecContext(ctx, b.SQL(), b.Args()...); err != nil {
		return 0, fmt.Errorf("building visits: %w", err)
	}
	defer conn.ExecContext(context.Background(), `DROP TABLE IF EXISTS visits_new`)
	// 4. Keep the closed ones before the new horizon, and move it. (Every
	// visit that starts before it is closed: the horizon is at most the
	// earliest start of an open one.) In order of start, so that a range
	// reads only the row groups of its days.
	k.table.Lock()
	defer k.table.Unlock()
	var open sql.NullTime
	if err := conn.QueryRowContext(ctx, `SELECT min(start) FILTER (WHERE NOT closed) FROM visits_new`).Scan(&open); err != nil {
		return 0, fmt.Errorf("building visits: %w", err)
	}
	next := settled.Add(-analytics.SessionGap)
	if open.Valid {
		next = minTime(next, open.Time.UTC())
	}
	res, err := conn.ExecContext(ctx, `INSERT INTO visits SELECT $1, $2, uid, sid, start, "end", pageviews, interactions, entry, exit
		FROM visits_new WHERE closed AND start < $3 ORDER BY start`, sc.product, string(sc.env), next)
	if err != nil {
		return 0, fmt.Errorf("keeping visits: %w", err)
	}
	added, _ = res.RowsAffected()
	k.mu.Lock()
	st.horizon = next
	k.mu.Unlock()
	return added, nil
}

// writeVisitKind writes what an event is to its visit, as kind: 0 a page
// view, 1 an event that is no interaction (analytics.NonInteractiveEvents),
// 2 an interaction. The refresh and the retention drop's repair
// (retention.go) share it, and visitFigures, so that they count alike.
func (s *Store) writeVisitKind(b *builder) {
	b.Write("CASE WHEN eid = ", b.eid(s.eventID(analytics.PageviewEvent)), " THEN 0 WHEN eid IN (")
	for i, name := range analytics.NonInteractiveEvents {
		if i > 0 {
			b.Write(", ")
		}
		b.Write(b.eid(s.eventID(name)))
	}
	b.Write(") THEN 1 ELSE 2 END")
}

// visitFigures are a visit's figures from its events' kind, ts and path.
const visitFigures = `count(*) FILTER (WHERE kind = 0) AS pageviews, count(*) FILTER (WHERE kind = 2) AS interactions,
	arg_min(path, (ts, path)) FILTER (WHERE kind = 0) AS entry, arg_max(path, (ts, path)) FILTER (WHERE kind = 0) AS exit`

// applyLate deletes the kept visits of sc that a late mark can touch and
// lowers the horizon to the earliest of them, or, when nothing is kept
// yet, deletes them all and starts from the first event. It returns the
// horizon.
func (s *Store) applyLate(ctx context.Context, conn *sql.Conn, sc visitScope, st *visitState) (time.Time, error) {
	k := &s.visits
	k.table.Lock()
	defer k.table.Unlock()
	k.mu.Lock()
	kept, horizon, late, hasLate := st.kept, st.horizon, st.late, st.hasLate
	k.mu.Unlock()
	from := time.Time{}
	switch {
	case !kept:
	case hasLate:
		r, err := s.reach(ctx, conn, sc, late)
		if err != nil {
			return time.Time{}, err
		}
		from = minTime(horizon, r)
	default:
		return horizon, nil
	}
	del := `DELETE FROM visits WHERE product_id = $1 AND env = $2`
	args := []any{sc.product, string(sc.env)}
	if !from.IsZero() {
		del += ` AND start >= $3`
		args = append(args, from.UTC())
	}
	if _, err := conn.ExecContext(ctx, del, args...); err != nil {
		return time.Time{}, fmt.Errorf("dropping kept visits: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// A mark noted since it was read is at least as late as this one or
	// earlier; keep the earlier one for the next refresh.
	if st.hasLate && !st.late.Before(late) {
		st.hasLate = false
	}
	st.kept, st.horizon = true, from
	return from, nil
}

// Across a restart. A clean close (saveVisits) writes each kept scope's
// horizon and settled time into visit_horizons (migration 0033), in one
// transaction with the deletion of the kept visits that a late mark not yet
// applied can touch, so the saved horizon holds without the marks, which
// live in memory. The next open (loadVisits) reads the rows and deletes
// them in one transaction, with the visits that start at or after each
// horizon (a refresh may have added some after the save): from then on
// the table is trusted below the horizon as if no restart had happened,
// and an event appended with a time before the settled time, the spool's
// backlog included (it loads through AppendEvents), is a late mark as
// before. A store that did not close cleanly left no row: its scopes are
// built again from their first event, so a crash between a write of the
// table and of a horizon cannot leave the table claiming visits it does
// not hold. Any other writer of the file opens it through this store, so
// it notes its own late events and saves the horizons it lowered.

// loadVisits takes the horizons a clean close saved and trusts the kept
// visits below them. When it cannot delete the rows (a full disk), it
// trusts nothing, and the refreshes delete them before they change the
// table (k.stale), so that a crash later cannot revive them.
func (s *Store) loadVisits(ctx context.Context) error {
	k := &s.visits
	if err := s.pool.writable(); err != nil {
		k.stale = true
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reading kept visits' horizons: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT product_id, env, horizon, settled FROM visit_horizons`)
	if err != nil {
		return fmt.Errorf("reading kept visits' horizons: %w", err)
	}
	type saved struct {
		sc               visitScope
		horizon, settled time.Time
	}
	var all []saved
	for rows.Next() {
		var v saved
		var env string
		if err := rows.Scan(&v.sc.product, &env, &v.horizon, &v.settled); err != nil {
			rows.Close()
			return fmt.Errorf("reading kept visits' horizons: %w", err)
		}
		v.sc.env, v.horizon, v.settled = analytics.Env(env), v.horizon.UTC(), v.settled.UTC()
		all = append(all, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading kept visits' horizons: %w", err)
	}
	if len(all) == 0 {
		return nil
	}
	for _, v := range all {
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND env = $2 AND start >= $3`,
			v.sc.product, string(v.sc.env), v.horizon); err != nil {
			return fmt.Errorf("reading kept visits' horizons: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM visit_horizons`); err != nil {
		return fmt.Errorf("reading kept visits' horizons: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("reading kept visits' horizons: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, v := range all {
		st := k.state(v.sc)
		st.kept, st.horizon, st.settled = true, v.horizon, v.settled
	}
	k.restored.Add(int64(len(all)))
	return nil
}

// saveVisits writes the horizons of the kept scopes for the next open, on
// a clean close once no append is left. A failure only costs a rebuild
// after the restart: no row is then written.
func (s *Store) saveVisits(ctx context.Context) error {
	k := &s.visits
	k.refresh.Lock()
	defer k.refresh.Unlock()
	k.table.Lock()
	defer k.table.Unlock()
	if s.pool.writable() != nil {
		return nil // the next open builds the visits again
	}
	k.mu.Lock()
	saved := map[visitScope]visitState{}
	for sc, st := range k.scopes {
		if st.kept && !st.horizon.IsZero() {
			saved[sc] = *st
		}
	}
	k.mu.Unlock()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("saving kept visits' horizons: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("saving kept visits' horizons: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM visit_horizons`); err != nil {
		return fmt.Errorf("saving kept visits' horizons: %w", err)
	}
	for sc, st := range saved {
		horizon := st.horizon
		if st.hasLate {
			// The mark dies with the process: drop what it can touch now.
			r, err := s.reach(ctx, tx, sc, st.late)
			if err != nil {
				return err
			}
			horizon = minTime(horizon, r)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM visits WHERE product_id = $1 AND env = $2 AND start >= $3`,
			sc.product, string(sc.env), horizon.UTC()); err != nil {
			return fmt.Errorf("saving kept visits' horizons: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO visit_horizons VALUES ($1, $2, $3, $4)`,
			sc.product, string(sc.env), horizon.UTC(), st.settled.UTC()); err != nil {
			return fmt.Errorf("saving kept visits' horizons: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("saving kept visits' horizons: %w", err)
	}
	return nil
}
