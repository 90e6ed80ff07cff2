package duckdb

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"strata/internal/analytics"
)

// Users kept for the settled past (docs/queries.md, "Counts kept for the
// settled past"). The Overview's unique visitors by day and its countries
// count the distinct users of every page view of the range. A trend series
// of unique users that kept counts could count if it counted events is
// answered from the distinct users of each UTC hour and value, held in
// memory for the settled hours as the counts are (counts.go: the same
// counted time, drops, generation and zones), and from events for the
// rest. Go then counts each bucket's users, and each value's, with a
// bitmap of the product's dense user ids, so a user active in many hours
// counts once, as the statement's distinct count does.

// maxUserRows bounds the rows (one per user, hour and value: 8 bytes)
// kept for every scope together, 64 MB; one kind over one range may hold
// half of it, or is not kept. 10 M page views over 30 days of 500,000
// users are about 2.5 M rows.
const maxUserRows = 1 << 23

// maxUserHours and maxUserValues bound a reading's hours and values, which
// share a row's key with the user id (userKey).
const (
	maxUserHours  = 1 << 16
	maxUserValues = 1<<16 - 1
)

// userEntry holds every hour of [from, to) of one kind of users:
// hours[i] are the rows of hour from+i, each a value (0: unset; i:
// values[i-1]) in the high 32 bits and a dense user id in the low 32, in
// order.
type userEntry struct {
	from, to int32
	values   []string
	hours    [][]uint64
	rows     int
}

// count sets e.rows from its hours.
func (e *userEntry) count() {
	e.rows = 0
	for _, h := range e.hours {
		e.rows += len(h)
	}
}

// keptUniqueUsers answers one series of q, of unique users, from kept users and
// events, keeping the hours it read from events where it may, or says
// (false) that the statement must answer it.
func (s *Store) keptUniqueUsers(ctx context.Context, q analytics.TrendQuery, index int, series analytics.TrendSeries) ([]analytics.TrendRow, bool, error) {
	column, ok := keptCountable(q, series)
	if !ok || !series.UniqueUsers {
		return nil, false, nil
	}
	eid, a, b, ok := s.keptHours(q, series)
	if !ok {
		return nil, false, nil
	}
	// Every hour the statements read is an offset from base in a row's
	// key.
	base, end := hourOf(q.From), hourOf(q.To)+1
	if end-base > maxUserHours {
		return nil, false, nil
	}
	key := countKey{q.ProductID, q.Env, eid, column, len(q.Filters) > 0}
	c := &s.visits.counts
	c.mu.Lock()
	gen, keep := c.gen, c.busy == 0
	overlaps := func(e *userEntry) bool { return e != nil && e.from < b && e.to > a }
	if column == "" && !overlaps(c.users[key]) {
		// Users by any column hold every user of each hour: a chart
		// without a breakdown counts them and leaves the values aside.
		for k, e := range c.users {
			if k.product == key.product && k.env == key.env && k.event == eid && !k.isSet && overlaps(e) {
				key = k
				break
			}
		}
	}
	// seen is the kind's entry as the query began: what it keeps joins it
	// when the two spans touch, so it numbers new values after seen's.
	seen := c.users[key]
	var held *userEntry
	var uf, ut int32 // the kept hours used, [uf, ut)
	var used [][]uint64
	var values []string
	if seen != nil && touches(seen.from, seen.to, a, b) {
		values = seen.values
	}
	if overlaps(seen) {
		held, uf, ut = seen, max(seen.from, a), min(seen.to, b)
		used = seen.hours[uf-seen.from : ut-seen.from : ut-seen.from]
	}
	c.mu.Unlock()

	// The rest of the range from events: the parts before and after the
	// kept hours, each its own range of ts so that the scan skips the kept
	// hours' row groups.
	parts := [][2]time.Time{{q.From, q.To}}
	if held != nil {
		parts = [][2]time.Time{{q.From, hourStart(uf)}, {hourStart(ut), q.To}}
	}
	dict := slices.Clone(values)
	hours, ok, err := s.readUsers(ctx, q, eid, key, parts, base, end, &dict)
	if err != nil || !ok {
		return nil, ok, err
	}
	fresh := slices.Clone(hours)
	for i, h := range used {
		hours[uf-base+int32(i)] = h
	}
	if held != nil {
		c.answered.Add(1)
		c.answeredUsers.Add(1)
	}
	out := countUsers(q, index, key.isSet, dict, base, hours)
	if keep {
		s.keepUsers(key, gen, seen, a, b, held, uf, ut, used, base, fresh, dict)
	}
	return out, true, nil
}

