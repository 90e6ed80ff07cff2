// Package lease runs a periodic job on one node of several at a time: each
// round, a node takes or renews a named lease in the metadata store
// (analytics.LeaseStore) for two intervals, and runs the round only while
// it holds it. When the holder stops, another node takes over within two
// intervals. The sample-ratio check and the error alerts use it.
package lease

import (
	"context"
	"log/slog"
	"time"

	"strata/internal/analytics"
)

// Every calls round every interval until ctx ends, logging a failed round
// with msg. A round that takes longer than the interval delays the next
// one; ticks are not queued.
func Every(ctx context.Context, interval time.Duration, log *slog.Logger, msg string, round func(context.Context) error) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := round(ctx); err != nil && ctx.Err() == nil {
				log.Error(msg, "err", err)
			}
		}
	}
}

// Held takes or renews the lease name for node at now, until two
// intervals later, and reports whether node holds it.
func Held(ctx context.Context, store analytics.LeaseStore, name, node string, now time.Time, interval time.Duration) (bool, error) {
	return store.AcquireLease(ctx, name, node, now, now.Add(2*interval))
}
