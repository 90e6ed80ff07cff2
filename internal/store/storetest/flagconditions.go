package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"strata/internal/analytics"
)

// testFlagConditions checks a flag's targeting conditions (migration
// 0046): they round-trip in order on create, on read and in the list, an
// update replaces them (adding the first, changing, removing all) and
// records the change in the trail, a flag without conditions reads [],
// and deleting the flag removes them, so that nothing of them shows
// through another product.
func testFlagConditions(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	conds := []analytics.FlagCondition{
		{Type: "trait", Trait: "plan", Op: "eq", Value: "pro"},
		{Type: "trait", Trait: "seats", Op: "gt", Value: "10"},
		{Type: "trait", Trait: "email", Op: "contains", Value: "@acme.com, «Ünïcode» 😀"},
	}
	f := analytics.Flag{ProductID: a.ID, Key: "targeted", Name: "Targeted", Enabled: true, Rollout: 100, Conditions: conds}
	if err := s.CreateFlag(ctx, &f, "x"); err != nil {
		t.Fatal(err)
	}
	plain := analytics.Flag{ProductID: a.ID, Key: "plain", Name: "Plain", Rollout: 100}
	if err := s.CreateFlag(ctx, &plain, "x"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Flag(ctx, a.ID, f.ID)
	if err != nil || !reflect.DeepEqual(got.Conditions, conds) {
		t.Errorf("read back: %v %+v, want %+v", err, got.Conditions, conds)
	}
	list, err := s.ListFlags(ctx, a.ID)
	if err != nil || len(list) != 2 || !reflect.DeepEqual(list[0].Conditions, conds) ||
		list[1].Conditions == nil || len(list[1].Conditions) != 0 {
		t.Errorf("list: %v %+v", err, list)
	}

	// The plain flag gets its first condition, then the targeted one loses all of its.
	plain.Conditions = []analytics.FlagCondition{{Type: "trait", Trait: "beta", Op: "exists"}}
	if err := s.UpdateFlag(ctx, &plain, "user ana@example.com"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Flag(ctx, a.ID, plain.ID); !reflect.DeepEqual(got.Conditions, plain.Conditions) {
		t.Errorf("first condition added: %+v", got.Conditions)
	}
	f.Conditions = []analytics.FlagCondition{conds[1]}
	if err := s.UpdateFlag(ctx, &f, "x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Flag(ctx, a.ID, f.ID); !reflect.DeepEqual(got.Conditions, f.Conditions) {
		t.Errorf("conditions changed: %+v, want %+v", got.Conditions, f.Conditions)
	}
	f.Conditions = []analytics.FlagCondition{}
	if err := s.UpdateFlag(ctx, &f, "x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Flag(ctx, a.ID, f.ID); got.Conditions == nil || len(got.Conditions) != 0 {
		t.Errorf("conditions removed: %+v", got.Conditions)
	}
	trail, err := s.FlagChanges(ctx, a.ID, plain.ID)
	if err != nil || len(trail) != 2 || len(trail[0].Changes) != 1 || trail[0].Changes[0].Field != "conditions" {
		t.Errorf("the trail of the added condition: %v %+v", err, trail)
	}

	// A flag deleted takes its conditions with it; another product never sees them.
	if _, err := s.Flag(ctx, b.ID, plain.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's flag: %v", err)
	}
	if err := s.DeleteFlag(ctx, a.ID, plain.ID, "x"); err != nil {
		t.Fatal(err)
	}
	if others, err := s.ListFlags(ctx, b.ID); err != nil || len(others) != 0 {
		t.Errorf("product B's flags: %v %+v", err, others)
	}
	if list, _ := s.ListFlags(ctx, a.ID); len(list) != 1 || list[0].ID != f.ID {
		t.Errorf("after delete: %+v", list)
	}
}
