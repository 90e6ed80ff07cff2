package storetest

import (
	"context"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// testLiveVisitors counts visitors now through the engine, its clock set
// to each random dataset's instant, and compares the count with the
// reference: the window's edges, bots, the test environment and, since
// every dataset is its own product in one store, other products' events.
// Half the datasets go through the live cache, the others straight to the
// store.
func testLiveVisitors(ctx context.Context, t *testing.T, s Events) {
	for seed := int64(1); seed <= 30; seed++ {
		ds := querytest.GenerateLive(seed)
		p := analytics.Product{ID: 300 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		engine := &query.Engine{Store: s, Now: func() time.Time { return ds.Now }}
		if seed%2 == 0 {
			engine.Live = query.NewLive(time.Minute)
		}
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			got, err := engine.LiveVisitors(ctx, analytics.EventRange{ProductID: p.ID, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			want := querytest.LiveVisitors(ds.Events, env == analytics.EnvTest, ds.Now)
			if got.Visitors != want || !got.At.Equal(ds.Now) || got.WindowSeconds != 300 {
				t.Errorf("seed %d %s: live visitors = %+v, want %d at %s", seed, env, got, want, ds.Now)
			}
		}
	}
}
