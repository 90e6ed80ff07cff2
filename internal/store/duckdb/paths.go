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
// path's rows (user, step, name) are kept, each step's names ranked, and
// the grouped rows counted twice, by node and by edge (a self-join of the
// path rows on the dense user id and the next step). The two row sets are
// told apart by the first column.
func (s *Store) Paths(ctx context.Context, q analytics.PathsQuery) (_ analytics.PathsAnswer, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return analytics.PathsAnswer{}, err
	}
	var b builder
	if err := s.pathRows(&b, q); err != nil {
		return analytics.PathsAnswer{}, err
	}
	b.Write(" SELECT 0, step, g, NULL, count(*) FROM gl GROUP BY step, g",
		" UNION ALL SELECT 1, a.step, a.g, z.g, count(*) FROM gl a JOIN gl z ON z.uid = a.uid AND z.step = a.step + 1",
		" GROUP BY a.step, a.g, z.g")
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
		b.Write(" AND gl.g = ", b.arg(q.Name))
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
// most of the statement's time (docs/benchmarks.md, "Paths").
const pathHorizon = 2 * time.Hour

// pathRows writes the common table expressions of a paths statement, the
// last of which, gl, holds each user's path: (uid, step, t, g), g the
// node's name or NULL for the step's other node, t its event's time in
// Unix microseconds (the first of a run of repeats).
//
//   - e: the node events of the range: one product, environment and
//     range, no bots, the kind's events, every filter.
//   - a: each user's anchor time: their first event of the start (or end)
//     name, or without either their first event.
//   - s: the events from the anchor on (back from it, for an end) within
//     pathHorizon of it. The anchor is their first in the order the path
//     runs: (t, n) forward, (t, n) descending back from an end.
//   - w: s numbered in that order by two running counts: v, the visit
//     (an event 30 minutes or more from the one before starts one, and
//     the anchor does), and c, the run of one name (an event with another
//     name than the one before, or starting a visit, starts one). The
//     anchor's visit is v = 1, and run c is the path's step c.
//   - i: the users whose path s may not hold whole: fewer than Depth+1
//     runs in the anchor's visit, no second visit, and an event within
//     SessionGap of the horizon (so the visit may go on past it).
//   - w2: the same numbering for those users over all their events from
//     the anchor on, without the horizon.
//   - l: each user's path, one row per step: the runs of visit 1 up to
//     Depth, with the name and the first time of the run.
//   - r: each step's names ranked by users, ties by name.
//   - gl: l with the names outside each step's Branches first as NULL.
//
// The window order (t, n) is unique per user up to identical events, which
// only ever count as repeats, so the numbering does not depend on the
// order DuckDB reads events of the same microsecond in.
func (s *Store) pathRows(b *builder, q analytics.PathsQuery) error {
	node := "event"
	kind := ""
	if q.Kind == analytics.PathPageviews {
		node = "path"
		kind = " AND eid = " + b.arg(s.eventID(analytics.PageviewEvent)) + " AND path IS NOT NULL AND path <> ''"
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
	b.Write(")")
	anchor := q.Start
	if q.Backward() {
		anchor = q.End
	}
	b.Write(", a AS (SELECT uid, min(t) AS ta FROM e")
	if anchor != "" {
		b.Write(" WHERE n = ", b.arg(anchor))
	}
	b.Write(" GROUP BY uid)")
	// from is the condition that an event of e is the anchor or comes
	// after it on the path.
	var from string
	switch {
	case q.Backward():
		from = "(e.t < a.ta OR (e.t = a.ta AND e.n <= " + b.arg(anchor) + "))"
	case anchor != "":
		from = "(e.t > a.ta OR (e.t = a.ta AND e.n >= " + b.arg(anchor) + "))"
	default:
		from = "e.t >= a.ta"
	}
	horizon := b.arg(pathHorizon.Microseconds())
	within, order, edge := "e.t < a.ta + "+horizon, "t, n", "max(t) > min(t) + "+horizon+" - "
	if q.Backward() {
		within, order, edge = "e.t > a.ta - "+horizon, "t DESC, n DESC", "min(t) < max(t) - "+horizon+" + "
	}
	gap := b.arg(analytics.SessionGap.Microseconds())
	depth := b.arg(q.Depth)
	// numbered writes, as CTE name, src's events with their visit v and
	// run c counted from each user's first event in the path's order. The
	// windows run over one partition ordered by user first: partitioned by
	// user, DuckDB spent 8.5 s of a 11.5 s statement on half a million
	// partitions of two rows each (docs/benchmarks.md, "Paths"). The
	// counts then run over every user; each user's own start from the
	// values at their first event (min, since they only grow).
	numbered := func(name, src string) string {
		return ", " + name + "0 AS MATERIALIZED (SELECT uid, t, n," +
			" sum(CASE WHEN pu IS DISTINCT FROM uid OR d >= " + gap + " THEN 1 ELSE 0 END) OVER wn AS gv," +
			" sum(CASE WHEN pu IS DISTINCT FROM uid OR d >= " + gap + " OR n <> pn THEN 1 ELSE 0 END) OVER wn AS gc" +
			" FROM (SELECT uid, t, n, lag(uid) OVER wl AS pu, abs(t - lag(t) OVER wl) AS d, lag(n) OVER wl AS pn FROM " + src +
			" WINDOW wl AS (ORDER BY uid, " + order + "))" +
			" WINDOW wn AS (ORDER BY uid, " + order + " ROWS UNBOUNDED PRECEDING))" +
			", " + name + " AS (SELECT x.uid, x.t, x.n, x.gv - m.v0 + 1 AS v, x.gc - m.c0 + 1 AS c FROM " + name + "0 x" +
			" JOIN (SELECT uid, min(gv) AS v0, min(gc) AS c0 FROM " + name + "0 GROUP BY uid) m ON m.uid = x.uid)"
	}
	b.Write(", s AS (SELECT e.uid, e.t, e.n FROM e JOIN a ON e.uid = a.uid WHERE ", from, " AND ", within, ")",
		numbered("w", "s"),
		", i AS (SELECT uid FROM w GROUP BY uid HAVING max(c) FILTER (WHERE v = 1) <= ", depth,
		" AND max(v) = 1 AND ", edge, gap, ")",
		numbered("w2", "(SELECT e.uid, e.t, e.n FROM e JOIN a ON e.uid = a.uid WHERE "+from+" AND e.uid IN (SELECT uid FROM i))"),
		", l AS (SELECT uid, c AS step, min(t) AS t, any_value(n) AS n FROM",
		" (SELECT * FROM w WHERE uid NOT IN (SELECT uid FROM i) UNION ALL SELECT * FROM w2)",
		" WHERE v = 1 AND c <= ", depth, " GROUP BY uid, c)",
		", r AS (SELECT step, n, row_number() OVER (PARTITION BY step ORDER BY count(*) DESC, n) AS rk FROM l GROUP BY step, n)",
		", gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= ", b.arg(q.Branches), " THEN l.n END AS g FROM l JOIN r ON r.step = l.step AND r.n = l.n)")
	return nil
}
