package errtrack

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestSourcemapAfterErrorsAliases runs the processor with aliases on a real
// DuckDB store: an error minified (no map yet) is stored with its raw
// fingerprint; once the map is uploaded, the same error de-minified keeps
// its own fingerprint, which is recorded as an alias of the raw one (and
// is stored so, so that an unmerge can give its events back). A bug whose
// raw group has no event gets no alias, a de-minified fingerprint that has
// events of its own keeps them, and past the product's cap nothing is
// recorded and events keep their own group.
func TestSourcemapAfterErrorsAliases(t *testing.T) {
	ctx := context.Background()
	st := duckdbtest.Open(t)
	ws, _ := st.CreateWorkspace(ctx, "W")
	minified, _ := os.ReadFile("../sourcemap/testdata/app.min.js")
	mapText, _ := os.ReadFile("../sourcemap/testdata/app.min.js.map")
	now := time.Now().UTC()
	n := 0
	// store keeps an enriched event, as ingest would.
	store := func(product int64, props json.RawMessage) {
		t.Helper()
		n++
		e := analytics.Event{UUID: [16]byte{byte(n), byte(product)}, ProductID: product, Env: analytics.EnvLive, Timestamp: now, ReceivedAt: now,
			Name: analytics.ExceptionEvent, DistinctID: "u", Properties: props}
		if err := st.AppendEvents(ctx, []analytics.Event{e}); err != nil {
			t.Fatal(err)
		}
	}
	enrichIn := func(p *Processor, product int64, marker, release string) (string, json.RawMessage) {
		t.Helper()
		raw, _ := json.Marshal(map[string]any{"$exception_type": "RangeError", "$exception_message": "x", "$release": release,
			"$exception_stack": stackOf(t, string(minified), "RangeError", marker, "u")})
		out := p.Enrich(ctx, product, raw)
		var e enriched
		json.Unmarshal(out, &e)
		return e.Fingerprint, out
	}
	enrich := func(p *Processor, product int64, marker string) (string, json.RawMessage) {
		t.Helper()
		return enrichIn(p, product, marker, "1.0.0")
	}
	setUp := func(name string, limit int) (*Processor, int64) {
		product, _ := st.CreateProduct(ctx, ws.ID, name)
		p := NewProcessor(st, 1<<20)
		p.Aliases, p.Groups, p.AliasLimit = st, st, limit
		return p, product.ID
	}
	upload := func(p *Processor, product int64) {
		sm := analytics.Sourcemap{ProductID: product, Release: "1.0.0", URL: appURL}
		if err := st.PutSourcemap(ctx, &sm, mapText, nil, analytics.SourcemapAmount{}); err != nil {
			t.Fatal(err)
		}
		p.Uploaded(product, "1.0.0", appURL+"?v=3")
		p.Uploaded(product, "1.0.0", appURL)
	}

	// The bug's first error, minified; then the map; then the bug again.
	p, a := setUp("A", 10)
	first, props := enrich(p, a, `"marker-checkout"`)
	store(a, props)
	upload(p, a)
	// It is stored with its own fingerprint, which is an alias of the
	// first: the queries count it there, and an unmerge gives it back.
	second, props := enrich(p, a, `"marker-checkout"`)
	aliases, _ := st.ErrorAliases(ctx, a)
	if second == first || len(aliases) != 1 || aliases[second] != first {
		t.Fatalf("de-minified: fingerprint %s (the first %s); aliases %v, want %s → %s", second, first, aliases, second, first)
	}
	store(a, props)
	// Another bug, whose minified frames are the same as the first's (the
	// minifier's name u, one file, no lines): once told apart by the map,
	// it is not put in the raw group the first bug's de-minified frames
	// already took, but starts its own.
	other, _ := enrich(p, a, `"marker-load"`)
	if other == first {
		t.Error("another bug joined the group")
	}
	if got, _ := st.ErrorAliases(ctx, a); len(got) != 1 {
		t.Errorf("a second bug of the raw group got an alias: %v", got)
	}

	// A de-minified fingerprint with events of its own stays its own.
	p, b := setUp("B", 10)
	upload(p, b)
	own, props := enrich(p, b, `"marker-add"`)
	store(b, props)
	// Then the raw group: a release without a map.
	raw, rawProps := enrichIn(p, b, `"marker-add"`, "0.9.0")
	store(b, rawProps)
	if again, _ := enrich(p, b, `"marker-add"`); again != own || raw == own {
		t.Errorf("a de-minified group that had events moved: %s, was %s (raw %s)", again, own, raw)
	}
	if got, _ := st.ErrorAliases(ctx, b); len(got) != 0 {
		t.Errorf("aliases %v", got)
	}

	// Past the cap: no alias, the event keeps its own group.
	p, c := setUp("C", 1)
	if _, err := st.MergeErrorGroups(ctx, c, "g1", []string{"g2"}, "test", 0); err != nil {
		t.Fatal(err)
	}
	first, props = enrich(p, c, `"marker-checkout"`)
	store(c, props)
	upload(p, c)
	if second, _ := enrich(p, c, `"marker-checkout"`); second == first || second == "" {
		t.Errorf("past the cap: fingerprint %q (the first %s)", second, first)
	}
	if got, _ := st.ErrorAliases(ctx, c); len(got) != 1 {
		t.Errorf("aliases past the cap: %v", got)
	}
}
