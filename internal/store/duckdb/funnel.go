package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/duckdb/duckdb-go/v2"

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
	if err := s.funnelSteps(&b, q, act); err != nil {
		return nil, err
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

// funnelSteps writes the funnel's steps as the CTEs s0…sN-1, each holding
// the users (column act.col()) who reached the step and their time t of
// it.
func (s *Store) funnelSteps(b *builder, q analytics.FunnelQuery, act actor) error {
	// A step's actor is the event's uid (as the step before it had it);
	// a group key is taken from the step before, not read again.
	id, next := act.col(), "e.uid"
	if id != "uid" {
		next = "p." + id
	}
	win := b.arg(q.Window.Microseconds())
	b.Write("WITH s0 AS (SELECT ", act.selected(""), ", min(epoch_us(ts)) AS t FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid = ", b.eid(s.eventID(q.Steps[0])), act.present(""))
	if err := stepFilters(b, q.StepFilter(0)); err != nil {
		return err
	}
	b.Write(" GROUP BY ", id, ")")
	for i := 1; i < len(q.Steps); i++ {
		b.Printf(", s%d AS (SELECT %s, min(epoch_us(e.ts)) AS t FROM events e JOIN s%d p ON %s = p.%s WHERE ", i, next, i-1, act.expr("e."), id)
		b.scope("e.", q.EventRange, q.From, q.To.Add(time.Duration(i)*q.Window))
		b.Write(" AND NOT e.is_bot AND e.eid = ", b.eid(s.eventID(q.Steps[i])),
			" AND epoch_us(e.ts) - p.t BETWEEN 1 AND ", win)
		if err := stepFilters(b, q.StepFilter(i)); err != nil {
			return err
		}
		b.Write(" GROUP BY ", next, ")")
	}
	return nil
}

// FunnelRows computes the funnel's steps as Funnel does, then the users
// each exclusion leaves out (x0, x1, …: an exclusion event strictly
// between the user's times of its two steps), and counts, for each
// breakdown value, the users left reaching each step: s0 joined to the
// later steps' users by the actor, most step-0 users first, ties by value.
func (s *Store) FunnelRows(ctx context.Context, q analytics.FunnelQuery) (_ []analytics.FunnelRow, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	act, err := b.newActor(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	bv, value := "", "''"
	if q.Breakdown != nil {
		x, err := b.property(*q.Breakdown)
		if err != nil {
			return nil, err
		}
		bv, value = "coalesce("+x+", '')", "s0.bv"
	}
	if err := s.funnelSteps(&b, q, act); err != nil {
		return nil, err
	}
	if bv != "" {
		if err := s.funnelValues(&b, q, act, bv); err != nil {
			return nil, err
		}
		value = "v.bv"
	}
	if err := s.funnelExclusions(&b, q, act); err != nil {
		return nil, err
	}
	b.Write(" SELECT ", value)
	for i := range q.Steps {
		b.Printf(", count(s%d.t)", i)
	}
	funnelUsers(&b, q, act)
	if bv != "" {
		b.Printf(" JOIN v ON v.%s = s0.%s", act.col(), act.col())
	}
	b.Write(" GROUP BY 1 ORDER BY 2 DESC, 1")
	rows, err := s.query(ctx, &b)
	if err != nil {
		return nil, fmt.Errorf("computing funnel: %w", err)
	}
	defer rows.Close()
	fold := analytics.FunnelRows{Limit: q.BreakdownLimit}
	for rows.Next() {
		var value string
		counts := make([]int64, len(q.Steps))
		dest := []any{&value}
		for i := range counts {
			dest = append(dest, &counts[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("computing funnel: %w", err)
		}
		fold.Add(value, counts)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("computing funnel: %w", err)
	}
	return fold.Rows, nil
}

// funnelValues writes, after funnelSteps, the CTE v of each step-0
// user's breakdown value bv (the expression value): of their step-0
// events at t, the least. A second pass over step 0's events, joined on
// the dense id as a step is, costs less than carrying the value through
// s0's aggregate as arg_min(value, (time, value)).
func (s *Store) funnelValues(b *builder, q analytics.FunnelQuery, act actor, value string) error {
	id, next := act.col(), "e.uid"
	if id != "uid" {
		next = "p." + id
	}
	b.Printf(", v AS (SELECT %s, min(%s) AS bv FROM events e JOIN s0 p ON %s = p.%s WHERE ", next, value, act.expr("e."), id)
	b.scope("e.", q.EventRange, q.From, q.To)
	b.Write(" AND NOT e.is_bot AND e.eid = ", b.eid(s.eventID(q.Steps[0])), " AND epoch_us(e.ts) - p.t = 0")
	if err := stepFilters(b, q.StepFilter(0)); err != nil {
		return err
	}
	b.Write(" GROUP BY ", next, ")")
	return nil
}

// FunnelUsers lists a page of one step's users: the funnel's users as
// FunnelRows counts them (funnelUsers, with the breakdown's values v when
// the query keeps some), those at the step (and not at the next, for the
// dropped), joined to their distinct_id, newest first and cut to the page
// in the statement, so that a page is all that reaches Go.
func (s *Store) FunnelUsers(ctx context.Context, q analytics.FunnelUsersQuery) (_ []analytics.FunnelUser, err error) {
	defer markOutOfMemory(&err)
	if q.AggregateBy != "" {
		return nil, errors.New("listing a funnel's users: a funnel of groups has no users to list")
	}
	if q.Step < 0 || q.Step >= len(q.Steps) || (q.Dropped && q.Step == len(q.Steps)-1) {
		return nil, fmt.Errorf("listing a funnel's users: no step %d to list", q.Step)
	}
	b, act, err := s.funnelWith(ctx, q.FunnelQuery)
	if err != nil {
		return nil, err
	}
	byValue := q.Breakdown != nil && (q.BreakdownValue != nil || q.OtherThan != nil)
	if byValue {
		x, err := b.property(*q.Breakdown)
		if err != nil {
			return nil, err
		}
		if err := s.funnelValues(b, q.FunnelQuery, act, "coalesce("+x+", '')"); err != nil {
			return nil, err
		}
	}
	at, next := fmt.Sprintf("s%d.t", q.Step), "NULL"
	if q.Step+1 < len(q.Steps) {
		next = fmt.Sprintf("s%d.t", q.Step+1)
	}
	b.Write(" SELECT u.distinct_id, ", at, ", ", next)
	funnelUsers(b, q.FunnelQuery, act)
	if byValue {
		b.Write(" JOIN v ON v.uid = s0.uid")
	}
	b.Write(" JOIN ", uidsTable, " u ON u.product_id = ", b.arg(q.ProductID), " AND u.uid = s0.uid WHERE ", at, " IS NOT NULL")
	if q.Dropped {
		b.Write(" AND ", next, " IS NULL")
	}
	if q.BreakdownValue != nil && byValue {
		b.Write(" AND v.bv = ", b.arg(*q.BreakdownValue))
	}
	if q.OtherThan != nil && byValue {
		for _, v := range q.OtherThan {
			b.Write(" AND v.bv <> ", b.arg(v))
		}
	}
	if q.BeforeMicros != 0 {
		b.Write(" AND (", at, " < ", b.arg(q.BeforeMicros), " OR (", at, " = ", b.arg(q.BeforeMicros), " AND u.distinct_id > ", b.arg(q.BeforeID), "))")
	}
	b.Write(" ORDER BY ", at, " DESC, u.distinct_id LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing a funnel's users", b, func(r scanner) (u analytics.FunnelUser, err error) {
		var nextT sql.NullInt64
		err = r.Scan(&u.DistinctID, &u.Micros, &nextT)
		u.NextMicros = nextT.Int64
		return u, err
	})
}

// funnelExclusions writes, after funnelSteps, one CTE xK for each
// exclusion: the users with one of its events strictly between their
// times of its two steps.
func (s *Store) funnelExclusions(b *builder, q analytics.FunnelQuery, act actor) error {
	id := act.col()
	for k, x := range q.Exclusions {
		b.Printf(", x%d AS (SELECT DISTINCT a.%s FROM s%d a JOIN s%d c ON c.%s = a.%s JOIN events e ON %s = a.%s WHERE ",
			k, id, x.FromStep, x.ToStep, id, id, act.expr("e."), id)
		b.scope("e.", q.EventRange, q.From, q.To.Add(time.Duration(x.ToStep)*q.Window))
		b.Write(" AND NOT e.is_bot AND e.eid = ", b.eid(s.eventID(x.Event)),
			" AND epoch_us(e.ts) > a.t AND epoch_us(e.ts) < c.t")
		if err := stepFilters(b, x.Filters); err != nil {
			return err
		}
		b.Write(")")
	}
	return nil
}

// funnelUsers writes the FROM clause of a funnel's users: every user of
// step 0 with their later steps' times (NULL where not reached), less
// those an exclusion leaves out.
func funnelUsers(b *builder, q analytics.FunnelQuery, act actor) {
	id := act.col()
	b.Write(" FROM s0")
	for i := 1; i < len(q.Steps); i++ {
		b.Printf(" LEFT JOIN s%d ON s%d.%s = s0.%s", i, i, id, id)
	}
	excluded(b, q, act)
}

// excluded writes the anti-joins that leave out of s0 the users an
// exclusion removes.
func excluded(b *builder, q analytics.FunnelQuery, act actor) {
	id := act.col()
	for k := range q.Exclusions {
		b.Printf(" ANTI JOIN x%d ON x%d.%s = s0.%s", k, k, id, id)
	}
}

// FunnelTimes computes the funnel with its exclusions, as FunnelRows does
// without a breakdown, and for each later step the time its users took
// from the step before: the lower median (quantile_disc's 0.5: the sorted
// times' middle, the lower of two) and the users in each bucket of
// analytics.ConvertBuckets. Each user's time d and bucket b of a step are
// computed once, below the aggregates, and a step's histogram is one
// aggregate of b (a map from bucket to users): at 10 M events a count
// with two comparisons for each bucket, and a sorted list for the median,
// took the statement from 1.2 to 1.9 times the plain funnel's time
// (docs/benchmarks.md, "Funnel views"). With a breakdown the users are
// joined to their row (funnelRowValues) and grouped by it and all
// together at once (GROUPING SETS), so that the whole funnel's medians
// come from the same statement.
func (s *Store) FunnelTimes(ctx context.Context, q analytics.FunnelQuery) (_ analytics.FunnelTimes, err error) {
	defer markOutOfMemory(&err)
	out := analytics.FunnelTimes{Counts: make([]int64, len(q.Steps)), Steps: make([]analytics.StepTimes, len(q.Steps)-1)}
	b, act, err := s.funnelWith(ctx, q)
	if err != nil {
		return out, err
	}
	byRow := q.Breakdown != nil
	if byRow {
		if err := s.funnelRowValues(b, q, act); err != nil {
			return out, err
		}
		// grouping(…) is 1 on the row of all the users.
		b.Write(" SELECT grouping(bv) = 1, bv, count(*)")
	} else {
		b.Write(" SELECT count(*)")
	}
	for i := 1; i < len(q.Steps); i++ {
		b.Printf(", count(d%d), quantile_disc(d%d, 0.5), histogram(b%d)", i, i, i)
	}
	b.Write(" FROM (SELECT ")
	if byRow {
		b.Write("bg.bv AS bv, ")
	}
	for i := 1; i < len(q.Steps); i++ {
		if i > 1 {
			b.Write(", ")
		}
		// A step's time is 1 µs or more (funnelSteps), so every time is in
		// a bucket; a user who did not reach the step has none (NULL).
		d := fmt.Sprintf("s%d.t - s%d.t", i, i-1)
		b.Printf("%s AS d%d, CASE", d, i)
		for k := len(analytics.ConvertBuckets) - 1; k >= 0; k-- {
			b.Printf(" WHEN %s >= %d THEN %d", d, analytics.ConvertBuckets[k]*1e6, k)
		}
		b.Printf(" END AS b%d", i)
	}
	funnelUsers(b, q, act)
	if byRow {
		b.Printf(" JOIN bg ON bg.%s = s0.%s) GROUP BY GROUPING SETS ((bv), ())", act.col(), act.col())
	} else {
		b.Write(")")
	}
	rows, err := s.query(ctx, b)
	if err != nil {
		return out, fmt.Errorf("computing funnel times: %w", err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		var whole bool
		var value sql.NullString
		r := analytics.FunnelTimesRow{Counts: make([]int64, len(q.Steps)), Steps: make([]analytics.StepTimes, len(q.Steps)-1)}
		medians := make([]sql.NullInt64, len(q.Steps))
		histograms := make([]any, len(q.Steps))
		dest := []any{&r.Counts[0]}
		if byRow {
			dest = []any{&whole, &value, &r.Counts[0]}
		}
		for i := 1; i < len(q.Steps); i++ {
			dest = append(dest, &r.Counts[i], &medians[i], &histograms[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return out, fmt.Errorf("computing funnel times: %w", err)
		}
		for i := 1; i < len(q.Steps); i++ {
			st := &r.Steps[i-1]
			st.MedianMicros = medians[i].Int64
			if st.Histogram, err = bucketCounts(histograms[i]); err != nil {
				return out, fmt.Errorf("computing funnel times: %w", err)
			}
		}
		if byRow && !whole {
			r.Breakdown, r.Other = value.String, !value.Valid
			out.Breakdown = append(out.Breakdown, r)
			continue
		}
		out.Counts, out.Steps, found = r.Counts, r.Steps, true
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("computing funnel times: %w", err)
	}
	// Without a breakdown the one aggregate row is always there; with one,
	// a funnel without users may have no row at all.
	if !found && !byRow {
		return out, fmt.Errorf("computing funnel times: %w", sql.ErrNoRows)
	}
	return out, nil
}

// bucketCounts reads a histogram of bucket numbers (FunnelTimes' b, a
// duckdb.Map) as the users of each bucket of analytics.ConvertBuckets,
// none where the map has no entry (an empty bucket, or no users: NULL).
func bucketCounts(h any) ([]int64, error) {
	out := make([]int64, len(analytics.ConvertBuckets))
	if h == nil {
		return out, nil
	}
	m, ok := h.(duckdb.Map)
	if !ok {
		return nil, fmt.Errorf("a histogram of %T", h)
	}
	for k, v := range m {
		i, ok := k.(int32)
		n, ok2 := v.(uint64)
		if !ok || !ok2 || i < 0 || int(i) >= len(out) {
			return nil, fmt.Errorf("a histogram entry %v (%T) = %v (%T)", k, k, v, v)
		}
		out[i] = int64(n)
	}
	return out, nil
}

// funnelRowValues writes, after funnelWith, the users' breakdown values
// (funnelValues' CTE v) and the CTE bg of each step-0 user's row: their
// value bv when it is one of the top values, NULL for the other values.
// The top values are q.TopValues or, with q.RankTop, the CTE top: the
// q.BreakdownLimit values with the most users in the funnel, ties by
// value, as FunnelRows orders its rows (every value without a limit).
func (s *Store) funnelRowValues(b *builder, q analytics.FunnelQuery, act actor) error {
	x, err := b.property(*q.Breakdown)
	if err != nil {
		return err
	}
	if err := s.funnelValues(b, q, act, "coalesce("+x+", '')"); err != nil {
		return err
	}
	id := act.col()
	ranked := q.RankTop && q.BreakdownLimit > 0
	if ranked {
		b.Write(", top AS (SELECT v.bv FROM s0")
		excluded(b, q, act)
		b.Printf(" JOIN v ON v.%s = s0.%s GROUP BY v.bv ORDER BY count(*) DESC, v.bv LIMIT %s)", id, id, b.arg(q.BreakdownLimit))
	}
	b.Printf(", bg AS (SELECT %s, CASE WHEN ", id)
	switch {
	case ranked:
		b.Write("bv IN (SELECT bv FROM top)")
	case q.RankTop:
		b.Write("true")
	case len(q.TopValues) == 0:
		b.Write("false")
	default:
		b.Write("bv IN (")
		for i, v := range q.TopValues {
			if i > 0 {
				b.Write(", ")
			}
			b.Write(b.arg(v))
		}
		b.Write(")")
	}
	b.Write(" THEN bv END AS bv FROM v)")
	return nil
}

// RanksFunnelValues marks the store as an analytics.FunnelRanker:
// FunnelTimes and FunnelOverTime rank a breakdown's values themselves
// (funnelRowValues) when asked.
func (s *Store) RanksFunnelValues() {}

// FunnelOverTime groups the funnel's users (funnelUsers) by the bucket of
// q.OverTime holding their step-0 time in the product's zone, and with a
// breakdown by their row (funnelRowValues), and counts each group's users
// reaching each step.
func (s *Store) FunnelOverTime(ctx context.Context, q analytics.FunnelQuery) (_ []analytics.FunnelBucket, err error) {
	defer markOutOfMemory(&err)
	part, ok := truncSQL[q.OverTime]
	if !ok {
		return nil, fmt.Errorf("funnel over time: unknown interval %q", q.OverTime)
	}
	b, act, err := s.funnelWith(ctx, q)
	if err != nil {
		return nil, err
	}
	byRow := q.Breakdown != nil
	if byRow {
		if err := s.funnelRowValues(b, q, act); err != nil {
			return nil, err
		}
	}
	b.Printf(" SELECT date_trunc('%s', %s) AS k", part, b.local(q.EventRange, "make_timestamp(s0.t)", q.From, q.To))
	if byRow {
		b.Write(", bg.bv")
	}
	for i := range q.Steps {
		b.Printf(", count(s%d.t)", i)
	}
	funnelUsers(b, q, act)
	if byRow {
		b.Printf(" JOIN bg ON bg.%s = s0.%s GROUP BY k, bg.bv", act.col(), act.col())
	} else {
		b.Write(" GROUP BY k")
	}
	return queryAll(ctx, s, "computing funnel over time", b, func(r scanner) (x analytics.FunnelBucket, err error) {
		var value sql.NullString
		x.Counts = make([]int64, len(q.Steps))
		dest := []any{&x.Bucket}
		if byRow {
			dest = append(dest, &value)
		}
		for i := range x.Counts {
			dest = append(dest, &x.Counts[i])
		}
		err = r.Scan(dest...)
		x.Bucket = x.Bucket.UTC()
		x.Breakdown, x.Other = value.String, byRow && !value.Valid
		return x, err
	})
}

// funnelWith starts a statement over a funnel's users: the CTEs of its
// steps (funnelSteps) and of its exclusions (funnelExclusions), for a
// SELECT … funnelUsers to follow.
func (s *Store) funnelWith(ctx context.Context, q analytics.FunnelQuery) (*builder, actor, error) {
	if err := s.dictionaries(ctx); err != nil {
		return nil, actor{}, err
	}
	b := &builder{}
	act, err := b.newActor(q.AggregateBy)
	if err != nil {
		return nil, act, err
	}
	if err := s.funnelSteps(b, q, act); err != nil {
		return nil, act, err
	}
	return b, act, s.funnelExclusions(b, q, act)
}
