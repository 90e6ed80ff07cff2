package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"strata/internal/query/querytest"
)

// pathsAnswer is the answer of POST /api/v1/query/paths.
type pathsAnswer struct {
	Kind     string `json:"kind"`
	Backward bool   `json:"backward"`
	Users    int64  `json:"users"`
	Nodes    []struct {
		Step    int    `json:"step"`
		Name    string `json:"name"`
		Other   bool   `json:"other"`
		Users   int64  `json:"users"`
		DropOff int64  `json:"dropOff"`
	} `json:"nodes"`
	Edges []struct {
		From  int   `json:"from"`
		To    int   `json:"to"`
		Users int64 `json:"users"`
	} `json:"edges"`
}

// pathUsersAnswer is the answer of POST /api/v1/query/paths/users.
type pathUsersAnswer struct {
	Users []struct {
		DistinctID string    `json:"distinctId"`
		ReachedAt  time.Time `json:"reachedAt"`
		Link       string    `json:"link"`
	} `json:"users"`
	NextCursor *string `json:"nextCursor"`
}

// TestPathsOverHTTP sends page views to the real binary and reads paths
// back: a hand-counted case (repeats collapsed, a visit cut by the
// 30-minute rule, a step's second name grouped as other, drop-offs), a
// node's users page by page, nothing for another product's token, 400s
// naming the field, and seeded datasets equal to the reference.
func TestPathsOverHTTP(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "paths"), newTenant(t, s, "other")
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	pv := func(user, path string, at time.Duration) querytest.Event {
		return querytest.Event{DistinctID: user, Name: "$pageview", Time: t0.Add(at), URL: "https://example.com" + path}
	}
	ingestDataset(t, s, a, []querytest.Event{
		// u1: /pricing viewed twice in a row is one step.
		pv("u1", "/", 0), pv("u1", "/pricing", time.Minute), pv("u1", "/pricing", 2*time.Minute),
		pv("u1", "/signup", 3*time.Minute), pv("u1", "/welcome", 4*time.Minute),
		pv("u2", "/", 0), pv("u2", "/pricing", time.Minute), pv("u2", "/docs", 2*time.Minute),
		// u3's next page comes 40 minutes later, in another visit.
		pv("u3", "/pricing", 10*time.Minute), pv("u3", "/signup", 50*time.Minute),
	})
	req := map[string]any{"dateFrom": "2026-03-02", "dateTo": "2026-03-02", "start": "/pricing", "depth": 3, "branches": 1}
	var got pathsAnswer
	ask(t, s, a.Token, "/api/v1/query/paths", req, &got)
	// Step 2 has /docs (u2) and /signup (u1), one user each: with one
	// branch /docs stays (ties by name) and /signup is the other node.
	want := `{"kind":"pageview","backward":false,"users":3,"nodes":[` +
		`{"step":1,"name":"/pricing","other":false,"users":3,"dropOff":1},` +
		`{"step":2,"name":"/docs","other":false,"users":1,"dropOff":1},` +
		`{"step":2,"name":"","other":true,"users":1,"dropOff":0},` +
		`{"step":3,"name":"/welcome","other":false,"users":1,"dropOff":1}],` +
		`"edges":[{"from":0,"to":1,"users":1},{"from":0,"to":2,"users":1},{"from":2,"to":3,"users":1}]}`
	var w pathsAnswer
	json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("paths:\n got %s\nwant %s", g, want)
	}

	// The users of step 1, two a page: u3 reached /pricing last, then u1
	// and u2 at the same minute, by distinct id.
	var ids []string
	cursor := ""
	for page := 0; page < 3; page++ {
		r := map[string]any{"dateFrom": "2026-03-02", "dateTo": "2026-03-02", "start": "/pricing", "depth": 3, "branches": 1,
			"step": 1, "name": "/pricing", "limit": 2}
		if cursor != "" {
			r["cursor"] = cursor
		}
		var users pathUsersAnswer
		ask(t, s, a.Token, "/api/v1/query/paths/users", r, &users)
		for _, u := range users.Users {
			ids = append(ids, u.DistinctID)
			if want := fmt.Sprintf("/users/%s?product=%d", u.DistinctID, a.ID); u.Link != want {
				t.Errorf("link %q, want %q", u.Link, want)
			}
		}
		if users.NextCursor == nil {
			break
		}
		cursor = *users.NextCursor
	}
	if strings.Join(ids, ",") != "u3,u1,u2" {
		t.Errorf("users of /pricing: %v, want u3, u1, u2", ids)
	}
	// The other node of step 2 is u1's /signup.
	var others pathUsersAnswer
	ask(t, s, a.Token, "/api/v1/query/paths/users", map[string]any{"dateFrom": "2026-03-02", "dateTo": "2026-03-02",
		"start": "/pricing", "depth": 3, "branches": 1, "step": 2, "other": true}, &others)
	if len(others.Users) != 1 || others.Users[0].DistinctID != "u1" || !others.Users[0].ReachedAt.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("users of step 2's other node: %+v", others)
	}

	// Another product's token sees no path.
	var other pathsAnswer
	ask(t, s, b.Token, "/api/v1/query/paths", req, &other)
	if other.Users != 0 || len(other.Nodes) != 0 || len(other.Edges) != 0 {
		t.Errorf("another product's token sees %+v", other)
	}

	// A bad request is a 400 naming the field.
	for path, cases := range map[string]map[string]string{
		"/api/v1/query/paths": {
			`{"depth":9}`:               "depth: must be from 2 to 5, not 9",
			`{"branches":21}`:           "branches: must be from 1 to 20, not 21",
			`{"start":"/a","end":"/b"}`: "end: a path has a start or an end, not both",
			`{"kind":"click"}`:          `kind: must be pageview or event, not "click"`,
			`{"depth":3,"filters":[{"property":"nope","operator":"eq","value":1}]}`: "filters[0].property",
		},
		"/api/v1/query/paths/users": {
			`{"step":5}`:                          "step: must be from 1 to the depth, 4, not 5",
			`{"step":1}`:                          "name: name a node, or set other",
			`{"step":1,"name":"/","limit":500}`:   "limit: must be from 1 to 200, not 500",
			`{"step":1,"name":"/","cursor":"!!"}`: "cursor: is not a cursor this endpoint returned",
		},
	} {
		for body, msg := range cases {
			res := do(t, "POST", s.URL+path, []byte(body), map[string]string{"Authorization": "Bearer " + a.Token})
			var e struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			json.Unmarshal(res.Body, &e)
			if res.Status != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, msg) {
				t.Errorf("%s %s: %d %s; want 400 invalid_request saying %q", path, body, res.Status, res.Body, msg)
			}
		}
	}

	// Seeded datasets, live and test, equal to the reference over the
	// events as stored.
	for seed := int64(1); seed <= 6; seed++ {
		ds := querytest.GeneratePaths(seed)
		tn := newTenant(t, s, fmt.Sprintf("paths %d", seed))
		events := ingestDataset(t, s, tn, ds.Events)
		p := ds.Params
		req := map[string]any{"dateFrom": day(ds.From), "dateTo": day(ds.To), "kind": p.Kind, "start": p.Start, "end": p.End,
			"depth": p.Depth, "branches": p.Branches, "filters": filterJSON(p.Filters)}
		for _, test := range []bool{false, true} {
			path := "/api/v1/query/paths"
			if test {
				path += "?env=test"
			}
			var got pathsAnswer
			ask(t, s, tn.Token, path, req, &got)
			want := querytest.Paths(time.UTC, events, test, p, ds.From, ds.To)
			var flat querytest.PathsResult
			for _, n := range got.Nodes {
				flat.Nodes = append(flat.Nodes, querytest.PathNode{Step: n.Step, Name: n.Name, Other: n.Other, Users: n.Users})
			}
			for _, e := range got.Edges {
				from, to := got.Nodes[e.From], got.Nodes[e.To]
				if to.Step != from.Step+1 {
					t.Errorf("seed %d: edge %+v joins steps %d and %d", seed, e, from.Step, to.Step)
				}
				flat.Edges = append(flat.Edges, querytest.PathEdge{Step: from.Step, From: from.Name, FromOther: from.Other,
					To: to.Name, ToOther: to.Other, Users: e.Users})
			}
			querytest.SortPaths(&flat)
			if !reflect.DeepEqual(flat, want) {
				t.Errorf("seed %d test=%v %+v:\n got %+v\nwant %+v", seed, test, p, flat, want)
			}
		}
	}
}
