package clickhouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
	"strata/internal/store/sqlbuild"
)

// This file compiles the query engine's plans to ClickHouse SQL. Every
// value from a request is a bound parameter (?); the only text spliced into
// SQL comes from the fixed tables below, chosen by validated enums.
//
// Each query aggregates per user in one GROUP BY and finishes with array
// functions, never a JOIN: on a Distributed table the shards aggregate
// their users and the initiator merges the states, which gives the same
// answer as one server.

// botPageview is the name ingest gives AI-bot page fetches.
const botPageview = "$bot_pageview"

// columnSQL maps the property names filters may use to their columns.
var columnSQL = map[string]string{
	"url": "url", "path": "path", "referrer": "referrer",
	"browser": "browser", "os": "os", "device_type": "device_type",
	"source": "source", "channel": "channel", "utm_source": "utm_source", "utm_medium": "utm_medium", "utm_campaign": "utm_campaign",
	"country": "country", "region": "region", "city": "city", "screen_class": "screen_class",
}

// bucket returns an integer key of the bucket holding the microsecond
// time col, in the scope's wall time (local, for instants in [from, to));
// bucketTime turns a key back into the bucket's start. Hours, days and
// weeks are plain arithmetic (the epoch was a Thursday, so Monday-based
// weeks are offset by three days); months need the calendar. col is a
// column or lambda name of this package, never request text. The wall
// time is written, and its parameters bound, at each place it is used, as
// ? binds in text order.
func (b *builder) bucket(iv analytics.Interval, s analytics.EventRange, col string, from, to time.Time) string {
	x := func() string { return b.local(s, col, from, to) }
	switch iv {
	case analytics.Hour:
		return "toInt64(intDiv(" + x() + ", 3600000000))"
	case analytics.Week:
		return "toInt64(intDiv(" + x() + " + 259200000000, 604800000000))"
	case analytics.Month:
		t := func() string { return "toDateTime(intDiv(" + x() + ", 1000000), 'UTC')" }
		return "toInt64(toYear(" + t() + ") * 12 + toMonth(" + t() + ") - 1)"
	}
	return "toInt64(intDiv(" + x() + ", 86400000000))"
}

