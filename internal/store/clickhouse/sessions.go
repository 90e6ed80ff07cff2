package clickhouse

import (
	"context"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

// Sessions builds the visits of docs/queries.md, "Sessions", in one
// statement of three levels, innermost first:
//
//  1. Per user and session id, one GROUP BY collects the events as an
//     array of (time, path, kind, matched) tuples, sorted: by time, then
//     path, as entry and exit pages are ordered. On a cluster this is the
//     level the shards aggregate and the initiator merges, so a visit is
//     whole however its events were sharded.
//  2. Array functions cut each array into visits without leaving the row:
//     arrayDifference gives each event's gap to the one before, a gap of
//     SessionGap or more (or the first event) starts a visit, and running
//     sums (arrayCumSum) taken at each visit's last event, less those at
//     the visit before, give its page views, interactions and matching
//     events. arrayJoin then makes one row per visit (its bucket), per
//     entry and exit page, and one per user and session id (the visitors).
//  3. One GROUP BY sums the rows of the visits counted; LIMIT BY keeps the
//     top pages of each part.
//
// 18.16 workarounds: it has no window functions (current releases have
// lag and running sums over a window), so the visits are cut with arrays,
// which both run; and no lambda may read a column it is not passed, so
// every per-visit array is lined up with the others by filtering, never
// indexed from inside a lambda. Every alias and lambda parameter has its
// own name: ClickHouse resolves names statement-wide.
//
// The events read run from SessionGap before the range to
// SessionLookahead after it, as in the DuckDB store.
func (s *Store) Sessions(ctx context.Context, q analytics.SessionsQuery) (_ analytics.SessionsAnswer, err error) {
	defer markOutOfMemory(&err)
	for _, f := range q.Filters {
		if err := checkProperty(f.Property); err != nil {
			return analytics.SessionsAnswer{}, err
		}
	}
	b := s.newBuilder()
	// Level 2's arrays, per user and session id, ev sorted. Each name is
	// unique in the statement (ClickHouse resolves aliases statement-wide,
	// lambda parameters included). fin marks a visit's last event; the
	// running sums (arrayCumSum) at a visit's last event less those before
	// its first give the visit's page views, interactions and matches.
	// Per-visit arrays (v_…) hold one element per visit, in visit order;
	// w_… the same for the visits with a page view, which line up with
	// their entry and exit paths.
	// Without page filters the visits kept are those in the range with a
	// matching event; with them, v_in is that, and v_keep adds them.
	inRange := "v_keep"
	if len(q.Pages) > 0 {
		inRange = "v_in"
	}
	arrays := []string{
		"arrayMap(q1 -> q1.1, ev) AS a_t",
		"arrayMap(q2 -> q2.3, ev) AS a_k",
		"arrayMap((q3, q4) -> toUInt8(q4 = 1 OR q3 >= " + b.arg(analytics.SessionGap.Microseconds()) + "), arrayDifference(a_t), arrayEnumerate(a_t)) AS a_new",
		"arrayPushBack(arraySlice(a_new, 2), toUInt8(1)) AS a_fin",
		"arrayMap(q5 -> toUInt64(q5 = 0), a_k) AS a_pv",
		"arrayCumSum(a_pv) AS c_pv",
		"arrayCumSum(arrayMap(q6 -> toUInt64(q6 = 2), a_k)) AS c_int",
		"arrayCumSum(arrayMap(q7 -> toUInt64(q7.4), ev)) AS c_m",
		// The sums before a visit's first event: the sum at the last
		// event of the visit before (0 for the first visit).
		"arrayPushFront(arrayPopBack(arrayFilter((q8, q9) -> q9 = 1, c_pv, a_fin)), toUInt64(0)) AS b_pv",
		"arrayPushFront(arrayPopBack(arrayFilter((q10, q11) -> q11 = 1, c_int, a_fin)), toUInt64(0)) AS b_int",
		"arrayPushFront(arrayPopBack(arrayFilter((q12, q13) -> q13 = 1, c_m, a_fin)), toUInt64(0)) AS b_m",
		"arrayFilter((q14, q15) -> q15 = 1, a_t, a_new) AS v_start",
		"arrayMap((q16, q17) -> q17 - q16, v_start, arrayFilter((q18, q19) -> q19 = 1, a_t, a_fin)) AS v_dur",
		"arrayMap((q20, q21) -> toUInt64(q20 - q21), arrayFilter((q22, q23) -> q23 = 1, c_pv, a_fin), b_pv) AS v_pv",
		"arrayMap((q24, q25) -> toUInt64(q24 - q25), arrayFilter((q26, q27) -> q27 = 1, c_int, a_fin), b_int) AS v_int",
		"arrayMap((q28, q29, q30) -> toUInt8(q28 >= " + b.arg(q.From.UnixMicro()) + " AND q28 < " + b.arg(q.To.UnixMicro()) +
			" AND q29 > q30), v_start, arrayFilter((q31, q32) -> q32 = 1, c_m, a_fin), b_m) AS " + inRange,
		"arrayMap((q33, q34) -> toUInt64(q33 <= 1 AND q34 = 0), v_pv, v_int) AS v_bounce",
		// Page views in order, each with its visit's number; a visit's
		// entry is its first, its exit its last.
		"arrayFilter((q35, q36) -> q36 = 0, arrayCumSum(arrayMap(q37 -> toUInt64(q37), a_new)), a_k) AS p_vn",
		"arrayMap(q38 -> q38.2, arrayFilter(q39 -> q39.3 = 0, ev)) AS p_path",
		"arrayMap((q40, q41) -> toUInt8(q41 = 1 OR q40 != 0), arrayDifference(p_vn), arrayEnumerate(p_vn)) AS p_first",
		// (Sliced back to the length of p_first, so that a session
		// without page views keeps an empty array.)
		"arraySlice(arrayPushBack(arraySlice(p_first, 2), toUInt8(1)), 1, length(p_first)) AS p_last",
	}
	if len(q.Pages) > 0 {
		arrays = append(arrays, pageFilterArrays(&b, q.Pages)...)
	}
	with := func(name, v string) string {
		return "arrayFilter((w1, w2) -> w2 > 0, " + v + ", v_pv) AS " + name
	}
	arrays = append(arrays, with("w_keep", "v_keep"), with("w_bounce", "v_bounce"), with("w_pv", "v_pv"), with("w_dur", "v_dur"))
	b.Write("SELECT part, k, page, count() AS visits, sum(r_bounce), sum(r_pv), sum(r_dur), uniqExactIf(u, part = 0) FROM (SELECT u, ")
	for _, a := range arrays {
		b.Write(a, ", ")
	}
	// One row per visit (part 1, its bucket), per entry and exit page of
	// a visit (parts 2 and 3), and one per user and session id (part 0)
	// for the visitors; r.7 keeps the rows of the visits counted.
	b.Write("arrayJoin(arrayConcat(",
		"[(toUInt8(0), toInt64(0), '', toUInt64(0), toUInt64(0), toInt64(0), toUInt8(arrayExists(x0 -> x0 = 1, v_keep)))],",
		" arrayMap((x1, x2, x3, x4, x5) -> (toUInt8(1), ", b.bucket(q.Interval, q.EventRange, "x1", q.From, q.To), ", '', x2, x3, x4, x5), v_start, v_bounce, v_pv, v_dur, v_keep),",
		" arrayMap((x6, x7, x8, x9, x10) -> (toUInt8(2), toInt64(0), x6, x7, x8, x9, x10), arrayFilter((x11, x12) -> x12 = 1, p_path, p_first), w_bounce, w_pv, w_dur, w_keep),",
		" arrayMap((x13, x14, x15, x16, x17) -> (toUInt8(3), toInt64(0), x13, x14, x15, x16, x17), arrayFilter((x18, x19) -> x19 = 1, p_path, p_last), w_bounce, w_pv, w_dur, w_keep)",
		")) AS r, r.1 AS part, r.2 AS k, r.3 AS page, r.4 AS r_bounce, r.5 AS r_pv, r.6 AS r_dur, r.7 AS r_keep FROM (",
		"SELECT user_id AS u, ", b.text(analytics.Property{Key: analytics.SessionIDProperty}), " AS sid,",
		" arraySort(groupArray((ts, path, multiIf(event = ", b.arg(analytics.PageviewEvent), ", toUInt8(0), event IN (")
	for i, name := range analytics.NonInteractiveEvents {
		if i > 0 {
			b.Write(", ")
		}
		b.Write(b.arg(name))
	}
	b.Write("), toUInt8(1), toUInt8(2)), toUInt8(")
	if len(q.Filters) == 0 {
		b.Write("1")
	}
	for i, f := range q.Filters {
		if i > 0 {
			b.Write(" AND ")
		}
		if err := b.filter(f); err != nil {
			return analytics.SessionsAnswer{}, err
		}
	}
	b.Write(")))) AS ev FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From.Add(-analytics.SessionGap), q.To.Add(analytics.SessionLookahead))
	b.Write(" AND is_bot = 0 GROUP BY u, sid))",
		" WHERE r_keep = 1 GROUP BY part, k, page ORDER BY part, visits DESC, page",
		" LIMIT ", b.arg(max(q.Limit, len(q.Buckets(q.Interval)))), " BY part")
	type row struct {
		part   uint8
		k      int64
		page   string
		visits uint64
		bounce uint64
		pv     uint64
		dur    int64
		users  uint64
	}
	rows, err := queryAll(ctx, s, "computing sessions", &b, func(r driver.Rows) (x row, err error) {
		err = r.Scan(&x.part, &x.k, &x.page, &x.visits, &x.bounce, &x.pv, &x.dur, &x.users)
		return x, err
	})
	if err != nil {
		return analytics.SessionsAnswer{}, err
	}
	var res analytics.SessionsAnswer
	for _, x := range rows {
		st := analytics.SessionStats{Visits: int64(x.visits), Bounces: int64(x.bounce), Pageviews: int64(x.pv), DurationMicros: x.dur}
		switch x.part {
		case 0:
			res.Visitors = int64(x.users)
		case 1:
			res.Buckets = append(res.Buckets, analytics.SessionBucket{Bucket: bucketTime(q.Interval, x.k), SessionStats: st})
			res.Totals.Visits += st.Visits
			res.Totals.Bounces += st.Bounces
			res.Totals.Pageviews += st.Pageviews
			res.Totals.DurationMicros += st.DurationMicros
		case 2:
			if len(res.Entry) < q.Limit {
				res.Entry = append(res.Entry, analytics.SessionPage{Path: x.page, SessionStats: st})
			}
		case 3:
			if len(res.Exit) < q.Limit {
				res.Exit = append(res.Exit, analytics.SessionPage{Path: x.page, SessionStats: st})
			}
		}
	}
	res.Sort()
	return res, nil
}

// pageFilterArrays are the arrays that keep the visits whose entry and
// exit pages are the filters' paths (analytics.PageFilter). Each visit
// with a page view gets its flag from its entry and exit paths (p_entry,
// p_exit, one per such visit, in visit order). A visit without a page
// view has neither page, so its flag is 0. 18.16's lambdas cannot index
// another array, so the flags are put back in visit order by sorting
// (visit number, flag) pairs: those of the visits with a page view and a
// 0 for each of the others. v_keep is then v_in (the range and the event
// filters) and that flag.
func pageFilterArrays(b *builder, pages []analytics.PageFilter) []string {
	var cond strings.Builder
	for i, f := range pages {
		if i > 0 {
			cond.WriteString(" AND ")
		}
		page := "pf1"
		if f.Exit {
			page = "pf2"
		}
		cond.WriteString(page + " = " + b.arg(f.Path))
	}
	return []string{
		"arrayFilter((pf3, pf4) -> pf4 = 1, p_path, p_first) AS p_entry",
		"arrayFilter((pf5, pf6) -> pf6 = 1, p_path, p_last) AS p_exit",
		"arrayMap((pf1, pf2) -> toUInt8(" + cond.String() + "), p_entry, p_exit) AS p_pass",
		"arrayMap(pf7 -> pf7.2, arraySort(arrayConcat(" +
			"arrayMap((pf8, pf9) -> (pf8, pf9), arrayFilter((pf10, pf11) -> pf11 > 0, arrayEnumerate(v_pv), v_pv), p_pass), " +
			"arrayMap(pf12 -> (pf12, toUInt8(0)), arrayFilter((pf13, pf14) -> pf14 = 0, arrayEnumerate(v_pv), v_pv))))) AS v_pass",
		"arrayMap((pf15, pf16) -> toUInt8(pf15 = 1 AND pf16 = 1), v_in, v_pass) AS v_keep",
	}
}
