package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

var _ analytics.PathStore = (*Store)(nil)

// Paths computes the paths of docs/queries.md, "Paths", in two statements
// over the per-user levels pathLevels writes. The first ranks each step's
// names and keeps the top Branches of each (LIMIT BY); the second, with
// those names bound, counts the grouped nodes and edges: one row per node
// and per edge of each user's path (arrayJoin), summed by one GROUP BY.
//
// Two statements rather than one: 18.16 has no window functions to rank
// within a step, and its JOIN of a subquery onto another on a cluster
// would run the per-user level twice anyway. Events that arrive between
// the two statements may change a count by a little but never break the
// answer's shape: the second statement groups by the names the first
// kept.
func (s *Store) Paths(ctx context.Context, q analytics.PathsQuery) (_ analytics.PathsAnswer, err error) {
	defer markOutOfMemory(&err)
	tops, err := s.pathTops(ctx, q)
	if err != nil {
		return analytics.PathsAnswer{}, err
	}
	b := s.newBuilder()
	// grouped is step j's node: its name, or "" and 1 for the step's
	// other node.
	// Each placeholder is bound once, in the order of the text.
	grouped := func(j int) (name, other string) {
		name = fmt.Sprintf("if(has(%s, pa_n%d), pa_n%d, '')", keptArray(&b, tops[j-1]), j, j)
		other = fmt.Sprintf("toUInt8(NOT has(%s, pa_n%d))", keptArray(&b, tops[j-1]), j)
		return name, other
	}
	b.Write("SELECT r.1, r.2, r.3, r.4, r.5, r.6, count() FROM (SELECT arrayJoin(arrayFilter(z2 -> z2.7 = 1, [")
	for j := 1; j <= q.Depth; j++ {
		if j > 1 {
			b.Write(", ")
		}
		name, other := grouped(j)
		b.Printf("(toUInt8(0), toUInt8(%d), %s, %s, '', toUInt8(0), pa_h%d)", j, name, other, j)
		if j < q.Depth {
			name, other := grouped(j)
			toName, toOther := grouped(j + 1)
			b.Printf(", (toUInt8(1), toUInt8(%d), %s, %s, %s, %s, pa_h%d)", j, name, other, toName, toOther, j+1)
		}
	}
	b.Write("])) AS r")
	if err := s.pathLevels(&b, q); err != nil {
		return analytics.PathsAnswer{}, err
	}
	b.Write(") GROUP BY r.1, r.2, r.3, r.4, r.5, r.6")
	type row struct {
		part, step uint8
		from       string
		fromOther  uint8
		to         string
		toOther    uint8
		users      uint64
	}
	rows, err := queryAll(ctx, s, "computing paths", &b, func(r driver.Rows) (x row, err error) {
		err = r.Scan(&x.part, &x.step, &x.from, &x.fromOther, &x.to, &x.toOther, &x.users)
		return x, err
	})
	if err != nil {
		return analytics.PathsAnswer{}, err
	}
	var res analytics.PathsAnswer
	for _, x := range rows {
		if x.part == 0 {
			res.Nodes = append(res.Nodes, analytics.PathNode{Step: int(x.step), Name: x.from, Other: x.fromOther == 1, Users: int64(x.users)})
			continue
		}
		res.Edges = append(res.Edges, analytics.PathEdge{Step: int(x.step), From: x.from, FromOther: x.fromOther == 1,
			To: x.to, ToOther: x.toOther == 1, Users: int64(x.users)})
	}
	return res, nil
}

// PathUsers lists a page of the users who reached a node: the first
// statement of Paths finds the names the step keeps, the second reads the
// step's name and time of each user's path.
func (s *Store) PathUsers(ctx context.Context, q analytics.PathUsersQuery) (_ []analytics.PathUser, err error) {
	defer markOutOfMemory(&err)
	tops, err := s.pathTops(ctx, q.PathsQuery)
	if err != nil {
		return nil, err
	}
	kept := tops[q.Step-1]
	if !q.Other && !contains(kept, q.Name) {
		// A name the step does not keep is in its other node: the node
		// asked for has no users.
		return nil, nil
	}
	b := s.newBuilder()
	b.Printf("SELECT did, pa_t%d AS u_t", q.Step)
	if err := s.pathLevels(&b, q.PathsQuery); err != nil {
		return nil, err
	}
	b.Printf(" WHERE pa_h%d = 1 AND ", q.Step)
	if q.Other {
		b.Printf("NOT has(%s, pa_n%d)", keptArray(&b, kept), q.Step)
	} else {
		b.Printf("pa_n%d = %s", q.Step, b.arg(q.Name))
	}
	if q.BeforeMicros != 0 {
		b.Write(" AND (u_t < ", b.arg(q.BeforeMicros), " OR (u_t = ", b.arg(q.BeforeMicros), " AND did > ", b.arg(q.BeforeID), "))")
	}
	b.Write(" ORDER BY u_t DESC, did LIMIT ", b.arg(q.Limit))
	return queryAll(ctx, s, "listing a path node's users", &b, func(r driver.Rows) (u analytics.PathUser, err error) {
		err = r.Scan(&u.DistinctID, &u.Micros)
		return u, err
	})
}

