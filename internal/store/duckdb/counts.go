package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
)

// Counts kept for the settled past (docs/queries.md, "Counts kept for the
// settled past"). The Overview's trend of page views, top pages, top
// sources and browsers each count every page view of the range, though
// the settled past does not change. A trend series that counts events
// (not users), without filters but "the breakdown is set", broken down by
// a column or not at all, is answered from counts by UTC hour and value
// held in memory for the whole hours before the scope's counted time (a
// refresh's settled time, once every append that saw an older one has
// committed), and from events for the rest of the range. A zone whose
// offset is a whole number of hours over the range puts every event of a
// UTC hour in the same bucket, so the hours add up to any bucket; other
// zones, and the hours' first reading, take the statement.
//
// Exactness. An event stored with a time before the counted time (late),
// a deletion of events, a reopened file: each drops the counts it can
// touch before it changes the table (the late event's hours on, the
// product's counts, everything), and is counted busy until it committed.
// A query keeps the hours it read only when nothing was busy as it began
// and nothing dropped counts while it ran (a generation number), so no
// reading that missed a change is kept. Restarts start with none: the
// first Overview after a start reads events and keeps its hours.

// maxCountRows bounds the rows (hour, value, count) held for every scope
// together, about 16 bytes each and the values' text: when a query's
// hours would pass it, the others are dropped. One kind of count over one
// range may hold a quarter of it, or is not kept: a breakdown by a column
// of many values (URLs) reads events every time.
const maxCountRows = 1 << 20

// countKey names one kind of count of a scope: the events of one name,
// by the value of one column ("" for none), or only those where it is set.
type countKey struct {
	product int64
	env     analytics.Env
	event   uint32
	column  string
	// isSet: only the events with the column set are counted.
	isSet bool
}

// countRow is the count of events of one UTC hour (hours since the
// epoch) and value (an index into countEntry.values; nullValue for an
// unset column).
type countRow struct {
	hour int32
	v    int32
	n    int64
}

const nullValue = -1

// countEntry holds every hour of [from, to) of one kind of count, rows in
// order of hour.
type countEntry struct {
	from, to int32
	values   []string
	rows     []countRow
}

// countCache holds the kept counts and what tells a query whether it may
// keep what it read.
type countCache struct {
	mu      sync.Mutex
	entries map[countKey]*countEntry
	rows    int
	// users are the distinct users kept by hour (users.go), userRows
	// their rows; the same drops and generation cover them.
	users    map[countKey]*userEntry
	userRows int
	// gen counts the drops; busy the changes of events in progress.
	gen  uint64
	busy int
	// answered counts the answers that read kept counts or users,
	// answeredUsers those of users (for tests).
	answered, answeredUsers atomic.Int64
	// off, set only by tests, leaves every series to the statement.
	off bool
}

// dropFrom drops the counts of product and env from hour on; c.mu must
// be held.
func (c *countCache) dropFrom(product int64, env analytics.Env, hour int32) {
	for k, e := range c.entries {
		if k.product != product || k.env != env || e.to <= hour {
			continue
		}
		if e.from >= hour {
			c.rows -= len(e.rows)
			delete(c.entries, k)
			continue
		}
		i, _ := slices.BinarySearchFunc(e.rows, hour, func(r countRow, h int32) int { return int(r.hour - h) })
		c.rows -= len(e.rows) - i
		e.rows, e.to = e.rows[:i:i], hour
	}
	for k, e := range c.users {
		if k.product != product || k.env != env || e.to <= hour {
			continue
		}
		if e.from >= hour {
			c.userRows -= e.rows
			delete(c.users, k)
			continue
		}
		n := e.rows
		e.hours, e.to = e.hours[:hour-e.from:hour-e.from], hour
		e.count()
		c.userRows -= n - e.rows
	}
	c.gen++
}

