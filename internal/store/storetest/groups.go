package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"

	"strata/internal/analytics"
)

// testGroups checks group profiles: properties merge key by key, keys and
// types are exact text, the list is newest first and cut at its limit,
// concurrent writes of one group lose no key, and one product never sees
// another's groups, even under the same type and key.
func testGroups(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {

	props := func(g analytics.Group) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(g.Properties, &m); err != nil {
			t.Fatalf("group %s %q: properties %s: %v", g.Type, g.Key, g.Properties, err)
		}
		return m
	}
	g, err := s.UpsertGroup(ctx, a.ID, "company", "acme", json.RawMessage(`{"name":"Acme <Inc>","seats":5,"plan":"free"}`))
	if err != nil || g.Type != "company" || g.Key != "acme" || g.CreatedAt.IsZero() || !g.UpdatedAt.Equal(g.CreatedAt) {
		t.Fatalf("create: %v %+v", err, g)
	}
	got, err := s.Group(ctx, a.ID, "company", "acme")
	if err != nil || !reflect.DeepEqual(props(got), map[string]any{"name": "Acme <Inc>", "seats": 5.0, "plan": "free"}) ||
		!got.CreatedAt.Equal(g.CreatedAt) {
		t.Errorf("read back: %v %+v", err, got)
	}
	up, err := s.UpsertGroup(ctx, a.ID, "company", "acme", json.RawMessage(`{"plan":"pro","region":"eu"}`))
	if err != nil || !up.CreatedAt.Equal(g.CreatedAt) || up.UpdatedAt.Before(g.UpdatedAt) {
		t.Fatalf("merge: %v %+v", err, up)
	}
	want := map[string]any{"name": "Acme <Inc>", "seats": 5.0, "plan": "pro", "region": "eu"}
	if got, _ := s.Group(ctx, a.ID, "company", "acme"); !reflect.DeepEqual(props(got), want) || !reflect.DeepEqual(props(up), want) {
		t.Errorf("after merge: %s (returned %s), want %v", got.Properties, up.Properties, want)
	}
	if _, err := s.UpsertGroup(ctx, a.ID, "company", "acme", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Group(ctx, a.ID, "company", "acme"); !reflect.DeepEqual(props(got), want) {
		t.Errorf("an empty upsert changed the properties: %s", got.Properties)
	}

	// The same type and key in another product is another group.
	if _, err := s.Group(ctx, b.ID, "company", "acme"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's group: %v, want ErrNotFound", err)
	}
	if _, err := s.UpsertGroup(ctx, b.ID, "company", "acme", json.RawMessage(`{"name":"Other Acme"}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Group(ctx, a.ID, "company", "acme"); !reflect.DeepEqual(props(got), want) {
		t.Errorf("product B's write reached product A: %s", got.Properties)
	}
	if _, err := s.Group(ctx, a.ID, "company", "ACME"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("keys are not exact: %v", err)
	}

	for _, k := range []struct{ typ, key string }{{"company", "globex ünïcode"}, {"team", "acme"}, {"company", "initech"}} {
		if _, err := s.UpsertGroup(ctx, a.ID, k.typ, k.key, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(list []analytics.Group, err error) []string {
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range list {
			out = append(out, g.Type+"/"+g.Key)
		}
		return out
	}
	all := keys(s.ListGroups(ctx, a.ID, "company", 10))
	if len(all) != 3 || all[0] != "company/initech" || all[2] != "company/acme" {
		t.Errorf("company groups = %v, newest first", all)
	}
	if got := keys(s.ListGroups(ctx, a.ID, "company", 2)); !reflect.DeepEqual(got, all[:2]) {
		t.Errorf("with limit 2 = %v, want %v", got, all[:2])
	}
	if got := keys(s.ListGroups(ctx, a.ID, "", 10)); len(got) != 4 {
		t.Errorf("every type = %v", got)
	}
	if got := keys(s.ListGroups(ctx, b.ID, "", 10)); !reflect.DeepEqual(got, []string{"company/acme"}) {
		t.Errorf("product B lists %v", got)
	}
	if got := keys(s.ListGroups(ctx, b.ID, "team", 10)); len(got) != 0 {
		t.Errorf("product B lists teams %v", got)
	}
	if types, err := s.GroupTypes(ctx, a.ID); err != nil || !reflect.DeepEqual(types, []string{"company", "team"}) {
		t.Errorf("GroupTypes = %v, %v", types, err)
	}
	if types, err := s.GroupTypes(ctx, 9999); err != nil || len(types) != 0 {
		t.Errorf("GroupTypes of a product without groups = %v, %v", types, err)
	}

	// Concurrent writes of one group each keep their key.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.UpsertGroup(ctx, a.ID, "company", "race", json.RawMessage(`{"k`+string(rune('0'+i))+`":true}`))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent write %d: %v", i, err)
		}
	}
	if got, err := s.Group(ctx, a.ID, "company", "race"); err != nil || len(props(got)) != len(errs) {
		t.Errorf("after concurrent writes: %v %s", err, got.Properties)
	}
}
