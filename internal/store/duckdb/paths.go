package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"strata/internal/analytics"
)

var _ analytics.PathStore = (*Store)(nil)

// Paths computes the paths of docs/queries.md, "Paths", in one statement
// (pathRows writes all but its last SELECT): the node events are numbered
// into visits by window functions, the anchor of each user is found, the
// path's rows (user, step, node) are kept, each step's nodes ranked, and
// the grouped rows counted twice, by node and by edge (a self-join of the
// path rows on the dense user id and the next step), then named through
// d. The two row sets are told apart by the first column.
func (s *Store) Paths(ctx context.Context, q analytics.PathsQuery) (_ analytics.PathsAnswer, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return analytics.PathsAnswer{}, err
	}
	var b builder
	if err := s.pathRows(&b, q); err != nil {
		return analytics.PathsAnswer{}, err
	}
	b.Write(" SELECT x.p, x.step, f.n, t.n, x.users FROM (SELECT 0 AS p, step, g AS g1, NULL::INTEGER AS g2, count(*) AS users FROM gl GROUP BY step, g",
		" UNION ALL SELECT 1, a.step, a.g, z.g, count(*) FROM gl a JOIN gl z ON z.uid = a.uid AND z.step = a.step + 1",
		" GROUP BY a.step, a.g, z.g) x LEFT JOIN d f ON f.k = x.g1 LEFT JOIN d t ON t.k = x.g2")
	rows, err := s.query(ctx, &b)
	if err != nil {
		return analytics.PathsAnswer{}, fmt.Errorf("computing paths: %w", err)
	}
	defer rows.Close()
	var res analytics.PathsAnswer
	for rows.Next() {
		var part, step int
		var from, to sql.NullString // NULL: the step's other node
		var users int64
		if err := rows.Scan(&part, &step, &from, &to, &users); err != nil {
			return analytics.PathsAnswer{}, fmt.Errorf("computing paths: %w", err)
		}
		if part == 0 {
			res.Nodes = append(res.Nodes, analytics.PathNode{Step: step, Name: from.String, Other: !from.Valid, Users: users})
			continue
		}
		res.Edges = append(res.Edges, analytics.PathEdge{Step: step, From: from.String, FromOther: !from.Valid,
			To: to.String, ToOther: !to.Valid, Users: users})
	}
	if err := rows.Err(); err != nil {
		return analytics.PathsAnswer{}, fmt.Errorf("computing paths: %w", err)
	}
	return res, nil
}

// PathUsers lists a page of the users who reached a node, from the path
// rows Paths counts, named through the dense ids' table.
func (s *Store) PathUsers(ctx context.Context, q analytics.PathUsersQuery) (_ []analytics.PathUser, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	if err := s.pathRows(&b, q.PathsQuery); err != nil {
		return nil, err
	}
	b.Write(" SELECT u.distinct_id, gl.t FROM gl JOIN ", uidsTable, " u ON u.product_id = ", b.arg(q.ProductID),
		" AND u.uid = gl.uid WHERE gl.step = ", b.arg(q.Step))
	if q.Other {
		b.Write(" AND gl.g IS NULL")
	} else {
		b.Write(" AND gl.g = (SELECT k FROM d WHERE n = ", b.arg(q.Name), ")")
	}
	if q.BeforeMicros != 0 {
		b.Write(" AND (gl.t < ", b.arg(q.BeforeMicros), " OR (gl.t = ", b.arg(q.BeforeMicros), " AND u.distinct_id > ", b.arg(q.BeforeID), "))")
	}
	b.Write(" ORDER BY gl.t DESC, u.distinct_id LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing a path node's users", &b, func(r scanner) (u analytics.PathUser, err error) {
		err = r.Scan(&u.DistinctID, &u.Micros)
		return u, err
	})
}

// pathHorizon is how far from its anchor a path is first looked for: the
// windows that cut visits sort only the events within it, and only the
// users whose path it may not hold are read again without it. At 10 M
// events, sorting every node event of the range by user and time took
// most of the statement's time (docs/benchmarks.md, "Paths"). A variable
// only so that TestPathsHorizons can hold short horizons to the reference.
var pathHorizon = 2 * time.Hour

