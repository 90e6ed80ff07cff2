package experiment

import (
	"context"

	"strata/internal/analytics"
	"strata/internal/flags"
)

// Flags holds the operations on feature flags and their reads, below every
// door that reaches them (the HTTP API and its SDK configuration, the CLI;
// later the importer). It lives beside the experiment service rather than in package
// flags, which evaluates flags the way the SDKs do and has no store: the
// rule a flag's change must obey beyond its own fields is an experiment's
// (its arms cannot change while an experiment on it runs), and package
// experiment already imports package flags for the assignment.
type Flags struct {
	Store Meta
	// Cohorts finds the cohorts conditions name; nil skips the check
	// (a store without cohorts).
	Cohorts analytics.CohortLookup
}

// checkCohorts refuses conditions naming a cohort the product lacks. A
// cohort deleted later leaves its conditions unknown, so they fail
// (docs/flags.md, "Cohorts").
func (s *Flags) checkCohorts(ctx context.Context, productID int64, conds []analytics.FlagCondition) error {
	if s.Cohorts == nil || conds == nil {
		return nil
	}
	return analytics.CheckCohorts(ctx, s.Cohorts, productID, "conditions", analytics.TraitConditions(conds))
}

// FlagFields are the fields a create or an update of a flag sets; nil
// leaves a field out.
type FlagFields struct {
	Key         *string
	Name        *string
	Description *string
	Enabled     *bool
	Rollout     *float64
	Variants    []analytics.FlagVariant
	Conditions  []analytics.FlagCondition
}

// apply sets f's fields from c. On a new flag a field left out takes its
// default: the key is made from the name, a flag starts disabled with a
// rollout of 100 %, and without arms. On an existing one a field left out
// keeps its value, and the key may be repeated but not changed.
func (c *FlagFields) apply(f *analytics.Flag) error {
	if c.Key != nil {
		if f.ID != 0 && *c.Key != f.Key {
			return analytics.InvalidField("key", "cannot change once the flag exists (it is %q): code and recorded exposures name the flag by it", f.Key)
		}
		f.Key = *c.Key
	}
	if c.Name != nil {
		f.Name = *c.Name
	}
	if f.ID == 0 && c.Key == nil {
		f.Key = analytics.Slug(f.Name)
	}
	if c.Description != nil {
		f.Description = *c.Description
	}
	if c.Enabled != nil {
		f.Enabled = *c.Enabled
	}
	if c.Rollout != nil {
		f.Rollout = *c.Rollout
	} else if f.ID == 0 {
		f.Rollout = 100
	}
	if c.Variants != nil {
		f.Variants = c.Variants
	}
	if f.Variants == nil {
		f.Variants = []analytics.FlagVariant{} // [] on the wire, never null
	}
	if c.Conditions != nil {
		f.Conditions = c.Conditions
	}
	if f.Conditions == nil {
		f.Conditions = []analytics.FlagCondition{}
	}
	return f.Validate()
}

// Get returns the product's flag id, or analytics.ErrFlagNotFound.
func (s *Flags) Get(ctx context.Context, productID, id int64) (analytics.Flag, error) {
	f, err := s.Store.Flag(ctx, productID, id)
	return f, flagError(err)
}

// List returns the product's flags, oldest first.
func (s *Flags) List(ctx context.Context, productID int64) ([]analytics.Flag, error) {
	return s.Store.ListFlags(ctx, productID)
}

// Changes returns the trail of the product's flag id, newest first; it
// outlives the flag. A flag the product never had has none, and is
// analytics.ErrFlagNotFound.
func (s *Flags) Changes(ctx context.Context, productID, id int64) ([]analytics.FlagChange, error) {
	changes, err := s.Store.FlagChanges(ctx, productID, id)
	if err == nil && len(changes) == 0 {
		return nil, analytics.ErrFlagNotFound
	}
	return changes, err
}

// Create stores a new flag of the product with fields (defaults for those
// left out, docs/flags.md), as actor's change: 400 for a field the rules
// refuse, 409 flag_key_taken for a key the product already has.
func (s *Flags) Create(ctx context.Context, actor string, productID int64, fields FlagFields) (analytics.Flag, error) {
	f := analytics.Flag{ProductID: productID}
	if err := fields.apply(&f); err != nil {
		return f, err
	}
	if err := s.checkCohorts(ctx, productID, f.Conditions); err != nil {
		return f, err
	}
	err := s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		return flagError(tx.CreateFlag(ctx, &f, actor))
	})
	return f, err
}

