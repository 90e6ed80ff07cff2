package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

// GoalConversions counts the goals of docs/queries.md, "Goals", in one
// statement of two levels. The inner GROUP BY makes one row per user of
// the range's human page views and goal events: whether the user is a
// visitor (a page view that passes the filters), their events of each
// goal and, with a breakdown, the property on their first page view (the
// first of their (time, value) pairs sorted, so of equal times the least
// value, as entry pages are chosen). On a cluster the shards aggregate
// that level and the initiator merges it, so a user is whole however
// their events were sharded. The outer level makes of each user one row
// for the totals (part 0) and, with a breakdown, one for their value
// (part 1), and sums them; LIMIT BY keeps the top values.
//
// 18.16 has no common table expressions over a subquery, hence the rows
// of two parts from one scan (arrayJoin) rather than two statements.
func (s *Store) GoalConversions(ctx context.Context, q analytics.GoalsQuery) (_ analytics.GoalsAnswer, err error) {
	defer markOutOfMemory(&err)
	for _, f := range q.Filters {
		if err := checkProperty(f.Property); err != nil {
			return analytics.GoalsAnswer{}, err
		}
	}
	var col string
	if q.Breakdown != nil {
		if err := checkProperty(*q.Breakdown); err != nil || q.Breakdown.Column == "" {
			return analytics.GoalsAnswer{}, fmt.Errorf("goal breakdown by %+v: not a column", *q.Breakdown)
		}
		col = columnSQL[q.Breakdown.Column]
	}
	b := s.newBuilder()
	b.Write("SELECT part, value, count() AS visitors")
	for i := range q.Goals {
		b.Printf(", countIf(g%d > 0) AS conv%d, sum(g%d)", i, i, i)
	}
	parts := "[(toUInt8(0), '')]"
	if q.Breakdown != nil {
		parts = "[(toUInt8(0), ''), (toUInt8(1), v)]"
	}
	b.Write(" FROM (SELECT *, arrayJoin(", parts, ") AS r, r.1 AS part, r.2 AS value FROM (SELECT user_id AS u, countIf(event = ",
		b.arg(analytics.PageviewEvent))
	for _, f := range q.Filters {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return analytics.GoalsAnswer{}, err
		}
	}
	b.Write(") AS m")
	if q.Breakdown != nil {
		b.Write(", tupleElement(arrayElement(arraySort(groupArrayIf((ts, ", col, "), event = ", b.arg(analytics.PageviewEvent), ")), 1), 2) AS v")
	}
	for i, g := range q.Goals {
		b.Write(", countIf(event = ", b.arg(g.Event))
		if g.PathRegex != "" {
			b.Write(" AND path != '' AND match(path, ", b.arg(g.PathRegex), ")")
		}
		b.Printf(") AS g%d", i)
	}
	b.Write(" FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND is_bot = 0 AND event IN (", b.arg(analytics.PageviewEvent))
	for _, g := range q.Goals {
		b.Write(", ", b.arg(g.Event))
	}
	b.Write(") GROUP BY u HAVING m > 0)) GROUP BY part, value ORDER BY part, ")
	if len(q.Goals) > 0 {
		b.Write("conv0 DESC, ")
	}
	b.Write("visitors DESC, value LIMIT ", b.arg(q.Limit), " BY part")
	type row struct {
		part     uint8
		value    string
		visitors uint64
		counts   []uint64
	}
	rows, err := queryAll(ctx, s, "counting goal conversions", &b, func(r driver.Rows) (x row, err error) {
		x.counts = make([]uint64, 2*len(q.Goals))
		dest := []any{&x.part, &x.value, &x.visitors}
		for i := range x.counts {
			dest = append(dest, &x.counts[i])
		}
		err = r.Scan(dest...)
		return x, err
	})
	if err != nil {
		return analytics.GoalsAnswer{}, err
	}
	res := analytics.GoalsAnswer{Goals: make([]analytics.GoalCounts, len(q.Goals))}
	for _, x := range rows {
		counts := make([]analytics.GoalCounts, len(q.Goals))
		for i := range counts {
			counts[i] = analytics.GoalCounts{Converted: int64(x.counts[2*i]), Conversions: int64(x.counts[2*i+1])}
		}
		if x.part == 0 {
			res.Visitors, res.Goals = int64(x.visitors), counts
		} else {
			res.Rows = append(res.Rows, analytics.GoalRow{Value: x.value, Visitors: int64(x.visitors), GoalCounts: counts[0]})
		}
	}
	res.SortRows()
	return res, nil
}
