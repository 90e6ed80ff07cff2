package cohorts

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/flags"
	"strata/internal/store/duckdb"
)

// TestTargets holds targeted cohorts of a real DuckDB store in memory:
// members answered, a new upload read at its new generation, another
// product's cohort never answered for this one, a cohort over the bound
// unknown (and the others still held), a person's deletion gone after
// Forget, and a deleted cohort dropped.
func TestTargets(t *testing.T) {
	ctx := context.Background()
	s, a, svc := targetsStore(t)
	ws, _ := s.CreateWorkspace(ctx, "w2")
	b, _ := s.CreateProduct(ctx, ws.ID, "b")
	static := func(p analytics.Product, name string, ids ...string) analytics.Cohort {
		t.Helper()
		c, err := svc.Create(ctx, p.ID, Input{Name: name, Kind: analytics.CohortStatic}, "test")
		if err != nil {
			t.Fatal(err)
		}
		return upload(t, svc, p.ID, c.ID, ids...)
	}
	paying := static(a, "Paying", "ann", "bea")
	big := static(a, "Big", "u1", "u2", "u3", "u4", "u5")
	empty := static(a, "Empty")
	other := static(b, "B", "ann")

	targets := &Targets{Meta: s, Events: s, MaxMembers: 6}
	ids := []int64{paying.ID, big.ID, empty.ID, other.ID}
	if err := targets.Refresh(ctx, a.ID, ids); err != nil {
		t.Fatal(err)
	}
	member := func(user string) flags.Cohorts { return targets.Member(a.ID, ids, user) }
	// Paying (2) is read first and fits; Big (5) would make 7 of 6: unknown.
	if got := member("ann"); len(got) != 2 || !got[paying.ID] || got[empty.ID] {
		t.Errorf("ann: %v, want paying and empty known, ann in paying only", got)
	}
	if _, known := member("u1")[big.ID]; known {
		t.Error("a cohort over the bound is answered")
	}
	if _, known := member("ann")[other.ID]; known {
		t.Error("another product's cohort is answered for this one")
	}
	if got := member("carl"); got[paying.ID] || got[empty.ID] {
		t.Errorf("carl: %v", got)
	}
	if targets.Held() != 2 {
		t.Errorf("held %d members, want 2", targets.Held())
	}

	// A new upload is read at its generation; Big then fits.
	upload(t, svc, a.ID, paying.ID, "carl")
	if err := targets.Refresh(ctx, a.ID, ids); err != nil {
		t.Fatal(err)
	}
	if got := member("carl"); !got[paying.ID] || member("ann")[paying.ID] {
		t.Errorf("after the upload: carl %v, ann %v", got, member("ann"))
	}
	targets.Forget(a.ID) // drops all: the next Refresh reads again, Big within the bound now
	if err := targets.Refresh(ctx, a.ID, []int64{big.ID, paying.ID}); err != nil {
		t.Fatal(err)
	}
	if got := targets.Member(a.ID, []int64{big.ID}, "u3"); !got[big.ID] {
		t.Errorf("u3 in Big once it fits: %v", got)
	}

	// A person deleted from the store leaves the answers after Forget.
	if err := s.DeleteCohortMemberships(ctx, a.ID, []string{"u3"}); err != nil {
		t.Fatal(err)
	}
	targets.Forget(a.ID)
	if _, known := targets.Member(a.ID, []int64{big.ID}, "u3")[big.ID]; known {
		t.Error("a forgotten cohort is answered before it is read again")
	}
	if err := targets.Refresh(ctx, a.ID, []int64{big.ID}); err != nil {
		t.Fatal(err)
	}
	if got := targets.Member(a.ID, []int64{big.ID}, "u3"); got[big.ID] {
		t.Errorf("u3, deleted: %v", got)
	}

	// A deleted cohort is dropped, and unknown.
	if err := s.DeleteCohort(ctx, a.ID, big.ID); err != nil {
		t.Fatal(err)
	}
	if err := targets.Refresh(ctx, a.ID, []int64{big.ID}); err != nil {
		t.Fatal(err)
	}
	if _, known := targets.Member(a.ID, []int64{big.ID}, "u1")[big.ID]; known || targets.Held() != 0 {
		t.Errorf("a deleted cohort: known %v, %d members held", known, targets.Held())
	}
}

// TestTargetsPages reads a cohort of more members than a page, all held.
func TestTargetsPages(t *testing.T) {
	ctx := context.Background()
	s, p, svc := targetsStore(t)
	c, _ := svc.Create(ctx, p.ID, Input{Name: "Many", Kind: analytics.CohortStatic}, "test")
	var ids []string
	for i := range targetPage*2 + 5 {
		ids = append(ids, fmt.Sprintf("user-%06d", i))
	}
	upload(t, svc, p.ID, c.ID, ids...)
	targets := &Targets{Meta: s, Events: s, Now: func() time.Time { return time.Unix(1e9, 0) }}
	if err := targets.Refresh(ctx, p.ID, []int64{c.ID}); err != nil {
		t.Fatal(err)
	}
	if targets.Held() != len(ids) {
		t.Fatalf("held %d, want %d", targets.Held(), len(ids))
	}
	for _, id := range []string{ids[0], ids[targetPage-1], ids[targetPage], ids[len(ids)-1]} {
		if !targets.Member(p.ID, []int64{c.ID}, id)[c.ID] {
			t.Errorf("%s is not a member", id)
		}
	}
	if targets.Member(p.ID, []int64{c.ID}, "user-x")[c.ID] {
		t.Error("a stranger is a member")
	}
}

// targetsStore opens a DuckDB store with one product, and the cohorts
// service over it.
func targetsStore(t *testing.T) (*duckdb.Store, analytics.Product, *Service) {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ws, _ := s.CreateWorkspace(ctx, "w")
	p, _ := s.CreateProduct(ctx, ws.ID, "p")
	return s, p, &Service{Meta: s, Events: s, MaxCohorts: 10}
}

func upload(t *testing.T, svc *Service, productID, id int64, ids ...string) analytics.Cohort {
	t.Helper()
	c, err := svc.Upload(context.Background(), productID, id, strings.NewReader("distinct_id\n"+strings.Join(ids, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
