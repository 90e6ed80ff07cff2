package experiment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"strata/internal/analytics"
	"strata/internal/lease"
)

// SampleRatioCheck tests the users exposed to each arm (exposed, by
// variant key) against the flag's weights with Pearson's chi-square test:
//
//	χ² = Σ (observed − expected)² / expected,  df = arms − 1
//
// over the arms with a weight above 0. Users exposed to an arm of weight 0
// are a mismatch by themselves (p = 0). ok is false while the arms hold
// fewer than analytics.MinExposures users together: too few to tell.
func SampleRatioCheck(f analytics.Flag, exposed map[string]int64, now time.Time) (check analytics.SampleRatio, ok bool) {
	var total int64
	for _, v := range f.Variants {
		total += exposed[v.Key]
	}
	if total < analytics.MinExposures || len(f.Variants) < analytics.MinArms {
		return check, false
	}
	check = analytics.SampleRatio{CheckedAt: now.UTC(), PValue: 1, Arms: []analytics.SampleRatioArm{}}
	chi2, df, impossible := 0.0, -1, false
	for _, v := range f.Variants {
		n := exposed[v.Key]
		share := v.Weight / 100
		check.Arms = append(check.Arms, analytics.SampleRatioArm{Variant: v.Key, Exposed: n,
			Observed: float64(n) / float64(total), Expected: share})
		if share == 0 {
			impossible = impossible || n > 0
			continue
		}
		want := share * float64(total)
		chi2 += (float64(n) - want) * (float64(n) - want) / want
		df++
	}
	switch {
	case impossible:
		check.PValue = 0
	case df >= 1:
		check.PValue = ChiSquareP(chi2, df)
	}
	check.Mismatch = check.PValue < analytics.SRMThreshold
	return check, true
}

// Counter counts an experiment's events: the query engine in the server.
type Counter interface {
	RunExperiment(ctx context.Context, q analytics.ExperimentQuery) ([]analytics.ExperimentRow, error)
}

// Store is what the checker reads of the metadata store; it pauses an
// experiment through the Service, in one of the store's transactions.
type Store interface {
	Meta
	analytics.LeaseStore
	// Product gives the product's time zone, in which an experiment's
	// days are cut (Range).
	Product(ctx context.Context, id int64) (analytics.Product, error)
}

// Checker runs the sample-ratio check of every running experiment every
// Interval, on one node at a time: each round first takes (or renews) the
// lease "sample_ratio_check" for twice the interval, and a node that
// cannot get it skips the round. A mismatch pauses the experiment, so that
// every SDK gives control from its next configuration (docs/experiments.md).
type Checker struct {
	Store    Store
	Counter  Counter
	Node     string // this node's name in the lease
	Interval time.Duration
	// Env is the environment whose exposures are checked: live.
	Env analytics.Env
	// Paused is called after the check paused an experiment, so that the
	// node serves the new configuration at once.
	Paused func(productID int64)
	Log    *slog.Logger
	Now    func() time.Time
}

// leaseName names the checker's lease.
const leaseName = "sample_ratio_check"

func (c *Checker) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Run checks every Interval until ctx ends.
func (c *Checker) Run(ctx context.Context) {
	lease.Every(ctx, c.Interval, c.Log, "sample-ratio check failed", c.Round)
}

// Round runs one round: if this node holds the lease, it checks every
// running experiment. One experiment's failure does not stop the others;
// the errors are joined.
func (c *Checker) Round(ctx context.Context) error {
	now := c.now()
	mine, err := lease.Held(ctx, c.Store, leaseName, c.Node, now, c.Interval)
	if err != nil || !mine {
		return err
	}
	running, err := c.Store.RunningExperiments(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range running {
		if err := c.check(ctx, e, now); err != nil {
			errs = append(errs, fmt.Errorf("experiment %d: %w", e.ID, err))
		}
	}
	return errors.Join(errs...)
}

// check runs the test on one experiment and records it.
func (c *Checker) check(ctx context.Context, e analytics.Experiment, now time.Time) error {
	f, err := c.Store.Flag(ctx, e.ProductID, e.FlagID)
	if err != nil {
		return err
	}
	// The check reads the users the results page shows: the same range,
	// cut in the product's zone.
	p, err := c.Store.Product(ctx, e.ProductID)
	if err != nil {
		return err
	}
	loc := time.UTC
	if p.TimeZone != "" && p.TimeZone != analytics.DefaultTimeZone {
		if loc, err = analytics.LoadZone(p.TimeZone); err != nil {
			return err
		}
	}
	from, to := Range(e, now, loc)
	rows, err := c.Counter.RunExperiment(ctx, analytics.ExperimentQuery{
		EventRange: analytics.EventRange{ProductID: e.ProductID, Env: c.Env, From: from, To: to, Zone: loc}, ExperimentID: e.ID})
	if err != nil {
		return err
	}
	exposed := map[string]int64{}
	for _, r := range rows {
		if r.Metric < 0 && !r.Mixed {
			exposed[r.Variant] += r.Users
		}
	}
	check, ok := SampleRatioCheck(f, exposed, now)
	if !ok {
		return nil
	}
	// The pause is the experiment service's, the same operation as the
	// API's, so that the rules of a status change live in one place.
	ops := &Service{Store: c.Store, Now: c.Now}
	paused, err := ops.PauseForSampleRatio(ctx, e.ProductID, e.ID, check)
	if err != nil {
		return err
	}
	if paused {
		c.Log.Warn("experiment paused: sample ratio mismatch", "product", e.ProductID, "experiment", e.ID,
			"flag", f.Key, "p", check.PValue, "observed", shares(check, true), "expected", shares(check, false))
		if c.Paused != nil {
			c.Paused(e.ProductID)
		}
	}
	return nil
}

// shares renders a check's observed or expected split for the log, as
// "control=55.0% treatment=45.0%".
func shares(check analytics.SampleRatio, observed bool) string {
	s := ""
	for i, a := range check.Arms {
		v := a.Expected
		if observed {
			v = a.Observed
		}
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%.1f%%", a.Variant, math.Round(v*1000)/10)
	}
	return s
}
