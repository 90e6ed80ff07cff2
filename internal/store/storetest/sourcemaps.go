package storetest

import (
	"context"
	"errors"
	"testing"

	"strata/internal/analytics"
)

// testSourcemaps checks sourcemap storage: content round-trips (with and
// without the minified file), an upload of the same product, release and
// URL replaces the earlier one, lists are newest first and by release,
// deletes are by release, and every method is scoped to its product.
func testSourcemaps(t *testing.T, s Meta) {
	ctx := context.Background()
	ws, _ := s.CreateWorkspace(ctx, "W")
	a, _ := s.CreateProduct(ctx, ws.ID, "A")
	b, _ := s.CreateProduct(ctx, ws.ID, "B")
	put := func(p int64, release, url, mapText string, minified []byte) analytics.Sourcemap {
		t.Helper()
		sm := analytics.Sourcemap{ProductID: p, Release: release, URL: url}
		if err := s.PutSourcemap(ctx, &sm, []byte(mapText), minified); err != nil {
			t.Fatal(err)
		}
		return sm
	}
	const app = "https://shop.example.com/assets/app.min.js"
	first := put(a.ID, "1.4.2", app, `{"version":3,"mappings":"AAAA"}`, nil)
	if first.ID == 0 || first.Size != 31 || first.Minified {
		t.Errorf("first upload: %+v", first)
	}
	put(a.ID, "1.4.2", "https://shop.example.com/assets/vendor.min.js", `{"version":3,"mappings":";;"}`, []byte("var a=1;"))
	second := put(a.ID, "1.4.2", app, `{"version":3,"mappings":"AACA","sources":["é.ts"]}`, []byte("function f(){}"))
	put(a.ID, "1.4.3", app, `{"version":3,"mappings":""}`, nil)

	mapText, minified, err := s.SourcemapContent(ctx, a.ID, "1.4.2", app)
	if err != nil || string(mapText) != `{"version":3,"mappings":"AACA","sources":["é.ts"]}` || string(minified) != "function f(){}" {
		t.Errorf("content after the replacing upload: %q %q %v", mapText, minified, err)
	}
	if _, min, err := s.SourcemapContent(ctx, a.ID, "1.4.3", app); err != nil || min != nil {
		t.Errorf("an upload without the minified file: %q %v", min, err)
	}
	if _, _, err := s.SourcemapContent(ctx, a.ID, "1.4.2 ", app); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("a release that differs by a space: %v", err)
	}
	if _, _, err := s.SourcemapContent(ctx, b.ID, "1.4.2", app); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's map: %v", err)
	}
	list, err := s.ListSourcemaps(ctx, a.ID, "1.4.2")
	if err != nil || len(list) != 2 || list[0].ID != second.ID || !list[0].Minified || list[0].Size != int64(len(`{"version":3,"mappings":"AACA","sources":["é.ts"]}`)) {
		t.Errorf("release 1.4.2: %v %+v", err, list)
	}
	if all, _ := s.ListSourcemaps(ctx, a.ID, ""); len(all) != 3 {
		t.Errorf("every release: %d uploads, want 3", len(all))
	}
	if n, err := s.DeleteSourcemaps(ctx, b.ID, "1.4.2"); err != nil || n != 0 {
		t.Errorf("delete through another product: %d %v", n, err)
	}
	if n, err := s.DeleteSourcemaps(ctx, a.ID, "1.4.2"); err != nil || n != 2 {
		t.Errorf("delete 1.4.2: %d %v", n, err)
	}
	if all, _ := s.ListSourcemaps(ctx, a.ID, ""); len(all) != 1 || all[0].Release != "1.4.3" {
		t.Errorf("after the delete: %+v", all)
	}
}

// testErrorGroupStatuses checks the statuses of error groups: set,
// replaced in place, and per product.
func testErrorGroupStatuses(t *testing.T, s Meta) {
	ctx := context.Background()
	ws, _ := s.CreateWorkspace(ctx, "W")
	a, _ := s.CreateProduct(ctx, ws.ID, "A")
	b, _ := s.CreateProduct(ctx, ws.ID, "B")
	st := analytics.ErrorGroupStatus{Fingerprint: "f1", Status: analytics.ErrorResolved, ResolvedRelease: "1.4.2", ChangedBy: "token 3"}
	if err := s.SetErrorGroupStatus(ctx, a.ID, &st); err != nil || st.ChangedAt == nil {
		t.Fatalf("set: %v %+v", err, st)
	}
	if err := s.SetErrorGroupStatus(ctx, a.ID, &analytics.ErrorGroupStatus{Fingerprint: "f2", Status: analytics.ErrorIgnored, ChangedBy: "x"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ErrorGroupStatuses(ctx, a.ID)
	if err != nil || len(got) != 2 || got["f1"].Status != analytics.ErrorResolved || got["f1"].ResolvedRelease != "1.4.2" ||
		got["f1"].ChangedBy != "token 3" || got["f1"].ChangedAt == nil || got["f2"].Status != analytics.ErrorIgnored {
		t.Errorf("statuses: %v %+v", err, got)
	}
	// Reopened: replaced in place.
	if err := s.SetErrorGroupStatus(ctx, a.ID, &analytics.ErrorGroupStatus{Fingerprint: "f1", Status: analytics.ErrorOpen, ChangedBy: "y"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ErrorGroupStatuses(ctx, a.ID); got["f1"].Status != analytics.ErrorOpen || got["f1"].ResolvedRelease != "" || len(got) != 2 {
		t.Errorf("after reopening: %+v", got)
	}
	if got, _ := s.ErrorGroupStatuses(ctx, b.ID); len(got) != 0 {
		t.Errorf("another product sees %+v", got)
	}
}
