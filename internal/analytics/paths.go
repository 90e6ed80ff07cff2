package analytics

import "context"

// Paths (docs/queries.md, "Paths"): the most common sequences of pages or
// events users went through after a start node, before an end node, or
// from the first node of their first visit in the range.
//
// A node is the path of a $pageview (PathPageviews; page views without a
// path are no nodes) or the name of a human event (PathEvents). A user's
// nodes in the range, ordered by time and then name, are cut into visits
// wherever two consecutive ones are SessionGap or more apart, and a node
// equal to the one before it in the same visit is dropped (a reload is one
// step). Each user has at most one path: it starts at their first
// occurrence of the anchor (Start, End, or with neither their first node)
// and runs away from it, forward from a start and backward from an end, up
// to Depth nodes of the anchor's visit. Step 1 is the anchor.
//
// At each step the Branches names with the most users stay and the others
// are one node, Other; so a step has at most Branches+1 nodes and an edge
// set of at most (Branches+1)² between two steps, whatever is stored.

// PathKind says what a path's nodes are.
type PathKind string

// The kinds of node.
const (
	PathPageviews PathKind = "pageview"
	PathEvents    PathKind = "event"
)

// PathsQuery asks for the paths of the range's users.
type PathsQuery struct {
	EventRange
	Kind PathKind
	// Start or End, at most one of them set, is the anchor's name.
	Start, End string
	// Depth is the most nodes a path has, the anchor included.
	Depth int
	// Branches is how many names each step keeps before the rest are
	// grouped as Other.
	Branches int
	// Filters keep the events that are nodes: an event failing one is not
	// read at all.
	Filters []Filter
}

// Backward reports whether paths run back from an end node.
func (q PathsQuery) Backward() bool { return q.End != "" }

// PathNode is a node of one step: a name kept at that step, or (Other) the
// names grouped there. Users counts the users whose path has it at Step.
type PathNode struct {
	Step  int
	Name  string
	Other bool
	Users int64
}

// PathEdge counts the users whose path has From at Step and To at Step+1
// (the node after it, or before it on a path run back from an end).
type PathEdge struct {
	Step     int
	From, To string
	// FromOther and ToOther mark the grouped node at either end, whose
	// name is then "".
	FromOther, ToOther bool
	Users              int64
}

// PathsAnswer is a store's answer: every node and edge with users, in any
// order (the engine sorts them).
type PathsAnswer struct {
	Nodes []PathNode
	Edges []PathEdge
}

// PathUsersQuery asks for the users whose path has a node at a step: the
// node named Name, or with Other the step's grouped node (the names the
// step does not keep, as Paths groups them). They come newest first by the
// time of their node's event, of equal times by distinct_id, after the
// cursor when it is set, at most Limit of them.
type PathUsersQuery struct {
	PathsQuery
	Step  int
	Name  string
	Other bool
	// BeforeMicros and BeforeID page: the users strictly after the last
	// one of the page before, in the order above. BeforeMicros 0 starts
	// at the newest.
	BeforeMicros int64
	BeforeID     string
	Limit        int
}

// PathUser is one user who reached a node, and when (Unix microseconds).
type PathUser struct {
	DistinctID string
	Micros     int64
}

// PathStore answers paths (docs/queries.md, "Paths"). Both event stores
// implement it beside QueryStore.
type PathStore interface {
	// Paths returns the range's paths, grouped as PathsQuery says.
	Paths(ctx context.Context, q PathsQuery) (PathsAnswer, error)
	// PathUsers returns a page of the users who reached a node.
	PathUsers(ctx context.Context, q PathUsersQuery) ([]PathUser, error)
}
