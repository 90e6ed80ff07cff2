package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

// Funnel finds, per user, the first step-0 event in the range and then,
// step by step, the earliest event of the next step strictly after the
// previous step's time and within the window. The inner GROUP BY collects
// each user's candidate times for every step; one nested SELECT per step
// filters the next step's times against the previous one (nesting, rather
// than aliases in one SELECT, keeps the statement linear in the number of
// steps).
func (s *Store) Funnel(ctx context.Context, q analytics.FunnelQuery) (_ []int64, err error) {
	defer markOutOfMemory(&err)
	actor, err := actorSQL(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	b := s.newBuilder()
	n := len(q.Steps)
	win := q.Window.Microseconds()
	from, to := q.From.UnixMicro(), q.To.UnixMicro()

	// Innermost: per user, r0/t0 for step 0 and the arrays a1…an-1.
	var inner strings.Builder
	step0 := func() (string, error) {
		c := "event = " + b.arg(q.Steps[0]) + " AND ts >= " + b.arg(from) + " AND ts < " + b.arg(to)
		f, err := stepFilters(&b, q.StepFilter(0))
		return c + f, err
	}
	c, err := step0()
	if err != nil {
		return nil, err
	}
	inner.WriteString("SELECT countIf(" + c + ") > 0 AS r0, ")
	c, _ = step0()
	inner.WriteString("minIf(ts, " + c + ") AS t0")
	for i := 1; i < n; i++ {
		ev, bound := b.arg(q.Steps[i]), b.arg(to+int64(i)*win)
		f, err := stepFilters(&b, q.StepFilter(i))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&inner, ", groupArrayIf(ts, event = %s AND ts < %s%s) AS a%d", ev, bound, f, i)
	}
	inner.WriteString(" FROM " + s.table + " WHERE ")
	// Arguments bind in the order their placeholders appear in the text.
	where := s.newBuilder()
	where.scope(q.EventRange, q.From, q.To.Add(time.Duration(n-1)*q.Window))
	where.Write(" AND is_bot = 0 AND event IN (")
	for i, step := range q.Steps {
		if i > 0 {
			where.Write(", ")
		}
		where.Write(where.arg(step))
	}
	where.Write(")", actorPresent(q.AggregateBy, actor), " GROUP BY ", actor)
	inner.WriteString(where.SQL())
	for _, a := range where.Args() {
		b.Bind(a)
	}

	// Each level keeps the reached flags so far and the arrays still ahead.
	// The previous step's time reaches the lambda as a second array rather
	// than as a captured column: ClickHouse 18.16 drops subquery columns
	// that only a lambda uses.
	sql := inner.String()
	for i := 1; i < n; i++ {
		var lvl strings.Builder
		lvl.WriteString("SELECT ")
		for j := 0; j < i; j++ {
			fmt.Fprintf(&lvl, "r%d, ", j)
		}
		fmt.Fprintf(&lvl, "arrayFilter((x, p) -> x > p AND x <= p + %[3]d, a%[2]d, arrayResize(emptyArrayInt64(), length(a%[2]d), t%[1]d)) AS f%[2]d,"+
			" r%[1]d AND notEmpty(f%[2]d) AS r%[2]d, arrayReduce('min', f%[2]d) AS t%[2]d", i-1, i, win)
		for j := i + 1; j < n; j++ {
			fmt.Fprintf(&lvl, ", a%d", j)
		}
		lvl.WriteString(" FROM (" + sql + ")")
		sql = lvl.String()
	}
	var out strings.Builder
	out.WriteString("SELECT ")
	for i := 0; i < n; i++ {
		if i > 0 {
			out.WriteString(", ")
		}
		fmt.Fprintf(&out, "countIf(r%d)", i)
	}
	out.WriteString(" FROM (" + sql + ")")

	counts := make([]uint64, n)
	dest := make([]any, n)
	for i := range counts {
		dest[i] = &counts[i]
	}
	b.Write(out.String()) // b held only the parameters so far
	text, args := s.statement(&b)
	if err := s.conn.QueryRow(ctx, text, args...).Scan(dest...); err != nil {
		return nil, fmt.Errorf("computing funnel: %w", err)
	}
	res := make([]int64, n)
	for i, c := range counts {
		res[i] = int64(c)
	}
	return res, nil
}

