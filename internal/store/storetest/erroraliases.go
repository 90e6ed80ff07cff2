package storetest

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"

	"strata/internal/analytics"
)

// testErrorAliases checks the aliases of error groups: the first alias of
// a fingerprint is kept (also when two are recorded at once), an alias of
// an alias is followed, a merge moves the merged groups' aliases along,
// the cap refuses past it with nothing recorded, and products do not see
// each other's.
func testErrorAliases(t *testing.T, s Meta) {
	ctx := context.Background()
	ws, _ := s.CreateWorkspace(ctx, "W")
	a, _ := s.CreateProduct(ctx, ws.ID, "A")
	b, _ := s.CreateProduct(ctx, ws.ID, "B")
	aliases := func(p int64) map[string]string {
		t.Helper()
		m, err := s.ErrorAliases(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := aliases(a.ID); len(m) != 0 {
		t.Fatalf("a new product has aliases %v", m)
	}
	add := func(fp, into string, max int) (string, error) {
		return s.AddErrorAlias(ctx, a.ID, analytics.ErrorAlias{Fingerprint: fp, Into: into, Reason: analytics.AliasSourcemap, CreatedBy: "ingest"}, max)
	}
	if got, err := add("minified", "raw", 10); err != nil || got != "raw" {
		t.Fatalf("add: %q %v", got, err)
	}
	// The first alias stays: a second for the same fingerprint answers it.
	if got, err := add("minified", "other", 10); err != nil || got != "raw" {
		t.Errorf("a second alias of one fingerprint: %q %v, want raw", got, err)
	}
	// Into an alias: followed to its group.
	if got, err := add("deminified2", "minified", 10); err != nil || got != "raw" {
		t.Errorf("an alias into an alias: %q %v, want raw", got, err)
	}
	// Many at once for one fingerprint: one wins, and all answer it.
	var wg sync.WaitGroup
	answers := make([]string, 8)
	for i := range answers {
		wg.Go(func() {
			for range 20 {
				got, err := add("race", []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}[i], 0)
				if err == nil {
					answers[i] = got
					return
				}
			}
		})
	}
	wg.Wait()
	for _, got := range answers {
		if got != aliases(a.ID)["race"] || got == "" {
			t.Errorf("aliases recorded at once answer %v; stored %q", answers, aliases(a.ID)["race"])
			break
		}
	}
	want := map[string]string{"minified": "raw", "deminified2": "raw", "race": aliases(a.ID)["race"]}
	if got := aliases(a.ID); !maps.Equal(got, want) {
		t.Errorf("aliases %v, want %v", got, want)
	}

	// Merging raw and g2 into g3: raw's aliases move along.
	into, err := s.MergeErrorGroups(ctx, a.ID, "g3", []string{"raw", "g2", "g3", "g2"}, "user 1", 10)
	if err != nil || into != "g3" {
		t.Fatalf("merge: %q %v", into, err)
	}
	want = map[string]string{"minified": "g3", "deminified2": "g3", "race": want["race"], "raw": "g3", "g2": "g3"}
	if got := aliases(a.ID); !maps.Equal(got, want) {
		t.Errorf("after the merge: %v, want %v", got, want)
	}
	// Merging into an alias merges into its group.
	if into, err := s.MergeErrorGroups(ctx, a.ID, "raw", []string{"g4"}, "user 1", 10); err != nil || into != "g3" {
		t.Errorf("merge into an alias: %q %v, want g3", into, err)
	}
	// Over the cap: refused, nothing recorded.
	before := aliases(a.ID)
	_, err = s.MergeErrorGroups(ctx, a.ID, "g3", []string{"g5", "g6"}, "user 1", len(before)+1)
	var e *analytics.Error
	if !errors.As(err, &e) || e.Code != "error_aliases_full" {
		t.Errorf("a merge over the cap: %v", err)
	}
	if _, err := add("g7", "g3", len(before)); !errors.As(err, &e) || e.Code != "error_aliases_full" {
		t.Errorf("an alias over the cap: %v", err)
	}
	if got := aliases(a.ID); !maps.Equal(got, before) {
		t.Errorf("refused writes changed the aliases: %v, was %v", got, before)
	}
	if m := aliases(b.ID); len(m) != 0 {
		t.Errorf("another product sees %v", m)
	}
}