// changing drops every count of product (all, for product 0) and counts
// a change in progress until the returned func is called, after its
// commit.
func (c *countCache) changing(product int64) (done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if product == 0 || k.product == product {
			c.rows -= len(e.rows)
			delete(c.entries, k)
		}
	}
	for k, e := range c.users {
		if product == 0 || k.product == product {
			c.userRows -= e.rows
			delete(c.users, k)
		}
	}
	c.gen++
	c.busy++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.busy--
		c.gen++
	}
}

// lateDone ends the change of a late append (noteAppend), after its
// commit.
func (c *countCache) lateDone() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy--
	c.gen++
}

// touches reports whether the hours [from, to) and [a, b) overlap or
// meet, so that together they are one span.
func touches(from, to, a, b int32) bool { return from <= b && to >= a }

func hourOf(t time.Time) int32 { return int32(t.Unix() / 3600) }

func hourStart(h int32) time.Time { return time.Unix(int64(h)*3600, 0).UTC() }

// wholeHours reports whether the zone's offset is a whole number of hours
// throughout the range, so that each UTC hour lies in one bucket.
func wholeHours(r analytics.EventRange) bool {
	if r.IsUTC() {
		return true
	}
	first, changes := r.OffsetsOf(r.From, r.To)
	if first%time.Hour != 0 {
		return false
	}
	for _, c := range changes {
		if c.Offset%time.Hour != 0 || c.At.Unix()%3600 != 0 {
			return false
		}
	}
	return true
}

// keptCountable returns the column a series may be counted by from kept
// counts or users ("" without a breakdown), or false.
func keptCountable(q analytics.TrendQuery, series analytics.TrendSeries) (string, bool) {
	if q.AggregateBy != "" || series.Event == botPageview || len(series.Filters) > 0 {
		return "", false
	}
	column := ""
	if q.Breakdown != nil {
		if q.Breakdown.Column == "" || columnSQL[q.Breakdown.Column] == "" || q.BreakdownLimit <= 0 {
			return "", false
		}
		column = q.Breakdown.Column
	}
	for _, f := range q.Filters {
		// A breakdown's "is set" leaves out the unset value, which a
		// count by value tells.
		if column == "" || f.Operator != analytics.OpIsSet || f.Property != *q.Breakdown {
			return "", false
		}
	}
	return column, true
}

// keptHours returns the event id of a series and the whole hours [a, b)
// of q's range before the scope's counted time, or false when none may be
// kept or read (a zone of part hours, a name never seen, nothing counted).
func (s *Store) keptHours(q analytics.TrendQuery, series analytics.TrendSeries) (eid uint32, a, b int32, ok bool) {
	if s.visits.counts.off || !wholeHours(q.EventRange) {
		return 0, 0, 0, false
	}
	if eid = s.eventID(series.Event); eid == noEvent {
		return 0, 0, 0, false
	}
	k := &s.visits
	k.mu.Lock()
	var counted time.Time
	if st := k.scopes[visitScope{q.ProductID, q.Env}]; st != nil {
		counted = st.counted
	}
	k.mu.Unlock()
	// The whole hours of the range before the counted time (after 1970:
	// hours are counted from it).
	a, b = hourOf(q.From), hourOf(minTime(q.To, counted))
	if q.From.Unix()%3600 != 0 || q.From.Nanosecond() != 0 {
		a++
	}
	if counted.IsZero() || q.From.Unix() < 0 || b <= a {
		return 0, 0, 0, false
	}
	return eid, a, b, true
}

