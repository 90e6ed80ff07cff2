package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"strata/internal/query/querytest"
)

// funnelUsersAnswer is the answer of POST /api/v1/query/funnel/users.
type funnelUsersAnswer struct {
	Users []struct {
		DistinctID    string     `json:"distinctId"`
		ReachedAt     time.Time  `json:"reachedAt"`
		NextReachedAt *time.Time `json:"nextReachedAt"`
		Link          string     `json:"link"`
		ReplaysLink   string     `json:"replaysLink"`
	} `json:"users"`
	NextCursor *string `json:"nextCursor"`
}

// TestFunnelUsersOverHTTP sends events to the real binary and lists a
// funnel step's users: the converted newest first and page by page, the
// dropped, a breakdown row's, nothing for another product's token, and
// 400s naming the field.
func TestFunnelUsersOverHTTP(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "funnel users"), newTenant(t, s, "other")
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	ev := func(user, name string, at time.Duration, plan string) querytest.Event {
		return querytest.Event{DistinctID: user, Name: name, Time: t0.Add(at), Properties: map[string]any{"plan": plan}}
	}
	ingestDataset(t, s, a, []querytest.Event{
		ev("u1", "view", 0, "pro"), ev("u1", "signup", time.Minute, "pro"), ev("u1", "pay", 2*time.Minute, "pro"),
		ev("u2", "view", 0, "free"), ev("u2", "signup", 5*time.Minute, "free"),
		ev("u3", "view", time.Hour, "free"), ev("u3", "signup", 2*time.Hour, "free"),
		ev("u4", "view", 0, "pro"),
	})
	funnel := map[string]any{"dateFrom": "2026-03-02", "dateTo": "2026-03-02", "steps": []string{"view", "signup", "pay"}}
	list := func(token string, extra map[string]any) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for range 10 {
			r := map[string]any{"limit": 2}
			for k, v := range funnel {
				r[k] = v
			}
			for k, v := range extra {
				r[k] = v
			}
			if cursor != "" {
				r["cursor"] = cursor
			}
			var page funnelUsersAnswer
			ask(t, s, token, "/api/v1/query/funnel/users", r, &page)
			for _, u := range page.Users {
				ids = append(ids, u.DistinctID)
				if want := fmt.Sprintf("/users/%s?product=%d", u.DistinctID, a.ID); u.Link != want {
					t.Errorf("link %q, want %q", u.Link, want)
				}
				if want := fmt.Sprintf("/replays?product=%d&distinct_id=%s", a.ID, u.DistinctID); u.ReplaysLink != want {
					t.Errorf("replays link %q, want %q", u.ReplaysLink, want)
				}
			}
			if page.NextCursor == nil {
				return ids
			}
			cursor = *page.NextCursor
		}
		t.Fatal("no last page in 10")
		return nil
	}
	for _, c := range []struct {
		extra map[string]any
		want  string
	}{
		// Step 0: u3 entered last, then u1, u2 and u4 at once, by id.
		{map[string]any{"step": 0, "status": "converted"}, "u3,u1,u2,u4"},
		{map[string]any{"step": 0, "status": "dropped"}, "u4"},
		// Step 1: u3 signed up last, then u2, then u1.
		{map[string]any{"step": 1, "status": "converted"}, "u3,u2,u1"},
		{map[string]any{"step": 1, "status": "dropped"}, "u3,u2"},
		{map[string]any{"step": 2, "status": "converted"}, "u1"},
		// By plan: the free row's step-1 users; with one value, free is
		// the top row (two users each, ties by value) and pro the other.
		{map[string]any{"step": 1, "status": "converted", "breakdown": "properties.plan", "breakdownValue": "free"}, "u3,u2"},
		{map[string]any{"step": 0, "status": "converted", "breakdown": "properties.plan", "breakdownLimit": 1, "other": true}, "u1,u4"},
		{map[string]any{"step": 0, "status": "dropped", "breakdown": "properties.plan", "breakdownLimit": 1, "breakdownValue": "free"}, ""},
	} {
		if got := strings.Join(list(a.Token, c.extra), ","); got != c.want {
			t.Errorf("%v: %s, want %s", c.extra, got, c.want)
		}
	}
	// The converted of step 1 know when they paid, if they did.
	var page funnelUsersAnswer
	r := map[string]any{"step": 1, "status": "converted"}
	for k, v := range funnel {
		r[k] = v
	}
	ask(t, s, a.Token, "/api/v1/query/funnel/users", r, &page)
	if len(page.Users) != 3 || page.Users[2].NextReachedAt == nil || !page.Users[2].NextReachedAt.Equal(t0.Add(2*time.Minute)) ||
		page.Users[0].NextReachedAt != nil || !page.Users[0].ReachedAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("step 1's converted: %+v", page)
	}

	// Another product's token sees nobody.
	if got := list(b.Token, map[string]any{"step": 0, "status": "converted"}); len(got) != 0 {
		t.Errorf("another product's token sees %v", got)
	}

	// A bad request is a 400 naming the field.
	steps := `"steps":["view","signup","pay"]`
	for body, msg := range map[string]string{
		`{` + steps + `,"step":3,"status":"converted"}`:                   "step: must be a step index from 0 to 2, not 3",
		`{` + steps + `,"step":2,"status":"dropped"}`:                     "step: nobody drops off after the last step",
		`{` + steps + `,"step":0,"status":"left"}`:                        `status: must be converted or dropped, not "left"`,
		`{` + steps + `,"step":0,"status":"converted","limit":101}`:       "limit: must be from 1 to 100, not 101",
		`{` + steps + `,"step":0,"status":"converted","cursor":"!!"}`:     "cursor: is not a cursor this endpoint returned",
		`{` + steps + `,"step":0,"status":"converted","other":true}`:      "breakdownValue: is only allowed with a breakdown",
		`{` + steps + `,"step":0,"status":"converted","aggregateBy":"c"}`: "aggregateBy: a funnel of groups has no users to list",
		`{` + steps + `,"step":0,"status":"converted","name":"x"}`:        "name",
	} {
		res := do(t, "POST", s.URL+"/api/v1/query/funnel/users", []byte(body), map[string]string{"Authorization": "Bearer " + a.Token})
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		json.Unmarshal(res.Body, &e)
		if res.Status != 400 || e.Error.Code != "invalid_request" || !strings.Contains(e.Error.Message, msg) {
			t.Errorf("%s: %d %s; want 400 invalid_request saying %q", body, res.Status, res.Body, msg)
		}
	}
}
