// Package replay enforces what session replays may keep (docs/replay.md,
// "Retention"): a job that deletes sessions past the retention period and,
// per product, the oldest sessions beyond the size cap and beyond a tenth
// under the cap on sessions, then has the store give the deleted sessions'
// space back. One node of a cluster runs each round, by a lease (package
// lease).
package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"strata/internal/analytics"
	"strata/internal/lease"
)

// leaseName is the job's lease in the metadata store.
const leaseName = "replay-retention"

// Job deletes expired sessions and keeps every product under its cap.
type Job struct {
	Store  analytics.ReplayStore
	Leases analytics.LeaseStore
	// Node names this process for the lease; Interval is the time between
	// rounds.
	Node     string
	Interval time.Duration
	// Retention is how long a session is kept after the server took its
	// last chunk; MaxBytes how much a product's sessions may take
	// together, as their Bytes count it (0: no cap).
	Retention time.Duration
	MaxBytes  int64
	// MaxSessions is how many sessions a product may keep (0: no cap),
	// which ingest enforces by refusing chunks that would start more
	// (analytics.ReplayLimits). A round deletes the oldest until a tenth
	// of it is free, so that new sessions are recorded again: a product
	// that starts fewer sessions a round than that is never refused one.
	MaxSessions int
	// Products, when set, gives each product's own replay period
	// (analytics.DataRetention.ReplaysDays, docs/privacy.md, "Retention"),
	// which applies when it is shorter than Retention: the server-wide
	// period is the default and the ceiling.
	Products interface {
		Product(ctx context.Context, id int64) (analytics.Product, error)
	}
	Now func() time.Time
	Log *slog.Logger
}

// Run runs a round every Interval until ctx ends.
func (j *Job) Run(ctx context.Context) {
	lease.Every(ctx, j.Interval, j.Log, "replay retention failed", func(ctx context.Context) error {
		_, err := j.Round(ctx)
		return err
	})
}

// Round runs one round if this node holds the lease, and returns how many
// sessions it deleted. One product's failure does not stop the others.
func (j *Job) Round(ctx context.Context) (int, error) {
	now := j.Now()
	mine, err := lease.Held(ctx, j.Leases, leaseName, j.Node, now, j.Interval)
	if err != nil || !mine {
		return 0, err
	}
	products, err := j.Store.ReplayProducts(ctx)
	if err != nil {
		return 0, err
	}
	deleted := 0
	var errs []error
	for _, p := range products {
		n, err := j.product(ctx, p, now)
		deleted += n
		if err != nil {
			errs = append(errs, fmt.Errorf("product %d: %w", p, err))
		}
	}
	if deleted > 0 && j.Log != nil {
		j.Log.Info("replay retention deleted sessions", "sessions", deleted)
	}
	// A store that gives deleted sessions' space back in rounds (the
	// embedded segment files) runs one now: this round's deletions, and
	// the API's since the last round, leave the disk.
	if c, ok := j.Store.(analytics.ReplayCompactor); ok {
		if err := c.CompactReplays(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return deleted, errors.Join(errs...)
}

// product applies the rules to one product's sessions: those whose last
// chunk came before now − Retention go, then the oldest (by start) until
// the rest fit under MaxBytes and leave a tenth of MaxSessions free. They
// are deleted at once (Service.DeleteSessions, as the API deletes a user's): a
// round that deletes thousands of a product's sessions makes one write of
// their tombstones and one sync on the embedded store, not one each.
func (j *Job) product(ctx context.Context, productID int64, now time.Time) (int, error) {
	// The sessions are read and deleted through the service, as the API
	// reads and deletes them.
	ops := &Service{Store: j.Store}
	sessions, err := ops.List(ctx, productID, analytics.ReplayFilter{})
	if err != nil {
		return 0, err
	}
	sort.Slice(sessions, func(a, b int) bool {
		if !sessions[a].Start.Equal(sessions[b].Start) {
			return sessions[a].Start.Before(sessions[b].Start)
		}
		return sessions[a].SessionID < sessions[b].SessionID
	})
	var total int64
	for _, s := range sessions {
		total += s.Bytes
	}
	keep := len(sessions)
	if j.MaxSessions > 0 {
		keep = j.MaxSessions - max(1, j.MaxSessions/10)
	}
	retention, err := j.retention(ctx, productID)
	if err != nil {
		return 0, err
	}
	cutoff := now.Add(-retention)
	var doomed []string
	for _, s := range sessions {
		expired := retention > 0 && s.LastReceived.Before(cutoff)
		over := j.MaxBytes > 0 && total > j.MaxBytes
		many := len(sessions)-len(doomed) > keep
		if !expired && !over && !many {
			continue
		}
		doomed = append(doomed, s.SessionID)
		total -= s.Bytes
	}
	if len(doomed) == 0 {
		return 0, nil
	}
	return ops.DeleteSessions(ctx, productID, doomed)
}

// retention is how long a product's sessions are kept: its own period
// when it has a shorter one than the server's, else the server's. A
// product that no longer exists keeps the server's.
func (j *Job) retention(ctx context.Context, productID int64) (time.Duration, error) {
	if j.Products == nil {
		return j.Retention, nil
	}
	p, err := j.Products.Product(ctx, productID)
	if errors.Is(err, analytics.ErrNotFound) {
		return j.Retention, nil
	} else if err != nil {
		return 0, err
	}
	own := time.Duration(p.Retention.ReplaysDays) * 24 * time.Hour
	if own > 0 && (j.Retention <= 0 || own < j.Retention) {
		return own, nil
	}
	return j.Retention, nil
}
