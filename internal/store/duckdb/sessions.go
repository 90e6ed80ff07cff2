package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// Sessions builds the visits of docs/queries.md, "Sessions", in one
// statement. Window functions number each user's visits per session id:
// an event starts a visit when it is the first of its user and session id
// in the read window, or SessionGap or more after the one before. The
// visits are materialised once and read twice: counted by bucket, entry
// and exit page together, which gives the buckets, the totals and the top
// entry and exit pages, and for the visitors; each a row set told apart by
// its first column.
//
// The windows order by time alone. Which visit an event is in depends
// only on times: of events at the same time, whichever the first window
// sees first gets the gap to the time before and the others a gap of 0,
// so at most one of them starts a visit; the running sum's frame is the
// default RANGE one, which takes in every event of the same time, so all
// of them get the same visit number whatever order the second window puts
// them in. (Adding path to the sort key, as entry and exit pages order
// events, cost about a tenth of the statement's time at 1 M events, and
// those pages are chosen by arg_min and arg_max over (ts, path) anyway.)
//
// The events read run from SessionGap before the range, enough to tell a
// visit that started before it (there is then an event less than
// SessionGap before its first one in the range), to SessionLookahead past
// its end, where visits that started in it end.
func (s *Store) Sessions(ctx context.Context, q analytics.SessionsQuery) (_ analytics.SessionsAnswer, err error) {
	defer markOutOfMemory(&err)
	if err := s.dictionaries(ctx); err != nil {
		return analytics.SessionsAnswer{}, err
	}
	// The visits of the settled past are kept (visits.go).
	if res, ok, err := s.keptSessions(ctx, q); ok || err != nil {
		return res, err
	}
	return s.sessions(ctx, q, time.Time{})
}