// pathRows writes the common table expressions of a paths statement, the
// last of which, gl, holds each user's path: (uid, step, t, g), g the
// node's number in d or NULL for the step's other node, t its event's
// time in Unix microseconds (the first of a run of repeats). d names the
// numbers: (n, k), k a node's rank among the names by bytewise order, so
// that the windows sort and compare integers rather than strings
// (docs/benchmarks.md, "Paths").
//
//   - e: the node events of the range: one product, environment and
//     range, no bots, the kind's events, every filter; n is the path, or
//     for events the event's eid (its name is in d).
//   - d: the nodes' numbers: for pages the range's distinct paths, for
//     events the database's event names (event_names, keyed by eid).
//   - a: each user's anchor time: their first event of the start (or end)
//     name, or without either their first event.
//   - s: the events from the anchor on (back from it, for an end) within
//     pathHorizon of it, by number k. The anchor is their first in the
//     order the path runs: (t, k) forward, (t, k) descending back from an
//     end.
//   - w: s in that order, each event with the flags of one ordered pass
//     of lag and lead (f: the user's first, z: their last, rs: it starts
//     a run of one name, re: it ends one; a gap of 30 minutes or more
//     ends a visit and so a run), and two running counts: v, the visit,
//     and c, the run. The anchor's visit is v = 1, and run c is the
//     path's step c. The counts run over every user; each user's own start
//     from the values at their first event (f).
//   - i: the users whose path s may not hold whole, with their anchor
//     time: at their last event of s still in the anchor's visit, at most
//     Depth runs, and within SessionGap of the horizon (so the visit may
//     go on past it). Grouped (one row a user already) for DuckDB's
//     estimate: a grouping is estimated smaller than e, so the join that
//     reads these users' events builds its table on i, not on e.
//   - w2: the same numbering for those users over all their events from
//     the anchor on, without the horizon.
//   - l: each user's path, one row per step: a run of visit 1 up to
//     Depth, with the time of its first event: the run's first row going
//     forward, its last going back.
//   - r: each step's numbers ranked by users, ties by number (by name).
//   - gl: l with the numbers outside each step's Branches as NULL.
//
// The window order (t, k) is unique per user up to identical events, which
// only ever count as repeats, so the numbering does not depend on the
// order DuckDB reads events of the same microsecond in.
func (s *Store) pathRows(b *builder, q analytics.PathsQuery) error {
	node, key, dict := "eid", "eid", "SELECT eid, name AS n, (row_number() OVER (ORDER BY name))::INTEGER AS k FROM "+eventNamesTable
	kind := ""
	if q.Kind == analytics.PathPageviews {
		// One row unnested, rather than a DISTINCT: DuckDB estimates the
		// DISTINCT as large as e, and joins of e with it by far more rows
		// than e has (the estimates overflow, and it then built a hash
		// table of 4 M events to find the few users of i).
		node, key, dict = "path", "n", "SELECT unnest(ns) AS n, unnest(range(1, len(ns) + 1))::INTEGER AS k FROM (SELECT list(DISTINCT n ORDER BY n) AS ns FROM e)"
		kind = " AND eid = " + b.eid(s.eventID(analytics.PageviewEvent)) + " AND path IS NOT NULL AND path <> ''"
	}
	b.Write("WITH e AS MATERIALIZED (SELECT uid, epoch_us(ts) AS t, ", node, " AS n FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot", kind)
	for _, f := range q.Filters {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return err
		}
	}
	b.Write("), d AS MATERIALIZED (", dict, ")")
	anchor := q.Start
	if q.Backward() {
		anchor = q.End
	}
	b.Write(", a AS (SELECT uid, min(t) AS ta FROM e")
	if anchor != "" {
		if q.Kind == analytics.PathPageviews {
			b.Write(" WHERE n = ", b.arg(anchor))
		} else {
			b.Write(" WHERE n = ", b.eid(s.eventID(anchor)))
		}
	}
	b.Write(" GROUP BY uid)")
	// from is the condition that an event of e (named d.n) is the anchor
	// or comes after it on the path.
	var from string
	switch {
	case q.Backward():
		from = "(e.t < a.ta OR (e.t = a.ta AND d.n <= " + b.arg(anchor) + "))"
	case anchor != "":
		from = "(e.t > a.ta OR (e.t = a.ta AND d.n >= " + b.arg(anchor) + "))"
	default:
		from = "e.t >= a.ta"
	}
	horizon := b.arg(pathHorizon.Microseconds())
	within, order, first := "e.t < a.ta + "+horizon, "t, k", "rs"
	if q.Backward() {
		within, order, first = "e.t > a.ta - "+horizon, "t DESC, k DESC", "re"
	}
	gap := b.arg(analytics.SessionGap.Microseconds())
	depth := b.arg(q.Depth)
	// named joins an event of e to its number. Every node is in d, so the
	// join is inner in effect; LEFT keeps DuckDB's estimate of its rows
	// that of the events rather than of the single row unnested.
	named := "LEFT JOIN d ON d." + key + " = e.n"
	// numbered writes, as CTE name, src's events (uid, t, k) with their
	// flags and counts. The windows run over one partition ordered by
	// user first: partitioned by user, DuckDB spent 8.5 s of a 11.5 s
	// statement on half a million partitions of two rows each
	// (docs/benchmarks.md, "Paths"). A user's first event starts a visit
	// and a run, and their last ends both, so the flags need no partition.
	numbered := func(name, src string) string {
		return ", " + name + "0 AS MATERIALIZED (SELECT uid, t, k, f, z, rs, re," +
			" sum(vs::INTEGER) OVER wn AS gv, sum(rs::INTEGER) OVER wn AS gc FROM" +
			" (SELECT uid, t, k, f, z, f OR abs(t - pt) >= " + gap + " AS vs, f OR abs(t - pt) >= " + gap + " OR k <> pk AS rs," +
			" z OR abs(nt - t) >= " + gap + " OR nk <> k AS re FROM" +
			" (SELECT uid, t, k, lag(uid) OVER wl IS DISTINCT FROM uid AS f, lead(uid) OVER wl IS DISTINCT FROM uid AS z," +
			" lag(t) OVER wl AS pt, lag(k) OVER wl AS pk, lead(t) OVER wl AS nt, lead(k) OVER wl AS nk FROM " + src +
			" WINDOW wl AS (ORDER BY uid, " + order + ")))" +
			" WINDOW wn AS (ORDER BY uid, " + order + " ROWS UNBOUNDED PRECEDING))" +
			", " + name + " AS (SELECT x.uid, x.t, x.k, x.z, x.rs, x.re, x.gv - m.gv + 1 AS v, x.gc - m.gc + 1 AS c, m.t AS t0" +
			" FROM " + name + "0 x JOIN (SELECT uid, t, gv, gc FROM " + name + "0 WHERE f) m ON m.uid = x.uid)"
	}
	b.Write(", s AS (SELECT e.uid, e.t, d.k FROM e JOIN a ON e.uid = a.uid ", named, " WHERE ", from, " AND ", within, ")",
		numbered("w", "s"),
		", i AS MATERIALIZED (SELECT uid, any_value(t0) AS ta FROM w WHERE z AND v = 1 AND c <= ", depth,
		" AND abs(t - t0) > ", horizon, " - ", gap, " GROUP BY uid)",
		numbered("w2", "(SELECT e.uid, e.t, d.k FROM e JOIN i a ON e.uid = a.uid "+named+" WHERE "+from+")"),
		", l AS (SELECT uid, c AS step, t, k FROM",
		" (SELECT * FROM w WHERE uid NOT IN (SELECT uid FROM i) UNION ALL SELECT * FROM w2)",
		" WHERE v = 1 AND c <= ", depth, " AND ", first, ")",
		", r AS (SELECT step, k, row_number() OVER (PARTITION BY step ORDER BY count(*) DESC, k) AS rk FROM l GROUP BY step, k)",
		", gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= ", b.arg(q.Branches), " THEN l.k END AS g FROM l JOIN r ON r.step = l.step AND r.k = l.k)")
	return nil
}
