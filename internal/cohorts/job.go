package cohorts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"strata/internal/analytics"
	"strata/internal/lease"
)

// leaseName is the job's lease in the metadata store.
const leaseName = "cohort-recompute"

// jobBatch is how many due cohorts one round reads at a time.
const jobBatch = 20

// Job recomputes the dynamic cohorts whose members are older than
// RecomputeEvery, on one node of several (a lease), one cohort at a time.
type Job struct {
	Service *Service
	Leases  analytics.LeaseStore
	// Node names this process for the lease; Interval is the time between
	// rounds (a minute: a cohort is then at most RecomputeEvery plus a
	// minute old, unless the round before took longer).
	Node     string
	Interval time.Duration
	// Admit, when set, says whether the store takes writes now (the disk
	// guard): a round it refuses is skipped.
	Admit func() error
}

// Run runs a round every Interval until ctx ends.
func (j *Job) Run(ctx context.Context) {
	lease.Every(ctx, j.Interval, j.Service.Log, "recomputing cohorts failed", func(ctx context.Context) error {
		_, err := j.Round(ctx)
		return err
	})
}

// Round recomputes the due cohorts if this node holds the lease and
// returns how many it computed. One cohort's failure (recorded on it)
// does not stop the others.
func (j *Job) Round(ctx context.Context) (int, error) {
	if j.Admit != nil && j.Admit() != nil {
		return 0, nil
	}
	now := j.Service.now()
	mine, err := lease.Held(ctx, j.Leases, leaseName, j.Node, now, j.Interval)
	if err != nil || !mine {
		return 0, err
	}
	done := 0
	var errs []error
	tried := map[int64]bool{}
	for {
		due, err := j.Service.Meta.DueCohorts(ctx, now.Add(-RecomputeEvery), now.Add(-StaleAfter), jobBatch)
		if err != nil {
			return done, err
		}
		progress := false
		for _, c := range due {
			if tried[c.ID] {
				continue
			}
			tried[c.ID], progress = true, true
			ok, err := j.Service.ComputeNow(ctx, c)
			if err != nil {
				errs = append(errs, fmt.Errorf("cohort %d: %w", c.ID, err))
			}
			if ok {
				done++
			}
			if ctx.Err() != nil {
				return done, errors.Join(errs...)
			}
		}
		if !progress {
			return done, errors.Join(errs...)
		}
	}
}
