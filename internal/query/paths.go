package query

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
)

// Limits on a paths request (docs/queries.md, "Paths"). The answer has at
// most MaxPathDepth × (MaxPathBranches+1) nodes and (MaxPathDepth-1) ×
// (MaxPathBranches+1)² edges, whatever is stored.
const (
	MinPathDepth     = 2
	MaxPathDepth     = 5
	DefaultPathDepth = 4
	DefaultBranches  = 5
	MaxPathBranches  = 20
	DefaultPathUsers = 50
	MaxPathUsers     = 200
)

// PathsRequest is the body of POST /api/v1/query/paths.
type PathsRequest struct {
	DateFrom string          `json:"dateFrom,omitempty"`
	DateTo   string          `json:"dateTo,omitempty"`
	Kind     string          `json:"kind,omitempty"`
	Start    string          `json:"start,omitempty"`
	End      string          `json:"end,omitempty"`
	Depth    int             `json:"depth,omitempty"`
	Branches int             `json:"branches,omitempty"`
	Filters  []FilterRequest `json:"filters,omitempty"`
}

// PathUsersRequest is the body of POST /api/v1/query/paths/users: the
// paths request, the node (step and name, or other), and the page.
type PathUsersRequest struct {
	PathsRequest
	Step   int    `json:"step"`
	Name   string `json:"name,omitempty"`
	Other  bool   `json:"other,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// ParsePaths validates a paths request body into a store query.
func ParsePaths(body []byte, scope analytics.EventRange, now time.Time) (analytics.PathsQuery, error) {
	return parseBody[analytics.PathsQuery, PathsRequest](body, scope, now)
}

// Query validates the request into a store query for scope.
func (req PathsRequest) Query(scope analytics.EventRange, now time.Time) (analytics.PathsQuery, error) {
	q := analytics.PathsQuery{EventRange: scope, Depth: DefaultPathDepth, Branches: DefaultBranches}
	var err error
	if q.From, q.To, err = dateRange(req.DateFrom, req.DateTo, now, scope.Location()); err != nil {
		return q, err
	}
	switch k := analytics.PathKind(req.Kind); k {
	case "", analytics.PathPageviews:
		q.Kind = analytics.PathPageviews
	case analytics.PathEvents:
		q.Kind = k
	default:
		return q, analytics.InvalidField("kind", "must be pageview or event, not %q", req.Kind)
	}
	if req.Start != "" && req.End != "" {
		return q, analytics.InvalidField("end", "a path has a start or an end, not both: leave one of them out")
	}
	for field, name := range map[string]string{"start": req.Start, "end": req.End} {
		if name == "" {
			continue
		}
		if n := utf8.RuneCountInString(name); n > MaxNameLen || !utf8.ValidString(name) {
			return q, analytics.InvalidField(field, "must be valid UTF-8 of at most %d characters", MaxNameLen)
		}
	}
	q.Start, q.End = req.Start, req.End
	if req.Depth != 0 {
		q.Depth = req.Depth
	}
	if q.Depth < MinPathDepth || q.Depth > MaxPathDepth {
		return q, analytics.InvalidField("depth", "must be from %d to %d, not %d", MinPathDepth, MaxPathDepth, req.Depth)
	}
	if req.Branches != 0 {
		q.Branches = req.Branches
	}
	if q.Branches < 1 || q.Branches > MaxPathBranches {
		return q, analytics.InvalidField("branches", "must be from 1 to %d, not %d", MaxPathBranches, req.Branches)
	}
	q.Filters, err = filters("filters", req.Filters)
	return q, err
}

// ParsePathUsers validates a path users request body into a store query.
func ParsePathUsers(body []byte, scope analytics.EventRange, now time.Time) (analytics.PathUsersQuery, error) {
	return parseBody[analytics.PathUsersQuery, PathUsersRequest](body, scope, now)
}

// Query validates the request into a store query for scope.
func (req PathUsersRequest) Query(scope analytics.EventRange, now time.Time) (analytics.PathUsersQuery, error) {
	pq, err := req.PathsRequest.Query(scope, now)
	q := analytics.PathUsersQuery{PathsQuery: pq, Step: req.Step, Name: req.Name, Other: req.Other, Limit: DefaultPathUsers}
	if err != nil {
		return q, err
	}
	if req.Step < 1 || req.Step > pq.Depth {
		return q, analytics.InvalidField("step", "must be from 1 to the depth, %d, not %d", pq.Depth, req.Step)
	}
	if req.Other == (req.Name != "") {
		return q, analytics.InvalidField("name", "name a node, or set other for the step's grouped node, not both")
	}
	if req.Limit != 0 {
		q.Limit = req.Limit
	}
	if q.Limit < 1 || q.Limit > MaxPathUsers {
		return q, analytics.InvalidField("limit", "must be from 1 to %d, not %d", MaxPathUsers, req.Limit)
	}
	if req.Cursor != "" {
		if q.BeforeMicros, q.BeforeID, err = readCursor(req.Cursor); err != nil {
			return q, err
		}
	}
	return q, nil
}

// A page's cursor is the last user's time (Unix microseconds) and
// distinct_id, "micros:id" in URL-safe base64: opaque to clients, and
// checked when it comes back.
func writeCursor(u analytics.PathUser) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(u.Micros, 10) + ":" + u.DistinctID))
}

func readCursor(c string) (int64, string, error) {
	bad := analytics.InvalidField("cursor", "is not a cursor this endpoint returned: send nextCursor as it came")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", bad
	}
	micros, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || n == 0 || id == "" {
		return 0, "", bad
	}
	return n, id, nil
}

// PathNode is one node of a paths answer. DropOff counts the users whose
// path stops at it (those of no edge out of it).
type PathNode struct {
	Step    int    `json:"step"`
	Name    string `json:"name"`
	Other   bool   `json:"other"`
	Users   int64  `json:"users"`
	DropOff int64  `json:"dropOff"`
}

// PathEdge joins two nodes of consecutive steps, by their places in the
// answer's nodes.
type PathEdge struct {
	From  int   `json:"from"`
	To    int   `json:"to"`
	Users int64 `json:"users"`
}

// PathsResult is the answer of POST /query/paths. Nodes come by step, each
// step's most users first (Other last); edges by step and their nodes'
// places. Backward is true when the paths run back from an end node: step
// 1 is the end, and an edge's To came before its From.
type PathsResult struct {
	Kind     analytics.PathKind `json:"kind"`
	Backward bool               `json:"backward"`
	Users    int64              `json:"users"`
	Nodes    []PathNode         `json:"nodes"`
	Edges    []PathEdge         `json:"edges"`
}

// Paths validates a paths request body and answers it, as a read of the
// store like every query.
func (e *Engine) Paths(ctx context.Context, scope analytics.EventRange, body []byte) (PathsResult, error) {
	q, err := ParsePaths(body, scope, e.now())
	if err != nil {
		return PathsResult{}, err
	}
	return e.RunPaths(ctx, q)
}

// RunPaths computes a validated paths query: it orders the store's nodes
// and edges, numbers the nodes for the edges to name, and derives each
// node's drop-off from its edges out.
func (e *Engine) RunPaths(ctx context.Context, q analytics.PathsQuery) (PathsResult, error) {
	var err error
	if q.Filters, err = e.resolveCohorts(ctx, q.ProductID, q.Filters); err != nil {
		return PathsResult{}, err
	}
	var a analytics.PathsAnswer
	err = e.read(ctx, func(ctx context.Context) (err error) {
		a, err = e.Store.Paths(ctx, q)
		return err
	})
	if err != nil {
		return PathsResult{}, err
	}
	SortPathsAnswer(&a)
	type key struct {
		step  int
		name  string
		other bool
	}
	res := PathsResult{Kind: q.Kind, Backward: q.Backward(), Nodes: make([]PathNode, len(a.Nodes)), Edges: make([]PathEdge, 0, len(a.Edges))}
	index := make(map[key]int, len(a.Nodes))
	for i, n := range a.Nodes {
		index[key{n.Step, n.Name, n.Other}] = i
		res.Nodes[i] = PathNode{Step: n.Step, Name: n.Name, Other: n.Other, Users: n.Users, DropOff: n.Users}
		if n.Step == 1 {
			res.Users += n.Users
		}
	}
	for _, x := range a.Edges {
		from, ok1 := index[key{x.Step, x.From, x.FromOther}]
		to, ok2 := index[key{x.Step + 1, x.To, x.ToOther}]
		if !ok1 || !ok2 {
			return PathsResult{}, fmt.Errorf("computing paths: an edge of step %d names a node the store did not count", x.Step)
		}
		res.Nodes[from].DropOff -= x.Users
		res.Edges = append(res.Edges, PathEdge{From: from, To: to, Users: x.Users})
	}
	return res, nil
}

// SortPathsAnswer orders a store's answer: nodes by step, then most users
// first with Other last, ties by name; edges by step, then by their from
// and to nodes (named ones by name, Other last).
func SortPathsAnswer(a *analytics.PathsAnswer) {
	sort.Slice(a.Nodes, func(i, j int) bool {
		x, y := a.Nodes[i], a.Nodes[j]
		if x.Step != y.Step {
			return x.Step < y.Step
		}
		if x.Other != y.Other {
			return !x.Other
		}
		if x.Users != y.Users {
			return x.Users > y.Users
		}
		return x.Name < y.Name
	})
	side := func(name string, other bool, name2 string, other2 bool) int {
		if other != other2 {
			if other {
				return 1
			}
			return -1
		}
		return strings.Compare(name, name2)
	}
	sort.Slice(a.Edges, func(i, j int) bool {
		x, y := a.Edges[i], a.Edges[j]
		if x.Step != y.Step {
			return x.Step < y.Step
		}
		if c := side(x.From, x.FromOther, y.From, y.FromOther); c != 0 {
			return c < 0
		}
		return side(x.To, x.ToOther, y.To, y.ToOther) < 0
	})
}

// PathUser is one user who reached a path node. Link is the user's page in
// the dashboard, as the Users page links it.
type PathUser struct {
	DistinctID string    `json:"distinctId"`
	ReachedAt  time.Time `json:"reachedAt"`
	Link       string    `json:"link"`
}

// PathUsersResult is the answer of POST /query/paths/users: a page of
// users, newest first, and the cursor of the next page, null after the
// last.
type PathUsersResult struct {
	Users      []PathUser `json:"users"`
	NextCursor *string    `json:"nextCursor"`
}

// PathUsers validates a path users request body and lists the page, as a
// read of the store. The store is asked for one user more than the page,
// to tell whether another page follows.
func (e *Engine) PathUsers(ctx context.Context, scope analytics.EventRange, body []byte) (PathUsersResult, error) {
	q, err := ParsePathUsers(body, scope, e.now())
	if err != nil {
		return PathUsersResult{}, err
	}
	if q.Filters, err = e.resolveCohorts(ctx, q.ProductID, q.Filters); err != nil {
		return PathUsersResult{}, err
	}
	page := q.Limit
	q.Limit++
	var rows []analytics.PathUser
	err = e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.PathUsers(ctx, q)
		return err
	})
	if err != nil {
		return PathUsersResult{}, err
	}
	res := PathUsersResult{Users: make([]PathUser, 0, min(len(rows), page))}
	if len(rows) > page {
		rows = rows[:page]
		c := writeCursor(rows[page-1])
		res.NextCursor = &c
	}
	for _, r := range rows {
		res.Users = append(res.Users, PathUser{DistinctID: r.DistinctID, ReachedAt: time.UnixMicro(r.Micros).UTC(),
			Link: UserLink(scope.ProductID, r.DistinctID)})
	}
	return res, nil
}

// UserLink is the dashboard's page of a user of a product, as the Users
// and Replays pages link it: /users/{distinctId}?product={id}.
func UserLink(productID int64, distinctID string) string {
	return "/users/" + url.PathEscape(distinctID) + "?product=" + strconv.FormatInt(productID, 10)
}
