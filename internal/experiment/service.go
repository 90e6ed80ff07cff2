package experiment

import (
	"context"
	"errors"
	"time"

	"strata/internal/analytics"
)

// Service holds the operations on experiments, below every door that
// reaches them (the HTTP API, the CLI's experiment commands, the
// sample-ratio job's pause): their rules live here, and a change that writes the flag too (an
// experiment created with its flag, a winner applied) writes both in one
// metadata transaction.
type Service struct {
	Store Meta
	// Now is the clock of an experiment's start; nil means time.Now.
	Now func() time.Time
}

// Meta is what the flag and experiment operations read and write
// through: the metadata store, whose transactions hold a change that
// writes several entities.
type Meta interface {
	analytics.FlagStore
	analytics.ExperimentStore
	analytics.Transactor
}

var (
	// ErrNotFound answers an experiment id the product does not have.
	ErrNotFound = analytics.Errorf(analytics.KindNotFound, "experiment_not_found", "There is no experiment with this id in this product.")
	// ErrFlagHasExperiment refuses a second experiment on a flag.
	ErrFlagHasExperiment = analytics.Errorf(analytics.KindConflict, "experiment_exists", "This flag already has an experiment that is not completed; complete it first.")
)

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// flagError tells the flag store's answers apart for the caller.
func flagError(err error) error {
	switch {
	case errors.Is(err, analytics.ErrNotFound):
		return analytics.ErrFlagNotFound
	case errors.Is(err, analytics.ErrDuplicate):
		return analytics.ErrFlagKeyTaken
	}
	return err
}

// read returns the product's experiment id as tx reads it.
func read(ctx context.Context, tx analytics.MetaTx, productID, id int64) (analytics.Experiment, error) {
	e, err := tx.Experiment(ctx, productID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return e, ErrNotFound
	}
	return e, err
}

// Get returns the product's experiment id, or ErrNotFound.
func (s *Service) Get(ctx context.Context, productID, id int64) (analytics.Experiment, error) {
	e, err := s.Store.Experiment(ctx, productID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return e, ErrNotFound
	}
	return e, err
}

// List returns the product's experiments, oldest first.
func (s *Service) List(ctx context.Context, productID int64) ([]analytics.Experiment, error) {
	return s.Store.ListExperiments(ctx, productID)
}

// Create stores e (ProductID and its validated fields set) as a draft. With
// flagID it tests that flag of the product, whose arms must be 2 to 4 and
// which must have no experiment that is not completed; without, it also
// creates its flag, keyed by the name, on for every user, with variants as
// its arms (control and treatment, 50/50, when nil), as actor did it.
// Everything is checked before anything is stored, and the two are stored
// together or not at all.
func (s *Service) Create(ctx context.Context, actor string, e *analytics.Experiment, flagID *int64, variants []analytics.FlagVariant) error {
	given := *e
	err := s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		*e = given
		var f analytics.Flag
		if flagID != nil {
			if variants != nil {
				return analytics.InvalidField("variants", "are the flag's: change them on the flag, or leave flagId out to create a new flag")
			}
			var err error
			if f, err = tx.Flag(ctx, e.ProductID, *flagID); err != nil {
				return flagError(err)
			}
		} else {
			f = analytics.Flag{ProductID: e.ProductID, Key: analytics.Slug(e.Name), Name: e.Name, Enabled: true, Rollout: 100, Variants: variants}
			if f.Variants == nil {
				f.Variants = []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}
			}
			if err := f.Validate(); err != nil {
				return err
			}
		}
		if err := analytics.CheckArms(&f); err != nil {
			return err
		}
		if f.ID == 0 {
			if err := tx.CreateFlag(ctx, &f, actor); err != nil {
				return flagError(err)
			}
		}
		e.FlagID = f.ID
		if err := tx.CreateExperiment(ctx, e); err != nil {
			if errors.Is(err, analytics.ErrDuplicate) {
				return ErrFlagHasExperiment
			}
			return flagError(err)
		}
		return nil
	})
	if err != nil {
		*e = given
	}
	return err
}

// Update changes the product's experiment id by change (name, holdout,
// metrics, dates), read and written in one transaction. The holdout of a
// running experiment cannot change: it would move users between the
// holdout and the arms mid-test; a completed experiment cannot change at
// all.
func (s *Service) Update(ctx context.Context, productID, id int64, change func(*analytics.Experiment) error) (analytics.Experiment, error) {
	var e analytics.Experiment
	err := s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		var err error
		if e, err = read(ctx, tx, productID, id); err != nil {
			return err
		}
		holdout := e.Holdout
		if err := change(&e); err != nil {
			return err
		}
		if e.Status == analytics.ExperimentRunning && e.Holdout != holdout {
			return analytics.Errorf(analytics.KindConflict, "experiment_running",
				"The experiment is running, so its holdout cannot change; pause it first.")
		}
		if e.Status == analytics.ExperimentCompleted {
			return analytics.Errorf(analytics.KindConflict, "experiment_completed", "The experiment is completed and can no longer change.")
		}
		return tx.UpdateExperiment(ctx, &e)
	})
	return e, err
}

