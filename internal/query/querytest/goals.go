package querytest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Goal is one goal as the oracle sees it: a custom event goal (Event set)
// or a page goal (Path set, a pattern where '*' matches any run of
// characters).
type Goal struct {
	Event string
	Path  string
}

// GoalCount is one goal's figures: the visitors who converted, each
// once, and their conversions.
type GoalCount struct {
	Converted, Conversions int64
}

// GoalRow is one breakdown value: the visitors attributed to it and the
// goal's figures among them.
type GoalRow struct {
	Value    string
	Visitors int64
	GoalCount
}

// GoalsResult is the oracle's answer to a goals query.
type GoalsResult struct {
	Visitors int64
	Goals    []GoalCount
	Rows     []GoalRow
}

// Goals counts the goals' conversions over the days from through to,
// one visitor at a time:
//
//  1. It reads the environment's events that are not bots, with a time in
//     the range.
//  2. The visitors are the users with a $pageview among them that passes
//     every filter.
//  3. A visitor's events of a goal are their events named the goal's
//     event, or for a page goal their $pageview events with a path (not
//     empty) that the pattern matches whole; the visitor converted when
//     there is at least one.
//  4. With a breakdown, a visitor's value is the property's text form
//     ("" when unset) on their earliest $pageview in the range, of equal
//     times the least value; the rows group the visitors by value, most
//     converted visitors of goals[0] first, then most visitors, then by
//     value, limit of them.
func Goals(events []Event, test bool, filters []Filter, goals []Goal, from, to time.Time, breakdown string, limit int) GoalsResult {
	return GoalsIn(time.UTC, events, test, filters, goals, from, to, breakdown, limit)
}

// GoalsIn is Goals in the zone loc: the days from through to are loc's,
// from the local midnight that begins from to the one after to.
func GoalsIn(loc *time.Location, events []Event, test bool, filters []Filter, goals []Goal, from, to time.Time, breakdown string, limit int) GoalsResult {
	type visitor struct {
		first  *Event
		value  string
		counts []int64
	}
	byUser := map[string]*visitor{}
	var read []Event
	for _, e := range events {
		if e.Test != test || e.Bot || !inRange(e.Time, from, to, loc) {
			continue
		}
		read = append(read, e)
		if e.Name == "$pageview" && passesAll(e, filters) && byUser[e.DistinctID] == nil {
			byUser[e.DistinctID] = &visitor{counts: make([]int64, len(goals))}
		}
	}
	for _, e := range read {
		v := byUser[e.DistinctID]
		if v == nil {
			continue
		}
		if e.Name == "$pageview" {
			value, _ := propertyValue(e, breakdown)
			if v.first == nil || e.Time.Before(v.first.Time) || (e.Time.Equal(v.first.Time) && value < v.value) {
				v.first, v.value = &e, value
			}
		}
		for i, g := range goals {
			if goalMatches(g, e) {
				v.counts[i]++
			}
		}
	}
	res := GoalsResult{Visitors: int64(len(byUser)), Goals: make([]GoalCount, len(goals))}
	rows := map[string]*GoalRow{}
	for _, v := range byUser {
		for i, n := range v.counts {
			if n > 0 {
				res.Goals[i].Converted++
				res.Goals[i].Conversions += n
			}
		}
		if breakdown == "" {
			continue
		}
		r := rows[v.value]
		if r == nil {
			r = &GoalRow{Value: v.value}
			rows[v.value] = r
		}
		r.Visitors++
		if v.counts[0] > 0 {
			r.Converted++
			r.Conversions += v.counts[0]
		}
	}
	for _, r := range rows {
		res.Rows = append(res.Rows, *r)
	}
	slices.SortFunc(res.Rows, func(a, b GoalRow) int {
		switch {
		case a.Converted != b.Converted:
			return int(b.Converted - a.Converted)
		case a.Visitors != b.Visitors:
			return int(b.Visitors - a.Visitors)
		}
		return strings.Compare(a.Value, b.Value)
	})
	if len(res.Rows) > limit {
		res.Rows = res.Rows[:limit]
	}
	return res
}

// goalMatches reports whether event e is one of goal g's.
func goalMatches(g Goal, e Event) bool {
	if g.Path == "" {
		return e.Name == g.Event
	}
	return e.Name == "$pageview" && e.Path != "" && wildcard(g.Path, e.Path)
}

