package goals

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/query"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestOperations runs the goal operations on a real DuckDB store with two
// products: a goal is validated before anything is stored, the same goal
// twice and a goal past the cap are refused, a delete reaches only its own
// product, and a report counts the product's events through its goals,
// naming an unknown goal a 404.
func TestOperations(t *testing.T) {
	ctx := context.Background()
	st, a := duckdbtest.Product(t)
	b := duckdbtest.NewProduct(t, st, "B")
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	svc := &Service{Store: st, Queries: &query.Engine{Store: st}, Max: 3, Now: func() time.Time { return now }}
	code := func(err error) string { return analytics.AsError(err).Code }

	for _, bad := range []struct {
		kind        analytics.GoalKind
		event, path string
	}{
		{"event", "", ""}, {"event", "signup", "/x"}, {"page", "", ""}, {"page", "", "pricing"}, {"page", "signup", "/p"},
		{"page", "", "/" + strings.Repeat("p", MaxPathLen)}, {"page", "", "/*/*/*/*/*/*"}, {"click", "signup", ""},
		{"event", strings.Repeat("e", query.MaxNameLen+1), ""},
	} {
		if _, err := svc.Create(ctx, a.ID, bad.kind, bad.event, bad.path); code(err) != "invalid_request" {
			t.Errorf("create %+v: %v, want invalid_request", bad, err)
		}
	}
	if l, _ := svc.List(ctx, a.ID); len(l) != 0 {
		t.Fatalf("refused creates stored %v", l)
	}
	signup, err := svc.Create(ctx, a.ID, analytics.GoalEvent, "signup", "")
	if err != nil || signup.ID == 0 || signup.Event != "signup" {
		t.Fatalf("create: %+v %v", signup, err)
	}
	if _, err := svc.Create(ctx, a.ID, analytics.GoalEvent, "signup", ""); code(err) != "goal_exists" {
		t.Errorf("the same goal twice: %v, want goal_exists", err)
	}
	blog, err := svc.Create(ctx, a.ID, analytics.GoalPage, "", "/blog/*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, a.ID, analytics.GoalPage, "", "/pricing"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, a.ID, analytics.GoalEvent, "purchase", ""); code(err) != "goals_full" {
		t.Errorf("a fourth goal under a cap of 3: %v, want goals_full", err)
	}
	if err := svc.Delete(ctx, b.ID, signup.ID); code(err) != "goal_not_found" {
		t.Errorf("deleting A's goal as B: %v, want goal_not_found", err)
	}

	day := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	var events []analytics.Event
	add := func(p int64, user, name, path, source string, at time.Duration) {
		events = append(events, analytics.Event{UUID: [16]byte{byte(len(events) + 1), byte(p)}, ProductID: p, Env: analytics.EnvLive,
			Timestamp: day.Add(at), ReceivedAt: day.Add(at), Name: name, DistinctID: user, UserID: ingest.UserID(user),
			Path: path, Source: source, Properties: []byte("{}")})
	}
	add(a.ID, "u1", "$pageview", "/", "Google", 0)
	add(a.ID, "u1", "$pageview", "/blog/post", "", time.Minute)
	add(a.ID, "u1", "signup", "", "", 2*time.Minute)
	add(a.ID, "u2", "$pageview", "/pricing", "", 0)
	add(a.ID, "u3", "$pageview", "/", "Google", 0)
	add(b.ID, "u4", "$pageview", "/blog/x", "", 0) // B's, never A's
	add(b.ID, "u4", "signup", "", "", time.Minute)
	if err := st.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	body := `{"dateFrom":"2026-11-20","dateTo":"2026-11-20"}`
	res, err := svc.Report(ctx, analytics.EventRange{ProductID: a.ID, Env: analytics.EnvLive}, []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Visitors != 3 || len(res.Goals) != 3 {
		t.Fatalf("report: %+v", res)
	}
	for i, want := range []query.GoalFigures{{Visitors: 1, Conversions: 1, ConversionRate: 33.3}, {Visitors: 1, Conversions: 1, ConversionRate: 33.3}, {Visitors: 1, Conversions: 1, ConversionRate: 33.3}} {
		if res.Goals[i].GoalFigures != want {
			t.Errorf("goal %d (%s): %+v, want %+v", i, res.Goals[i].Name, res.Goals[i].GoalFigures, want)
		}
	}
	if res.Goals[1].Name != "Visit /blog/*" || res.Goals[0].Name != "signup" {
		t.Errorf("names: %q %q", res.Goals[0].Name, res.Goals[1].Name)
	}
	body = `{"dateFrom":"2026-11-20","dateTo":"2026-11-20","goal":` + itoa(blog.ID) + `,"breakdown":"source"}`
	res, err = svc.Report(ctx, analytics.EventRange{ProductID: a.ID, Env: analytics.EnvLive}, []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []query.GoalBreakdownRow{
		{Value: "Google", Total: 2, GoalFigures: query.GoalFigures{Visitors: 1, Conversions: 1, ConversionRate: 50}},
		{Value: "", Total: 1, GoalFigures: query.GoalFigures{}},
	}
	if len(res.Goals) != 1 || res.Goals[0].ID != blog.ID || len(res.Rows) != 2 || res.Rows[0] != want[0] || res.Rows[1] != want[1] {
		t.Errorf("by source: %+v, want the blog goal and rows %+v", res, want)
	}
	// B's goals are B's: A's goal id names nothing there.
	body = `{"goal":` + itoa(blog.ID) + `,"breakdown":"country"}`
	if _, err := svc.Report(ctx, analytics.EventRange{ProductID: b.ID, Env: analytics.EnvLive}, []byte(body), nil); code(err) != "goal_not_found" {
		t.Errorf("A's goal through B: %v, want goal_not_found", err)
	}
	if err := svc.Delete(ctx, a.ID, signup.ID); err != nil {
		t.Fatal(err)
	}
	if l, _ := svc.List(ctx, a.ID); len(l) != 2 || l[0].ID != blog.ID {
		t.Errorf("after a delete: %+v", l)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