// stepFilters returns a step's filters as further conditions (" AND …"),
// their parameters bound to b in the order of the text, which is placed
// where it is returned, before any later placeholder.
func stepFilters(b *builder, filters []analytics.Filter) (string, error) {
	fb := builder{cohortIn: b.cohortIn}
	for _, f := range filters {
		fb.Write(" AND ")
		if err := fb.filter(f); err != nil {
			return "", err
		}
	}
	for _, a := range fb.Args() {
		b.Bind(a)
	}
	return fb.SQL(), nil
}

// FunnelRows computes the funnel as Funnel does, keeping every step's time
// (t0…), and then, per user, whether an exclusion leaves them out: one of
// its events (the array xK) strictly between the user's times of its two
// steps, the later one reached. With a breakdown, a user's value is the
// least of their step-0 events' values at t0 (the arrays v0 and ts0, which
// one aggregation fills row by row alike). The outer GROUP BY counts, for
// each value, the users left reaching each step, most step-0 users first,
// ties by value.
func (s *Store) FunnelRows(ctx context.Context, q analytics.FunnelQuery) (_ []analytics.FunnelRow, err error) {
	defer markOutOfMemory(&err)
	actor, err := actorSQL(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	b := s.newBuilder()
	n := len(q.Steps)
	users, err := s.funnelUsers(&b, q, actor)
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	out.WriteString("SELECT bv")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&out, ", countIf(r%d)", i)
	}
	out.WriteString(" FROM (" + users + ") GROUP BY bv ORDER BY countIf(r0) DESC, bv")
	b.Write(out.String()) // b held only the parameters so far
	text, args := s.statement(&b)
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("computing funnel: %w", err)
	}
	defer rows.Close()
	fold := analytics.FunnelRows{Limit: q.BreakdownLimit}
	for rows.Next() {
		var value string
		counts := make([]uint64, n)
		dest := []any{&value}
		for i := range counts {
			dest = append(dest, &counts[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("computing funnel: %w", err)
		}
		res := make([]int64, n)
		for i, c := range counts {
			res[i] = int64(c)
		}
		fold.Add(value, res)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("computing funnel: %w", err)
	}
	return fold.Rows, nil
}

// funnelUsers returns the statement of a funnel's users, one row for each
// user who reached step 0 and no exclusion left out: rK and tK, whether
// they reached step K and when, and bv, their breakdown value ("" without
// a breakdown). Its parameters are bound to b after any b holds, so the
// text must follow theirs.
// Each level of the nested SELECTs keeps every reached flag and time so
// far, the carried columns and the arrays still ahead; as in Funnel, the
// lambdas get the previous time as a second array (ClickHouse 18.16 drops
// subquery columns that only a lambda uses).
func (s *Store) funnelUsers(b *builder, q analytics.FunnelQuery, actor string) (string, error) {
	return s.funnelUserRows(b, q, actor, false)
}

// funnelUserRows is funnelUsers, whose rows also hold, with withID, did:
// the user's distinct_id (any of the user's events', all alike).
func (s *Store) funnelUserRows(b *builder, q analytics.FunnelQuery, actor string, withID bool) (string, error) {
	if q.Breakdown != nil {
		if err := checkProperty(*q.Breakdown); err != nil {
			return "", err
		}
	}
	n := len(q.Steps)
	win := q.Window.Microseconds()
	from, to := q.From.UnixMicro(), q.To.UnixMicro()

	// Innermost: per user, r0/t0 for step 0, the arrays a1…an-1 of the
	// later steps, x0… of the exclusions, and v0/ts0 for the breakdown.
	var inner strings.Builder
	step0 := func() (string, error) {
		c := "event = " + b.arg(q.Steps[0]) + " AND ts >= " + b.arg(from) + " AND ts < " + b.arg(to)
		f, err := stepFilters(b, q.StepFilter(0))
		return c + f, err
	}
	c, err := step0()
	if err != nil {
		return "", err
	}
	inner.WriteString("SELECT countIf(" + c + ") > 0 AS r0, ")
	c, _ = step0()
	inner.WriteString("minIf(ts, " + c + ") AS t0")
	for i := 1; i < n; i++ {
		ev, bound := b.arg(q.Steps[i]), b.arg(to+int64(i)*win)
		f, err := stepFilters(b, q.StepFilter(i))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&inner, ", groupArrayIf(ts, event = %s AND ts < %s%s) AS a%d", ev, bound, f, i)
	}
	// carry lists the columns every level passes on unchanged.
	carry := []string{}
	for k, x := range q.Exclusions {
		ev, bound := b.arg(x.Event), b.arg(to+int64(x.ToStep)*win)
		f, err := stepFilters(b, x.Filters)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&inner, ", groupArrayIf(ts, event = %s AND ts < %s%s) AS x%d", ev, bound, f, k)
		carry = append(carry, fmt.Sprintf("x%d", k))
	}
	if q.Breakdown != nil {
		v := b.text(*q.Breakdown)
		c, _ := step0()
		inner.WriteString(", groupArrayIf(" + v + ", " + c + ") AS v0")
		c, _ = step0()
		inner.WriteString(", groupArrayIf(ts, " + c + ") AS ts0")
		carry = append(carry, "v0", "ts0")
	}
	if withID {
		inner.WriteString(", any(distinct_id) AS did")
		carry = append(carry, "did")
	}
	inner.WriteString(" FROM " + s.table + " WHERE ")
	where := s.newBuilder()
	where.scope(q.EventRange, q.From, q.To.Add(time.Duration(n-1)*q.Window))
	where.Write(" AND is_bot = 0 AND event IN (")
	for i, step := range q.Steps {
		if i > 0 {
			where.Write(", ")
		}
		where.Write(where.arg(step))
	}
	for _, x := range q.Exclusions {
		where.Write(", ", where.arg(x.Event))
	}
	where.Write(")", actorPresent(q.AggregateBy, actor), " GROUP BY ", actor)
	inner.WriteString(where.SQL())
	for _, a := range where.Args() {
		b.Bind(a)
	}

	// Each level keeps every reached flag and time so far, the carried
	// columns and the arrays still ahead; as in Funnel, the lambdas get
	// the previous time as a second array (ClickHouse 18.16 drops
	// subquery columns that only a lambda uses).
	sql := inner.String()
	for i := 1; i < n; i++ {
		var lvl strings.Builder
		lvl.WriteString("SELECT ")
		for j := 0; j < i; j++ {
			fmt.Fprintf(&lvl, "r%d, t%d, ", j, j)
		}
		for _, c := range carry {
			lvl.WriteString(c + ", ")
		}
		fmt.Fprintf(&lvl, "arrayFilter((x, p) -> x > p AND x <= p + %[3]d, a%[2]d, arrayResize(emptyArrayInt64(), length(a%[2]d), t%[1]d)) AS f%[2]d,"+
			" r%[1]d AND notEmpty(f%[2]d) AS r%[2]d, arrayReduce('min', f%[2]d) AS t%[2]d", i-1, i, win)
		for j := i + 1; j < n; j++ {
			fmt.Fprintf(&lvl, ", a%d", j)
		}
		lvl.WriteString(" FROM (" + sql + ")")
		sql = lvl.String()
	}

	// The last level: each user's value and whether they are left out.
	var last strings.Builder
	last.WriteString("SELECT ")
	for j := 0; j < n; j++ {
		fmt.Fprintf(&last, "r%d, ", j)
	}
	if q.Breakdown != nil {
		last.WriteString("arrayReduce('min', arrayFilter((v, x, p) -> x = p, v0, ts0, arrayResize(emptyArrayInt64(), length(ts0), t0))) AS bv, ")
	} else {
		last.WriteString("'' AS bv, ")
	}
	if withID {
		last.WriteString("did, ")
	}
	for j := 0; j < n; j++ {
		fmt.Fprintf(&last, "t%d, ", j)
	}
	last.WriteString("0")
	for k, x := range q.Exclusions {
		fmt.Fprintf(&last, " OR (r%[3]d AND arrayExists((x, a, c) -> x > a AND x < c, x%[1]d,"+
			" arrayResize(emptyArrayInt64(), length(x%[1]d), t%[2]d), arrayResize(emptyArrayInt64(), length(x%[1]d), t%[3]d)))", k, x.FromStep, x.ToStep)
	}
	last.WriteString(" AS out FROM (" + sql + ") WHERE r0")
	return "SELECT * FROM (" + last.String() + ") WHERE NOT out", nil
}