// transitions are the status changes an action may make, from each state.
var transitions = map[string]map[analytics.ExperimentStatus]analytics.ExperimentStatus{
	"start":  {analytics.ExperimentDraft: analytics.ExperimentRunning},
	"pause":  {analytics.ExperimentRunning: analytics.ExperimentPaused},
	"resume": {analytics.ExperimentPaused: analytics.ExperimentRunning},
}

// Act changes the status of the product's experiment id by action (start,
// pause or resume): a change that is not allowed from the current state is
// 409 invalid_transition, and a start needs the flag's arms to be 2 to 4.
func (s *Service) Act(ctx context.Context, productID, id int64, action string) (analytics.Experiment, error) {
	var e analytics.Experiment
	err := s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		var err error
		if e, err = read(ctx, tx, productID, id); err != nil {
			return err
		}
		next, ok := transitions[action][e.Status]
		if !ok {
			return analytics.Errorf(analytics.KindConflict, "invalid_transition", "A %s experiment cannot %s.", e.Status, action)
		}
		if action == "start" {
			f, err := tx.Flag(ctx, productID, e.FlagID)
			if err != nil {
				return flagError(err)
			}
			if err := analytics.CheckArms(&f); err != nil {
				return err
			}
		}
		e.Status, e.PauseReason = next, ""
		if next == analytics.ExperimentPaused {
			e.PauseReason = analytics.PauseManual
		}
		if e.StartedAt == nil && next == analytics.ExperimentRunning {
			now := s.now()
			e.StartedAt = &now
		}
		return tx.UpdateExperiment(ctx, &e)
	})
	return e, err
}

// ApplyWinner completes the product's experiment id with variant as its
// winner: the flag goes to every user (rollout 100) with the winner's
// weight 100 and the others' 0, recorded in the flag's history as actor's
// change, and the experiment is completed, so its holdout no longer
// applies. The flag's change, its history and the experiment's completion
// are one transaction: a failure leaves the experiment running on the
// flag as it was.
func (s *Service) ApplyWinner(ctx context.Context, actor string, productID, id int64, variant *string) (analytics.Experiment, error) {
	var e analytics.Experiment
	err := s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		var err error
		if e, err = read(ctx, tx, productID, id); err != nil {
			return err
		}
		if e.Status != analytics.ExperimentRunning && e.Status != analytics.ExperimentPaused {
			return analytics.Errorf(analytics.KindConflict, "invalid_transition", "A %s experiment has no winner to apply; start it first.", e.Status)
		}
		f, err := tx.Flag(ctx, productID, e.FlagID)
		if err != nil {
			return flagError(err)
		}
		if variant == nil {
			return analytics.InvalidField("variant", "is required: the key of the winning arm")
		}
		found := false
		for i := range f.Variants {
			f.Variants[i].Weight = 0
			if f.Variants[i].Key == *variant {
				f.Variants[i].Weight, found = 100, true
			}
		}
		if !found {
			return analytics.InvalidField("variant", "must be an arm of the flag %q, not %q", f.Key, *variant)
		}
		f.Rollout, f.Enabled = 100, true
		if err := tx.UpdateFlag(ctx, &f, actor); err != nil {
			return err
		}
		e.Status, e.Winner, e.PauseReason = analytics.ExperimentCompleted, *variant, ""
		return tx.UpdateExperiment(ctx, &e)
	})
	return e, err
}

// PauseForSampleRatio records check as the latest sample-ratio check of
// the product's experiment id and, when the check is a mismatch, pauses it
// for that reason (analytics.PauseSampleRatio), reading and writing in one
// transaction: the pause is the one Act makes, so it happens only to an
// experiment that is running, and a pause, resume or completion made
// meanwhile is never undone (the store's write is conditional too). It
// reports whether it paused the experiment. An experiment deleted since
// the check began has nothing to record and is no error.
func (s *Service) PauseForSampleRatio(ctx context.Context, productID, id int64, check analytics.SampleRatio) (paused bool, err error) {
	err = s.Store.InTx(ctx, func(tx analytics.MetaTx) error {
		e, err := read(ctx, tx, productID, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		_, pausable := transitions["pause"][e.Status]
		paused, err = tx.RecordSampleRatio(ctx, productID, id, check, check.Mismatch && pausable)
		return err
	})
	return paused && err == nil, err
}

// flagUnderTest reports whether a flag's arms are under a running
// experiment, so that its arms and weights must not change.
func flagUnderTest(ctx context.Context, store analytics.ExperimentStore, productID, flagID int64) (bool, error) {
	list, err := store.ListExperiments(ctx, productID)
	if err != nil {
		return false, err
	}
	for _, e := range list {
		if e.FlagID == flagID && e.Status == analytics.ExperimentRunning {
			return true, nil
		}
	}
	return false, nil
}
