package querytest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// ---------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------

// PathsParams are a paths query's parameters in the reference's terms.
type PathsParams struct {
	// Kind is "pageview" (nodes are the paths of page views) or "event"
	// (nodes are event names).
	Kind string
	// Start or End (at most one set) is the anchor node's name.
	Start, End string
	// Depth is the most nodes of a path; Branches the names kept per step.
	Depth, Branches int
	// Filters must all pass for an event to be a node.
	Filters []Filter
}

// PathNode is one node of a paths answer: Name at Step, or (Other) the
// step's grouped names, with Name "".
type PathNode struct {
	Step  int
	Name  string
	Other bool
	Users int64
}

// PathEdge counts the users with From at Step and To at Step+1.
type PathEdge struct {
	Step               int
	From, To           string
	FromOther, ToOther bool
	Users              int64
}

// PathsResult is the reference's answer: nodes by step, most users first,
// Other last, then by name; edges by step, then by their nodes' places.
type PathsResult struct {
	Nodes []PathNode
	Edges []PathEdge
}

// PathStep is one node of one user's path, and the time of its event.
type PathStep struct {
	Name string
	Time time.Time
}

// UserPaths returns each user's path (docs/queries.md, "Paths"), by
// distinct id, from the first instant of from to the end of day to in
// loc, one rule at a time:
//
//  1. The environment's human events in the range are the candidates; with
//     kind pageview only $pageview events with a path, named by it, and
//     with kind event every event, named by its name. Every filter must
//     pass.
//  2. Each user's nodes are ordered by time, then name, and cut into
//     visits wherever two consecutive ones are 30 minutes or more apart.
//  3. In a visit, a node with the name of the node just before it is
//     dropped (the time of a run of repeats is its first).
//  4. The anchor is the user's first node named start (or end), or without
//     either the user's first node; a user without it has no path.
//  5. The path is the anchor and then the nodes after it in its visit
//     (before it, latest first, for end), Depth nodes at most.
func UserPaths(loc *time.Location, events []Event, test bool, p PathsParams, from, to time.Time) map[string][]PathStep {
	from, end := midnight(from, loc), midnight(to.AddDate(0, 0, 1), loc)
	byUser := map[string][]PathStep{}
	for _, e := range events {
		if e.Test != test || e.Bot || e.Time.Before(from) || !e.Time.Before(end) || !passesAll(e, p.Filters) {
			continue
		}
		name := e.Name
		if p.Kind == "pageview" {
			if e.Name != "$pageview" || e.Path == "" {
				continue
			}
			name = e.Path
		}
		byUser[e.DistinctID] = append(byUser[e.DistinctID], PathStep{Name: name, Time: e.Time})
	}
	out := map[string][]PathStep{}
	for user, nodes := range byUser {
		slices.SortFunc(nodes, func(a, b PathStep) int {
			if c := a.Time.Compare(b.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		// Visits, repeats dropped.
		var visits [][]PathStep
		for i, n := range nodes {
			if i == 0 || n.Time.Sub(nodes[i-1].Time) >= sessionGap {
				visits = append(visits, []PathStep{n})
				continue
			}
			v := visits[len(visits)-1]
			if v[len(v)-1].Name != n.Name {
				visits[len(visits)-1] = append(v, n)
			}
		}
		anchor := p.Start
		if p.End != "" {
			anchor = p.End
		}
	search:
		for _, v := range visits {
			for i, n := range v {
				if anchor != "" && n.Name != anchor {
					continue
				}
				var path []PathStep
				if p.End != "" {
					for j := i; j >= 0 && len(path) < p.Depth; j-- {
						path = append(path, v[j])
					}
				} else {
					for j := i; j < len(v) && len(path) < p.Depth; j++ {
						path = append(path, v[j])
					}
				}
				out[user] = path
				break search
			}
		}
	}
	return out
}

// Paths counts the users' paths (UserPaths) by node and edge. At each
// step, the Branches names with the most users stay (ties by name) and
// the others become the step's Other node.
func Paths(loc *time.Location, events []Event, test bool, p PathsParams, from, to time.Time) PathsResult {
	paths := UserPaths(loc, events, test, p, from, to)
	kept := keptNames(paths, p.Depth, p.Branches)
	type node struct {
		name  string
		other bool
	}
	grouped := func(step int, name string) node {
		if kept[step][name] {
			return node{name: name}
		}
		return node{other: true}
	}
	nodes := map[int]map[node]int64{}
	type edge struct{ from, to node }
	edges := map[int]map[edge]int64{}
	for _, path := range paths {
		for i, s := range path {
			step := i + 1
			n := grouped(step, s.Name)
			if nodes[step] == nil {
				nodes[step] = map[node]int64{}
			}
			nodes[step][n]++
			if i+1 < len(path) {
				if edges[step] == nil {
					edges[step] = map[edge]int64{}
				}
				edges[step][edge{n, grouped(step+1, path[i+1].Name)}]++
			}
		}
	}
	var res PathsResult
	for step := 1; step <= p.Depth; step++ {
		for n, users := range nodes[step] {
			res.Nodes = append(res.Nodes, PathNode{Step: step, Name: n.name, Other: n.other, Users: users})
		}
		for e, users := range edges[step] {
			res.Edges = append(res.Edges, PathEdge{Step: step, From: e.from.name, FromOther: e.from.other,
				To: e.to.name, ToOther: e.to.other, Users: users})
		}
	}
	SortPaths(&res)
	return res
}

// keptNames returns, for each step, the names that stay: the branches
// names with the most paths at that step, ties by name.
func keptNames(paths map[string][]PathStep, depth, branches int) map[int]map[string]bool {
	kept := map[int]map[string]bool{}
	for step := 1; step <= depth; step++ {
		counts := map[string]int64{}
		for _, path := range paths {
			if len(path) >= step {
				counts[path[step-1].Name]++
			}
		}
		names := make([]string, 0, len(counts))
		for n := range counts {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int {
			if counts[a] != counts[b] {
				if counts[a] > counts[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		kept[step] = map[string]bool{}
		for _, n := range names[:min(branches, len(names))] {
			kept[step][n] = true
		}
	}
	return kept
}

// SortPaths orders an answer as PathsResult says, so that answers gathered
// in any order compare equal.
func SortPaths(r *PathsResult) {
	nodeOrder := func(a, b PathNode) int {
		if a.Step != b.Step {
			return a.Step - b.Step
		}
		if a.Other != b.Other {
			if a.Other {
				return 1
			}
			return -1
		}
		if a.Users != b.Users {
			if a.Users > b.Users {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	}
	slices.SortFunc(r.Nodes, nodeOrder)
	key := func(step int, name string, other bool) PathNode {
		return PathNode{Step: step, Name: name, Other: other}
	}
	slices.SortFunc(r.Edges, func(a, b PathEdge) int {
		if a.Step != b.Step {
			return a.Step - b.Step
		}
		if c := sideOrder(key(a.Step, a.From, a.FromOther), key(b.Step, b.From, b.FromOther)); c != 0 {
			return c
		}
		if c := sideOrder(key(a.Step, a.To, a.ToOther), key(b.Step, b.To, b.ToOther)); c != 0 {
			return c
		}
		if a.Users != b.Users {
			if a.Users > b.Users {
				return -1
			}
			return 1
		}
		return 0
	})
}

// sideOrder orders an edge's nodes: named ones by name, Other last.
func sideOrder(a, b PathNode) int {
	if a.Other != b.Other {
		if a.Other {
			return 1
		}
		return -1
	}
	return strings.Compare(a.Name, b.Name)
}

// PathUser is one user who reached a node, and when.
type PathUser struct {
	DistinctID string
	Time       time.Time
}

// PathUsers lists the users whose path has the node at step: the node
// named name, or with other the step's grouped node. They come newest
// first by the time of their node's event, of equal times by distinct id.
func PathUsers(loc *time.Location, events []Event, test bool, p PathsParams, from, to time.Time, step int, name string, other bool) []PathUser {
	paths := UserPaths(loc, events, test, p, from, to)
	kept := keptNames(paths, p.Depth, p.Branches)
	var out []PathUser
	for user, path := range paths {
		if len(path) < step {
			continue
		}
		s := path[step-1]
		if (other && !kept[step][s.Name]) || (!other && kept[step][s.Name] && s.Name == name) {
			out = append(out, PathUser{DistinctID: user, Time: s.Time})
		}
	}
	slices.SortFunc(out, func(a, b PathUser) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(a.DistinctID, b.DistinctID)
	})
	return out
}

// PathsDataset is a random set of visits and one paths query over it.
type PathsDataset struct {
	Events   []Event
	From, To time.Time
	Params   PathsParams
}

// GeneratePaths returns a reproducible random dataset for the paths query:
// the visits of GenerateSessions (gaps on both sides of 30 minutes, runs
// across the range's edges, events at the same instant, bots and test
// events) and longer runs of page views over a few paths, repeats
// included, so that paths reach five steps and steps have more names than
// branches. The query draws its kind, its anchor (mostly a name the
// events have), depth, branches and now and then a filter.
func GeneratePaths(seed int64) PathsDataset {
	s := GenerateSessions(seed)
	r := rand.New(rand.NewPCG(uint64(seed), 3))
	ds := PathsDataset{Events: s.Events, From: s.From, To: s.To}
	users := []string{"ユーザー7", "émilie", "user_2", "user_3", "user_4", "user_5", "user_6", "user_7"}
	pages := []string{"/", "/pricing", "/signup", "/docs", "/café", "/Pricing"}
	for range 4 + r.IntN(16) {
		t := s.From.Add(time.Duration(r.Int64N(int64(s.To.AddDate(0, 0, 1).Sub(s.From))))).Truncate(time.Microsecond)
		user := users[r.IntN(len(users))]
		for range 2 + r.IntN(8) {
			page := pick(r, pages)
			e := Event{DistinctID: user, Name: "$pageview", Time: t, URL: "https://example.com" + page, Path: page, Browser: pick(r, browserPool)}
			if r.IntN(8) == 0 {
				e.Name = pick(r, sessionNames)
			}
			if r.IntN(15) == 0 {
				e.Test = true
			}
			ds.Events = append(ds.Events, e)
			// Mostly gaps inside a visit, so that paths run long.
			if r.IntN(4) == 0 {
				t = t.Add(sessionGaps[r.IntN(len(sessionGaps))])
			} else {
				t = t.Add(sessionGaps[r.IntN(5)])
			}
		}
	}
	p := PathsParams{Kind: pick(r, []string{"pageview", "event"}), Depth: 2 + r.IntN(4), Branches: 1 + r.IntN(4)}
	var names []string
	for _, e := range ds.Events {
		switch {
		case p.Kind == "event":
			names = append(names, e.Name)
		case e.Name == "$pageview" && e.Path != "":
			names = append(names, e.Path)
		}
	}
	anchor := "/nowhere"
	if len(names) > 0 && r.IntN(6) != 0 {
		anchor = names[r.IntN(len(names))]
	}
	switch r.IntN(3) {
	case 0:
		p.Start = anchor
	case 1:
		p.End = anchor
	}
	if r.IntN(4) == 0 {
		p.Filters = []Filter{randomFilter(r)}
	}
	ds.Params = p
	return ds
}
