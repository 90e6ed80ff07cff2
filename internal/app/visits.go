package app

import (
	"context"
	"time"

	"strata/internal/analytics"
)

// visitsEvery is how often the server extends the visits it keeps.
const visitsEvery = time.Minute

// keepVisits keeps the visits of the settled past for the sessions query
// (internal/store/duckdb, visits.go), at start and then every minute,
// up to half an hour ago, until ctx ends. The first refresh after a start
// builds every visit from the events; the later ones the last minute's.
// Like every other write it waits while the disk is nearly full, and
// meanwhile the sessions query answers from events alone.
func (a *App) keepVisits(ctx context.Context) {
	st := a.store.embedded
	if st == nil || a.cfg.EventsURL != "" {
		return
	}
	first := true
	tick := time.NewTicker(visitsEvery)
	defer tick.Stop()
	for {
		if a.store.guard.Admit() == nil {
			start := time.Now()
			n, err := st.RefreshVisits(ctx, time.Now().Add(-analytics.SessionGap))
			took := time.Since(start).Round(time.Millisecond)
			switch {
			case err != nil:
				if ctx.Err() == nil {
					a.log.Warn("keeping visits failed", "err", err)
				}
			case first || took > time.Second:
				a.log.Info("visits kept", "added", n, "took", took)
				first = false
			default:
				a.log.Debug("visits kept", "added", n, "took", took)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
