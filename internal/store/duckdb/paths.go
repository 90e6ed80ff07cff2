package duckdb

import (
	"context"
	"database/sql"
	"fmt"

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

// pathRows writes the common table expressions of a paths statement, the
// last of which, gl, holds each user's path: (uid, step, t, g), g the
// node's name or NULL for the step's other node, t its event's time in
// Unix microseconds.
//
//   - e: the node events of the range: one product, environment and
//     range, no bots, the kind's events, every filter.
//   - g: each event's gap to the user's event before it and that event's
//     name, in the order (time, name).
//   - k: the events left once a repeat of the name before it in the same
//     visit is dropped, each with its visit's number: a running count of
//     the events that start one (the first, or SessionGap after the one
//     before). A dropped event never starts a visit, so dropping first
//     leaves the count right.
//   - x: each event's place in its visit.
//   - a: each user's anchor: the visit and place of their first event of
//     the start (or end) name, or without either their first event.
//   - l: the anchor's visit's events from the anchor on (back from it for
//     an end), Depth at most, with their step.
//   - r: each step's names ranked by users, ties by name.
//   - gl: l with the names outside each step's Branches first as NULL.
//
// The windows order by (t, n), unique per user once repeats are dropped,
// so that the visits and places do not depend on the order DuckDB reads
// events of the same microsecond in.
func (s *Store) pathRows(b *builder, q analytics.PathsQuery) error {
	node := "event"
	kind := ""
	if q.Kind == analytics.PathPageviews {
		node = "path"
		kind = " AND eid = " + b.arg(s.eventID(analytics.PageviewEvent)) + " AND path IS NOT NULL AND path <> ''"
	}
	b.Write("WITH e AS (SELECT uid, epoch_us(ts) AS t, ", node, " AS n FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot", kind)
	for _, f := range q.Filters {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return err
		}
	}
	gap := b.arg(analytics.SessionGap.Microseconds())
	b.Write(")",
		", g AS (SELECT uid, t, n, t - lag(t) OVER w AS d, lag(n) OVER w AS pn FROM e WINDOW w AS (PARTITION BY uid ORDER BY t, n))",
		", k AS (SELECT uid, t, n, sum(CASE WHEN d IS NULL OR d >= ", gap, " THEN 1 ELSE 0 END)",
		" OVER (PARTITION BY uid ORDER BY t, n ROWS UNBOUNDED PRECEDING) AS v FROM g WHERE d IS NULL OR d >= ", gap, " OR n <> pn)",
		", x AS (SELECT uid, t, n, v, row_number() OVER (PARTITION BY uid, v ORDER BY t, n) AS i FROM k)")
	anchor := q.Start
	if q.Backward() {
		anchor = q.End
	}
	if anchor != "" {
		b.Write(", a AS (SELECT uid, arg_min(v, t) AS av, arg_min(i, t) AS ai FROM x WHERE n = ", b.arg(anchor), " GROUP BY uid)")
	} else {
		b.Write(", a AS (SELECT DISTINCT uid, 1 AS av, 1 AS ai FROM x)")
	}
	depth := b.arg(q.Depth)
	if q.Backward() {
		b.Write(", l AS (SELECT x.uid, a.ai - x.i + 1 AS step, x.t, x.n FROM x JOIN a ON x.uid = a.uid AND x.v = a.av",
			" WHERE x.i <= a.ai AND x.i > a.ai - ", depth, ")")
	} else {
		b.Write(", l AS (SELECT x.uid, x.i - a.ai + 1 AS step, x.t, x.n FROM x JOIN a ON x.uid = a.uid AND x.v = a.av",
			" WHERE x.i >= a.ai AND x.i < a.ai + ", depth, ")")
	}
	b.Write(", r AS (SELECT step, n, row_number() OVER (PARTITION BY step ORDER BY count(*) DESC, n) AS rk FROM l GROUP BY step, n)",
		", gl AS (SELECT l.uid, l.step, l.t, CASE WHEN r.rk <= ", b.arg(q.Branches), " THEN l.n END AS g FROM l JOIN r ON r.step = l.step AND r.n = l.n)")
	return nil
}
