package errtrack

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestGroupsService runs the error groups' operations on a real DuckDB
// store through the query engine: a merge checks every group against the
// product's events before it records anything, makes the ingest
// processor's alias cache forget the product, and reads the merged
// fingerprint as its group; a status set on a merged fingerprint is its
// group's, a resolution without a release takes the latest event's, and an
// event of another release after it reopens the group as a regression; an
// unmerge gives the fingerprint back and forgets the cache again.
func TestGroupsService(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	ws, _ := st.CreateWorkspace(ctx, "W")
	pa, _ := st.CreateProduct(ctx, ws.ID, "A")
	pb, _ := st.CreateProduct(ctx, ws.ID, "B")
	a, b := pa.ID, pb.ID
	n := 0
	store := func(product int64, fp, release string, at time.Time) {
		t.Helper()
		n++
		props, _ := json.Marshal(map[string]any{"$exception_fingerprint": fp, "$exception_type": "TypeError",
			"$exception_message": "x of " + fp, "$release": release})
		e := analytics.Event{UUID: [16]byte{byte(n), byte(product)}, ProductID: product, Env: analytics.EnvLive, Timestamp: at, ReceivedAt: at,
			Name: analytics.ExceptionEvent, DistinctID: "u", Properties: props}
		if err := st.AppendEvents(ctx, []analytics.Event{e}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().UTC().Add(-time.Minute)
	store(a, "fp-a1", "1.0.0", start)
	store(a, "fp-a2", "1.0.0", start.Add(time.Second))
	store(b, "fp-b1", "1.0.0", start)

	cache := NewProcessor(st, 1<<20)
	cache.Aliases = st
	g := &Groups{Events: &query.Engine{Store: st}, Statuses: st, Aliases: st, AliasLimit: 10, Cache: cache}
	live := func(p int64) analytics.EventRange { return analytics.EventRange{ProductID: p, Env: analytics.EnvLive} }
	cached := func(p int64) bool {
		cache.cache.mu.Lock()
		defer cache.cache.mu.Unlock()
		_, ok := cache.cache.products[p]
		return ok
	}
	list := func(status string) map[string]Group {
		t.Helper()
		q, err := query.ParseErrorGroups("", "", "", "", live(a), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		groups, err := g.List(ctx, q, status)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Group{}
		for _, gr := range groups {
			out[gr.Fingerprint] = gr
		}
		return out
	}

	// Refusals, before anything is recorded: a group of another product
	// is not found, as one that does not exist; too many groups.
	for _, c := range []struct {
		name, into string
		groups     []string
		code       string
	}{
		{"another product's group", "fp-a1", []string{"fp-b1"}, "error_group_not_found"},
		{"into another product's group", "fp-b1", []string{"fp-a2"}, "error_group_not_found"},
		{"no into", "", []string{"fp-a2"}, "invalid_request"},
		{"no groups", "fp-a1", nil, "invalid_request"},
		{"too many groups", "fp-a1", make([]string, MaxMerged+1), "invalid_request"},
	} {
		_, _, err := g.Merge(ctx, "alice", live(a), "", "", c.into, c.groups)
		var ae *analytics.Error
		if !errors.As(err, &ae) || ae.Code != c.code {
			t.Errorf("%s: merge answered %v, want %s", c.name, err, c.code)
		}
	}
	if aliases, _ := st.ErrorAliases(ctx, a); len(aliases) != 0 {
		t.Fatalf("refused merges recorded %v", aliases)
	}
	if _, _, err := (&Groups{Events: g.Events, Statuses: st}).Merge(ctx, "alice", live(a), "", "", "fp-a1", []string{"fp-a2"}); err != ErrNoAliases {
		t.Errorf("a merge without an alias store answered %v", err)
	}

	// The merge: the cache of product A is forgotten, B's is kept.
	cache.aliasesOf(ctx, a)
	cache.aliasesOf(ctx, b)
	into, merged, err := g.Merge(ctx, "alice", live(a), "", "", "fp-a1", []string{"fp-a2", "fp-a1"})
	if err != nil || into != "fp-a1" || len(merged) != 1 || merged[0] != "fp-a2" {
		t.Fatalf("merge: into %q merged %v (%v)", into, merged, err)
	}
	if cached(a) || !cached(b) {
		t.Errorf("after the merge the cache holds A %v, B %v; want only B", cached(a), cached(b))
	}
	groups := list("")
	if len(groups) != 1 || groups["fp-a1"].Events != 2 {
		t.Errorf("after the merge the list is %+v, want fp-a1 with 2 events", groups)
	}
	q, _ := query.ParseErrorGroups("", "", "", "", live(a), time.Now())
	d, err := g.Get(ctx, q, "fp-a2", 10)
	if err != nil {
		t.Fatal(err)
	}
	if d.Group.Fingerprint != "fp-a1" || len(d.Occurrences) != 2 || len(d.Merged) != 1 ||
		d.Merged[0].Fingerprint != "fp-a2" || d.Merged[0].MergedBy != "alice" || d.Merged[0].Events != 1 || d.Merged[0].Message != "x of fp-a2" {
		t.Errorf("the merged fingerprint's page: %+v", d)
	}
	if _, err := g.Get(ctx, q, "fp-b1", 10); err != ErrGroupNotFound {
		t.Errorf("another product's group answered %v", err)
	}

	// A status set on the merged fingerprint is its group's; resolving
	// without a release takes the latest event's. A status that needs no
	// release does not read the scope.
	noScope := func() (analytics.EventRange, error) { return analytics.EventRange{}, errors.New("the scope was read") }
	if _, err := g.SetStatus(ctx, "alice", a, StatusChange{Fingerprint: "fp-a2", Status: analytics.ErrorIgnored, Scope: noScope}); err != nil {
		t.Errorf("ignoring read the scope: %v", err)
	}
	st2, err := g.SetStatus(ctx, "alice", a, StatusChange{Fingerprint: "fp-a2", Status: analytics.ErrorResolved,
		Scope: func() (analytics.EventRange, error) { return live(a), nil }})
	if err != nil || st2.Fingerprint != "fp-a1" || st2.ResolvedRelease != "1.0.0" || st2.ChangedBy != "alice" {
		t.Fatalf("resolve: %+v (%v)", st2, err)
	}
	if gr := list(analytics.ErrorResolved)["fp-a1"]; gr.Status != analytics.ErrorResolved || gr.Regressed {
		t.Errorf("resolved group listed as %+v", gr)
	}
	// An event of the same release after the resolution is no regression;
	// one of another release is.
	store(a, "fp-a2", "1.0.0", time.Now().UTC().Add(time.Second))
	if gr := list("")["fp-a1"]; gr.Status != analytics.ErrorResolved || gr.Regressed {
		t.Errorf("an event of the resolved release reopened the group: %+v", gr)
	}
	store(a, "fp-a1", "1.1.0", time.Now().UTC().Add(2*time.Second))
	if gr := list("")["fp-a1"]; gr.Status != analytics.ErrorOpen || !gr.Regressed || gr.ResolvedRelease != "1.0.0" {
		t.Errorf("an event of another release did not reopen the group: %+v", gr)
	}
	if _, ok := list(analytics.ErrorResolved)["fp-a1"]; ok {
		t.Error("a regressed group is listed as resolved")
	}
	if _, err := g.SetStatus(ctx, "alice", a, StatusChange{Fingerprint: string(make([]rune, 201)), Status: analytics.ErrorOpen}); err != ErrGroupNotFound {
		t.Errorf("a fingerprint of 201 characters answered %v", err)
	}

	// The unmerge gives fp-a2 its group back and forgets A's cache.
	cache.aliasesOf(ctx, a)
	unmerged, err := g.Unmerge(ctx, a, []string{"fp-a2"})
	if err != nil || len(unmerged) != 1 || unmerged[0].Into != "fp-a1" {
		t.Fatalf("unmerge: %+v (%v)", unmerged, err)
	}
	if cached(a) {
		t.Error("the unmerge left A's aliases in the cache")
	}
	if groups := list(""); groups["fp-a2"].Events != 2 || groups["fp-a1"].Events != 2 {
		t.Errorf("after the unmerge the list is %+v", groups)
	}
	if _, err := g.Unmerge(ctx, b, []string{"fp-a2"}); err == nil {
		t.Error("unmerging a fingerprint that is no alias of the product succeeded")
	}
}