// Update changes the product's flag id by fields, as actor's change: the
// fields sent replace the flag's, those left out keep their values. A
// change of its arms or weights is 409 experiment_running while an
// experiment on the flag runs. The flag, the experiments and the write
// are read and made in one transaction, so an experiment started meanwhile
// cannot miss the change.
func (s *Flags) Update(ctx context.Context, actor string, productID, id int64, fields FlagFields) (analytics.Flag, error) {
	var f analytics.Flag
	if err := s.checkCohorts(ctx, productID, fields.Conditions); err != nil {
		return f, err
	}
	err := s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		var err error
		if f, err = tx.Flag(ctx, productID, id); err != nil {
			return flagError(err)
		}
		arms := f.Variants // apply replaces the slice, never edits it
		if err := fields.apply(&f); err != nil {
			return err
		}
		if !analytics.SameSplit(arms, f.Variants) {
			if err := refuseWhileRunning(ctx, tx, productID, id, "changing its arms or weights"); err != nil {
				return err
			}
		}
		return flagError(tx.UpdateFlag(ctx, &f, actor))
	})
	return f, err
}

// Delete deletes the product's flag id, as actor's change; its history
// outlives it. A flag under a running experiment is 409
// experiment_running, one the product does not have 404 flag_not_found.
func (s *Flags) Delete(ctx context.Context, actor string, productID, id int64) error {
	return s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		if err := refuseWhileRunning(ctx, tx, productID, id, "deleting the flag"); err != nil {
			return err
		}
		return flagError(tx.DeleteFlag(ctx, productID, id, actor))
	})
}

// refuseWhileRunning answers 409 experiment_running when the flag's arms
// are under a running experiment: changing them would mix users of two
// splits in one result (docs/flags.md, "Experiments").
func refuseWhileRunning(ctx context.Context, store analytics.ExperimentStore, productID, flagID int64, what string) error {
	running, err := flagUnderTest(ctx, store, productID, flagID)
	if err != nil || !running {
		return err
	}
	return analytics.Errorf(analytics.KindConflict, "experiment_running",
		"The flag's experiment is running: pause it (or apply a winner) before %s.", what)
}

// ForSDK returns the product's flags as the SDKs evaluate them (package
// flags), each with its experiment: its open one, else its latest
// completed one, whose holdout no longer applies. The SDK configuration
// and the message engine read them.
func (s *Flags) ForSDK(ctx context.Context, productID int64) ([]flags.Flag, error) {
	list, err := s.Store.ListFlags(ctx, productID)
	if err != nil {
		return nil, err
	}
	exps, err := s.Store.ListExperiments(ctx, productID)
	if err != nil {
		return nil, err
	}
	// The list is oldest first, so a later completed experiment replaces
	// an earlier one, and an open one is never replaced.
	byFlag := map[int64]*flags.Experiment{}
	for _, x := range exps {
		if cur, ok := byFlag[x.FlagID]; ok && cur.Status != string(analytics.ExperimentCompleted) {
			continue
		}
		byFlag[x.FlagID] = &flags.Experiment{ID: x.ID, Status: string(x.Status), Holdout: x.Holdout / 100}
	}
	out := make([]flags.Flag, 0, len(list))
	for _, f := range list {
		sf := flags.Flag{Key: f.Key, Enabled: f.Enabled, Rollout: f.Rollout, Variants: make([]flags.Variant, 0, len(f.Variants)),
			Experiment: byFlag[f.ID]}
		for _, v := range f.Variants {
			sf.Variants = append(sf.Variants, flags.Variant{Key: v.Key, Weight: v.Weight})
		}
		sf.Conditions = make([]flags.Condition, 0, len(f.Conditions))
		for _, c := range f.Conditions {
			sf.Conditions = append(sf.Conditions, flags.Condition{Type: c.Type, Trait: c.Trait, CohortID: c.CohortID, Op: c.Op, Value: c.Value})
		}
		out = append(out, sf)
	}
	return out, nil
}