// FunnelUsers lists a page of one step's users: the rows of funnelUsers
// (with each user's distinct_id), those at the step (and not at the next,
// for the dropped) and of the breakdown values kept, newest first and cut
// to the page in the statement, so that a page is all that reaches Go.
func (s *Store) FunnelUsers(ctx context.Context, q analytics.FunnelUsersQuery) (_ []analytics.FunnelUser, err error) {
	defer markOutOfMemory(&err)
	if q.AggregateBy != "" {
		return nil, errors.New("listing a funnel's users: a funnel of groups has no users to list")
	}
	if q.Step < 0 || q.Step >= len(q.Steps) || (q.Dropped && q.Step == len(q.Steps)-1) {
		return nil, fmt.Errorf("listing a funnel's users: no step %d to list", q.Step)
	}
	actor, err := actorSQL(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	b := s.newBuilder()
	users, err := s.funnelUserRows(&b, q.FunnelQuery, actor, true)
	if err != nil {
		return nil, err
	}
	next := "toInt64(0)"
	if q.Step+1 < len(q.Steps) {
		next = fmt.Sprintf("if(r%d, t%d, toInt64(0))", q.Step+1, q.Step+1)
	}
	b.Printf("SELECT did, t%d AS u_t, %s AS u_next FROM (%s) WHERE r%d", q.Step, next, users, q.Step)
	if q.Dropped {
		b.Printf(" AND NOT r%d", q.Step+1)
	}
	if q.Breakdown != nil && q.BreakdownValue != nil {
		b.Write(" AND bv = ", b.arg(*q.BreakdownValue))
	}
	if q.Breakdown != nil && q.OtherThan != nil {
		for _, v := range q.OtherThan {
			b.Write(" AND bv != ", b.arg(v))
		}
	}
	if q.BeforeMicros != 0 {
		b.Write(" AND (u_t < ", b.arg(q.BeforeMicros), " OR (u_t = ", b.arg(q.BeforeMicros), " AND did > ", b.arg(q.BeforeID), "))")
	}
	b.Write(" ORDER BY u_t DESC, did LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing a funnel's users", &b, func(r driver.Rows) (u analytics.FunnelUser, err error) {
		err = r.Scan(&u.DistinctID, &u.Micros, &u.NextMicros)
		return u, err
	})
}

// FunnelTimes computes the funnel with its exclusions over funnelUsers,
// and for each later step the time its users took from the step before:
// the lower median (the sorted array's middle, the lower of two) and the
// users in each bucket of analytics.ConvertBuckets. With a breakdown each
// user is counted twice, by ARRAY JOIN: once in the row of all the users
// and once in their breakdown row (rowOther), so that one GROUP BY gives
// the whole funnel's medians and each row's. (ClickHouse 18.16 has no
// GROUPING SETS, nor WITH TOTALS that the driver reads.)
func (s *Store) FunnelTimes(ctx context.Context, q analytics.FunnelQuery) (_ analytics.FunnelTimes, err error) {
	defer markOutOfMemory(&err)
	n := len(q.Steps)
	out := analytics.FunnelTimes{Counts: make([]int64, n), Steps: make([]analytics.StepTimes, n-1)}
	actor, err := actorSQL(q.AggregateBy)
	if err != nil {
		return out, err
	}
	b := s.newBuilder()
	byRow := q.Breakdown != nil
	// The row's parameters come first in the text, so they are bound
	// before funnelUsers binds its own.
	other := ""
	if byRow {
		other = rowOther(&b, q.TopValues)
	}
	users, err := s.funnelUsers(&b, q, actor)
	if err != nil {
		return out, err
	}
	var sel strings.Builder
	sel.WriteString("SELECT ")
	if byRow {
		// g is (whole, other, value): which row the user is counted in.
		sel.WriteString("tupleElement(g, 1) AS g_whole, tupleElement(g, 2) AS g_other, tupleElement(g, 3) AS g_value, ")
	}
	sel.WriteString("countIf(r0)")
	for i := 1; i < n; i++ {
		d := fmt.Sprintf("(t%d - t%d)", i, i-1)
		fmt.Fprintf(&sel, ", countIf(r%[1]d), arrayElement(arraySort(groupArrayIf(%[2]s, r%[1]d)), intDiv(toInt64(countIf(r%[1]d)) + 1, 2))", i, d)
		for k, lo := range analytics.ConvertBuckets {
			fmt.Fprintf(&sel, ", countIf(r%d AND %s >= %d", i, d, lo*1e6)
			if k+1 < len(analytics.ConvertBuckets) {
				fmt.Fprintf(&sel, " AND %s < %d", d, analytics.ConvertBuckets[k+1]*1e6)
			}
			sel.WriteString(")")
		}
	}
	if byRow {
		sel.WriteString(" FROM (SELECT *, " + other + " AS o FROM (" + users + "))" +
			" ARRAY JOIN [(toUInt8(1), toUInt8(0), ''), (toUInt8(0), o, if(o, '', bv))] AS g GROUP BY g_whole, g_other, g_value")
	} else {
		sel.WriteString(" FROM (" + users + ")")
	}
	b.Write(sel.String()) // b held only the parameters so far
	text, args := s.statement(&b)
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return out, fmt.Errorf("computing funnel times: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var whole, isOther uint8
		var value string
		counts := make([]uint64, n)
		medians := make([]int64, n)
		hist := make([][]uint64, n)
		dest := []any{&counts[0]}
		if byRow {
			dest = []any{&whole, &isOther, &value, &counts[0]}
		}
		for i := 1; i < n; i++ {
			hist[i] = make([]uint64, len(analytics.ConvertBuckets))
			dest = append(dest, &counts[i], &medians[i])
			for k := range hist[i] {
				dest = append(dest, &hist[i][k])
			}
		}
		if err := rows.Scan(dest...); err != nil {
			return out, fmt.Errorf("computing funnel times: %w", err)
		}
		r := analytics.FunnelTimesRow{Breakdown: value, Other: isOther == 1, Counts: make([]int64, n), Steps: make([]analytics.StepTimes, n-1)}
		for i := range counts {
			r.Counts[i] = int64(counts[i])
			if i == 0 {
				continue
			}
			st := &r.Steps[i-1]
			st.MedianMicros = medians[i]
			st.Histogram = make([]int64, len(hist[i]))
			for k, c := range hist[i] {
				st.Histogram[k] = int64(c)
			}
		}
		if byRow && whole == 0 {
			out.Breakdown = append(out.Breakdown, r)
			continue
		}
		out.Counts, out.Steps = r.Counts, r.Steps
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("computing funnel times: %w", err)
	}
	return out, nil
}

// rowOther returns, for a breakdown's view, whether a user of
// funnelUsers (their value bv) is in the other row: their value is none
// of topValues (always, without any). Its parameters are bound to b.
func rowOther(b *builder, topValues []string) string {
	if len(topValues) == 0 {
		return "toUInt8(1)"
	}
	var x strings.Builder
	x.WriteString("NOT (bv IN (")
	for i, v := range topValues {
		if i > 0 {
			x.WriteString(", ")
		}
		x.WriteString(b.arg(v))
	}
	x.WriteString("))")
	return x.String()
}

// FunnelOverTime groups the funnel's users (funnelUsers) by the bucket of
// q.OverTime holding their step-0 time t0 in the product's zone, and with
// a breakdown by their row (rowOther: other, or their value), and counts
// each group's users reaching each step.
func (s *Store) FunnelOverTime(ctx context.Context, q analytics.FunnelQuery) (_ []analytics.FunnelBucket, err error) {
	defer markOutOfMemory(&err)
	if q.OverTime != analytics.Day && q.OverTime != analytics.Week {
		return nil, fmt.Errorf("funnel over time: unknown interval %q", q.OverTime)
	}
	actor, err := actorSQL(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	b := s.newBuilder()
	byRow := q.Breakdown != nil
	// The bucket's and the row's parameters come first in the text, so
	// they are bound before funnelUsers binds its own.
	k := b.bucket(q.OverTime, q.EventRange, "t0", q.From, q.To)
	other := ""
	if byRow {
		other = rowOther(&b, q.TopValues)
	}
	users, err := s.funnelUsers(&b, q, actor)
	if err != nil {
		return nil, err
	}
	b.Write("SELECT ", k, " AS k")
	if byRow {
		b.Write(", ", other, " AS g_other, if(g_other, '', bv) AS g_value")
	}
	for i := range q.Steps {
		b.Printf(", countIf(r%d)", i)
	}
	b.Write(" FROM (", users, ") GROUP BY k")
	if byRow {
		b.Write(", g_other, g_value")
	}
	return queryAll(ctx, s, "computing funnel over time", &b, func(r driver.Rows) (analytics.FunnelBucket, error) {
		var key int64
		var isOther uint8
		var value string
		counts := make([]uint64, len(q.Steps))
		dest := []any{&key}
		if byRow {
			dest = append(dest, &isOther, &value)
		}
		for i := range counts {
			dest = append(dest, &counts[i])
		}
		err := r.Scan(dest...)
		x := analytics.FunnelBucket{Bucket: bucketTime(q.OverTime, key), Breakdown: value, Other: isOther == 1, Counts: make([]int64, len(counts))}
		for i, c := range counts {
			x.Counts[i] = int64(c)
		}
		return x, err
	})
}