// keptCounts answers one series of q from kept counts and events, keeping
// the hours it read from events where it may, or says (false) that the
// statement must answer it.
func (s *Store) keptCounts(ctx context.Context, q analytics.TrendQuery, index int, series analytics.TrendSeries) ([]analytics.TrendRow, bool, error) {
	column, ok := keptCountable(q, series)
	if !ok || series.UniqueUsers {
		return nil, false, nil
	}
	eid, a, b, ok := s.keptHours(q, series)
	if !ok {
		return nil, false, nil
	}
	k := &s.visits
	isSet := len(q.Filters) > 0 // "the breakdown is set" (keptCountable)
	key := countKey{q.ProductID, q.Env, eid, column, isSet}
	c := &k.counts
	c.mu.Lock()
	gen, keep := c.gen, c.busy == 0
	// seen is the kind's entry as the query began: what it keeps joins it
	// when the two spans touch, so it numbers new values after seen's.
	seen := c.entries[key]
	var held *countEntry
	var uf, ut int32 // the kept hours used, [uf, ut)
	if seen != nil && seen.from < b && seen.to > a {
		held, uf, ut = seen, max(seen.from, a), min(seen.to, b)
	}
	var used []countRow
	var values []string
	if seen != nil && touches(seen.from, seen.to, a, b) {
		values = seen.values
	}
	if held != nil {
		lo, _ := slices.BinarySearchFunc(held.rows, uf, func(r countRow, h int32) int { return int(r.hour - h) })
		hi, _ := slices.BinarySearchFunc(held.rows, ut, func(r countRow, h int32) int { return int(r.hour - h) })
		used = held.rows[lo:hi:hi]
	}
	c.mu.Unlock()

	// The rest of the range from events, by hour and value: the parts
	// before and after the kept hours, each its own range of ts so that
	// the scan skips the kept hours' row groups.
	parts := [][2]time.Time{{q.From, q.To}}
	if held != nil {
		parts = [][2]time.Time{{q.From, hourStart(uf)}, {hourStart(ut), q.To}}
	}
	var sb builder
	x := "''"
	if column != "" {
		x = columnSQL[column]
	}
	union := ""
	for _, p := range parts {
		if !p[0].Before(p[1]) {
			continue
		}
		sb.Write(union, "SELECT epoch_us(ts) // 3600000000 AS h, ", x, " AS v, count(*) FROM events WHERE ")
		sb.scope("", q.EventRange, p[0], p[1])
		sb.Write(" AND NOT is_bot AND eid = ", sb.eid(eid))
		if isSet {
			sb.Write(" AND ", x, " IS NOT NULL")
		}
		sb.Write(" GROUP BY h, v")
		union = " UNION ALL "
	}
	ids := map[string]int32{}
	dict := append([]string(nil), values...)
	for i, v := range values {
		ids[v] = int32(i)
	}
	var fresh []countRow
	if union != "" {
		sb.Write(" ORDER BY h")
		rows, err := s.query(ctx, &sb)
		if err != nil {
			return nil, false, fmt.Errorf("computing trend: %w", err)
		}
		for rows.Next() {
			var h int64
			var v sql.NullString
			var n int64
			if err := rows.Scan(&h, &v, &n); err != nil {
				rows.Close()
				return nil, false, fmt.Errorf("computing trend: %w", err)
			}
			id := int32(nullValue)
			if v.Valid {
				var ok bool
				if id, ok = ids[v.String]; !ok {
					id = int32(len(dict))
					ids[v.String] = id
					dict = append(dict, strings.Clone(v.String))
				}
			}
			fresh = append(fresh, countRow{int32(h), id, n})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, false, fmt.Errorf("computing trend: %w", err)
		}
	}
	if held != nil {
		c.answered.Add(1)
	}
	out := countRows(q, index, isSet, dict, used, fresh)
	if keep {
		s.keepCounts(key, gen, seen, a, b, held, uf, ut, used, fresh, dict)
	}
	return out, true, nil
}

