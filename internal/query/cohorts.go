package query

import (
	"context"
	"errors"
	"slices"

	"strata/internal/analytics"
)

// CohortReader finds a product's cohort; the metadata stores implement it.
type CohortReader interface {
	Cohort(ctx context.Context, productID, id int64) (analytics.Cohort, error)
}

// PersonSetter finds the member set of the persons that pass a
// person-property filter (cohorts.PersonSets).
type PersonSetter interface {
	Set(ctx context.Context, productID int64, f analytics.PersonFilter) (analytics.CohortRef, error)
}

// resolveCohorts returns fs with each cohort filter naming the member set
// it reads: its product and the cohort's current generation, looked up
// when the query runs, so that a saved query follows its cohort's
// recomputations (docs/queries.md, "Cohort filters"); and each
// person-property filter made a cohort filter of its person set ("Person
// filters"). A list without
// cohort filters is returned as it is; one with them is a copy, since a
// prepared query may run more than once.
func (e *Engine) resolveCohorts(ctx context.Context, productID int64, fs []analytics.Filter) ([]analytics.Filter, error) {
	if !slices.ContainsFunc(fs, func(f analytics.Filter) bool { return f.Cohort != nil || f.Person != nil }) {
		return fs, nil
	}
	out := slices.Clone(fs)
	for i, f := range out {
		if f.Person != nil {
			if e.PersonSets == nil {
				return nil, analytics.InvalidField("filters", "person filters are not available here")
			}
			ref, err := e.PersonSets.Set(ctx, productID, *f.Person)
			if err != nil {
				return nil, err
			}
			// Person stays, so that the answer names the filter as sent.
			out[i] = analytics.Filter{Operator: analytics.OpInCohort, Cohort: &ref, Person: f.Person}
			continue
		}
		if f.Cohort == nil {
			continue
		}
		if e.Cohorts == nil {
			return nil, analytics.InvalidField("filters", "cohort filters are not available here")
		}
		c, err := e.Cohorts.Cohort(ctx, productID, f.Cohort.ID)
		if errors.Is(err, analytics.ErrNotFound) {
			return nil, analytics.InvalidField("filters", "no cohort %d in this product", f.Cohort.ID)
		}
		if err != nil {
			return nil, err
		}
		out[i].Cohort = &analytics.CohortRef{ProductID: productID, ID: c.ID, Generation: c.Generation}
	}
	return out, nil
}

// resolveFunnel resolves the cohort filters of a funnel's steps and
// exclusions, copying what it changes.
func (e *Engine) resolveFunnel(ctx context.Context, q *analytics.FunnelQuery) error {
	if q.StepFilters != nil {
		steps := make([][]analytics.Filter, len(q.StepFilters))
		for i, fs := range q.StepFilters {
			var err error
			if steps[i], err = e.resolveCohorts(ctx, q.ProductID, fs); err != nil {
				return err
			}
		}
		q.StepFilters = steps
	}
	if q.Exclusions != nil {
		xs := slices.Clone(q.Exclusions)
		for i := range xs {
			var err error
			if xs[i].Filters, err = e.resolveCohorts(ctx, q.ProductID, xs[i].Filters); err != nil {
				return err
			}
		}
		q.Exclusions = xs
	}
	return nil
}

// resolveTrend resolves the cohort filters of a trend and of its series,
// copying what it changes.
func (e *Engine) resolveTrend(ctx context.Context, q *analytics.TrendQuery) error {
	var err error
	if q.Filters, err = e.resolveCohorts(ctx, q.ProductID, q.Filters); err != nil {
		return err
	}
	series := slices.Clone(q.Series)
	for i := range series {
		if series[i].Filters, err = e.resolveCohorts(ctx, q.ProductID, series[i].Filters); err != nil {
			return err
		}
	}
	q.Series = series
	return nil
}