// wildcard reports whether s matches pattern p whole, where '*' matches
// any run of bytes and every other byte only itself: the classic
// backtracking match, which returns to the last '*' seen and lets it take
// one more byte whenever the rest fails.
func wildcard(p, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && p[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			mark++
			pi, si = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// GoalDataset is a random set of events and one goals query over it.
type GoalDataset struct {
	Events []Event
	// From and To are the first and last day of the range.
	From, To time.Time
	Filters  []Filter
	Goals    []Goal
	// Breakdown is "" or one of source, channel, country and device_type;
	// with it, Goals holds one goal.
	Breakdown string
	Limit     int
}

// goalNames are the event names of a goals dataset: mostly page views,
// and the custom events goals name.
var goalNames = []string{"$pageview", "$pageview", "$pageview", "$pageview", "signup", "purchase", "button_clicked"}

// goalPaths are the page paths of a goals dataset, chosen against
// goalPool's patterns: prefixes with and without the slash, a regular
// expression's metacharacters ("." against "X"), a literal '*', nested
// segments, non-ASCII text and no path at all.
var goalPaths = []string{"/", "/pricing", "/pricing/", "/blog", "/blog/", "/blog/a", "/blog/a/b", "/a.b", "/aXb", "/x*y", "/café/menu", ""}

// goalPool are the goals a dataset draws from.
var goalPool = []Goal{
	{Event: "signup"}, {Event: "purchase"}, {Event: "never_sent"}, {Event: "$pageview"},
	{Path: "/pricing"}, {Path: "/blog/*"}, {Path: "/*/a*"}, {Path: "*"}, {Path: "/a.b"}, {Path: "/x*y"},
	{Path: "/café/*"}, {Path: "/blog*"}, {Path: "*/"},
}

// GenerateGoals returns a reproducible random dataset for the goals
// query: a handful of users with page views and goal events around the
// range's edges, events that share a time (so that the breakdown's tie
// rule decides), the usual share of bot and test events, filters, and
// zero to four goals or one goal with a breakdown.
func GenerateGoals(seed int64) GoalDataset {
	r := rand.New(rand.NewPCG(uint64(seed), 3))
	g := rand.New(rand.NewPCG(uint64(seed), 4))
	base := firstBase.AddDate(0, 0, r.IntN(61))
	ds := GoalDataset{From: base, To: base.AddDate(0, 0, r.IntN(4)), Limit: 1 + r.IntN(5)}
	if r.IntN(3) != 0 {
		ds.Breakdown = pick(r, []string{"source", "channel", "country", "device_type"})
		ds.Goals = []Goal{goalPool[r.IntN(len(goalPool))]}
	} else {
		for range r.IntN(5) {
			ds.Goals = append(ds.Goals, goalPool[r.IntN(len(goalPool))])
		}
	}
	for range r.IntN(3) {
		if r.IntN(3) == 0 {
			ds.Filters = append(ds.Filters, geoFilter(g))
		} else {
			ds.Filters = append(ds.Filters, randomFilter(r))
		}
	}
	users := []string{"ユーザー7", "émilie", "user_2", "user_3", "user_4", "user_5", "user_6", "user_7"}[:2+r.IntN(7)]
	end := ds.To.AddDate(0, 0, 1)
	for range 5 + r.IntN(60) {
		e := randomEvent(r, g, users, goalNames)
		e.Path = pick(r, goalPaths)
		switch {
		case len(ds.Events) > 0 && r.IntN(4) == 0:
			// The time of an earlier event, of this user or another.
			e.Time = ds.Events[r.IntN(len(ds.Events))].Time
		case r.IntN(4) == 0:
			// Just inside or outside one of the range's edges.
			edge := []time.Time{ds.From, end}[r.IntN(2)]
			e.Time = edge.Add(time.Duration(r.IntN(3)-1) * time.Microsecond)
		default:
			e.Time = ds.From.Add(-day).Add(time.Duration(r.Int64N(int64(end.Sub(ds.From) + 2*day)))).Truncate(time.Microsecond)
		}
		ds.Events = append(ds.Events, e)
	}
	return ds
}
