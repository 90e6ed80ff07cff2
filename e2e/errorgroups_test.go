package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// errorGroupWire is a group as /api/v1/errors answers it.
type errorGroupWire struct {
	Fingerprint, Type, Message string
	Events, Users              int64
	Daily                      []struct {
		Date   string
		Events int64
	}
	Status          string
	Regressed       bool
	ResolvedRelease string
}

// TestErrorGroups drives the error groups API over HTTP: two bugs group by
// their fingerprint with the counts sent; a group's occurrences come newest
// first with their frames and release; resolving one takes it off the open
// list until an event of a later release reopens it as a regression;
// ignoring works; and nobody else reads them.
func TestErrorGroups(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	now, unit := todaySteps(3, time.Minute)
	exception := func(id, errType, fn, release string, ago time.Duration) map[string]any {
		return map[string]any{"event_name": "$exception", "distinct_id": id, "timestamp": now.Add(-ago).Format(time.RFC3339Nano),
			"properties": map[string]any{"$exception_type": errType, "$exception_message": "broke " + id, "$release": release,
				"$exception_stack": errType + ": broke\n    at " + fn + " (https://shop.example.com/app.js:10:5)\n    at main (https://shop.example.com/app.js:40:1)"}}
	}
	if r := postEvents(t, s, a.Live,
		exception("u1", "TypeError", "render", "1.0", 3*unit), exception("u2", "TypeError", "render", "1.0", 2*unit),
		exception("u1", "TypeError", "render", "1.0", unit), exception("u3", "RangeError", "checkout", "1.0", unit)); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	list := func(cred, query string) []errorGroupWire {
		t.Helper()
		res := annCall(t, s, cred, "GET", "/api/v1/errors"+query, nil)
		var out struct{ Groups []errorGroupWire }
		if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != 200 {
			t.Fatalf("list %s: %d %s", query, res.Status, res.Body)
		}
		return out.Groups
	}
	groups := list(a.Token, "")
	if len(groups) != 2 || groups[0].Type != "TypeError" || groups[0].Events != 3 || groups[0].Users != 2 || groups[0].Message != "broke u1" ||
		groups[1].Type != "RangeError" || groups[1].Events != 1 || groups[0].Status != "open" || len(groups[0].Daily) != 7 ||
		groups[0].Daily[6].Events != 3 || groups[0].Daily[6].Date != now.Format(time.DateOnly) {
		t.Fatalf("groups: %+v", groups)
	}
	render, checkout := groups[0].Fingerprint, groups[1].Fingerprint

	res := annCall(t, s, a.Token, "GET", "/api/v1/errors/"+render, nil)
	var detail struct {
		Group       errorGroupWire
		Occurrences []struct {
			Time       time.Time
			DistinctID string
			Release    string
			Frames     []struct {
				Function string
				Line     int
			}
			Stack string
		}
	}
	json.Unmarshal(res.Body, &detail)
	if res.Status != 200 || detail.Group.Events != 3 || len(detail.Occurrences) != 3 || detail.Occurrences[0].DistinctID != "u1" ||
		!detail.Occurrences[0].Time.After(detail.Occurrences[1].Time) || detail.Occurrences[0].Release != "1.0" ||
		len(detail.Occurrences[0].Frames) != 2 || detail.Occurrences[0].Frames[0].Function != "render" || detail.Occurrences[0].Stack == "" {
		t.Fatalf("group: %d %s", res.Status, res.Body)
	}
	wantError(t, annCall(t, s, a.Token, "GET", "/api/v1/errors/nope", nil), 404, "error_group_not_found", "")

	// Resolved (in the latest release seen: 1.0), it leaves the open list.
	res = annCall(t, s, a.Token, "PUT", "/api/v1/errors/"+render+"/status", map[string]any{"status": "resolved"})
	if res.Status != 200 || !json.Valid(res.Body) || string(res.Body) == "" {
		t.Fatalf("resolve: %d %s", res.Status, res.Body)
	}
	var st struct{ Status, ResolvedRelease string }
	json.Unmarshal(res.Body, &st)
	if st.Status != "resolved" || st.ResolvedRelease != "1.0" {
		t.Errorf("resolved as %+v", st)
	}
	if open := list(a.Token, "?status=open"); len(open) != 1 || open[0].Fingerprint != checkout {
		t.Errorf("open after resolving: %+v", open)
	}
	// The same release again is no regression; a later release is.
	time.Sleep(10 * time.Millisecond)
	now = time.Now().UTC() // the events below happen after the resolution
	postEvents(t, s, a.Live, exception("u4", "TypeError", "render", "1.0", 0))
	if resolved := list(a.Token, "?status=resolved"); len(resolved) != 1 || resolved[0].Regressed {
		t.Errorf("an event of the resolved release: %+v", resolved)
	}
	postEvents(t, s, a.Live, exception("u5", "TypeError", "render", "1.1", 0))
	open := list(a.Token, "?status=open")
	var back *errorGroupWire
	for i := range open {
		if open[i].Fingerprint == render {
			back = &open[i]
		}
	}
	if back == nil || !back.Regressed || back.ResolvedRelease != "1.0" {
		t.Errorf("a later release's event did not reopen it: %+v", open)
	}
	if r := annCall(t, s, a.Token, "PUT", "/api/v1/errors/"+checkout+"/status", map[string]any{"status": "ignored"}); r.Status != 200 {
		t.Errorf("ignore: %d %s", r.Status, r.Body)
	}
	if ignored := list(a.Token, "?status=ignored"); len(ignored) != 1 || ignored[0].Fingerprint != checkout {
		t.Errorf("ignored: %+v", ignored)
	}
	wantError(t, annCall(t, s, a.Token, "PUT", "/api/v1/errors/"+checkout+"/status", map[string]any{"status": "done"}), 400, "invalid_request", "status")
	wantError(t, annCall(t, s, a.Token, "GET", "/api/v1/errors?status=done", nil), 400, "invalid_request", "status")
	if r := list(a.Token, "?release=1.1"); len(r) != 1 || r[0].Events != 1 {
		t.Errorf("release 1.1: %+v", r)
	}

	// Nobody else.
	wantError(t, annCall(t, s, a.Live, "GET", "/api/v1/errors", nil), 403, "key_not_allowed", "")
	if other := list(b.Token, ""); len(other) != 0 {
		t.Errorf("the other product sees %+v", other)
	}
	wantError(t, annCall(t, s, b.Token, "GET", "/api/v1/errors/"+render, nil), 404, "error_group_not_found", "")
}

