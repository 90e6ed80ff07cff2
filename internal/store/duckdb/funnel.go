package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// Funnel computes the funnel as a chain of steps on the dense user id.
// Step 0 is each user's first step-0 event in the range; step N joins the
// users of step N-1 to their step-N events strictly after the previous
// step's time and within the window, and keeps the earliest. Each step's
// scan is also bounded by the latest time it could hold (the range's end
// plus N windows), so DuckDB skips row groups outside it.
//
// Step times are integer microseconds, and the window test is written as
// one difference (epoch_us(e.ts) - p.t BETWEEN 1 AND window) rather than
// two comparisons: DuckDB would move each comparison into the join as a
// condition, and a join with more than the one equality on the dense id
// cannot be answered by its perfect-hash (array) join. Integer arithmetic
// also avoids adding an INTERVAL per row. Together: about a fifth less
// time than the comparison join (docs/benchmarks.md).
func (s *Store) Funnel(ctx context.Context, q analytics.FunnelQuery) (_ []int64, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	act, err := b.newActor(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	// A step's actor is the event's uid (as the step before it had it);
	// a group key is taken from the step before, not read again.
	id, next := act.col(), "e.uid"
	if id != "uid" {
		next = "p." + id
	}
	win := b.arg(q.Window.Microseconds())
	b.Write("WITH s0 AS (SELECT ", act.selected(""), ", min(epoch_us(ts)) AS t FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid = ", b.arg(s.eventID(q.Steps[0])), act.present(""))
	if err := stepFilters(&b, q.StepFilter(0)); err != nil {
		return nil, err
	}
	b.Write(" GROUP BY ", id, ")")
	for i := 1; i < len(q.Steps); i++ {
		b.Printf(", s%d AS (SELECT %s, min(epoch_us(e.ts)) AS t FROM events e JOIN s%d p ON %s = p.%s WHERE ", i, next, i-1, act.expr("e."), id)
		b.scope("e.", q.EventRange, q.From, q.To.Add(time.Duration(i)*q.Window))
		b.Write(" AND NOT e.is_bot AND e.eid = ", b.arg(s.eventID(q.Steps[i])),
			" AND epoch_us(e.ts) - p.t BETWEEN 1 AND ", win)
		if err := stepFilters(&b, q.StepFilter(i)); err != nil {
			return nil, err
		}
		b.Write(" GROUP BY ", next, ")")
	}
	b.Write(" SELECT ")
	for i := range q.Steps {
		if i > 0 {
			b.Write(", ")
		}
		b.Printf("(SELECT count(*) FROM s%d)", i)
	}
	counts := make([]int64, len(q.Steps))
	dest := make([]any, len(counts))
	for i := range counts {
		dest[i] = &counts[i]
	}
	rows, err := s.query(ctx, &b)
	if err != nil {
		return nil, fmt.Errorf("computing funnel: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("computing funnel: %w", err)
		}
		return nil, fmt.Errorf("computing funnel: %w", sql.ErrNoRows)
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, fmt.Errorf("computing funnel: %w", err)
	}
	return counts, nil
}

// stepFilters writes a step's filters as further conditions on its events.
// They read only the events table's columns, so they need no alias where a
// step joins the one before it (whose columns are the actor and t).
func stepFilters(b *builder, filters []analytics.Filter) error {
	for _, f := range filters {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return err
		}
	}
	return nil
}