// bucketTime returns the start of bucket k, a wall time written as a UTC
// time when the bucket was computed over local (docs/queries.md, "Time
// zones").
func bucketTime(iv analytics.Interval, k int64) time.Time {
	switch iv {
	case analytics.Hour:
		return time.UnixMicro(k * 3600000000).UTC()
	case analytics.Week:
		return time.UnixMicro(k*604800000000 - 259200000000).UTC()
	case analytics.Month:
		return time.Date(int(k/12), time.Month(k%12+1), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.UnixMicro(k * 86400000000).UTC()
}

// local returns an expression of the product's wall time, in
// microseconds, at the microsecond instant col, for instants in [from, to)
// (docs/queries.md, "Time zones"): col itself in UTC, else col plus the
// zone's offset, chosen by a multiIf over the few instants in the range at
// which the offset changes. The offsets and instants are parameters, bound
// here: call it where its text goes, as ? binds in text order. col is a
// column or lambda name of this package, never request text.
func (b *builder) local(s analytics.EventRange, col string, from, to time.Time) string {
	if s.IsUTC() {
		return col
	}
	first, changes := s.OffsetsOf(from, to)
	if len(changes) == 0 {
		return "(" + col + " + toInt64(" + b.arg(first.Microseconds()) + "))"
	}
	var x strings.Builder
	x.WriteString("(" + col + " + toInt64(multiIf(")
	prev := first
	for _, c := range changes {
		x.WriteString(col + " < " + b.arg(c.At.UnixMicro()) + ", " + b.arg(prev.Microseconds()) + ", ")
		prev = c.Offset
	}
	x.WriteString(b.arg(prev.Microseconds()) + ")))")
	return x.String()
}

// builder writes a statement in ClickHouse's dialect: ? placeholders,
// bound in the order they appear in the text.
type builder struct {
	sqlbuild.Builder
	// cohortIn is how a cohort filter reads the members: an IN, GLOBAL on
	// a cluster, over the store's members table (newBuilder). A builder
	// without it refuses cohort filters.
	cohortIn string
}

// newBuilder returns a builder whose cohort filters read s's members.
// On a cluster the members table is Distributed like the events: a plain
// IN would have each shard read the whole members table again through it
// (which distributed_product_mode refuses), so the set is read once on the
// node that runs the query and sent to the shards (GLOBAL IN).
func (s *Store) newBuilder() builder {
	in := "IN"
	if s.cluster != "" {
		in = "GLOBAL IN"
	}
	return builder{cohortIn: in + " (SELECT distinct_id FROM " + s.members()}
}

// arg binds v and returns its placeholder.
func (b *builder) arg(v any) string {
	b.Bind(v)
	return "?"
}

// statement returns b's text and parameters, having shown them to the test
// hook (traceSQL).
func (s *Store) statement(b *builder) (string, []any) {
	if s.traceSQL != nil {
		s.traceSQL(b.SQL(), b.Args())
	}
	return b.SQL(), b.Args()
}

// memoryLimitExceeded is ClickHouse's error code MEMORY_LIMIT_EXCEEDED,
// raised when a query passes max_memory_usage (per query) or the server's
// own limit. Codes are stable across releases; 18.16 and current ones
// both use 241.
const memoryLimitExceeded = 241

// markOutOfMemory makes *err wrap analytics.ErrOutOfMemory when ClickHouse
// refused the query for its memory. The driver reports server errors as a
// typed *clickhouse.Exception with the code, so no message is parsed. It is
// the one place this store recognises the condition; the engine decides
// what the client sees.
func markOutOfMemory(err *error) {
	var ex *clickhouse.Exception
	if *err != nil && errors.As(*err, &ex) && ex.Code == memoryLimitExceeded {
		*err = fmt.Errorf("%w: %w", analytics.ErrOutOfMemory, *err)
	}
}

// queryAll runs b's statement and scans every row with scan; what names
// the operation in errors.
func queryAll[T any](ctx context.Context, s *Store, what string, b *builder, scan func(driver.Rows) (T, error)) ([]T, error) {
	text, args := s.statement(b)
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return sqlbuild.Collect(what, rows, scan)
}

// scope writes the conditions every query shares: one product, one
// environment, and ts inside [from, to).
func (b *builder) scope(s analytics.EventRange, from, to time.Time) {
	b.Write("product_id = ", b.arg(s.ProductID), " AND env = ", b.arg(string(s.Env)),
		" AND ts >= ", b.arg(from.UnixMicro()), " AND ts < ", b.arg(to.UnixMicro()))
}

// isSet returns an expression telling whether p is set, and text one
// giving its text form (” when unset). Each binds its own parameters, so
// call them in the order their results appear in the SQL text.
func (b *builder) isSet(p analytics.Property) string {
	if p.Column != "" {
		return columnSQL[p.Column] + " != ''"
	}
	return "has(prop_keys, " + b.arg(p.Key) + ")"
}

func (b *builder) text(p analytics.Property) string {
	if p.Column != "" {
		return columnSQL[p.Column]
	}
	return "prop_values[indexOf(prop_keys, " + b.arg(p.Key) + ")]"
}

// actorSQL returns the expression naming an event's actor: user_id, or
// with a group type (analytics.FunnelQuery.AggregateBy) the key of the
// event's group of that type, the empty string when it has none.
//
// ClickHouse 18.16 has no JSONExtract*, so the key is read from the
// $groups object's text in prop_values (flatten stores an object value as
// its compact JSON) with visitParamExtractString, which finds the first
// "type": anywhere in the text and unescapes its string. That is exact
// here because ingest accepts $groups only as a flat object of group
// types, each mapped to a string (checkGroups in package ingest): no
// other "type": can occur in it, since a key's quotes are escaped. The
// type is spliced as a literal, not bound, so that the expression reads
// the same wherever a statement places it among its ? parameters; it
// comes only from a validated group type (^[a-z][a-z0-9_]{0,31}$),
// checked again here.
func actorSQL(groupType string) (string, error) {
	if groupType == "" {
		return "user_id", nil
	}
	if !analytics.ValidGroupType(groupType) {
		return "", fmt.Errorf("invalid group type %q", groupType)
	}
	return "visitParamExtractString(prop_values[indexOf(prop_keys, '" + analytics.GroupsProperty + "')], '" + groupType + "')", nil
}

// actorPresent is the condition leaving out events without the actor:
// none for users, who are always set.
func actorPresent(groupType, actor string) string {
	if groupType == "" {
		return ""
	}
	return " AND " + actor + " != ''"
}

// checkProperty rejects a column outside the fixed table.
func checkProperty(p analytics.Property) error {
	if _, ok := columnSQL[p.Column]; p.Column != "" && !ok {
		return fmt.Errorf("unknown column %q", p.Column)
	}
	return nil
}

// filter writes one filter as a boolean expression.
func (b *builder) filter(f analytics.Filter) error {
	if f.Cohort != nil {
		return b.cohortFilter(f)
	}
	if f.Person != nil {
		return errors.New("a person filter the query engine did not turn into its person set")
	}
	p := f.Property
	if err := checkProperty(p); err != nil {
		return err
	}
	num, isNum := f.Value.(float64)
	switch f.Operator {
	case analytics.OpEq, analytics.OpNeq:
		if f.Operator == analytics.OpNeq {
			b.Write("NOT ")
		}
		if isNum {
			b.Write("(", b.isSet(p), " AND ifNull(toFloat64OrNull(", b.text(p), ") = ", b.arg(num), ", 0))")
		} else {
			b.Write("(", b.isSet(p), " AND ", b.text(p), " = ", b.arg(fmt.Sprint(f.Value)), ")")
		}
	case analytics.OpContains, analytics.OpNotContains:
		if f.Operator == analytics.OpNotContains {
			b.Write("NOT ")
		}
		b.Write("(", b.isSet(p), " AND positionCaseInsensitiveUTF8(", b.text(p), ", ", b.arg(fmt.Sprint(f.Value)), ") > 0)")
	case analytics.OpRegex:
		// Wrapped in a group: ClickHouse 18.16 ignores a leading (?i)
		// when it pre-filters on the pattern's literal text.
		b.Write("(", b.isSet(p), " AND match(", b.text(p), ", ", b.arg("(?:"+fmt.Sprint(f.Value)+")"), "))")
	case analytics.OpGt:
		b.Write("(", b.isSet(p), " AND ifNull(toFloat64OrNull(", b.text(p), ") > ", b.arg(num), ", 0))")
	case analytics.OpLt:
		b.Write("(", b.isSet(p), " AND ifNull(toFloat64OrNull(", b.text(p), ") < ", b.arg(num), ", 0))")
	case analytics.OpIsSet:
		b.Write("(", b.isSet(p), ")")
	case analytics.OpIsNotSet:
		b.Write("NOT (", b.isSet(p), ")")
	default:
		return fmt.Errorf("unknown operator %q", f.Operator)
	}
	return nil
}

// cohortFilter writes a cohort filter: the event's distinct id is (not)
// among the members of the generation it names (docs/queries.md, "Cohort
// filters").
func (b *builder) cohortFilter(f analytics.Filter) error {
	if b.cohortIn == "" {
		return errors.New("a cohort filter in a statement that cannot read cohorts")
	}
	negated, err := analytics.CohortNegated(f.Operator)
	if err != nil {
		return err
	}
	not := ""
	if negated {
		not = "NOT "
	}
	c := f.Cohort
	b.Write(not, "(distinct_id ", b.cohortIn, " WHERE product_id = ", b.arg(c.ProductID),
		" AND cohort_id = ", b.arg(c.ID), " AND generation = ", b.arg(c.Generation), "))")
	return nil
}

// seriesWhere writes the conditions of one trend series: scope, bots,
// event, the actor's presence and filters.
func seriesWhere(b *builder, q analytics.TrendQuery, series analytics.TrendSeries, actor string) error {
	b.scope(q.EventRange, q.From, q.To)
	// Bot events count only in a series of $bot_pageview itself.
	if series.Event != botPageview {
		b.Write(" AND is_bot = 0")
	}
	b.Write(" AND event = ", b.arg(series.Event), actorPresent(q.AggregateBy, actor))
	for _, f := range append(append([]analytics.Filter(nil), q.Filters...), series.Filters...) {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return err
		}
	}
	return nil
}

// Trend runs one statement per series, two with a breakdown: the first
// ranks the property's values over the whole range and keeps the top ones,
// the second counts per bucket with every other value folded into the
// other bucket, so unique users of "other" are counted once however many
// values they span.
func (s *Store) Trend(ctx context.Context, q analytics.TrendQuery) (_ []analytics.TrendRow, err error) {
	defer markOutOfMemory(&err)
	var out []analytics.TrendRow
	for i, series := range q.Series {
		rows, err := s.trendSeries(ctx, q, i, series)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

func (s *Store) trendSeries(ctx context.Context, q analytics.TrendQuery, index int, series analytics.TrendSeries) ([]analytics.TrendRow, error) {
	actor, err := actorSQL(q.AggregateBy)
	if err != nil {
		return nil, err
	}
	agg := "count()"
	if series.UniqueUsers {
		agg = "uniqExact(" + actor + ")"
	}
	var top []string
	if q.Breakdown != nil {
		if err := checkProperty(*q.Breakdown); err != nil {
			return nil, err
		}
		b := s.newBuilder()
		b.Write("SELECT ", b.text(*q.Breakdown), " AS v, ", agg, " AS n FROM ", s.table, " WHERE ")
		if err := seriesWhere(&b, q, series, actor); err != nil {
			return nil, err
		}
		b.Write(" GROUP BY v ORDER BY n DESC, v LIMIT ", b.arg(q.BreakdownLimit))
		top, err = queryAll(ctx, s, "ranking breakdown values", &b, func(r driver.Rows) (v string, err error) {
			var n uint64
			err = r.Scan(&v, &n)
			return v, err
		})
		if err != nil {
			return nil, err
		}
		if len(top) == 0 {
			return nil, nil // no event matched the series
		}
	}

	b := s.newBuilder()
	k := b.bucket(q.Interval, q.EventRange, "ts", q.From, q.To)
	rank, value := "toUInt64(0)", "''"
	if q.Breakdown != nil {
		// The top values are bound as one array parameter; a value's
		// position in it is its rank, 0 for the other bucket.
		rank = "indexOf(" + b.arg(top) + ", " + b.text(*q.Breakdown) + ")"
		value = "if(r = 0, '', " + b.text(*q.Breakdown) + ")"
	}
	b.Write("SELECT ", k, " AS k, ", rank, " AS r, ", value, " AS bv, ", agg, " FROM ", s.table, " WHERE ")
	if err := seriesWhere(&b, q, series, actor); err != nil {
		return nil, err
	}
	b.Write(" GROUP BY k, r, bv")
	out, err := queryAll(ctx, s, "computing trend", &b, func(rows driver.Rows) (analytics.TrendRow, error) {
		var k int64
		var r, n uint64
		var bv string
		err := rows.Scan(&k, &r, &bv, &n)
		return analytics.TrendRow{
			Series: index, Bucket: bucketTime(q.Interval, k), Rank: int(r), Breakdown: bv,
			Other: q.Breakdown != nil && r == 0, Value: int64(n),
		}, err
	})
	if err != nil || !series.UniqueUsers || q.Breakdown != nil || len(out) == 0 {
		return out, err
	}
	// The distinct users over the whole range are not the sum of the
	// buckets'. ClickHouse 18.16 has no grouping sets, so they are one
	// more statement over the same rows.
	w := s.newBuilder()
	w.Write("SELECT ", agg, " FROM ", s.table, " WHERE ")
	if err := seriesWhere(&w, q, series, actor); err != nil {
		return nil, err
	}
	total, err := queryAll(ctx, s, "computing trend", &w, func(rows driver.Rows) (n uint64, err error) {
		err = rows.Scan(&n)
		return n, err
	})
	if err != nil {
		return nil, err
	}
	for _, n := range total {
		out = append(out, analytics.TrendRow{Series: index, Total: true, Value: int64(n)})
	}
	return out, nil
}

// Retention groups per user the time of the first start event in the range
// and the periods with a return event, then counts each cohort's size and,
// for every later period, its users who returned in it.
func (s *Store) Retention(ctx context.Context, q analytics.RetentionQuery) (_ []analytics.RetentionRow, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	to := q.To.UnixMicro()
	// The periods are local (wall) ones; the returns are read from the
	// second period's start to the last one's end, as instants.
	returnFrom := q.Instant(q.Period.Next(q.Period.Truncate(q.Wall(q.From))))
	last := q.Instant(q.Period.Next(q.Period.Truncate(q.Wall(q.To.Add(-time.Microsecond)))))
	// Each expression binds its parameters as it is written, in order.
	b.Write("SELECT ", b.bucket(q.Period, q.EventRange, "first", q.From, q.To),
		" AS cohort, arrayJoin(arrayConcat([cohort], arrayFilter((p, c) -> p > c, periods, arrayResize(emptyArrayInt64(), length(periods), cohort)))) AS period, count()")
	b.Write(" FROM (SELECT minIf(ts, event = ", b.arg(q.StartEvent), " AND ts < ", b.arg(to), ") AS first,")
	b.Write(" countIf(event = ", b.arg(q.StartEvent), " AND ts < ", b.arg(to), ") AS starts,")
	b.Write(" groupUniqArrayIf(", b.bucket(q.Period, q.EventRange, "ts", returnFrom, last))
	b.Write(", event = ", b.arg(q.ReturnEvent), " AND ts >= ", b.arg(returnFrom.UnixMicro()), ") AS periods",
		" FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, last)
	b.Write(" AND is_bot = 0 AND event IN (", b.arg(q.StartEvent), ", ", b.arg(q.ReturnEvent), ")")
	// The filters apply to the start and the return events alike.
	for _, f := range q.Filters {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return nil, err
		}
	}
	b.Write(" GROUP BY user_id HAVING starts > 0) GROUP BY cohort, period")
	return queryAll(ctx, s, "computing retention", &b, func(rows driver.Rows) (analytics.RetentionRow, error) {
		var c, p int64
		var n uint64
		err := rows.Scan(&c, &p, &n)
		return analytics.RetentionRow{Cohort: bucketTime(q.Period, c), Return: bucketTime(q.Period, p), Users: int64(n)}, err
	})
}

// Bots lists AI-bot activity ($bot_pageview events) and the pages bots
// fetched most.
func (s *Store) Bots(ctx context.Context, q analytics.BotsQuery) (_ []analytics.BotActivity, _ []analytics.PageActivity, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	b.Write("SELECT bot_name, bot_category, count() AS hits, max(ts) FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND event = ", b.arg(botPageview), " AND bot_name != '' GROUP BY bot_name, bot_category ORDER BY hits DESC, bot_name")
	bots, err := queryAll(ctx, s, "listing bots", &b, func(rows driver.Rows) (a analytics.BotActivity, err error) {
		var hits uint64
		var last int64
		err = rows.Scan(&a.Name, &a.Category, &hits, &last)
		a.Hits, a.LastSeen = int64(hits), time.UnixMicro(last).UTC()
		return a, err
	})
	if err != nil {
		return nil, nil, err
	}

	var p builder
	p.Write("SELECT url, count() AS hits, uniqExact(bot_name) FROM ", s.table, " WHERE ")
	p.scope(q.EventRange, q.From, q.To)
	p.Write(" AND event = ", p.arg(botPageview), " AND url != '' GROUP BY url ORDER BY hits DESC, url LIMIT ", p.arg(q.TopPages))
	pages, err := queryAll(ctx, s, "listing bot pages", &p, func(rows driver.Rows) (a analytics.PageActivity, err error) {
		var hits, n uint64
		err = rows.Scan(&a.URL, &hits, &n)
		a.Hits, a.Bots = int64(hits), int64(n)
		return a, err
	})
	if err != nil {
		return nil, nil, err
	}
	return bots, pages, nil
}

// EventNames counts the scope's human events by name.
func (s *Store) EventNames(ctx context.Context, q analytics.EventNamesQuery) (_ []analytics.EventCount, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	b.Write("SELECT event, count() AS hits FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND is_bot = 0 GROUP BY event ORDER BY hits DESC, event LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing event names", &b, func(rows driver.Rows) (e analytics.EventCount, err error) {
		var hits uint64
		err = rows.Scan(&e.Name, &hits)
		e.Count = int64(hits)
		return e, err
	})
}

// HasEvents looks for one human event of the product and environment, on
// any day; LIMIT 1 lets ClickHouse stop reading at the first granule that
// holds one.
func (s *Store) HasEvents(ctx context.Context, scope analytics.EventRange) (_ bool, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	b.Write("SELECT toUInt8(1) FROM ", s.table, " WHERE product_id = ", b.arg(scope.ProductID), " AND env = ", b.arg(string(scope.Env)),
		" AND is_bot = 0 LIMIT 1")
	rows, err := queryAll(ctx, s, "looking for an event", &b, func(r driver.Rows) (n uint8, err error) {
		err = r.Scan(&n)
		return n, err
	})
	return len(rows) > 0, err
}

// LiveVisitors counts the distinct users of the scope's human events. The
// range is a few minutes: the ts bounds select the month's partition (the
// table is partitioned by toYYYYMM of ts), and within it the primary key
// (product_id, env, event, ts) narrows the marks read to the product's and
// environment's, and inside each event name's run of marks to the ts
// range. The ts test compares the stored Int64 microseconds with bound
// integers rather than converting them to a DateTime (18.16 has no
// DateTime64 to convert to without losing the microseconds, and a
// condition on an expression of the column is one its index analysis may
// not follow). uniqExact, as Trend's unique
// users, so that the count is exact on one server and on a cluster, where
// the Distributed table merges each shard's sets.
func (s *Store) LiveVisitors(ctx context.Context, scope analytics.EventRange) (_ int64, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	b.Write("SELECT uniqExact(user_id) FROM ", s.table, " WHERE ")
	b.scope(scope, scope.From, scope.To)
	b.Write(" AND is_bot = 0")
	rows, err := queryAll(ctx, s, "counting live visitors", &b, func(r driver.Rows) (n uint64, err error) {
		err = r.Scan(&n)
		return n, err
	})
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	return int64(rows[0]), nil
}

// dayMicros is one UTC day in microseconds.
const dayMicros = 86400000000

// ExperimentCounts aggregates per user, in one GROUP BY, the variants the
// user's exposures of the experiment named, the first exposure's time and,
// for each metric, the times of the user's conversion events; the next
// level keeps each metric's first time at or after the exposure (0: none),
// and the outer query counts users by metric and local day of those times.
// Only users whose exposures named one variant count for the metrics.
func (s *Store) ExperimentCounts(ctx context.Context, q analytics.ExperimentQuery) (_ []analytics.ExperimentRow, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	// Arguments bind in the order their placeholders appear in the text,
	// so each condition is written out again where it is used.
	exposed := func() error {
		b.Write("event = ", b.arg(analytics.ExposureEvent), " AND ")
		return b.filter(analytics.ExposureOf(q.ExperimentID))
	}
	metric := func(m string) error {
		if m == "" {
			return b.filter(analytics.Converted)
		}
		b.Write("event = ", b.arg(m))
		return nil
	}
	b.Write("SELECT toInt64(i) - 2 AS metric, if(length(vs) > 1, '', vs[1]) AS arm, length(vs) > 1 AS mixed,",
		// The days are the product's local days (docs/experiments.md).
		" toInt64(intDiv(", b.local(q.EventRange, "arr[i]", q.From, q.To), ", ", strconv.Itoa(dayMicros), ")) AS day, count()",
		" FROM (SELECT vs, [t0")
	for i := range q.Metrics {
		b.Printf(", f%d", i)
	}
	b.Write("] AS arr FROM (SELECT vs, t0")
	// The exposure's time reaches each lambda as a second array rather
	// than as a captured column: ClickHouse 18.16 drops subquery columns
	// that only a lambda uses (see Funnel).
	for i := range q.Metrics {
		b.Printf(", arrayReduce('min', arrayFilter((x, p) -> x >= p, c%[1]d, arrayResize(emptyArrayInt64(), length(c%[1]d), t0))) AS f%[1]d", i)
	}
	b.Write(" FROM (SELECT groupUniqArrayIf(", b.text(analytics.Property{Key: "variant"}), ", ")
	if err := exposed(); err != nil {
		return nil, err
	}
	b.Write(") AS vs, minIf(ts, ")
	if err := exposed(); err != nil {
		return nil, err
	}
	b.Write(") AS t0")
	for i, m := range q.Metrics {
		b.Write(", groupArrayIf(ts, ")
		if err := metric(m); err != nil {
			return nil, err
		}
		b.Printf(") AS c%d", i)
	}
	b.Write(", countIf(")
	if err := exposed(); err != nil {
		return nil, err
	}
	b.Write(") AS exposures FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND is_bot = 0 AND ((")
	if err := exposed(); err != nil {
		return nil, err
	}
	b.Write(")")
	for _, m := range q.Metrics {
		b.Write(" OR (")
		if err := metric(m); err != nil {
			return nil, err
		}
		b.Write(")")
	}
	b.Write(") GROUP BY user_id HAVING exposures > 0)))",
		" ARRAY JOIN arrayEnumerate(arr) AS i WHERE arr[i] > 0 AND (i = 1 OR length(vs) = 1) GROUP BY metric, arm, mixed, day")
	return queryAll(ctx, s, "counting experiment results", &b, func(rows driver.Rows) (analytics.ExperimentRow, error) {
		var r analytics.ExperimentRow
		var metric, day int64
		var mixed uint8
		var n uint64
		err := rows.Scan(&metric, &r.Variant, &mixed, &day, &n)
		r.Metric, r.Mixed, r.Day, r.Users = int(metric), mixed == 1, time.UnixMicro(day*dayMicros).UTC(), int64(n)
		return r, err
	})
}

// latestKeyOffset makes every microsecond time a 19-digit number (for
// times after 1938), so that the text "time|type\x1fmessage" sorts by
// time first: the max of it names a group's latest event.
const latestKeyOffset = 1000000000000000000

// aliased returns the group key of an event: its $exception_fingerprint,
// or the group it was merged into (the query's Aliases, docs/errors.md,
// "One bug, one group"), by transform, which 18.16 has. Each `?` is bound
// as it is written, in the statement's order. Without aliases, the
// fingerprint as it is, so that the statement stays the one it was.
func (b *builder) aliased(aliases map[string]string) string {
	fp := func() string { return b.text(analytics.Property{Key: "$exception_fingerprint"}) }
	if len(aliases) == 0 {
		return fp()
	}
	keys := analytics.SortedAliases(aliases)
	var sb strings.Builder
	sb.WriteString("transform(" + fp() + ", [")
	for i, k := range keys {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(b.arg(k))
	}
	sb.WriteString("], [")
	for i, k := range keys {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(b.arg(aliases[k]))
	}
	sb.WriteString("], " + fp() + ")")
	return sb.String()
}

// groupFilter writes the condition that an event counts in the group of
// fingerprint: its $exception_fingerprint is one of the group's members
// (analytics.AliasMembers), 0 when it has none.
func (b *builder) groupFilter(fingerprint string, aliases map[string]string) error {
	return b.anyFingerprint(analytics.AliasMembers(aliases, fingerprint))
}

// anyFingerprint writes the condition that an event's own
// $exception_fingerprint is one of members, 0 when there is none.
func (b *builder) anyFingerprint(members []string) error {
	switch len(members) {
	case 0:
		b.Write("0")
		return nil
	case 1:
		return b.filter(analytics.Filter{Property: analytics.Property{Key: "$exception_fingerprint"}, Operator: analytics.OpEq, Value: members[0]})
	}
	// One IN list, as on DuckDB: the property is read once per event.
	p := analytics.Property{Key: "$exception_fingerprint"}
	b.Write("(", b.isSet(p), " AND ", b.text(p), " IN (")
	for i, fp := range members {
		if i > 0 {
			b.Write(", ")
		}
		b.Write(b.arg(fp))
	}
	b.Write("))")
	return nil
}

// ErrorGroups groups the scope's $exception events by their
// $exception_fingerprint, in one GROUP BY: counts, unique users, first and
// last seen, the latest type and message, and a count for each of the
// query's days.
func (s *Store) ErrorGroups(ctx context.Context, q analytics.ErrorGroupsQuery) (_ []analytics.ErrorGroupRow, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	prop := func(key string) string { return b.text(analytics.Property{Key: key}) }
	b.Write("SELECT ", b.aliased(q.Aliases), " AS fp, max(concat(toString(ts + ", strconv.Itoa(latestKeyOffset), "), '|', ",
		prop("$exception_type"), ", '\\x1f', ", prop("$exception_message"), ")), count() AS n, uniqExact(user_id), min(ts), max(ts)")
	for i := range q.Days {
		end := q.Instant(q.Wall(q.Days[i]).AddDate(0, 0, 1)) // a local day: 23, 24 or 25 hours
		b.Write(", countIf(ts >= ", b.arg(q.Days[i].UnixMicro()), " AND ts < ", b.arg(end.UnixMicro()), ")")
	}
	b.Write(" FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND is_bot = 0 AND event = ", b.arg(analytics.ExceptionEvent))
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
	b.Write(" GROUP BY fp ORDER BY n DESC, fp LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing error groups", &b, func(rows driver.Rows) (analytics.ErrorGroupRow, error) {
		var g analytics.ErrorGroupRow
		var latest string
		var n, users uint64
		var first, last int64
		daily := make([]uint64, len(q.Days))
		dest := []any{&g.Fingerprint, &latest, &n, &users, &first, &last}
		for i := range daily {
			dest = append(dest, &daily[i])
		}
		err := rows.Scan(dest...)
		_, rest, _ := strings.Cut(latest, "|")
		g.Type, g.Message, _ = strings.Cut(rest, "\x1f")
		g.Events, g.Users = int64(n), int64(users)
		g.FirstSeen, g.LastSeen = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()
		g.Daily = make([]int64, len(daily))
		for i, d := range daily {
			g.Daily[i] = int64(d)
		}
		return g, err
	})
}

// ErrorOccurrences returns a group's latest $exception events.
func (s *Store) ErrorOccurrences(ctx context.Context, q analytics.ErrorOccurrencesQuery) (_ []analytics.ErrorOccurrence, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	b.Write("SELECT ts, distinct_id, browser, os, url, properties FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND is_bot = 0 AND event = ", b.arg(analytics.ExceptionEvent), " AND ")
	if err := b.groupFilter(q.Fingerprint, q.Aliases); err != nil {
		return nil, err
	}
	b.Write(" ORDER BY ts DESC, distinct_id, properties LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing error occurrences", &b, func(rows driver.Rows) (analytics.ErrorOccurrence, error) {
		var o analytics.ErrorOccurrence
		var ts int64
		var props string
		err := rows.Scan(&ts, &o.DistinctID, &o.Browser, &o.OS, &o.URL, &props)
		o.Time, o.Properties = time.UnixMicro(ts).UTC(), json.RawMessage(props)
		return o, err
	})
}

// UserEvents returns one user's latest events. The table's key is
// (product_id, env, event, ts), so the user's events are found by reading
// the product's events of the environment (older than Before), with the
// distinct_id compared as text: user_id, its hash, is no key either. The
// session id is read from prop_values, as filters read a property (18.16
// has no JSONExtract*; the text form is the one DuckDB's
// json_extract_string gives, see flatten).
func (s *Store) UserEvents(ctx context.Context, q analytics.UserEventsQuery) (_ []analytics.UserEvent, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	b.Write("SELECT uuid, ts, event, url, path, browser, os, device_type, ", b.text(analytics.Property{Key: analytics.SessionIDProperty}),
		", properties FROM ", s.table, " WHERE product_id = ", b.arg(q.ProductID), " AND env = ", b.arg(string(q.Env)),
		" AND distinct_id = ", b.arg(q.DistinctID))
	if !q.Before.IsZero() {
		b.Write(" AND ts < ", b.arg(q.Before.UnixMicro()))
	}
	b.Write(" AND is_bot = 0 ORDER BY ts DESC, uuid LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing a user's events", &b, func(rows driver.Rows) (analytics.UserEvent, error) {
		var e analytics.UserEvent
		var id, props string
		var ts int64
		err := rows.Scan(&id, &ts, &e.Name, &e.URL, &e.Path, &e.Browser, &e.OS, &e.DeviceType, &e.SessionID, &props)
		if err == nil && len(id) != len(e.UUID) {
			err = errors.New("uuid is not 16 bytes")
		}
		copy(e.UUID[:], id)
		e.Time, e.Properties = time.UnixMicro(ts).UTC(), json.RawMessage(props)
		return e, err
	})
}

// ErrorActivity reads what the alert rules need of each group in one
// GROUP BY: its events and users in the recent part, its events in the
// history before it, its first event and its latest type and message.
// Every aggregate is one ClickHouse 18.16 runs (countIf, uniqExactIf).
func (s *Store) ErrorActivity(ctx context.Context, q analytics.ErrorActivityQuery) (_ []analytics.ErrorActivityRow, err error) {
	defer markOutOfMemory(&err)
	b := s.newBuilder()
	prop := func(key string) string { return b.text(analytics.Property{Key: key}) }
	recent := q.Recent.UnixMicro()
	b.Write("SELECT ", b.aliased(q.Aliases), " AS fp, max(concat(toString(ts + ", strconv.Itoa(latestKeyOffset), "), '|', ",
		prop("$exception_type"), ", '\\x1f', ", prop("$exception_message"), ")), countIf(ts >= ", b.arg(recent),
		"), uniqExactIf(user_id, ts >= ", b.arg(recent), "), countIf(ts < ", b.arg(recent), "), min(ts)")
	b.Write(" FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND is_bot = 0 AND event = ", b.arg(analytics.ExceptionEvent))
	b.Write(" GROUP BY fp HAVING countIf(ts >= ", b.arg(recent), ") >= ", b.arg(max(q.MinRecent, 1)))
	if q.FirstOnly {
		b.Write(" AND countIf(ts < ", b.arg(recent), ") = 0")
	}
	b.Write(" ORDER BY fp")
	return queryAll(ctx, s, "reading error activity", &b, func(rows driver.Rows) (analytics.ErrorActivityRow, error) {
		var g analytics.ErrorActivityRow
		var latest string
		var n, users, history uint64
		var first int64
		err := rows.Scan(&g.Fingerprint, &latest, &n, &users, &history, &first)
		_, rest, _ := strings.Cut(latest, "|")
		g.Type, g.Message, _ = strings.Cut(rest, "\x1f")
		g.Recent, g.Users, g.History = int64(n), int64(users), int64(history)
		g.FirstSeen = time.UnixMicro(first).UTC()
		return g, err
	})
}