// sessions is Sessions' statement. With kept set, the visits that start
// before it come from the table of kept visits (keptVisits) and the
// statement builds those from kept on.
func (s *Store) sessions(ctx context.Context, q analytics.SessionsQuery, kept time.Time) (analytics.SessionsAnswer, error) {
	from := q.From
	if !kept.IsZero() {
		from = kept
	}
	var b builder
	session, err := b.property(analytics.Property{Key: analytics.SessionIDProperty})
	if err != nil {
		return analytics.SessionsAnswer{}, err
	}
	b.Write("WITH e AS (SELECT uid, coalesce(", session, ", '') AS sid, ts, coalesce(path, '') AS path,",
		" CASE WHEN eid = ", b.eid(s.eventID(analytics.PageviewEvent)), " THEN 0 WHEN eid IN (")
	for i, name := range analytics.NonInteractiveEvents {
		if i > 0 {
			b.Write(", ")
		}
		b.Write(b.eid(s.eventID(name)))
	}
	b.Write(") THEN 1 ELSE 2 END AS kind, ")
	if len(q.Filters) == 0 {
		b.Write("true")
	}
	for i, f := range q.Filters {
		if i > 0 {
			b.Write(" AND ")
		}
		if err := b.filter(f); err != nil {
			return analytics.SessionsAnswer{}, err
		}
	}
	b.Write(" AS m FROM events WHERE ")
	end := q.To.Add(analytics.SessionLookahead)
	if !kept.IsZero() && !kept.Before(q.To) {
		// Every visit of the range is kept: no visit can start at or
		// after its end, so the statement reads no event (a day of them
		// past the range otherwise, for nothing).
		end = from.Add(-analytics.SessionGap)
	}
	b.scope("", q.EventRange, from.Add(-analytics.SessionGap), end)
	b.Write(" AND NOT is_bot)",
		", g AS (SELECT *, CASE WHEN epoch_us(ts) - epoch_us(lag(ts) OVER w) < ", b.arg(analytics.SessionGap.Microseconds()),
		" THEN 0 ELSE 1 END AS new FROM e WINDOW w AS (PARTITION BY uid, sid ORDER BY ts))",
		", n AS (SELECT *, sum(new) OVER (PARTITION BY uid, sid ORDER BY ts) AS vn FROM g)")
	// A visit's entry page is its first page view's path, of equal times
	// the least path; its exit page the last's, the greatest. Neither is
	// set for a visit without a page view, which then fails a page filter.
	entry, exit := "arg_min(path, (ts, path)) FILTER (WHERE kind = 0)", "arg_max(path, (ts, path)) FILTER (WHERE kind = 0)"
	b.Write(", v AS MATERIALIZED (SELECT uid, min(ts) AS start, epoch_us(max(ts)) - epoch_us(min(ts)) AS dur,",
		" count(*) FILTER (WHERE kind = 0) AS pv,",
		" (count(*) FILTER (WHERE kind = 0) <= 1 AND count(*) FILTER (WHERE kind = 2) = 0)::BIGINT AS bounce,",
		" ", entry, " AS entry, ", exit, " AS exit",
		" FROM n GROUP BY uid, sid, vn HAVING min(ts) >= ", b.ts(from), " AND min(ts) < ", b.ts(q.To), " AND bool_or(m)")
	for _, f := range q.Pages {
		page := entry
		if f.Exit {
			page = exit
		}
		b.Write(" AND ", page, " = ", b.arg(f.Path))
	}
	b.Write(")")
	// The visits: those the statement built (v), and with kept set the
	// kept ones, read from their table by each of the two reads below
	// (which takes only the columns it needs) rather than added to v:
	// copying 2.8 M kept visits into v took most of the statement's time
	// at 10 M events (docs/benchmarks.md, "One pass for each breakdown").
	visits, users := "v", "v"
	if !kept.IsZero() {
		visits = "(SELECT * FROM v UNION ALL " + keptVisits(&b, q, kept) + ") AS v"
		users = "(SELECT uid FROM v UNION ALL " + s.keptUsers(q.ProductID, keptWhere(&b, q, kept)) + ") AS v"
	}
	// One pass over the visits for the buckets, the entry pages and the
	// exit pages: c counts the visits by all three at once (a few
	// thousand groups where paths are few; as many as the visits at worst,
	// where nearly every visit has its own pair of pages, a hash aggregate
	// as large as each of the two by page before), and the three
	// groupings are sums of c's rows. Each was its own read of the visits
	// and its own aggregate, and the kept visits' paths were read and
	// hashed twice: 20-25 % of the statement at 10 M events
	// (docs/benchmarks.md, "Sessions in one pass"; GROUPING SETS over the
	// visits themselves was half as slow again). The totals are the
	// buckets' sums, taken in Go: every visit starts in the range and so
	// in one bucket. The visitors are one more read, of the users alone
	// (keptUsers), counted as bits of the dense ids (uniqueUsers), where a
	// hash of 2.8 M kept visits' users took most of the totals' time.
	b.Write(", c AS MATERIALIZED (SELECT bucket, entry, exit, count(*) AS n, sum(bounce)::BIGINT AS bounces,",
		" sum(pv)::BIGINT AS pv, sum(dur)::BIGINT AS dur FROM (SELECT ",
		b.bucketOf(q.EventRange, q.Interval, b.local(q.EventRange, "start", q.From, q.To), nil, ""), " AS bucket, entry, exit, bounce, pv, dur",
		" FROM ", visits, ") GROUP BY bucket, entry, exit)",
		// GROUPING is a mask of the columns a set does not group by, the
		// first the highest bit: 3 is the buckets' set, 5 the entry
		// pages', 6 the exit pages'.
		", a AS MATERIALIZED (SELECT GROUPING(bucket, entry, exit) AS gs, bucket, coalesce(entry, exit) AS path, sum(n)::BIGINT AS n,",
		" sum(bounces)::BIGINT AS bounces, sum(pv)::BIGINT AS pv, sum(dur)::BIGINT AS dur FROM c GROUP BY GROUPING SETS ((bucket), (entry), (exit)))",
		" SELECT 0 AS part, NULL::TIMESTAMP, '', 0, 0, 0, 0, coalesce(", s.uniqueUsers(q.ProductID, 1, true), ", 0) FROM ", users,
		" UNION ALL SELECT 1, bucket, '', n, bounces, pv, dur, 0 FROM a WHERE gs = 3")
	for part, gs := range []int{5, 6} {
		b.Printf(" UNION ALL (SELECT %d, NULL::TIMESTAMP, path, n, bounces, pv, dur, 0 FROM a WHERE gs = %d AND path IS NOT NULL ORDER BY n DESC, path LIMIT %s)",
			part+2, gs, b.arg(q.Limit))
	}
	rows, err := s.query(ctx, &b)
	if err != nil {
		return analytics.SessionsAnswer{}, fmt.Errorf("computing sessions: %w", err)
	}
	defer rows.Close()
	var res analytics.SessionsAnswer
	for rows.Next() {
		var part int
		var bucket sql.NullTime
		var path string
		var st analytics.SessionStats
		var visitors int64
		var bounces, pv, dur sql.NullInt64 // NULL when no visit
		if err := rows.Scan(&part, &bucket, &path, &st.Visits, &bounces, &pv, &dur, &visitors); err != nil {
			return analytics.SessionsAnswer{}, fmt.Errorf("computing sessions: %w", err)
		}
		st.Bounces, st.Pageviews, st.DurationMicros = bounces.Int64, pv.Int64, dur.Int64
		switch part {
		case 0:
			res.Visitors = visitors
		case 1:
			res.Buckets = append(res.Buckets, analytics.SessionBucket{Bucket: bucket.Time.UTC(), SessionStats: st})
			res.Totals.Visits += st.Visits
			res.Totals.Bounces += st.Bounces
			res.Totals.Pageviews += st.Pageviews
			res.Totals.DurationMicros += st.DurationMicros
		case 2:
			res.Entry = append(res.Entry, analytics.SessionPage{Path: path, SessionStats: st})
		case 3:
			res.Exit = append(res.Exit, analytics.SessionPage{Path: path, SessionStats: st})
		}
	}
	if err := rows.Err(); err != nil {
		return analytics.SessionsAnswer{}, fmt.Errorf("computing sessions: %w", err)
	}
	res.Sort()
	return res, nil
}

// perfectHashBits is the store's perfect_ht_threshold (Open): DuckDB
// groups by an integer key with an array, not a hash table, when the
// key's range fits in this many bits.
const perfectHashBits = 20

// keptUsers returns a SELECT of the users of the kept visits that meet
// where (keptWhere), each once where the product's dense ids fit
// perfectHashBits: DuckDB then groups them with an array indexed by the
// dense id, and the bitmap of the visitors (uniqueUsers) takes one row
// per user rather than one per visit (docs/benchmarks.md, "Sessions in
// one pass"). Past that range the grouping would be a hash, slower than
// the bitmap alone: the kept visits' users as they are.
func (s *Store) keptUsers(product int64, where string) string {
	if uint64(s.userCount(product))+1<<16 < 1<<perfectHashBits {
		return "(SELECT uid FROM visits WHERE " + where + " GROUP BY uid)"
	}
	return "SELECT uid FROM visits WHERE " + where
}
