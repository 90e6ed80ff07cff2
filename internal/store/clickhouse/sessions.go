package clickhouse

import (
	"context"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

// Sessions builds the visits of docs/queries.md, "Sessions", in one
// statement of four levels, innermost first:
//
//  1. Per user and session id, one GROUP BY collects the events as an
//     array of (time, path, kind, matched) tuples, sorted: by time, then
//     path, as entry and exit pages are ordered. On a cluster this is the
//     level the shards aggregate and the initiator merges, so a visit is
//     whole however its events were sharded.
//  2. Each event is numbered with its visit: arrayDifference gives the gap
//     to the event before, and arrayCumSum counts the gaps of SessionGap or
//     more (and the first event) up to it. arrayJoin makes a row per event.
//  3. A GROUP BY per user, session id and visit number makes a row per
//     visit, kept when it starts in the range and an event passed every
//     filter.
//  4. arrayJoin makes four rows of each visit (the totals, its bucket, its
//     entry page and its exit page), aggregated together; LIMIT BY keeps
//     the top pages of each part.
//
// 18.16 workarounds: it has no window functions (current releases have
// lag and running sums over a window; arrays serve on both), and no
// arg_min over a tuple ordering, so the entry page is
// tupleElement(minIf((ts, path), …), 2).
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
	var b builder
	b.Write("SELECT part, k, page, count() AS visits, sum(bounce), sum(pv), sum(dur), uniqExact(u) FROM (",
		"SELECT u, dur, pv, bounce, arrayJoin([(toUInt8(0), toInt64(0), ''), (toUInt8(1), ", bucket(q.Interval, "start"), ", ''),",
		" (toUInt8(2), toInt64(0), entry), (toUInt8(3), toInt64(0), exit)]) AS t, t.1 AS part, t.2 AS k, t.3 AS page FROM (",
		"SELECT u, min(x.1) AS start, max(x.1) - min(x.1) AS dur, countIf(x.3 = 0) AS pv,",
		" toUInt64(pv <= 1 AND countIf(x.3 = 2) = 0) AS bounce,",
		" tupleElement(minIf((x.1, x.2), x.3 = 0), 2) AS entry, tupleElement(maxIf((x.1, x.2), x.3 = 0), 2) AS exit, max(x.4) AS m FROM (",
		"SELECT u, sid, arrayJoin(arrayMap((e, v) -> (e, v), ev, arrayCumSum(arrayMap((d, i) -> toUInt32(i = 1 OR d >= ",
		b.arg(analytics.SessionGap.Microseconds()), "), arrayDifference(arrayMap(e -> e.1, ev)), arrayEnumerate(ev))))) AS xn,",
		" xn.1 AS x, xn.2 AS n FROM (",
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
	b.Write(" AND is_bot = 0 GROUP BY u, sid)) GROUP BY u, sid, n",
		" HAVING start >= ", b.arg(q.From.UnixMicro()), " AND start < ", b.arg(q.To.UnixMicro()), " AND m = 1))",
		// A visit without a page view has no entry or exit page.
		" WHERE part < 2 OR pv > 0 GROUP BY part, k, page ORDER BY part, visits DESC, page",
		" LIMIT ", b.arg(max(q.Limit, len(q.Interval.Buckets(q.From, q.To)))), " BY part")
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
			res.Totals, res.Visitors = st, int64(x.users)
		case 1:
			res.Buckets = append(res.Buckets, analytics.SessionBucket{Bucket: bucketTime(q.Interval, x.k), SessionStats: st})
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
