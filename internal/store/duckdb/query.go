package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"strata/internal/analytics"
	"strata/internal/store/sqlbuild"
)

// This file compiles the query engine's plans to DuckDB SQL. Every value
// that comes from a request (event names, property keys, filter values,
// dates) is a bound parameter; the only text spliced into SQL comes from the
// fixed tables below, chosen by validated enums.

var _ analytics.QueryStore = (*Store)(nil)

// botPageview is the name ingest gives AI-bot page fetches.
const botPageview = "$bot_pageview"

// Event names are compared as their dense ids (eid, migration 0005): an
// integer test is cheaper than a string one, and a name never seen binds an
// id no event has.

// columnSQL maps the property names filters may use to their columns.
var columnSQL = map[string]string{
	"url": "url", "path": "path", "referrer": "referrer",
	"browser": "browser", "os": "os", "device_type": "device_type",
	"source": "source", "channel": "channel", "utm_source": "utm_source", "utm_medium": "utm_medium", "utm_campaign": "utm_campaign",
	"country": "country", "region": "region", "city": "city", "screen_class": "screen_class",
}

// truncSQL maps an interval to DuckDB's date_trunc part. DuckDB's weeks
// start on Monday, as ISO weeks do.
var truncSQL = map[analytics.Interval]string{
	analytics.Hour: "hour", analytics.Day: "day", analytics.Week: "week", analytics.Month: "month",
}

// builder writes a statement in DuckDB's dialect: $n placeholders.
type builder struct{ sqlbuild.Builder }

// arg binds v and returns its placeholder.
func (b *builder) arg(v any) string { return "$" + strconv.Itoa(b.Bind(v)) }

// ts binds the instant t as a TIMESTAMP parameter: its UTC microseconds,
// as the tables hold instants. The driver types a parameter from the
// statement when it can and binds a time.Time it cannot type as a
// TIMESTAMPTZ, and comparing a TIMESTAMP column with that casts every row
// through the session's time zone: at 10 M events the range's condition
// alone took 0.35 s of a scan of 0.05 s (docs/benchmarks.md, "One pass
// for each breakdown"). The cast types the parameter.
func (b *builder) ts(t time.Time) string { return b.arg(t.UTC()) + "::TIMESTAMP" }

// eid binds an event's dense id (eid, uid) as a UINTEGER parameter, the
// columns' type. database/sql hands the driver a uint32 as an int64, and
// `eid = $1` bound to a BIGINT casts every row's eid to compare; typed,
// the scan compares the column with a constant (docs/queries.md, "Dense
// ids are bound as UINTEGER").
func (b *builder) eid(id uint32) string { return b.arg(id) + "::UINTEGER" }

// fewBuckets is the most month or week buckets a range may span for its
// buckets to be told by comparisons (bucketOf) rather than date_trunc.
const fewBuckets = 16

// bucketOf returns an expression of the bucket of iv that holds the wall
// time w (an expression of local), for instants in s's [from, to): the
// same value as date_trunc. For a range of a few months or weeks it
// compares w with the buckets' wall starts, bound as parameters: at 10 M
// events date_trunc('month', …) took most of a breakdown's time once its
// aggregate was cheap (docs/benchmarks.md, "One pass for each
// breakdown"), and a comparison or two costs about nothing. A wall time
// outside the buckets (a range that starts or ends inside a repeated hour
// of a zone's autumn change) still gets date_trunc, so the two forms
// agree everywhere. val, when set, gives the value for the k-th bucket in
// place of its start (an index, for uniqueUsersByMask), and fallback the
// value for any other wall time.
func (b *builder) bucketOf(s analytics.EventRange, iv analytics.Interval, w string, val func(k int) string, fallback string) string {
	trunc := "date_trunc('" + truncSQL[iv] + "', " + w + ")"
	if val == nil {
		fallback = trunc
	}
	starts := s.Buckets(iv)
	if (iv != analytics.Month && iv != analytics.Week) || len(starts) == 0 || len(starts) > fewBuckets {
		return fallback
	}
	var x strings.Builder
	x.WriteString("CASE WHEN " + w + " < " + b.ts(starts[0]) + " THEN " + fallback)
	for k, start := range starts {
		var then string
		if val != nil {
			then = val(k)
		} else {
			then = b.ts(start)
		}
		x.WriteString(" WHEN " + w + " < " + b.ts(iv.Next(start)) + " THEN " + then)
	}
	x.WriteString(" ELSE " + fallback + " END")
	return x.String()
}

// query runs b's statement, having shown it to the test hook (traceSQL).
func (s *Store) query(ctx context.Context, b *builder) (*sql.Rows, error) {
	if s.traceSQL != nil {
		s.traceSQL(b.SQL(), b.Args())
	}
	return s.db.QueryContext(ctx, b.SQL(), b.Args()...)
}

// queryAll runs b's statement and scans every row with scan; what names
// the operation in errors.
func queryAll[T any](ctx context.Context, s *Store, what string, b *builder, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return sqlbuild.Collect(what, rows, func(r *sql.Rows) (T, error) { return scan(r) })
}

// scope writes the conditions every query shares: one product, one
// environment, and ts inside [from, to).
func (b *builder) scope(alias string, s analytics.EventRange, from, to time.Time) {
	b.Write(alias, "product_id = ", b.arg(s.ProductID), " AND ", alias, "env = ", b.arg(string(s.Env)),
		" AND ", alias, "ts >= ", b.ts(from), " AND ", alias, "ts < ", b.ts(to))
}