// pathTops returns, for each step, the names it keeps: the Branches names
// of most users, ties by name.
func (s *Store) pathTops(ctx context.Context, q analytics.PathsQuery) ([][]string, error) {
	b := s.newBuilder()
	b.Write("SELECT r_step, r_n, count() AS r_c FROM (SELECT arrayJoin(arrayFilter(z1 -> z1.3 = 1, [")
	for j := 1; j <= q.Depth; j++ {
		if j > 1 {
			b.Write(", ")
		}
		b.Printf("(toUInt8(%d), pa_n%d, pa_h%d)", j, j, j)
	}
	b.Write("])) AS r, r.1 AS r_step, r.2 AS r_n")
	if err := s.pathLevels(&b, q); err != nil {
		return nil, err
	}
	b.Write(") GROUP BY r_step, r_n ORDER BY r_step, r_c DESC, r_n LIMIT ", b.arg(q.Branches), " BY r_step")
	type row struct {
		step  uint8
		name  string
		users uint64
	}
	rows, err := queryAll(ctx, s, "ranking path nodes", &b, func(r driver.Rows) (x row, err error) {
		err = r.Scan(&x.step, &x.name, &x.users)
		return x, err
	})
	if err != nil {
		return nil, err
	}
	tops := make([][]string, q.Depth)
	for _, x := range rows {
		if i := int(x.step) - 1; i >= 0 && i < q.Depth && len(tops[i]) < q.Branches {
			tops[i] = append(tops[i], x.name)
		}
	}
	return tops, nil
}

// keptArray binds names as an array literal of strings.
func keptArray(b *builder, names []string) string {
	if len(names) == 0 {
		return "emptyArrayString()"
	}
	args := make([]string, len(names))
	for i, n := range names {
		args[i] = b.arg(n)
	}
	return "[" + strings.Join(args, ", ") + "]"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pathLevels writes " FROM (…)": the per-user level of a paths statement,
// whose columns are u (the user's hash), did (their distinct_id) and, for
// each step j of the path, pa_nj (the node's name), pa_tj (its event's
// time) and pa_hj (1 when the path reaches step j). Innermost first:
//
//  1. Per user, one GROUP BY collects the node events of the range as a
//     sorted array of (time, name); on a cluster this is the level the
//     shards aggregate and the initiator merges, so a path is whole
//     however its events were sharded.
//  2. Array functions, without leaving the row: arrayDifference gives
//     each event's gap to the one before, a gap of SessionGap or more (or
//     the first event) starts a visit and arrayCumSum numbers the visits;
//     an event with the name of the one before it that starts no visit is
//     a repeat and is filtered out (k_…). The anchor is the first index of
//     the start (or end) name, or 1; step j is the element j-1 after it
//     (before it, for an end) when that is in the anchor's visit.
//
// 18.16 workarounds, as in Sessions: no window functions, so the visits
// are cut with arrays; lambdas read only the arrays they are passed (the
// name before each event is a shifted copy, never an index from inside a
// lambda); every alias and lambda parameter has its own name, since
// ClickHouse resolves names statement-wide. The steps' elements are read
// by arrayElement outside any lambda, which returns a default value for an
// index out of the array, masked by pa_hj.
func (s *Store) pathLevels(b *builder, q analytics.PathsQuery) error {
	for _, f := range q.Filters {
		if err := checkProperty(f.Property); err != nil {
			return err
		}
	}
	gap := b.arg(analytics.SessionGap.Microseconds())
	b.Write(" FROM (SELECT u, did,",
		" arrayMap(pq1 -> pq1.1, ev) AS a_t, arrayMap(pq2 -> pq2.2, ev) AS a_n,",
		" arrayMap((pq3, pq4) -> toUInt8(pq4 = 1 OR pq3 >= ", gap, "), arrayDifference(a_t), arrayEnumerate(a_t)) AS a_new,",
		" arrayPopBack(arrayPushFront(a_n, '')) AS a_prev,",
		" arrayMap((pq5, pq6, pq7) -> toUInt8(pq5 = 1 OR pq6 != pq7), a_new, a_n, a_prev) AS a_keep,",
		" arrayFilter((pq8, pq9) -> pq9 = 1, a_n, a_keep) AS k_n,",
		" arrayFilter((pq10, pq11) -> pq11 = 1, a_t, a_keep) AS k_t,",
		" arrayFilter((pq12, pq13) -> pq13 = 1, arrayCumSum(a_new), a_keep) AS k_v,")
	anchor := q.Start
	if q.Backward() {
		anchor = q.End
	}
	if anchor != "" {
		b.Write(" toInt64(indexOf(k_n, ", b.arg(anchor), ")) AS pa_a")
	} else {
		b.Write(" toInt64(notEmpty(k_n)) AS pa_a")
	}
	sign := "+"
	if q.Backward() {
		sign = "-"
	}
	for j := 1; j <= q.Depth; j++ {
		idx := "pa_a " + sign + " " + strconv.Itoa(j-1)
		b.Printf(", toUInt8(pa_a > 0 AND %[2]s >= 1 AND %[2]s <= length(k_n) AND k_v[%[2]s] = k_v[pa_a]) AS pa_h%[1]d", j, idx)
		b.Printf(", k_n[%[2]s] AS pa_n%[1]d, k_t[%[2]s] AS pa_t%[1]d", j, idx)
	}
	node := "event"
	b.Write(" FROM (SELECT user_id AS u, any(distinct_id) AS did, arraySort(groupArray((ts, ")
	if q.Kind == analytics.PathPageviews {
		node = "path"
	}
	b.Write(node, "))) AS ev FROM ", s.table, " WHERE ")
	b.scope(q.EventRange, q.From, q.To)
	b.Write(" AND is_bot = 0")
	if q.Kind == analytics.PathPageviews {
		b.Write(" AND event = ", b.arg(analytics.PageviewEvent), " AND path != ''")
	}
	for _, f := range q.Filters {
		b.Write(" AND ")
		if err := b.filter(f); err != nil {
			return err
		}
	}
	b.Write(" GROUP BY u))")
	return nil
}
