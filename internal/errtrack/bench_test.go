package errtrack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

// BenchmarkEnrichMissesWhileParsing times 80 $exception events of 50
// frames each, from 8 goroutines, every frame naming a file without a map
// (two candidate URLs each), while another goroutine enriches events whose
// maps (40 MB parsed each, three of them in a budget of two) are parsed
// one after another. The misses are looked up beside the parses, not
// after them (docs/errors.md, "Sourcemaps"):
//
//	go test -run '^$' -bench EnrichMissesWhileParsing -benchtime 1x ./internal/errtrack/
func BenchmarkEnrichMissesWhileParsing(b *testing.B) {
	ctx := context.Background()
	st, product := duckdbtest.Product(b)
	dense := []byte(`{"version":3,"sources":["a.js"],"names":[],"mappings":"A` + strings.Repeat(",A", 2_000_000) + `"}`)
	for i := range 3 {
		sm := analytics.Sourcemap{ProductID: product.ID, Release: "big", URL: fmt.Sprintf("https://shop.example.com/%d.js", i)}
		if err := st.PutSourcemap(ctx, &sm, dense, nil, analytics.SourcemapAmount{}); err != nil {
			b.Fatal(err)
		}
	}
	p := NewProcessor(st, 100<<20)
	event := func(release, stack string) json.RawMessage {
		raw, _ := json.Marshal(map[string]any{"$exception_type": "Error", "$exception_message": "x", "$release": release, "$exception_stack": stack})
		return raw
	}
	var stop atomic.Bool
	parsing := sync.WaitGroup{}
	parsing.Go(func() {
		for i := 0; !stop.Load(); i++ {
			p.Enrich(ctx, product.ID, event("big", fmt.Sprintf("Error: x\n    at f (https://shop.example.com/%d.js:1:1)", i%3)))
		}
	})
	round := 0
	for b.Loop() {
		round++
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for e := range 10 {
					var stack strings.Builder
					stack.WriteString("Error: x\n")
					for f := range 50 {
						fmt.Fprintf(&stack, "    at f (https://cdn.example.com/%d-%d-%d.js?v=1:1:1)\n", g, e, f)
					}
					p.Enrich(ctx, product.ID, event(fmt.Sprintf("r%d-%d-%d", round, g, e), stack.String()))
				}
			})
		}
		wg.Wait()
	}
	stop.Store(true)
	parsing.Wait()
}