// keepCounts stores the hours [a, b) read by a query that began at
// generation gen with nothing busy and seen as the kind's entry: the kept
// rows used ([uf, ut) of held) and the fresh rows of the other hours,
// joined to seen's when the two spans touch, or replacing them.
func (s *Store) keepCounts(key countKey, gen uint64, seen *countEntry, a, b int32, held *countEntry, uf, ut int32, used, fresh []countRow, dict []string) {
	var span []countRow
	for _, r := range fresh {
		if r.hour >= a && r.hour < b && (held == nil || r.hour < uf) {
			span = append(span, r)
		}
	}
	span = append(span, used...)
	if held != nil {
		for _, r := range fresh {
			if r.hour >= ut && r.hour < b {
				span = append(span, r)
			}
		}
	}
	c := &s.visits.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || len(span) > maxCountRows/4 {
		return
	}
	e := c.entries[key]
	if e != seen {
		return // another query kept this kind meanwhile
	}
	next := &countEntry{from: a, to: b, values: dict}
	if e != nil && touches(e.from, e.to, a, b) {
		// The spans touch: keep the entry's hours on either side.
		for _, r := range e.rows {
			if r.hour < a {
				next.rows = append(next.rows, r)
			}
		}
		next.rows = append(next.rows, span...)
		for _, r := range e.rows {
			if r.hour >= b {
				next.rows = append(next.rows, r)
			}
		}
		next.from, next.to = min(e.from, a), max(e.to, b)
	} else {
		next.rows = span
	}
	if len(next.rows) > maxCountRows/4 {
		return
	}
	if e != nil {
		c.rows -= len(e.rows)
	}
	if c.rows+len(next.rows) > maxCountRows {
		c.entries, c.rows = nil, 0
	}
	if c.entries == nil {
		c.entries = map[countKey]*countEntry{}
	}
	c.entries[key] = next
	c.rows += len(next.rows)
}

// countRows adds the rows of one series by bucket and value as the
// statement does (trendSeries): without a breakdown, the events by
// bucket; with one, the values ranked by their count over the range
// (then by value), the top BreakdownLimit by bucket and the others folded
// into the other line. An unset value counts as "" unless isSet leaves it
// out.
func countRows(q analytics.TrendQuery, index int, isSet bool, dict []string, parts ...[]countRow) []analytics.TrendRow {
	var buckets []time.Time
	byBucket := map[time.Time]int64{}
	// By bucket and value id first (an integer key), then by text: ""
	// and the unset value are one unless the unset is left out.
	byID := map[int64]int64{}
	for _, rows := range parts {
		lastHour, bucket := int32(-1<<31), int64(0)
		for _, r := range rows {
			if r.v == nullValue && isSet {
				continue
			}
			if r.hour != lastHour {
				bt := q.Interval.Truncate(q.Wall(hourStart(r.hour)))
				i, seen := byBucket[bt]
				if !seen {
					i = int64(len(buckets))
					buckets = append(buckets, bt)
					byBucket[bt] = i
				}
				lastHour, bucket = r.hour, i
			}
			byID[bucket<<32|int64(uint32(r.v))] += r.n
		}
	}
	type cell struct {
		bucket int
		v      string
	}
	sums := map[cell]int64{}
	totals := map[string]int64{}
	for key, n := range byID {
		v := ""
		if id := int32(uint32(key)); id != nullValue {
			v = dict[id]
		}
		sums[cell{int(key >> 32), v}] += n
		totals[v] += n
	}
	var out []analytics.TrendRow
	if q.Breakdown == nil {
		for cl, n := range sums {
			out = append(out, analytics.TrendRow{Series: index, Bucket: buckets[cl.bucket], Value: n})
		}
		return out
	}
	ranked := make([]string, 0, len(totals))
	for v := range totals {
		ranked = append(ranked, v)
	}
	slices.SortFunc(ranked, func(x, y string) int {
		if totals[x] != totals[y] {
			if totals[x] > totals[y] {
				return -1
			}
			return 1
		}
		return strings.Compare(x, y)
	})
	rank := map[string]int{}
	for i, v := range ranked {
		if i == q.BreakdownLimit {
			break
		}
		rank[v] = i + 1
	}
	other := map[int]int64{}
	for cl, n := range sums {
		if r, ok := rank[cl.v]; ok {
			out = append(out, analytics.TrendRow{Series: index, Bucket: buckets[cl.bucket], Rank: r, Breakdown: cl.v, Value: n})
		} else {
			other[cl.bucket] += n
		}
	}
	for i, n := range other {
		out = append(out, analytics.TrendRow{Series: index, Bucket: buckets[i], Other: true, Value: n})
	}
	return out
}
