package duckdb

import (
	"context"
	"fmt"

	"strata/internal/analytics"
)

// GoalConversions counts the goals of docs/queries.md, "Goals", in one
// statement. The inner aggregate makes one row per user of the range's
// human page views and goal events: whether the user is a visitor (a
// page view that passes the filters), their events of each goal and,
// with a breakdown, the property on their first page view (of equal
// times the least value, by arg_min over (ts, value) as entry pages are
// chosen). The outer query sums those rows: once for the totals, and
// with a breakdown again by value, the top Limit values kept.
func (s *Store) GoalConversions(ctx context.Context, q analytics.GoalsQuery) (_ analytics.GoalsAnswer, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return analytics.GoalsAnswer{}, err
	}
	var b builder
	pv := b.eid(s.eventID(analytics.PageviewEvent))
	b.Write("WITH u AS MATERIALIZED (SELECT uid, count(*) FILTER (WHERE eid = ", pv)
	for _, f := range q.Filters {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return analytics.GoalsAnswer{}, err
		}
	}
	b.Write(") AS m")
	if q.Breakdown != nil {
		col, err := b.property(*q.Breakdown)
		if err != nil {
			return analytics.GoalsAnswer{}, err
		}
		v := "coalesce(" + col + ", '')"
		b.Write(", arg_min(", v, ", (ts, ", v, ")) FILTER (WHERE eid = ", pv, ") AS v")
	}
	for i, g := range q.Goals {
		b.Write(", count(*) FILTER (WHERE eid = ", b.eid(s.eventID(g.Event)))
		if g.PathRegex != "" {
			b.Write(" AND path <> '' AND regexp_matches(path, ", b.arg(g.PathRegex), ")")
		}
		b.Printf(") AS g%d", i)
	}
	b.Write(" FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid IN (", pv)
	for _, g := range q.Goals {
		b.Write(", ", b.eid(s.eventID(g.Event)))
	}
	b.Write(") GROUP BY uid HAVING m > 0)")
	// The totals row: part 0, then the visitors and each goal's converted
	// visitors and conversions.
	b.Write(" SELECT 0 AS part, '' AS value, count(*) AS visitors")
	for i := range q.Goals {
		b.Printf(", count(*) FILTER (WHERE g%d > 0), coalesce(sum(g%d), 0)::BIGINT", i, i)
	}
	b.Write(" FROM u")
	if q.Breakdown != nil {
		b.Write(" UNION ALL (SELECT 1, v, count(*), count(*) FILTER (WHERE g0 > 0) AS conv, coalesce(sum(g0), 0)::BIGINT",
			" FROM u GROUP BY v ORDER BY conv DESC, count(*) DESC, v LIMIT ", b.arg(q.Limit), ")")
	}
	rows, err := s.query(ctx, &b)
	if err != nil {
		return analytics.GoalsAnswer{}, fmt.Errorf("counting goal conversions: %w", err)
	}
	defer rows.Close()
	var res analytics.GoalsAnswer
	for rows.Next() {
		var part int
		var value string
		var visitors int64
		counts := make([]analytics.GoalCounts, len(q.Goals))
		dest := []any{&part, &value, &visitors}
		for i := range counts {
			dest = append(dest, &counts[i].Converted, &counts[i].Conversions)
		}
		if err := rows.Scan(dest...); err != nil {
			return analytics.GoalsAnswer{}, fmt.Errorf("counting goal conversions: %w", err)
		}
		if part == 0 {
			res.Visitors, res.Goals = visitors, counts
		} else {
			res.Rows = append(res.Rows, analytics.GoalRow{Value: value, Visitors: visitors, GoalCounts: counts[0]})
		}
	}
	if err := rows.Err(); err != nil {
		return analytics.GoalsAnswer{}, fmt.Errorf("counting goal conversions: %w", err)
	}
	res.SortRows()
	return res, nil
}