// readUsers reads the distinct users of the parts of q's range by hour
// (from base to end) and value of key's column, numbering new values
// after those of *dict. It says false when the values or the rows pass
// the bounds: the statement then answers.
func (s *Store) readUsers(ctx context.Context, q analytics.TrendQuery, eid uint32, key countKey, parts [][2]time.Time, base, end int32, dict *[]string) ([][]uint64, bool, error) {
	hours := make([][]uint64, end-base)
	where := func(sb *builder, p [2]time.Time, x string) {
		sb.scope("", q.EventRange, p[0], p[1])
		sb.Write(" AND NOT is_bot AND eid = ", sb.eid(eid))
		if key.isSet {
			sb.Write(" AND ", x, " IS NOT NULL")
		}
	}
	var live [][2]time.Time
	for _, p := range parts {
		if p[0].Before(p[1]) {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return hours, true, nil
	}
	x := columnSQL[key.column]
	if x != "" {
		// The values first, so that the rows carry their numbers.
		var sb builder
		for i, p := range live {
			if i > 0 {
				sb.Write(" UNION ")
			}
			sb.Write("SELECT DISTINCT ", x, " FROM events WHERE ")
			where(&sb, p, x)
		}
		seen := map[string]bool{}
		for _, v := range *dict {
			seen[v] = true
		}
		found, err := queryAll(ctx, s, "computing trend", &sb, func(r scanner) (sql.NullString, error) {
			var v sql.NullString
			return v, r.Scan(&v)
		})
		if err != nil {
			return nil, false, err
		}
		for _, v := range found {
			if v.Valid && !seen[v.String] {
				seen[v.String] = true
				*dict = append(*dict, v.String)
			}
		}
		if len(*dict) > maxUserValues {
			return nil, false, nil
		}
	}
	// One key per user, hour and value: the hour's offset from base in the
	// top 16 bits, the value's number in the next 16 (its position in the
	// list, 0 for unset), the dense user id in the low 32.
	var sb builder
	value := "0"
	if x != "" {
		sb.Write("WITH d AS (SELECT unnest(l) AS dv, generate_subscripts(l, 1) AS di FROM (SELECT ", sb.arg(*dict), "::VARCHAR[] AS l)) ")
		value = "coalesce(d.di, 0)"
	}
	for i, p := range live {
		if i > 0 {
			sb.Write(" UNION ALL ")
		}
		sb.Write("SELECT ((epoch_us(ts) // 3600000000 - ", sb.arg(base), ")::UBIGINT << 48) | (", value, "::UBIGINT << 32) | uid AS k FROM events")
		if x != "" {
			sb.Write(" LEFT JOIN d ON d.dv = ", x)
		}
		sb.Write(" WHERE ")
		where(&sb, p, x)
		sb.Write(" GROUP BY k")
	}
	rows, err := s.query(ctx, &sb)
	if err != nil {
		return nil, false, fmt.Errorf("computing trend: %w", err)
	}
	defer rows.Close()
	var keys []uint64
	for rows.Next() {
		var k uint64
		if err := rows.Scan(&k); err != nil {
			return nil, false, fmt.Errorf("computing trend: %w", err)
		}
		if len(keys) == maxUserRows/2 {
			return nil, false, nil
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("computing trend: %w", err)
	}
	// By hour (a counting sort on the offset), then each hour in order.
	starts := make([]int, end-base+1)
	for _, k := range keys {
		starts[k>>48+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	next := slices.Clone(starts)
	sorted := make([]uint64, len(keys))
	for _, k := range keys {
		h := k >> 48
		sorted[next[h]] = k & (1<<48 - 1)
		next[h]++
	}
	for i := range hours {
		if h := sorted[starts[i]:starts[i+1]:starts[i+1]]; len(h) > 0 {
			slices.Sort(h)
			hours[i] = h
		}
	}
	return hours, true, nil
}

// keepUsers stores the hours [a, b) read by a query that began at
// generation gen with nothing busy and seen as the kind's entry: the kept
// hours used ([uf, ut) of held) and the fresh hours (from base) of the
// others, joined to seen's when the two spans touch, or replacing them.
func (s *Store) keepUsers(key countKey, gen uint64, seen *userEntry, a, b int32, held *userEntry, uf, ut int32, used [][]uint64, base int32, fresh [][]uint64, dict []string) {
	span := &userEntry{from: a, to: b, values: dict, hours: make([][]uint64, b-a)}
	for h := a; h < b; h++ {
		if held != nil && h >= uf && h < ut {
			span.hours[h-a] = used[h-uf]
		} else {
			span.hours[h-a] = fresh[h-base]
		}
	}
	span.count()
	c := &s.visits.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || span.rows > maxUserRows/2 {
		return
	}
	e := c.users[key]
	if e != seen {
		return // another query kept this kind meanwhile
	}
	next := span
	if e != nil && touches(e.from, e.to, a, b) {
		// The spans touch: keep the entry's hours on either side.
		next = &userEntry{from: min(e.from, a), to: max(e.to, b), values: dict}
		next.hours = make([][]uint64, next.to-next.from)
		copy(next.hours[e.from-next.from:], e.hours)
		copy(next.hours[a-next.from:], span.hours)
		next.count()
	}
	if next.rows > maxUserRows/2 {
		return
	}
	if e != nil {
		c.userRows -= e.rows
	}
	if c.userRows+next.rows > maxUserRows {
		c.users, c.userRows = nil, 0
	}
	if c.users == nil {
		c.users = map[countKey]*userEntry{}
	}
	c.users[key] = next
	c.userRows += next.rows
}

// userSet is a set of dense user ids, grown as ids come.
type userSet []uint64

// add adds uid and reports whether it was new.
func (u *userSet) add(uid uint32) bool {
	w := int(uid >> 6)
	if w >= len(*u) {
		*u = slices.Grow(*u, w+1-len(*u))[:w+1]
	}
	m := uint64(1) << (uid & 63)
	if (*u)[w]&m != 0 {
		return false
	}
	(*u)[w] |= m
	return true
}

// addAll adds the users of rows and returns how many were new.
func (u *userSet) addAll(rows []uint64) int64 {
	var n int64
	for _, r := range rows {
		if u.add(uint32(r)) {
			n++
		}
	}
	return n
}

// clear empties the set of the users of rows, when it holds no others.
func (u userSet) clear(rows []uint64) {
	for _, r := range rows {
		u[uint32(r)>>6] = 0
	}
}

// userBlock is the rows of one hour, or of one value in one hour, with
// its bucket.
type userBlock struct {
	bucket int
	rows   []uint64
}

// perBucket counts the distinct users of blocks (in order of bucket) by
// bucket, calling emit for each bucket that has any; set is empty before
// and after.
func perBucket(set *userSet, blocks []userBlock, emit func(bucket int, n int64)) {
	first, n := 0, int64(0)
	for i := range blocks {
		n += set.addAll(blocks[i].rows)
		if i+1 < len(blocks) && blocks[i+1].bucket == blocks[i].bucket {
			continue
		}
		if n > 0 {
			emit(blocks[i].bucket, n)
		}
		for _, bl := range blocks[first : i+1] {
			set.clear(bl.rows)
		}
		first, n = i+1, 0
	}
}

// countUsers counts the users of series index of q, from hours (from
// base), as the statement does (uniqueUsersByMask, breakdownByMask,
// trendSeries): without a breakdown, the distinct users of each bucket
// and of the whole range (the Total row); with one, the values ranked by
// their distinct users over the range (then by value), the top
// BreakdownLimit by bucket and the users of the others, each once, in the
// other line. Unset and "" are one value, unless isSet left the unset
// out.
func countUsers(q analytics.TrendQuery, index int, isSet bool, dict []string, base int32, hours [][]uint64) []analytics.TrendRow {
	var buckets []time.Time
	var all []userBlock     // by hour
	var lines [][]userBlock // by line, then hour
	line := map[string]int{}
	var names []string
	for i, rows := range hours {
		if len(rows) == 0 {
			continue
		}
		bt := q.Interval.Truncate(q.Wall(hourStart(base + int32(i))))
		if len(buckets) == 0 || !buckets[len(buckets)-1].Equal(bt) {
			buckets = append(buckets, bt)
		}
		bucket := len(buckets) - 1
		if q.Breakdown == nil {
			all = append(all, userBlock{bucket, rows})
			continue
		}
		for len(rows) > 0 {
			v := uint32(rows[0] >> 32)
			n, _ := slices.BinarySearch(rows, uint64(v+1)<<32)
			if v > 0 || !isSet {
				name := ""
				if v > 0 {
					name = dict[v-1]
				}
				l, ok := line[name]
				if !ok {
					l = len(names)
					line[name] = l
					names = append(names, name)
					lines = append(lines, nil)
				}
				lines[l] = append(lines[l], userBlock{bucket, rows[:n]})
				all = append(all, userBlock{bucket, rows[:n]})
			}
			rows = rows[n:]
		}
	}
	var set userSet
	var out []analytics.TrendRow
	if q.Breakdown == nil {
		perBucket(&set, all, func(bucket int, n int64) {
			out = append(out, analytics.TrendRow{Series: index, Bucket: buckets[bucket], Value: n})
		})
		var total int64
		for _, bl := range all {
			total += set.addAll(bl.rows)
		}
		return append(out, analytics.TrendRow{Series: index, Total: true, Value: total})
	}
	// Each value's users over the range rank the values.
	totals := make([]int64, len(names))
	for l, blocks := range lines {
		for _, bl := range blocks {
			totals[l] += set.addAll(bl.rows)
		}
		for _, bl := range blocks {
			set.clear(bl.rows)
		}
	}
	ranked := make([]int, len(names))
	for l := range ranked {
		ranked[l] = l
	}
	slices.SortFunc(ranked, func(x, y int) int {
		if c := cmp.Compare(totals[y], totals[x]); c != 0 {
			return c
		}
		return strings.Compare(names[x], names[y])
	})
	for i, l := range ranked[:min(len(ranked), q.BreakdownLimit)] {
		perBucket(&set, lines[l], func(bucket int, n int64) {
			out = append(out, analytics.TrendRow{Series: index, Bucket: buckets[bucket], Rank: i + 1, Breakdown: names[l], Value: n})
		})
	}
	// The other line: the blocks of the other values, by bucket.
	var others []userBlock
	for _, l := range ranked[min(len(ranked), q.BreakdownLimit):] {
		others = append(others, lines[l]...)
	}
	slices.SortStableFunc(others, func(x, y userBlock) int { return cmp.Compare(x.bucket, y.bucket) })
	perBucket(&set, others, func(bucket int, n int64) {
		out = append(out, analytics.TrendRow{Series: index, Bucket: buckets[bucket], Other: true, Value: n})
	})
	return out
}
