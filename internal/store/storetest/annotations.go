package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
)

// testAnnotations checks annotation storage: scoping by workspace (never
// by product), the query scope, order, paging, date bounds, both deletes,
// and the annotations going with their saved query.
func testAnnotations(ctx context.Context, t *testing.T, s Meta) {
	w1, _ := s.CreateWorkspace(ctx, "One")
	w2, _ := s.CreateWorkspace(ctx, "Two")
	a, _ := s.CreateProduct(ctx, w1.ID, "A")
	b, _ := s.CreateProduct(ctx, w1.ID, "B")
	c, _ := s.CreateProduct(ctx, w2.ID, "C")
	saved := func(productID int64) int64 {
		q := analytics.SavedQuery{ProductID: productID, Kind: analytics.QueryTrend, Name: "q", Definition: json.RawMessage(`{}`)}
		if err := s.CreateSavedQuery(ctx, &q); err != nil {
			t.Fatal(err)
		}
		return q.ID
	}
	qa, qb, qc := saved(a.ID), saved(b.ID), saved(c.ID)

	day := time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)
	create := func(ws int64, at time.Time, label string, queryID int64) analytics.Annotation {
		t.Helper()
		an := analytics.Annotation{WorkspaceID: ws, Date: at, Label: label, Scope: analytics.ScopeWorkspace,
			Color: "emerald", CreatedBy: "token st_tok_abcd…"}
		if queryID != 0 {
			an.Scope, an.QueryID = analytics.ScopeQuery, &queryID
		}
		if err := s.CreateAnnotation(ctx, &an); err != nil {
			t.Fatalf("CreateAnnotation(%s): %v", label, err)
		}
		if an.ID == 0 || an.CreatedAt.IsZero() {
			t.Fatalf("CreateAnnotation(%s) did not fill in ID and CreatedAt: %+v", label, an)
		}
		return an
	}

	// Fields round-trip: a date in another zone with nanoseconds comes
	// back as UTC microseconds, and unicode text is kept as sent.
	paris := time.FixedZone("CET", 3600)
	first := analytics.Annotation{WorkspaceID: w1.ID, Date: time.Date(2026, 11, 19, 18, 0, 0, 123456789, paris),
		Label: "Déploiement v2 🚀", Description: "line one\nline \"two\", with commas", Scope: analytics.ScopeWorkspace,
		Color: "violet", CreatedBy: "key st_live_wxyz…"}
	if err := s.CreateAnnotation(ctx, &first); err != nil {
		t.Fatal(err)
	}
	wantDate := time.Date(2026, 11, 19, 17, 0, 0, 123456000, time.UTC)
	if !first.Date.Equal(wantDate) || first.Date.Location() != time.UTC {
		t.Errorf("stored date %v, want %v in UTC", first.Date, wantDate)
	}
	got, total, err := s.ListAnnotations(ctx, analytics.AnnotationFilter{WorkspaceID: w1.ID}, 0, 10)
	if err != nil || total != 1 || len(got) != 1 {
		t.Fatalf("ListAnnotations after one = %+v, %d, %v", got, total, err)
	}
	if g := got[0]; g.ID != first.ID || g.WorkspaceID != w1.ID || !g.Date.Equal(wantDate) || g.Label != first.Label ||
		g.Description != first.Description || g.Scope != analytics.ScopeWorkspace || g.QueryID != nil ||
		g.Color != "violet" || g.CreatedBy != first.CreatedBy || !g.CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("read back %+v\nwant %+v", g, first)
	}

	// The query scope: a saved query of any product of the workspace, and
	// nothing else.
	onA := create(w1.ID, day.Add(2*time.Hour), "on A", qa)
	onB := create(w1.ID, day.Add(3*time.Hour), "on B", qb)
	if onA.QueryID == nil || *onA.QueryID != qa {
		t.Errorf("query annotation QueryID = %v, want %d", onA.QueryID, qa)
	}
	for _, q := range []int64{qc, 999999} {
		bad := analytics.Annotation{WorkspaceID: w1.ID, Date: day, Label: "bad", Scope: analytics.ScopeQuery,
			QueryID: &q, Color: "sky", CreatedBy: "x"}
		if err := s.CreateAnnotation(ctx, &bad); !errors.Is(err, analytics.ErrNotFound) {
			t.Errorf("annotation on saved query %d, not of the workspace: %v, want ErrNotFound", q, err)
		}
	}

	// Order: newest date first; at the same date, newest annotation first.
	same1 := create(w1.ID, day, "same 1", 0)
	same2 := create(w1.ID, day, "same 2", 0)
	older := create(w1.ID, day.Add(-48*time.Hour), "older", 0)
	other := create(w2.ID, day, "other workspace", 0)
	otherQ := create(w2.ID, day, "other workspace query", qc)

	ids := func(as []analytics.Annotation) []int64 {
		out := []int64{}
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	list := func(f analytics.AnnotationFilter, offset, limit int) ([]int64, int) {
		t.Helper()
		got, total, err := s.ListAnnotations(ctx, f, offset, limit)
		if err != nil {
			t.Fatalf("ListAnnotations(%+v): %v", f, err)
		}
		return ids(got), total
	}
	check := func(what string, got []int64, total int, want []int64, wantTotal int) {
		t.Helper()
		if !slices.Equal(got, want) || total != wantTotal {
			t.Errorf("%s: ids %v total %d, want %v total %d", what, got, total, want, wantTotal)
		}
	}
	ws1 := analytics.AnnotationFilter{WorkspaceID: w1.ID}
	g, n := list(ws1, 0, 100)
	check("workspace only", g, n, []int64{same2.ID, same1.ID, first.ID, older.ID}, 4)
	g, n = list(ws1, 1, 2)
	check("page 2 of 2", g, n, []int64{same1.ID, first.ID}, 4)
	g, n = list(ws1, 10, 2)
	check("past the end", g, n, []int64{}, 4)
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w1.ID, QueryID: qa}, 0, 100)
	check("workspace and query A", g, n, []int64{onA.ID, same2.ID, same1.ID, first.ID, older.ID}, 5)
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w1.ID, QueryID: qc}, 0, 100)
	check("another workspace's query adds nothing", g, n, []int64{same2.ID, same1.ID, first.ID, older.ID}, 4)
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w2.ID, QueryID: qc}, 0, 100)
	check("workspace two", g, n, []int64{otherQ.ID, other.ID}, 2)
	// Bounds are inclusive at both ends.
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w1.ID, QueryID: qb, From: day, To: day.Add(3 * time.Hour)}, 0, 100)
	check("from and to", g, n, []int64{onB.ID, same2.ID, same1.ID}, 3)
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w1.ID, To: day.Add(-time.Microsecond)}, 0, 100)
	check("to only", g, n, []int64{first.ID, older.ID}, 2)

	// EachAnnotation streams what ListAnnotations pages, in the same order.
	var each []int64
	err = s.EachAnnotation(ctx, analytics.AnnotationFilter{WorkspaceID: w1.ID, QueryID: qa}, func(a analytics.Annotation) error {
		each = append(each, a.ID)
		return nil
	})
	if err != nil || !slices.Equal(each, []int64{onA.ID, same2.ID, same1.ID, first.ID, older.ID}) {
		t.Errorf("EachAnnotation = %v, %v", each, err)
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.EachAnnotation(ctx, ws1, func(analytics.Annotation) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("EachAnnotation with a failing fn: %v after %d calls", err, calls)
	}

	// Deleting one: never another workspace's.
	if err := s.DeleteAnnotation(ctx, w1.ID, other.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleting workspace two's annotation through one: %v, want ErrNotFound", err)
	}
	if err := s.DeleteAnnotation(ctx, w1.ID, older.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAnnotation(ctx, w1.ID, older.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleting twice: %v, want ErrNotFound", err)
	}

	// Deleting many: only the workspace's, each once.
	n, err = s.DeleteAnnotations(ctx, w1.ID, []int64{same1.ID, same1.ID, other.ID, otherQ.ID, older.ID, 999999, same2.ID})
	if err != nil || n != 2 {
		t.Errorf("DeleteAnnotations = %d, %v; want 2", n, err)
	}
	if n, err := s.DeleteAnnotations(ctx, w1.ID, nil); err != nil || n != 0 {
		t.Errorf("DeleteAnnotations(nil) = %d, %v", n, err)
	}
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w2.ID, QueryID: qc}, 0, 100)
	check("workspace two after workspace one's deletes", g, n, []int64{otherQ.ID, other.ID}, 2)

	// Deleting a saved query deletes its annotations, and only those.
	if err := s.DeleteSavedQuery(ctx, a.ID, qa); err != nil {
		t.Fatal(err)
	}
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w1.ID, QueryID: qa}, 0, 100)
	check("after deleting saved query A", g, n, []int64{first.ID}, 1)
	g, n = list(analytics.AnnotationFilter{WorkspaceID: w1.ID, QueryID: qb}, 0, 100)
	check("query B's annotation stays", g, n, []int64{onB.ID, first.ID}, 2)
	if err := s.DeleteAnnotation(ctx, w1.ID, onA.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("saved query A's annotation survived its query: %v", err)
	}

	// Many ids in one bulk delete (one placeholder each).
	var many []int64
	for i := range 300 {
		many = append(many, create(w2.ID, day.Add(time.Duration(i)*time.Minute), fmt.Sprint("bulk ", i), 0).ID)
	}
	if n, err := s.DeleteAnnotations(ctx, w2.ID, many); err != nil || n != 300 {
		t.Errorf("deleting 300 at once = %d, %v", n, err)
	}
}
