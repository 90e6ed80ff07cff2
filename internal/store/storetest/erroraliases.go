package storetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"strata/internal/analytics"
)

// testErrorAliases checks the aliases of error groups: the first alias of
// a fingerprint is kept (also when two are recorded at once), an alias of
// an alias is followed, a merge moves the merged groups' aliases along,
// the cap refuses past it with nothing recorded, products do not see
// each other's, a group lists what was merged into it, and an unmerge
// deletes only the product's aliases it names, or nothing when one of
// them is not an alias.
func testErrorAliases(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
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

	// The groups merged into g3, newest first, as recorded.
	merged, err := s.MergedErrorGroups(ctx, a.ID, "g3")
	if err != nil {
		t.Fatal(err)
	}
	var fps []string
	for _, m := range merged {
		fps = append(fps, m.Fingerprint)
		if m.Into != "g3" || m.CreatedAt.IsZero() || (m.Fingerprint == "g4" && (m.Reason != analytics.AliasMerge || m.CreatedBy != "user 1")) ||
			(m.Fingerprint == "minified" && (m.Reason != analytics.AliasSourcemap || m.CreatedBy != "ingest")) {
			t.Errorf("merged into g3: %+v", m)
		}
	}
	slices.Sort(fps)
	if want := []string{"deminified2", "g2", "g4", "minified", "raw"}; !slices.Equal(fps, want) {
		t.Errorf("merged into g3: %v, want %v", fps, want)
	}
	if len(merged) > 0 && merged[0].CreatedAt.Before(merged[len(merged)-1].CreatedAt) {
		t.Errorf("merged groups not newest first: %+v", merged)
	}

	// Another product's alias of the same fingerprint is not touched.
	if _, err := s.MergeErrorGroups(ctx, b.ID, "g3", []string{"raw", "bonly"}, "user 2", 10); err != nil {
		t.Fatal(err)
	}
	// Unmerging raw (a merge) and minified (ingest's): both go, with
	// what they were; the aliases a merge moved along (deminified2,
	// raw's before) stay in g3.
	got, err := s.UnmergeErrorGroups(ctx, a.ID, []string{"raw", "minified", "raw"})
	if err != nil || len(got) != 2 || got[0].Fingerprint != "raw" || got[0].Into != "g3" || got[0].Reason != analytics.AliasMerge ||
		got[1].Fingerprint != "minified" || got[1].Reason != analytics.AliasSourcemap || got[1].CreatedBy != "ingest" {
		t.Fatalf("unmerge: %+v %v", got, err)
	}
	want = maps.Clone(before)
	delete(want, "raw")
	delete(want, "minified")
	if got := aliases(a.ID); !maps.Equal(got, want) {
		t.Errorf("after the unmerge: %v, want %v", got, want)
	}
	// Not an alias (no more, never, or the group itself): not found, and
	// nothing of the others named with it is deleted.
	for _, fps := range [][]string{{"raw"}, {"g2", "nothing"}, {"g3"}, {"bonly"}} {
		_, err := s.UnmergeErrorGroups(ctx, a.ID, fps)
		if !errors.As(err, &e) || e.Code != "error_group_not_found" || e.Kind != analytics.KindNotFound {
			t.Errorf("unmerge %v: %v", fps, err)
		}
	}
	if got := aliases(a.ID); !maps.Equal(got, want) {
		t.Errorf("refused unmerges changed the aliases: %v, want %v", got, want)
	}
	// Product B's alias is B's: A cannot unmerge it, and A's unmerge did
	// not touch it.
	if m := aliases(b.ID); !maps.Equal(m, map[string]string{"raw": "g3", "bonly": "g3"}) {
		t.Errorf("product B's aliases: %v", m)
	}
	// An unmerged fingerprint can be merged again.
	if _, err := s.MergeErrorGroups(ctx, a.ID, "g3", []string{"raw"}, "user 1", 0); err != nil || aliases(a.ID)["raw"] != "g3" {
		t.Errorf("merging an unmerged group again: %v %v", err, aliases(a.ID))
	}
}
