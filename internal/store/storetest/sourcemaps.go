package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"strata/internal/analytics"
)

// testSourcemaps checks sourcemap storage: content round-trips (with and
// without the minified file), an upload of the same product, release and
// URL replaces the earlier one, lists are newest first and by release,
// deletes are by release, HasSourcemap answers what SourcemapText would
// find, and every method is scoped to its product.
func testSourcemaps(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	put := func(p int64, release, url, mapText string, minified []byte) analytics.Sourcemap {
		t.Helper()
		sm := analytics.Sourcemap{ProductID: p, Release: release, URL: url}
		if err := s.PutSourcemap(ctx, &sm, []byte(mapText), minified, analytics.SourcemapAmount{}); err != nil {
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
	if text, err := s.SourcemapText(ctx, a.ID, "1.4.2", app); err != nil || string(text) != `{"version":3,"mappings":"AACA","sources":["é.ts"]}` {
		t.Errorf("the map alone: %q %v", text, err)
	}
	if _, err := s.SourcemapText(ctx, b.ID, "1.4.2", app); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's map alone: %v", err)
	}
	if _, min, err := s.SourcemapContent(ctx, a.ID, "1.4.3", app); err != nil || min != nil {
		t.Errorf("an upload without the minified file: %q %v", min, err)
	}
	has := func(p int64, release, url string) bool {
		t.Helper()
		ok, err := s.HasSourcemap(ctx, p, release, url)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !has(a.ID, "1.4.2", app) || !has(a.ID, "1.4.3", app) || has(b.ID, "1.4.2", app) || has(a.ID, "1.4.2 ", app) ||
		has(a.ID, "1.4.2", app+"?v=1") || has(a.ID, "1.4.4", app) {
		t.Error("HasSourcemap differs from what is stored")
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
	if has(a.ID, "1.4.2", app) || !has(a.ID, "1.4.3", app) {
		t.Error("HasSourcemap after the delete of 1.4.2")
	}
}

// testSourcemapQuota checks a product's usage and quota: usage counts the
// uploads and the bytes of maps and minified files; an upload past the
// count or the bytes is refused with quota_exceeded and stores nothing; a
// replacing upload counts only what it adds; a delete frees its uploads;
// another product has its own; and uploads made at once never pass the
// quota together.
func testSourcemapQuota(ctx context.Context, t *testing.T, s Meta) {
	ps := products(ctx, t, s, "A", "B", "C")
	a, b, c := ps[0], ps[1], ps[2]
	quota := analytics.SourcemapAmount{Count: 3, Bytes: 1000}
	put := func(p int64, release, url string, mapBytes, minifiedBytes int) error {
		t.Helper()
		mapText := `{"version":3,"mappings":"` + strings.Repeat("A", mapBytes-27) + `"}`
		var minified []byte
		if minifiedBytes > 0 {
			minified = []byte(strings.Repeat("é", minifiedBytes/2)) // counted in bytes
		}
		sm := analytics.Sourcemap{ProductID: p, Release: release, URL: url}
		return s.PutSourcemap(ctx, &sm, []byte(mapText), minified, quota)
	}
	usage := func(p int64) analytics.SourcemapAmount {
		t.Helper()
		u, err := s.SourcemapUsage(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	exceeded := func(err error, what string) {
		t.Helper()
		if e := analytics.AsError(err); err == nil || e.Code != "quota_exceeded" || !strings.Contains(e.Message, what) {
			t.Errorf("want quota_exceeded saying %q, got %v", what, err)
		}
	}
	if u := usage(a.ID); u != (analytics.SourcemapAmount{}) {
		t.Errorf("usage of a product without uploads: %+v", u)
	}
	if err := put(a.ID, "1.0", "a.js", 300, 100); err != nil {
		t.Fatal(err)
	}
	if err := put(a.ID, "1.0", "b.js", 200, 0); err != nil {
		t.Fatal(err)
	}
	if u := usage(a.ID); u != (analytics.SourcemapAmount{Count: 2, Bytes: 600}) {
		t.Errorf("usage after two uploads: %+v", u)
	}
	exceeded(put(a.ID, "1.0", "c.js", 300, 200), "take 600 bytes of the 1000 bytes it may, and this one is 500 bytes")
	// A replacement counts what it adds: a.js from 400 to 700 bytes.
	if err := put(a.ID, "1.0", "a.js", 500, 200); err != nil {
		t.Errorf("a replacing upload within the quota: %v", err)
	}
	exceeded(put(a.ID, "1.0", "a.js", 700, 200), "take 200 bytes of the 1000 bytes it may, and this one is 900 bytes")
	if err := put(a.ID, "2.0", "c.js", 100, 0); err != nil {
		t.Fatal(err)
	}
	exceeded(put(a.ID, "2.0", "d.js", 30, 0), "it keeps 3 uploads")
	if u := usage(a.ID); u != (analytics.SourcemapAmount{Count: 3, Bytes: 1000}) {
		t.Errorf("usage at the quota: %+v", u)
	}
	// Another product has its own quota.
	if err := put(b.ID, "1.0", "a.js", 900, 0); err != nil {
		t.Errorf("another product's upload: %v", err)
	}
	if n, err := s.DeleteSourcemaps(ctx, a.ID, "1.0"); err != nil || n != 2 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if u := usage(a.ID); u != (analytics.SourcemapAmount{Count: 1, Bytes: 100}) {
		t.Errorf("usage after deleting a release: %+v", u)
	}

	// Twelve uploads at once into room for three: three are stored.
	quota = analytics.SourcemapAmount{Count: 3}
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() { errs[i] = put(c.ID, "1.0", fmt.Sprintf("%d.js", i), 100, 0) })
	}
	wg.Wait()
	stored := 0
	for _, err := range errs {
		if err == nil {
			stored++
		} else {
			exceeded(err, "it keeps 3 uploads")
		}
	}
	if u := usage(c.ID); stored != 3 || u.Count != 3 {
		t.Errorf("uploads at once: %d stored, usage %+v", stored, u)
	}
}

// testErrorGroupStatuses checks the statuses of error groups: set,
// replaced in place, and per product.
func testErrorGroupStatuses(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
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