// TestExceptionStacksOfAnyShape sends stacks nobody can read: empty, a
// megabyte of text, control characters, a format of its own. Each is
// stored as sent and grouped by its type and message; a stack past the
// $exception events' limit is refused with properties_too_large.
func TestExceptionStacksOfAnyShape(t *testing.T) {
	s := startServer(t, t.TempDir())
	a := newTenant(t, s, "Shop")
	megabyte := strings.Repeat("garbage line with no frame at all (x:y)\n", 1<<20/40)
	var sent []map[string]any
	for i, stack := range []string{"", megabyte, "\x01\x02\x7f\u00e9\uffff weird", "frame1 | frame2 | frame3"} {
		sent = append(sent, map[string]any{"event_name": "$exception", "distinct_id": "u" + strconv.Itoa(i),
			"properties": map[string]any{"$exception_type": "Error", "$exception_message": "unreadable", "$exception_stack": stack}})
	}
	if r := postEvents(t, s, a.Live, sent...); r.Status != 202 || strings.Contains(string(r.Body), `"code"`) {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	tooBig := map[string]any{"event_name": "$exception", "distinct_id": "big",
		"properties": map[string]any{"$exception_type": "Error", "$exception_message": "big", "$exception_stack": megabyte + megabyte}}
	if r := postEvents(t, s, a.Live, tooBig); r.Status != 400 || !strings.Contains(string(r.Body), "properties_too_large") {
		t.Errorf("a 2 MB stack: %d %.300s", r.Status, r.Body)
	}
	res := annCall(t, s, a.Token, "GET", "/api/v1/errors", nil)
	var out struct{ Groups []errorGroupWire }
	json.Unmarshal(res.Body, &out)
	if len(out.Groups) != 1 || out.Groups[0].Events != 4 || out.Groups[0].Users != 4 || out.Groups[0].Type != "Error" {
		t.Fatalf("groups: %s", res.Body)
	}
	res = annCall(t, s, a.Token, "GET", "/api/v1/errors/"+out.Groups[0].Fingerprint, nil)
	var detail struct {
		Occurrences []struct {
			DistinctID string
			Stack      string
			Frames     []any
		}
	}
	json.Unmarshal(res.Body, &detail)
	stacks := map[string]int{}
	for _, o := range detail.Occurrences {
		stacks[o.DistinctID] = len(o.Stack)
		if len(o.Frames) != 0 {
			t.Errorf("%s: frames read from an unreadable stack: %v", o.DistinctID, o.Frames)
		}
	}
	if stacks["u1"] != len(megabyte) || stacks["u3"] != len("frame1 | frame2 | frame3") {
		t.Errorf("the stacks were not stored as sent: %v", stacks)
	}
}
