package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"strata/internal/analytics"
)

// testGoals checks the goals: a product lists only its own goals, oldest
// first, with what was stored; a delete through another product finds
// nothing and deletes nothing; and the cap refuses a goal past it with
// nothing stored, a deleted goal freeing its place.
func testGoals(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	create := func(p int64, kind analytics.GoalKind, event, path string, max int) (analytics.Goal, error) {
		g := analytics.Goal{ProductID: p, Kind: kind, Event: event, Path: path}
		err := s.CreateGoal(ctx, &g, max)
		return g, err
	}
	g1, err := create(a.ID, analytics.GoalEvent, "signup", "", 2)
	if err != nil || g1.ID == 0 || g1.CreatedAt.IsZero() {
		t.Fatalf("create: %+v %v", g1, err)
	}
	g2, err := create(a.ID, analytics.GoalPage, "", "/blog/*", 2)
	if err != nil || g2.ID == g1.ID {
		t.Fatalf("create a page goal: %+v %v", g2, err)
	}
	gb, err := create(b.ID, analytics.GoalEvent, "purchase", "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := create(a.ID, analytics.GoalEvent, "third", "", 2); analytics.AsError(err).Code != "goals_full" {
		t.Fatalf("a goal past the cap: %v, want goals_full", err)
	}
	list, err := s.Goals(ctx, a.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("A's goals: %+v %v", list, err)
	}
	for i, want := range []analytics.Goal{g1, g2} {
		got := list[i]
		if got.ID != want.ID || got.ProductID != a.ID || got.Kind != want.Kind || got.Event != want.Event ||
			got.Path != want.Path || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("A's goal %d: %+v, want %+v", i, got, want)
		}
	}

	// B cannot delete A's goal.
	if err := s.DeleteGoal(ctx, b.ID, g1.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleting A's goal as B: %v", err)
	}
	if list, _ := s.Goals(ctx, a.ID); len(list) != 2 {
		t.Errorf("A's goals after B's delete: %+v", list)
	}
	if err := s.DeleteGoal(ctx, a.ID, g1.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := s.DeleteGoal(ctx, a.ID, g1.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	// A deleted goal frees its place under the cap.
	g3, err := create(a.ID, analytics.GoalEvent, "third", "", 2)
	if err != nil {
		t.Errorf("a goal after a delete: %v", err)
	}
	list, _ = s.Goals(ctx, a.ID)
	var ids []int64
	for _, g := range list {
		ids = append(ids, g.ID)
	}
	if !reflect.DeepEqual(ids, []int64{g2.ID, g3.ID}) {
		t.Errorf("A's goals after a delete: %+v", list)
	}
	if list, _ := s.Goals(ctx, b.ID); len(list) != 1 || list[0].ID != gb.ID || list[0].Event != "purchase" {
		t.Errorf("B's goals: %+v", list)
	}
}
