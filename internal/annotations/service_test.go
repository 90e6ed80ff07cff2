package annotations

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestOperations runs the annotation operations on a real DuckDB store
// with two workspaces: a create is validated before anything is stored and
// a queryId of no saved query is a field's fault; a list is cut into pages
// and is [] past its end; a delete reaches only its own workspace; a bulk
// delete refuses a list left out, empty, too long or with an id below 1,
// and counts only what it removed.
func TestOperations(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	mine, _ := st.CreateWorkspace(ctx, "Mine")
	theirs, _ := st.CreateWorkspace(ctx, "Theirs")
	svc := &Service{Store: st}
	day := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	create := func(ws int64, label string, d time.Time) analytics.Annotation {
		t.Helper()
		a := analytics.Annotation{WorkspaceID: ws, Label: label, Date: d, Color: "emerald", Scope: analytics.ScopeWorkspace, CreatedBy: "test"}
		if err := svc.Create(ctx, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	var errA *analytics.Error
	list := func(ws int64, page, size int) Page {
		t.Helper()
		p, err := svc.List(ctx, analytics.AnnotationFilter{WorkspaceID: ws}, page, size)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	bad := analytics.Annotation{WorkspaceID: mine.ID, Label: "", Date: day, Color: "emerald", Scope: analytics.ScopeWorkspace}
	if err := svc.Create(ctx, &bad); !errors.As(err, &errA) || !strings.HasPrefix(errA.Message, "label:") {
		t.Errorf("a create without a label: %v", err)
	}
	missing := int64(999)
	orphan := analytics.Annotation{WorkspaceID: mine.ID, Label: "On a chart", Date: day, Color: "sky", Scope: analytics.ScopeQuery, QueryID: &missing}
	if err := svc.Create(ctx, &orphan); !errors.As(err, &errA) || !strings.HasPrefix(errA.Message, "queryId: there is no saved query 999") {
		t.Errorf("a create on a query that does not exist: %v", err)
	}
	if p := list(mine.ID, 1, 10); p.Total != 0 || p.Items == nil {
		t.Fatalf("refused creates stored %+v", p)
	}

	first, second, third := create(mine.ID, "Deploy", day), create(mine.ID, "Incident", day.Add(time.Hour)), create(mine.ID, "Launch", day.Add(2*time.Hour))
	other := create(theirs.ID, "Theirs", day)
	if p := list(mine.ID, 2, 2); p.Total != 3 || len(p.Items) != 1 || p.Items[0].ID != first.ID || p.Page != 2 || p.PageSize != 2 {
		t.Errorf("page 2 of 2: %+v", p)
	}
	if p := list(mine.ID, 3, 2); p.Total != 3 || p.Items == nil || len(p.Items) != 0 {
		t.Errorf("a page past the end: %+v", p)
	}
	var seen []int64
	if err := svc.Each(ctx, analytics.AnnotationFilter{WorkspaceID: mine.ID}, func(a analytics.Annotation) error {
		seen = append(seen, a.ID)
		return nil
	}); err != nil || len(seen) != 3 || seen[0] != third.ID {
		t.Errorf("each: %v %v", seen, err)
	}

	if err := svc.Delete(ctx, mine.ID, other.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a delete of another workspace's annotation: %v", err)
	}
	if err := svc.Delete(ctx, mine.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, mine.ID, first.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a second delete: %v", err)
	}

	tooMany := make([]int64, MaxBulkDelete+1)
	for i := range tooMany {
		tooMany[i] = int64(i + 1)
	}
	for _, c := range []struct {
		name, message string
		ids           []int64
	}{
		{"left out", "ids: is required", nil},
		{"empty", "ids: must list 1 to", []int64{}},
		{"too many", "ids: must list 1 to", tooMany},
		{"below 1", "ids[1]: must be a positive integer, not 0", []int64{second.ID, 0}},
	} {
		if _, err := svc.DeleteMany(ctx, mine.ID, c.ids); !errors.As(err, &errA) || !strings.HasPrefix(errA.Message, c.message) {
			t.Errorf("a bulk delete with ids %s: %v", c.name, err)
		}
	}
	if p := list(mine.ID, 1, 10); p.Total != 2 {
		t.Fatalf("refused bulk deletes removed annotations: %+v", p)
	}
	n, err := svc.DeleteMany(ctx, mine.ID, []int64{second.ID, second.ID, other.ID, first.ID, 12345})
	if err != nil || n != 1 {
		t.Errorf("a bulk delete: %d %v", n, err)
	}
	if p := list(theirs.ID, 1, 10); p.Total != 1 {
		t.Errorf("a bulk delete reached another workspace: %+v", p)
	}
}
