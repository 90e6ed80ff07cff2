// Package retention deletes what each product keeps past its retention
// periods (docs/privacy.md, "Retention"): a job that, every interval,
// drops a product's events before the local midnight its events period
// names, and its error occurrences ($exception events) before the one its
// errors period names. One node of a cluster runs each round, by a lease
// (package lease). Replays have their own job (package replay), which
// reads the products' replay periods too.
package retention

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"strata/internal/analytics"
	"strata/internal/lease"
)

// leaseName is the job's lease in the metadata store.
const leaseName = "event-retention"

// Products is what the job reads the products and their periods from.
type Products interface {
	ListWorkspaces(ctx context.Context) ([]analytics.Workspace, error)
	ListProducts(ctx context.Context, workspaceID int64) ([]analytics.Product, error)
}

// Job drops the events past each product's periods.
type Job struct {
	Products Products
	Events   analytics.RetentionStore
	Leases   analytics.LeaseStore
	// Node names this process for the lease; Interval is the time between
	// rounds.
	Node     string
	Interval time.Duration
	// Admit, when set, says whether the store takes writes now (the disk
	// guard): a round it refuses is skipped, as the visits refresher's is.
	Admit func() error
	Now   func() time.Time
	Log   *slog.Logger
}

// Run runs a round every Interval until ctx ends.
func (j *Job) Run(ctx context.Context) {
	lease.Every(ctx, j.Interval, j.Log, "event retention failed", func(ctx context.Context) error {
		_, err := j.Round(ctx)
		return err
	})
}

// Round runs one round if this node holds the lease, and returns how many
// events it deleted. One product's failure does not stop the others.
func (j *Job) Round(ctx context.Context) (int64, error) {
	if j.Admit != nil && j.Admit() != nil {
		return 0, nil
	}
	now := j.Now()
	mine, err := lease.Held(ctx, j.Leases, leaseName, j.Node, now, j.Interval)
	if err != nil || !mine {
		return 0, err
	}
	workspaces, err := j.Products.ListWorkspaces(ctx)
	if err != nil {
		return 0, err
	}
	var deleted int64
	var errs []error
	for _, ws := range workspaces {
		products, err := j.Products.ListProducts(ctx, ws.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range products {
			n, err := j.product(ctx, p, now)
			deleted += n
			if err != nil {
				errs = append(errs, fmt.Errorf("product %d: %w", p.ID, err))
			}
		}
	}
	if deleted > 0 && j.Log != nil {
		j.Log.Info("retention deleted events", "events", deleted, "took", time.Since(now).Round(time.Millisecond))
	}
	return deleted, errors.Join(errs...)
}

// product drops one product's events past its periods. The errors
// period applies only when it is shorter than the events one (or the
// events are kept forever): otherwise the events drop took them already.
func (j *Job) product(ctx context.Context, p analytics.Product, now time.Time) (int64, error) {
	r := p.Retention
	if r.EventsDays <= 0 && r.ErrorsDays <= 0 {
		return 0, nil
	}
	loc, err := analytics.LoadZone(p.TimeZone)
	if err != nil {
		loc = time.UTC // a zone stored by an older binary that this one does not know
	}
	var deleted int64
	if r.EventsDays > 0 {
		n, err := j.Events.DropEventsBefore(ctx, p.ID, "", analytics.RetentionCutoff(now, loc, r.EventsDays))
		deleted += max(n, 0)
		if err != nil {
			return deleted, err
		}
	}
	if r.ErrorsDays > 0 && (r.EventsDays <= 0 || r.ErrorsDays < r.EventsDays) {
		n, err := j.Events.DropEventsBefore(ctx, p.ID, analytics.ExceptionEvent, analytics.RetentionCutoff(now, loc, r.ErrorsDays))
		deleted += max(n, 0)
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}