// local returns an expression of the product's wall time (a TIMESTAMP)
// at the instant col, for instants in [from, to) (docs/queries.md, "Time
// zones"): col itself in UTC, else col plus the zone's offset, chosen by
// a CASE over the few instants in the range at which the offset changes.
// The offsets and instants are parameters; col is a column name of this
// package, never request text.
func (b *builder) local(s analytics.EventRange, col string, from, to time.Time) string {
	if s.IsUTC() {
		return col
	}
	first, changes := s.OffsetsOf(from, to)
	if len(changes) == 0 {
		return "(" + col + " + to_microseconds(" + b.arg(first.Microseconds()) + "::BIGINT))"
	}
	var x strings.Builder
	x.WriteString("(" + col + " + to_microseconds(CASE")
	prev := first
	for _, c := range changes {
		x.WriteString(" WHEN " + col + " < " + b.ts(c.At) + " THEN " + b.arg(prev.Microseconds()) + "::BIGINT")
		prev = c.Offset
	}
	x.WriteString(" ELSE " + b.arg(prev.Microseconds()) + "::BIGINT END))")
	return x.String()
}

// property returns the SQL expression reading p as text, NULL when unset.
// A properties key is addressed by a JSON pointer, bound as a parameter, so
// a key may hold any character.
func (b *builder) property(p analytics.Property) (string, error) {
	if p.Column != "" {
		col, ok := columnSQL[p.Column]
		if !ok {
			return "", fmt.Errorf("unknown column %q", p.Column)
		}
		return col, nil
	}
	ptr := "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(p.Key)
	return "json_extract_string(properties, " + b.arg(ptr) + ")", nil
}

// filter writes one filter as a boolean expression.
func (b *builder) filter(f analytics.Filter) error {
	if f.Cohort != nil {
		return b.cohortFilter(f)
	}
	if f.Person != nil {
		return errors.New("a person filter the query engine did not turn into its person set")
	}
	x, err := b.property(f.Property)
	if err != nil {
		return err
	}
	num, isNum := f.Value.(float64)
	switch f.Operator {
	case analytics.OpEq:
		if isNum {
			b.Write("coalesce(TRY_CAST(", x, " AS DOUBLE) = ", b.arg(num), ", false)")
		} else {
			b.Write("coalesce(", x, " = ", b.arg(fmt.Sprint(f.Value)), ", false)")
		}
	case analytics.OpNeq:
		if isNum {
			b.Write("NOT coalesce(TRY_CAST(", x, " AS DOUBLE) = ", b.arg(num), ", false)")
		} else {
			b.Write("NOT coalesce(", x, " = ", b.arg(fmt.Sprint(f.Value)), ", false)")
		}
	case analytics.OpContains:
		b.Write("coalesce(contains(lower(", x, "), lower(", b.arg(fmt.Sprint(f.Value)), ")), false)")
	case analytics.OpNotContains:
		b.Write("NOT coalesce(contains(lower(", x, "), lower(", b.arg(fmt.Sprint(f.Value)), ")), false)")
	case analytics.OpRegex:
		b.Write("coalesce(regexp_matches(", x, ", ", b.arg(fmt.Sprint(f.Value)), "), false)")
	case analytics.OpGt:
		b.Write("coalesce(TRY_CAST(", x, " AS DOUBLE) > ", b.arg(num), ", false)")
	case analytics.OpLt:
		b.Write("coalesce(TRY_CAST(", x, " AS DOUBLE) < ", b.arg(num), ", false)")
	case analytics.OpIsSet:
		b.Write(x, " IS NOT NULL")
	case analytics.OpIsNotSet:
		b.Write(x, " IS NULL")
	default:
		return fmt.Errorf("unknown operator %q", f.Operator)
	}
	return nil
}

// filters writes " AND " and each filter of fs.
func (b *builder) filters(fs []analytics.Filter) error {
	for _, f := range fs {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return err
		}
	}
	return nil
}

// cohortFilter writes a cohort filter: the event's user is (not) among
// the members of the generation it names (docs/queries.md, "Cohort
// filters"). It reads the event's distinct_id, a column no other relation
// of a query's statements has: the funnels' statements join the events
// with the previous step's rows, which carry uid too, and filters are
// written unqualified.
func (b *builder) cohortFilter(f analytics.Filter) error {
	negated, err := analytics.CohortNegated(f.Operator)
	if err != nil {
		return err
	}
	not := ""
	if negated {
		not = "NOT "
	}
	c := f.Cohort
	b.Write(not, "distinct_id IN (SELECT distinct_id FROM cohort_members WHERE product_id = ", b.arg(c.ProductID),
		" AND cohort_id = ", b.arg(c.ID), " AND generation = ", b.arg(c.Generation), ")")
	return nil
}

// actor returns the expression naming an event's actor as read through
// alias ("" or "e."), and the column a statement gives it: the dense user
// id uid, or with a group type (analytics.FunnelQuery.AggregateBy) the
// key of the event's group of that type, column g. The key is read with a
// JSON pointer bound as a parameter (ptr, from newActor), never spliced.
type actor struct{ ptr string }

// newActor binds the pointer of groupType's key in $groups, unless the
// query counts users.
func (b *builder) newActor(groupType string) (actor, error) {
	if groupType == "" {
		return actor{}, nil
	}
	if !analytics.ValidGroupType(groupType) {
		return actor{}, fmt.Errorf("invalid group type %q", groupType)
	}
	return actor{ptr: b.arg("/" + analytics.GroupsProperty + "/" + groupType)}, nil
}

func (a actor) expr(alias string) string {
	if a.ptr == "" {
		return alias + "uid"
	}
	return "json_extract_string(" + alias + "properties, " + a.ptr + ")"
}

func (a actor) col() string {
	if a.ptr == "" {
		return "uid"
	}
	return "g"
}

// selected is the actor as a select-list item named col.
func (a actor) selected(alias string) string {
	if a.ptr == "" {
		return alias + "uid"
	}
	return a.expr(alias) + " AS g"
}

// present is the condition leaving out events without the actor: none for
// users, who are always set.
func (a actor) present(alias string) string {
	if a.ptr == "" {
		return ""
	}
	return " AND " + a.expr(alias) + " IS NOT NULL"
}

// markOutOfMemory makes *err wrap analytics.ErrOutOfMemory when DuckDB
// failed for lack of memory (its "Out of Memory Error": the buffer pool,
// --duckdb-memory, could not hold what the query needed even after
// spilling). duckdb-go reports DuckDB's error class as a typed
// *duckdb.Error, so no message is parsed. It is the one place the embedded
// store recognises the condition; the engine decides what the client sees.
func markOutOfMemory(err *error) {
	var de *duckdb.Error
	// A read is marked by the connection already (recover.go); the query
	// methods' own mark then adds nothing.
	if *err != nil && errors.As(*err, &de) && de.Type == duckdb.ErrorTypeOutOfMemory && !errors.Is(*err, analytics.ErrOutOfMemory) {
		*err = fmt.Errorf("%w: %w", analytics.ErrOutOfMemory, *err)
	}
}

// Trend runs one statement per series. With a breakdown, the statement
// ranks the property's values over the whole range, keeps the top ones and
// folds the rest into the other bucket, so unique users of "other" are
// counted once however many values they span.
func (s *Store) Trend(ctx context.Context, q analytics.TrendQuery) (_ []analytics.TrendRow, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var out []analytics.TrendRow
	for i, series := range q.Series {
		rows, err := s.trendSeries(ctx, q, i, series, true)
		if err != nil && series.UniqueUsers && strings.Contains(err.Error(), "Out of Range") {
			// More users were numbered while the query started than the
			// bitmap's headroom allows: count them the slow way.
			rows, err = s.trendSeries(ctx, q, i, series, false)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// bitmapBudget caps the memory unique-user bitmaps may take in one query
// (each DuckDB thread aggregates its own). DuckDB keeps these aggregate
// states outside its buffer pool, so --duckdb-memory does not bound them:
// with 256 MB, an hourly month broken down by path on a million events
// (4,320 bitmaps of 14 KB per thread and series, nearly all empty) took the
// process to 350 MB while the pool accounted for 94 MB, and ran 3.5 times
// slower than count(DISTINCT), which DuckDB aggregates inside the pool
// (docs/benchmarks.md, "Heavy queries"). Dense charts, where bitmaps pay,
// fit within 32 MB: a week of hours for 500,000 users takes 12 MB, a daily
// month broken down by ten values 23 MB.
const bitmapBudget = 32 << 20

// uniqueUsers returns the aggregate counting a product's distinct users in
// each of at most groups groups. With dense ids the users of a group are
// bits in a bitmap as wide as the product's user count (plus headroom for
// users numbered while the query starts), which is several times faster
// than hashing; when the bitmaps would be too large it is a plain
// count(DISTINCT). The bounds are integers the store computed, never
// request text.
func (s *Store) uniqueUsers(product int64, groups int, bitmap bool) string {
	hi := uint64(s.userCount(product)) + 1<<16
	if !bitmap || uint64(groups)*hi/8 > bitmapBudget {
		return "count(DISTINCT uid)"
	}
	return "bit_count(bitstring_agg(uid, 0, " + strconv.FormatUint(hi, 10) + "))"
}

// seriesWhere writes the conditions of one trend series: scope, bots,
// event, the actor's presence and filters.
func (s *Store) seriesWhere(b *builder, q analytics.TrendQuery, series analytics.TrendSeries, act actor) error {
	b.scope("", q.EventRange, q.From, q.To)
	// Bot events count only in a series of $bot_pageview itself. Deciding
	// that here keeps the condition a plain column filter DuckDB applies
	// inside the scan.
	if series.Event != botPageview {
		b.Write(" AND NOT is_bot")
	}
	b.Write(" AND eid = ", b.eid(s.eventID(series.Event)), act.present(""))
	for _, f := range append(append([]analytics.Filter(nil), q.Filters...), series.Filters...) {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return err
		}
	}
	return nil
}

// maxMaskBuckets is how many buckets fit one user's activity mask.
const maxMaskBuckets = 64

// uniqueUsersByMask counts a series' unique users per bucket without a
// distinct count: one pass groups the events by user (an array-indexed
// aggregate on the dense id) into a 64-bit mask of the buckets the user was
// active in, the masks are grouped (a few thousand distinct ones for a
// million users), and Go adds each mask's users to its buckets. It serves
// charts without a breakdown of at most 64 buckets: daily for two months,
// weekly for a year, monthly for five. Groups (q.AggregateBy) are counted
// the same way, grouped by their key instead of the dense id. Every user
// has one mask, so the masks' users add up to the distinct users over the
// whole range: the Total row costs nothing more.
func (s *Store) uniqueUsersByMask(ctx context.Context, q analytics.TrendQuery, index int, series analytics.TrendSeries) ([]analytics.TrendRow, error) {
	var b builder
	act, err := b.newActor(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	start := q.Interval.Truncate(q.Wall(q.From))
	b.Write("WITH m AS (SELECT ", act.selected(""), ", bit_or(1::UBIGINT << (", maskIndex(&b, q, start), ")::UBIGINT) AS mask FROM events WHERE ")
	if err := s.seriesWhere(&b, q, series, act); err != nil {
		return nil, err
	}
	b.Write(" GROUP BY ", act.col(), ") SELECT 0, '', mask, count(*) FROM m GROUP BY mask")
	lines, err := s.maskLines(ctx, &b)
	if err != nil {
		return nil, err
	}
	out := []analytics.TrendRow{{Series: index, Total: true, Value: lines[0].total}}
	return append(out, lines[0].rows(q, index, start)...), nil
}

// maskIndex returns the expression of the index, from 0, of the bucket
// of q.Interval an event falls in, the first bucket starting at the wall
// time start.
func maskIndex(b *builder, q analytics.TrendQuery, start time.Time) string {
	ts := b.local(q.EventRange, "ts", q.From, q.To)
	switch q.Interval {
	case analytics.Month:
		// year() and month() cost what date_trunc does: a few months are
		// told by comparisons (bucketOf).
		idx := "(year(" + ts + ") - " + b.arg(start.Year()) + ") * 12 + month(" + ts + ") - " + b.arg(int(start.Month()))
		return b.bucketOf(q.EventRange, q.Interval, ts, func(k int) string { return strconv.Itoa(k) }, idx)
	case analytics.Week:
		return "(epoch_us(" + ts + ") - " + b.arg(start.UnixMicro()) + ") // 604800000000"
	case analytics.Hour:
		return "(epoch_us(" + ts + ") - " + b.arg(start.UnixMicro()) + ") // 3600000000"
	}
	return "(epoch_us(" + ts + ") - " + b.arg(start.UnixMicro()) + ") // 86400000000"
}

// maskLine is one line of a chart counted by masks: its users by the
// buckets they were active in.
type maskLine struct {
	rank   int
	value  string
	counts [maxMaskBuckets]int64
	total  int64 // every user of the line once
}

// rows are the line's non-empty buckets as trend rows of series index.
func (l *maskLine) rows(q analytics.TrendQuery, index int, start time.Time) []analytics.TrendRow {
	var out []analytics.TrendRow
	bucket, end := start, q.Wall(q.To)
	for k := 0; k < maxMaskBuckets && bucket.Before(end); k++ {
		if l.counts[k] > 0 {
			out = append(out, analytics.TrendRow{Series: index, Bucket: bucket, Rank: l.rank, Breakdown: l.value, Value: l.counts[k]})
		}
		bucket = q.Interval.Next(bucket)
	}
	return out
}

// maskLines runs b, a statement of rows (rank, value, mask, users), and
// adds each line's users to the buckets of their masks, lines in order
// of first appearance. Without a row it returns one empty line.
func (s *Store) maskLines(ctx context.Context, b *builder) ([]*maskLine, error) {
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("computing trend: %w", err)
	}
	defer rows.Close()
	var lines []*maskLine
	byKey := map[[2]any]*maskLine{}
	for rows.Next() {
		var rank int
		var value string
		var mask uint64
		var n int64
		if err := rows.Scan(&rank, &value, &mask, &n); err != nil {
			return nil, fmt.Errorf("computing trend: %w", err)
		}
		key := [2]any{rank, value}
		l := byKey[key]
		if l == nil {
			l = &maskLine{rank: rank, value: value}
			byKey[key] = l
			lines = append(lines, l)
		}
		// Each user has one mask in a line: its distinct users are the sum.
		l.total += n
		for ; mask != 0; mask &= mask - 1 {
			l.counts[bits.TrailingZeros64(mask)] += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("computing trend: %w", err)
	}
	if len(lines) == 0 {
		lines = append(lines, &maskLine{})
	}
	return lines, nil
}

// breakdownByMask counts a series' unique users by the top values of a
// breakdown as uniqueUsersByMask counts them without one: one pass groups
// the events by value and user into the mask of the buckets the user was
// active in with that value; a value's users are its rows (which ranks
// the values); the users of the values outside the top are grouped once
// more so that each counts once in the other line however many values
// they span; and Go adds the masks' users to their buckets. It replaces
// a statement that kept every event of the range (bucket, user, value)
// to rank the values and then join them back, two to three times slower
// at 10 M events (docs/benchmarks.md, "One pass for each breakdown").
func (s *Store) breakdownByMask(ctx context.Context, q analytics.TrendQuery, index int, series analytics.TrendSeries) ([]analytics.TrendRow, error) {
	var b builder
	act, err := b.newActor(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	x, err := b.property(*q.Breakdown)
	if err != nil {
		return nil, err
	}
	breakdown := "coalesce(" + x + ", '')"
	start := q.Interval.Truncate(q.Wall(q.From))
	b.Write("WITH m AS (SELECT ", act.selected(""), ", ", breakdown, " AS v, bit_or(1::UBIGINT << (", maskIndex(&b, q, start), ")::UBIGINT) AS mask FROM events WHERE ")
	if err := s.seriesWhere(&b, q, series, act); err != nil {
		return nil, err
	}
	b.Write(" GROUP BY ", act.col(), ", v)",
		", top AS (SELECT v, row_number() OVER (ORDER BY count(*) DESC, v) AS rank FROM m GROUP BY v ORDER BY rank LIMIT ", b.arg(q.BreakdownLimit), ")",
		// A top value's rows are one per user already; only the others
		// are grouped by user again.
		", r AS (SELECT top.rank AS r, m.v AS bv, mask FROM m JOIN top USING (v)",
		" UNION ALL SELECT 0, '', bit_or(mask) FROM m ANTI JOIN top USING (v) GROUP BY ", act.col(), ")",
		" SELECT r, bv, mask, count(*) FROM r GROUP BY r, bv, mask")
	lines, err := s.maskLines(ctx, &b)
	if err != nil {
		return nil, err
	}
	var out []analytics.TrendRow
	for _, l := range lines {
		rows := l.rows(q, index, start)
		for i := range rows {
			rows[i].Other = rows[i].Rank == 0
		}
		out = append(out, rows...)
	}
	return out, nil
}

func (s *Store) trendSeries(ctx context.Context, q analytics.TrendQuery, index int, series analytics.TrendSeries, bitmap bool) ([]analytics.TrendRow, error) {
	if series.UniqueUsers {
		if rows, ok, err := s.keptUniqueUsers(ctx, q, index, series); ok || err != nil {
			return rows, err
		}
	}
	fewBuckets := len(q.Buckets(q.Interval)) <= maxMaskBuckets
	if series.UniqueUsers && q.Breakdown == nil && fewBuckets {
		return s.uniqueUsersByMask(ctx, q, index, series)
	}
	if series.UniqueUsers && fewBuckets {
		return s.breakdownByMask(ctx, q, index, series)
	}
	if rows, ok, err := s.keptCounts(ctx, q, index, series); ok || err != nil {
		return rows, err
	}
	var b builder
	act, err := b.newActor(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	agg := "count(*)"
	rankAgg := agg
	switch {
	case series.UniqueUsers && q.AggregateBy != "":
		// Group keys are text, outside the dense ids' bitmaps.
		agg, rankAgg = "count(DISTINCT g)", "count(DISTINCT g)"
	case series.UniqueUsers:
		groups := len(q.Buckets(q.Interval))
		if q.Breakdown != nil {
			groups *= q.BreakdownLimit + 1
		} else {
			groups++ // the whole range's
		}
		agg = s.uniqueUsers(q.ProductID, groups, bitmap)
		rankAgg = "count(DISTINCT uid)"
	}
	breakdown := "''"
	if q.Breakdown != nil {
		x, err := b.property(*q.Breakdown)
		if err != nil {
			return nil, err
		}
		breakdown = "coalesce(" + x + ", '')"
	}
	bucket := b.bucketOf(q.EventRange, q.Interval, b.local(q.EventRange, "ts", q.From, q.To), nil, "")
	whole := series.UniqueUsers && q.Breakdown == nil
	if q.Breakdown != nil && !series.UniqueUsers {
		// Events by value: the statement counts them by bucket and value
		// in one pass, ranks the values on those counts and folds the
		// rest into the other line, where it kept every event of the
		// range to rank and join back (docs/benchmarks.md, "One pass for
		// each breakdown").
		b.Write("WITH agg AS (SELECT ", bucket, " AS bucket, ", breakdown, " AS v, count(*) AS c FROM events WHERE ")
		if err := s.seriesWhere(&b, q, series, act); err != nil {
			return nil, err
		}
		b.Write(" GROUP BY bucket, v)",
			", top AS (SELECT v, row_number() OVER (ORDER BY sum(c) DESC, v) AS rank FROM agg GROUP BY v",
			" ORDER BY rank LIMIT ", b.arg(q.BreakdownLimit), ")",
			" SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE agg.v END AS bv, sum(c)::BIGINT",
			" FROM agg LEFT JOIN top USING (v) GROUP BY bucket, r, bv")
		return s.trendRows(ctx, &b, q, index, false)
	}
	b.Write("WITH base AS (SELECT ", bucket, " AS bucket, ", act.selected(""), ", ", breakdown,
		" AS v FROM events WHERE ")
	if err := s.seriesWhere(&b, q, series, act); err != nil {
		return nil, err
	}
	b.Write(")")
	switch {
	case whole:
		// The empty grouping set adds the distinct users over the whole
		// range (rank 1 marks it; the buckets' rows have rank 0) from the
		// same scan; over no rows it is one row whose bitmap is NULL.
		b.Write(" SELECT coalesce(bucket, TIMESTAMP '1970-01-01'), grouping(bucket), '', coalesce(", agg, ", 0) FROM base GROUP BY GROUPING SETS ((bucket), ())")
	case q.Breakdown == nil:
		b.Write(" SELECT bucket, 0, '', ", agg, " FROM base GROUP BY bucket")
	default:
		b.Write(", top AS (SELECT v, row_number() OVER (ORDER BY ", rankAgg, " DESC, v) AS rank FROM base GROUP BY v",
			" ORDER BY rank LIMIT ", b.arg(q.BreakdownLimit), ")",
			" SELECT bucket, coalesce(top.rank, 0) AS r, CASE WHEN top.rank IS NULL THEN '' ELSE base.v END AS bv, ", agg,
			" FROM base LEFT JOIN top USING (v) GROUP BY bucket, r, bv")
	}
	return s.trendRows(ctx, &b, q, index, whole)
}

// trendRows runs b, a statement of rows (bucket, rank, value, count), as
// the trend rows of series index; with whole, rank 1 marks the row of
// the whole range.
func (s *Store) trendRows(ctx context.Context, b *builder, q analytics.TrendQuery, index int, whole bool) ([]analytics.TrendRow, error) {
	rows, err := s.query(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("computing trend: %w", err)
	}
	defer rows.Close()
	var out []analytics.TrendRow
	for rows.Next() {
		r := analytics.TrendRow{Series: index}
		if err := rows.Scan(&r.Bucket, &r.Rank, &r.Breakdown, &r.Value); err != nil {
			return nil, fmt.Errorf("computing trend: %w", err)
		}
		r.Bucket = r.Bucket.UTC()
		r.Other = q.Breakdown != nil && r.Rank == 0
		if whole {
			r.Total, r.Rank = r.Rank == 1, 0
			if r.Total {
				// The whole range's row has no bucket, as the masks'
				// (uniqueUsersByMask) and kept users' have none.
				r.Bucket = time.Time{}
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("computing trend: %w", err)
	}
	return out, nil
}

// Retention puts each user in the cohort of the period of their first start
// event in the range, then counts the cohort's users by the later periods
// in which they did the return event, up to the end of the range's last
// period.
func (s *Store) Retention(ctx context.Context, q analytics.RetentionQuery) (_ []analytics.RetentionRow, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	part := truncSQL[q.Period]
	// The periods are local (wall) ones; the range of the returns is the
	// instants from the second period's start to the last one's end.
	first := q.Instant(q.Period.Next(q.Period.Truncate(q.Wall(q.From))))
	last := q.Instant(q.Period.Next(q.Period.Truncate(q.Wall(q.To.Add(-time.Microsecond)))))
	b.Write("WITH firsts AS (SELECT uid, date_trunc('", part, "', ", b.local(q.EventRange, "min(ts)", q.From, q.To), ") AS cohort FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid = ", b.eid(s.eventID(q.StartEvent)))
	if err := b.filters(q.Filters); err != nil {
		return nil, err
	}
	b.Write(" GROUP BY uid)",
		", returns AS (SELECT DISTINCT uid, date_trunc('", part, "', ", b.local(q.EventRange, "ts", first, last), ") AS period FROM events WHERE ")
	b.scope("", q.EventRange, first, last)
	b.Write(" AND NOT is_bot AND eid = ", b.eid(s.eventID(q.ReturnEvent)))
	if err := b.filters(q.Filters); err != nil {
		return nil, err
	}
	b.Write(")",
		" SELECT cohort, cohort, count(*) FROM firsts GROUP BY cohort",
		" UNION ALL SELECT f.cohort, r.period, count(*) FROM firsts f JOIN returns r ON r.uid = f.uid AND r.period > f.cohort",
		" GROUP BY f.cohort, r.period")
	return queryAll(ctx, s, "computing retention", &b, func(r scanner) (row analytics.RetentionRow, err error) {
		err = r.Scan(&row.Cohort, &row.Return, &row.Users)
		row.Cohort, row.Return = row.Cohort.UTC(), row.Return.UTC()
		return row, err
	})
}

// Bots lists AI-bot activity ($bot_pageview events) and the pages bots
// fetched most.
func (s *Store) Bots(ctx context.Context, q analytics.BotsQuery) (_ []analytics.BotActivity, _ []analytics.PageActivity, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, nil, err
	}
	var b builder
	b.Write("SELECT bot_name, bot_category, count(*) AS hits, max(ts) FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND eid = ", b.eid(s.eventID(botPageview)), " AND bot_name IS NOT NULL GROUP BY bot_name, bot_category ORDER BY hits DESC, bot_name")
	bots, err := queryAll(ctx, s, "listing bots", &b, func(r scanner) (a analytics.BotActivity, err error) {
		var cat sql.NullString
		err = r.Scan(&a.Name, &cat, &a.Hits, &a.LastSeen)
		a.Category, a.LastSeen = cat.String, a.LastSeen.UTC()
		return a, err
	})
	if err != nil {
		return nil, nil, err
	}

	var p builder
	p.Write("SELECT url, count(*) AS hits, count(DISTINCT bot_name) FROM events WHERE ")
	p.scope("", q.EventRange, q.From, q.To)
	p.Write(" AND eid = ", p.eid(s.eventID(botPageview)), " AND url IS NOT NULL GROUP BY url ORDER BY hits DESC, url LIMIT ", p.arg(q.TopPages))
	pages, err := queryAll(ctx, s, "listing bot pages", &p, func(r scanner) (a analytics.PageActivity, err error) {
		err = r.Scan(&a.URL, &a.Hits, &a.Bots)
		return a, err
	})
	if err != nil {
		return nil, nil, err
	}
	return bots, pages, nil
}

// EventNames counts the scope's human events by dense name id, then names
// the ids from event_names.
func (s *Store) EventNames(ctx context.Context, q analytics.EventNamesQuery) (_ []analytics.EventCount, err error) {
	defer markOutOfMemory(&err)
	var b builder
	b.Write("SELECT n.name, c.hits FROM (SELECT eid, count(*) AS hits FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot GROUP BY eid) c JOIN event_names n ON n.eid = c.eid ORDER BY c.hits DESC, n.name LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing event names", &b, func(r scanner) (e analytics.EventCount, err error) {
		err = r.Scan(&e.Name, &e.Count)
		return e, err
	})
}

// HasEvents looks for one human event of the product and environment, on
// any day; LIMIT 1 lets DuckDB stop at the first row it finds.
func (s *Store) HasEvents(ctx context.Context, scope analytics.EventRange) (_ bool, err error) {
	defer markOutOfMemory(&err)
	var b builder
	b.Write("SELECT 1 FROM events WHERE product_id = ", b.arg(scope.ProductID), " AND env = ", b.arg(string(scope.Env)),
		" AND NOT is_bot LIMIT 1")
	rows, err := queryAll(ctx, s, "looking for an event", &b, func(r scanner) (n int, err error) {
		err = r.Scan(&n)
		return n, err
	})
	return len(rows) > 0, err
}

// LiveVisitors counts the distinct users of the scope's human events. The
// range is a few minutes: the ts bounds reach the scan as table filters,
// and DuckDB skips every row group whose min/max of ts (its zone map) lies
// outside them, so with events appended roughly in time order only the
// newest row groups are read (EXPLAIN shows the filters inside
// TABLE_SCAN; docs/queries.md, "Live visitors"). count(DISTINCT uid)
// rather than the bitmap of Trend: a few minutes hold few users, and the
// bitmap's width grows with every user the product ever had.
func (s *Store) LiveVisitors(ctx context.Context, scope analytics.EventRange) (_ int64, err error) {
	defer markOutOfMemory(&err)
	var b builder
	b.Write("SELECT count(DISTINCT uid) FROM events WHERE ")
	b.scope("", scope, scope.From, scope.To)
	b.Write(" AND NOT is_bot")
	rows, err := queryAll(ctx, s, "counting live visitors", &b, func(r scanner) (n int64, err error) {
		err = r.Scan(&n)
		return n, err
	})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return rows[0], nil
}

// dayMicros is one UTC day in microseconds.
const dayMicros = 86400000000

// ExperimentCounts finds each user's exposures of the experiment (x: the
// first one's time, and the variants they named), then for each metric the
// user's first conversion at or after that time (m0, m1, …), joining on
// the dense user id as the funnel does. Only users whose exposures named
// one variant are followed to their conversions. Times are integer
// microseconds and the time test sits in WHERE as a difference, so that
// the join stays a plain equality DuckDB answers with its perfect-hash
// join (see Funnel).
func (s *Store) ExperimentCounts(ctx context.Context, q analytics.ExperimentQuery) (_ []analytics.ExperimentRow, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	// The variants a user named are counted by grouping by user and variant
	// first, then by user: two plain hash aggregates, which DuckDB spills
	// to disk when its pool is full, rather than count(DISTINCT v) per
	// user, whose distinct state for every exposed user ran out of a 40 MB
	// pool with 400,000 of them (TestQueriesInASmallPool).
	b.Write("WITH x AS (SELECT uid, min(t) AS t0, min(v) AS v, count(*) AS n FROM (SELECT uid, v, min(t) AS t FROM (SELECT uid, epoch_us(ts) AS t, ",
		"coalesce(json_extract_string(properties, ", b.arg("/variant"), "), '') AS v FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid = ", b.eid(s.eventID(analytics.ExposureEvent)), " AND ")
	if err := b.filter(analytics.ExposureOf(q.ExperimentID)); err != nil {
		return nil, err
	}
	b.Write(") GROUP BY uid, v) GROUP BY uid)")
	for i, m := range q.Metrics {
		b.Printf(", m%d AS (SELECT e.uid, min(epoch_us(e.ts)) AS t FROM events e JOIN x ON e.uid = x.uid WHERE ", i)
		b.scope("e.", q.EventRange, q.From, q.To)
		b.Write(" AND NOT e.is_bot AND x.n = 1 AND epoch_us(e.ts) - x.t0 >= 0 AND ")
		if m == "" {
			if err := b.filter(analytics.Converted); err != nil {
				return nil, err
			}
		} else {
			b.Write("e.eid = ", b.eid(s.eventID(m)))
		}
		b.Write(" GROUP BY e.uid)")
	}
	// The days are the product's local days (docs/experiments.md): each
	// time is moved to its wall clock before it is cut.
	day := func(t string) string {
		return "epoch_us(" + b.local(q.EventRange, "make_timestamp("+t+")", q.From, q.To) + ") // " + strconv.Itoa(dayMicros)
	}
	b.Write(" SELECT -1, CASE WHEN n > 1 THEN '' ELSE v END AS arm, n > 1 AS mixed, ", day("t0"), " AS day, count(*) FROM x GROUP BY arm, mixed, day")
	for i := range q.Metrics {
		b.Printf(" UNION ALL SELECT %d, x.v, false, %s AS day, count(*) FROM m%d JOIN x ON x.uid = m%d.uid GROUP BY x.v, day", i, day(fmt.Sprintf("m%d.t", i)), i, i)
	}
	return queryAll(ctx, s, "counting experiment results", &b, func(r scanner) (row analytics.ExperimentRow, err error) {
		var day int64
		err = r.Scan(&row.Metric, &row.Variant, &row.Mixed, &day, &row.Users)
		row.Day = time.UnixMicro(day * dayMicros).UTC()
		return row, err
	})
}

// ErrorGroups groups the scope's $exception events by their
// $exception_fingerprint: counts, unique users, first and last seen, the
// latest type and message, and a count for each of the query's days. The
// three properties are read from each event's JSON in one parse
// (json_extract_string of a list of paths, constants of this function),
// and the latest event is the max of a struct {time, type, message},
// which DuckDB orders field by field: a third less time than three reads
// and a text key (docs/benchmarks.md, "Error tracking").
func (s *Store) ErrorGroups(ctx context.Context, q analytics.ErrorGroupsQuery) (_ []analytics.ErrorGroupRow, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	b.Write("WITH x AS (SELECT ts, uid, json_extract_string(properties, ['/$exception_fingerprint', '/$exception_type', '/$exception_message']) AS p",
		" FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid = ", b.eid(s.eventID(analytics.ExceptionEvent)))
	if q.Release != "" {
		b.Write(" AND ")
		if err := b.filter(analytics.Filter{Property: analytics.Property{Key: "$release"}, Operator: analytics.OpEq, Value: q.Release}); err != nil {
			return nil, err
		}
	}
	if q.Fingerprint != "" {
		b.Write(" AND ")
		if err := b.groupFilter(q.Fingerprint, q.Aliases); err != nil {
			return nil, err
		}
	} else if len(q.Fingerprints) > 0 {
		b.Write(" AND ")
		if err := b.anyFingerprint(q.Fingerprints); err != nil {
			return nil, err
		}
	}
	fp, join := b.aliased("coalesce(p[1], '')", q.Aliases)
	b.Write("), g AS (SELECT ", fp, " AS fp, max({'t': ts, 'ty': coalesce(p[2], ''), 'm': coalesce(p[3], '')}) AS latest,",
		" count(*) AS n, count(DISTINCT uid) AS users, min(ts) AS first")
	for i := range q.Days {
		end := q.Instant(q.Wall(q.Days[i]).AddDate(0, 0, 1)) // a local day: 23, 24 or 25 hours
		b.Printf(", count(*) FILTER (WHERE ts >= %s AND ts < %s) AS d%d", b.ts(q.Days[i]), b.ts(end), i)
	}
	b.Write(" FROM x", join, " GROUP BY fp) SELECT fp, latest.ty, latest.m, n, users, first, latest.t")
	for i := range q.Days {
		b.Printf(", d%d", i)
	}
	b.Write(" FROM g ORDER BY n DESC, fp LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing error groups", &b, func(r scanner) (g analytics.ErrorGroupRow, err error) {
		g.Daily = make([]int64, len(q.Days))
		dest := []any{&g.Fingerprint, &g.Type, &g.Message, &g.Events, &g.Users, &g.FirstSeen, &g.LastSeen}
		for i := range g.Daily {
			dest = append(dest, &g.Daily[i])
		}
		err = r.Scan(dest...)
		g.FirstSeen, g.LastSeen = g.FirstSeen.UTC(), g.LastSeen.UTC()
		return g, err
	})
}

// ErrorOccurrences returns a group's latest $exception events.
func (s *Store) ErrorOccurrences(ctx context.Context, q analytics.ErrorOccurrencesQuery) (_ []analytics.ErrorOccurrence, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	b.Write("SELECT ts, distinct_id, coalesce(browser, ''), coalesce(os, ''), coalesce(url, ''), properties FROM events WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid = ", b.eid(s.eventID(analytics.ExceptionEvent)), " AND ")
	if err := b.groupFilter(q.Fingerprint, q.Aliases); err != nil {
		return nil, err
	}
	b.Write(" ORDER BY ts DESC, distinct_id, properties LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing error occurrences", &b, func(r scanner) (o analytics.ErrorOccurrence, err error) {
		var props string
		err = r.Scan(&o.Time, &o.DistinctID, &o.Browser, &o.OS, &o.URL, &props)
		o.Time, o.Properties = o.Time.UTC(), json.RawMessage(props)
		return o, err
	})
}

// UserEvents returns one user's latest events. The user is found by the
// dense user id (a user the product never had binds an id no event has),
// an integer test on each of the product's events instead of a string one;
// the session id is read from the properties by a JSON pointer, bound.
func (s *Store) UserEvents(ctx context.Context, q analytics.UserEventsQuery) (_ []analytics.UserEvent, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	session, _ := b.property(analytics.Property{Key: analytics.SessionIDProperty})
	b.Write("SELECT uuid, ts, event, coalesce(url, ''), coalesce(path, ''), coalesce(browser, ''), coalesce(os, ''),",
		" coalesce(device_type, ''), coalesce(", session, ", ''), properties FROM events WHERE product_id = ", b.arg(q.ProductID),
		" AND env = ", b.arg(string(q.Env)), " AND uid = ", b.eid(s.userID(q.ProductID, q.DistinctID)))
	if !q.Before.IsZero() {
		b.Write(" AND ts < ", b.ts(q.Before))
	}
	b.Write(" AND NOT is_bot ORDER BY ts DESC, uuid LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing a user's events", &b, func(r scanner) (e analytics.UserEvent, err error) {
		var id duckdb.UUID
		var props string
		err = r.Scan(&id, &e.Time, &e.Name, &e.URL, &e.Path, &e.Browser, &e.OS, &e.DeviceType, &e.SessionID, &props)
		e.UUID, e.Time, e.Properties = [16]byte(id), e.Time.UTC(), json.RawMessage(props)
		return e, err
	})
}

// ErrorActivity reads what the alert rules need of each group in one
// GROUP BY: its events and users in the recent part, its events in the
// history before it, its first event and its latest type and message.
func (s *Store) ErrorActivity(ctx context.Context, q analytics.ErrorActivityQuery) (_ []analytics.ErrorActivityRow, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return nil, err
	}
	var b builder
	prop := func(key string) string {
		x, _ := b.property(analytics.Property{Key: key})
		return "coalesce(" + x + ", '')"
	}
	recent := b.ts(q.Recent)
	fp, join := b.aliased(prop("$exception_fingerprint"), q.Aliases)
	b.Write("SELECT ", fp, " AS fp, max(CAST(epoch_us(ts) + ", strconv.Itoa(latestKeyOffset), " AS VARCHAR) || '|' || ",
		prop("$exception_type"), " || chr(31) || ", prop("$exception_message"), "), count(*) FILTER (WHERE ts >= ", recent,
		"), count(DISTINCT uid) FILTER (WHERE ts >= ", recent, "), count(*) FILTER (WHERE ts < ", recent, "), min(ts)")
	b.Write(" FROM events", join, " WHERE ")
	b.scope("", q.EventRange, q.From, q.To)
	b.Write(" AND NOT is_bot AND eid = ", b.eid(s.eventID(analytics.ExceptionEvent)))
	b.Write(" GROUP BY fp HAVING count(*) FILTER (WHERE ts >= ", recent, ") >= ", b.arg(max(q.MinRecent, 1)))
	if q.FirstOnly {
		b.Write(" AND count(*) FILTER (WHERE ts < ", recent, ") = 0")
	}
	b.Write(" ORDER BY fp")
	return queryAll(ctx, s, "reading error activity", &b, func(r scanner) (g analytics.ErrorActivityRow, err error) {
		var latest string
		err = r.Scan(&g.Fingerprint, &latest, &g.Recent, &g.Users, &g.History, &g.FirstSeen)
		g.Type, g.Message = splitLatest(latest)
		g.FirstSeen = g.FirstSeen.UTC()
		return g, err
	})
}

// aliased returns the group key of an event whose fingerprint is the
// expression fp: fp, or the group it was merged into (the query's
// Aliases, docs/errors.md, "One bug, one group"), and the join that reads
// the aliases, to write after the table the key is read from. The aliases
// are a VALUES list joined by the fingerprint, a hash join: a CASE of a
// WHEN per alias is tested on every event, and with 1,000 aliases took
// ten times as long over 200,000 events (62 ms to 590 ms). Without
// aliases, fp and no join, so that the statement stays the one it was.
func (b *builder) aliased(fp string, aliases map[string]string) (key, join string) {
	if len(aliases) == 0 {
		return fp, ""
	}
	var sb strings.Builder
	sb.WriteString(" LEFT JOIN (VALUES ")
	for i, k := range analytics.SortedAliases(aliases) {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(" + b.arg(k) + ", " + b.arg(aliases[k]) + ")")
	}
	sb.WriteString(") AS alias(alias_fp, alias_into) ON alias.alias_fp = " + fp)
	return "coalesce(alias.alias_into, " + fp + ")", sb.String()
}

// groupFilter writes the condition that an event counts in the group of
// fingerprint: its $exception_fingerprint is one of the group's members
// (analytics.AliasMembers), false when it has none.
func (b *builder) groupFilter(fingerprint string, aliases map[string]string) error {
	return b.anyFingerprint(analytics.AliasMembers(aliases, fingerprint))
}

// anyFingerprint writes the condition that an event's own
// $exception_fingerprint is one of members, false when there is none.
func (b *builder) anyFingerprint(members []string) error {
	switch len(members) {
	case 0:
		b.Write("false")
		return nil
	case 1:
		return b.filter(analytics.Filter{Property: analytics.Property{Key: "$exception_fingerprint"}, Operator: analytics.OpEq, Value: members[0]})
	}
	// One IN list: the property is read from the JSON once per event,
	// where an OR of equalities read it once per member (the page of a
	// group of 21 members over 200,000 exceptions took 2.9 s that way,
	// 7.8 s with its members described; docs/errors.md, "Unmerging").
	x, err := b.property(analytics.Property{Key: "$exception_fingerprint"})
	if err != nil {
		return err
	}
	b.Write("coalesce(", x, " IN (")
	for i, fp := range members {
		if i > 0 {
			b.Write(", ")
		}
		b.Write(b.arg(fp))
	}
	b.Write("), false)")
	return nil
}

// latestKeyOffset makes every microsecond time a 19-digit number (for
// times after 1938), so that the text "time|type\x1fmessage" sorts by
// time first: the max of it names a group's latest event (ErrorActivity;
// ErrorGroups takes the max of a struct instead).
const latestKeyOffset = 1000000000000000000

// splitLatest reads "time|type\x1fmessage" back into type and message.
func splitLatest(key string) (string, string) {
	_, rest, _ := strings.Cut(key, "|")
	t, m, _ := strings.Cut(rest, "\x1f")
	return t, m
}
