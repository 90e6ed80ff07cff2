package analytics

import (
	"context"
	"strconv"

	"time"
	"unicode/utf8"
)

// ExperimentStatus is where an experiment is in its life: draft → running
// ⇄ paused → completed (docs/flags.md, "Experiments").
type ExperimentStatus string

// The states of an experiment.
const (
	ExperimentDraft     ExperimentStatus = "draft"
	ExperimentRunning   ExperimentStatus = "running"
	ExperimentPaused    ExperimentStatus = "paused"
	ExperimentCompleted ExperimentStatus = "completed"
)

// Limits of an experiment.
const (
	MaxHoldout          = 25 // percent of users
	MaxSecondaryMetrics = 10
	MinArms             = 2
)

// Experiment tests the arms of one flag against each other: users are
// split by the flag's weights, a holdout share of them is kept out and
// sees control, and the results compare each arm's conversions on the
// primary metric with control's.
type Experiment struct {
	ID        int64  `json:"id"`
	ProductID int64  `json:"productId"`
	FlagID    int64  `json:"flagId"`
	FlagKey   string `json:"flagKey"`
	Name      string `json:"name"`
	// Holdout is the percentage of users kept out of the experiment,
	// 0–25 with at most two decimals; they see control and count for no
	// arm.
	Holdout float64 `json:"holdout"`
	// PrimaryEvent is the conversion event; "" counts the events that
	// carry the property converted = 1.
	PrimaryEvent    string           `json:"primaryEvent"`
	SecondaryEvents []string         `json:"secondaryEvents"`
	StartDate       *time.Time       `json:"startDate"`
	EndDate         *time.Time       `json:"endDate"`
	Status          ExperimentStatus `json:"status"`
	// PauseReason says why a paused experiment was paused: "manual", or
	// "sample_ratio_mismatch" by the automatic check.
	PauseReason string `json:"pauseReason"`
	// Winner is the arm applied when the experiment was completed.
	Winner    string    `json:"winner"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Validate checks an experiment's own fields, in field order.
func (e *Experiment) Validate() error {
	if err := validName(e.Name); err != nil {
		return err
	}
	if e.Holdout < 0 || e.Holdout > MaxHoldout || !hundredths(e.Holdout) {
		return InvalidField("holdout", "must be a percentage from 0 to %d with at most two decimals, not %v", MaxHoldout, e.Holdout)
	}
	if err := validEventName("primaryEvent", e.PrimaryEvent, true); err != nil {
		return err
	}
	if len(e.SecondaryEvents) > MaxSecondaryMetrics {
		return InvalidField("secondaryEvents", "must list at most %d events, not %d", MaxSecondaryMetrics, len(e.SecondaryEvents))
	}
	for i, ev := range e.SecondaryEvents {
		if err := validEventName("secondaryEvents["+strconv.Itoa(i)+"]", ev, false); err != nil {
			return err
		}
	}
	if e.StartDate != nil && e.EndDate != nil && e.EndDate.Before(*e.StartDate) {
		return InvalidField("endDate", "must not be before startDate")
	}
	return nil
}

// validEventName checks a metric's event name: 1–255 characters, or empty
// where empty means the default metric.
func validEventName(field, name string, emptyOK bool) error {
	if name == "" && emptyOK {
		return nil
	}
	if n := utf8.RuneCountInString(name); n < 1 || n > 255 {
		return InvalidField(field, "must be an event name of 1 to 255 characters, not %d", n)
	}
	return nil
}

// CheckArms checks that a flag can carry an experiment: 2 to
// MaxFlagVariants arms (its weights were checked with the flag).
func CheckArms(f *Flag) error {
	if len(f.Variants) < MinArms {
		return InvalidField("variants", "an experiment needs %d to %d arms, and the flag %q has %d", MinArms, MaxFlagVariants, f.Key, len(f.Variants))
	}
	return nil
}

// ExperimentStore keeps the experiments of products. Every method is
// scoped to one product. A flag carries at most one experiment that is not
// completed.
type ExperimentStore interface {
	// CreateExperiment stores e (ProductID, FlagID and the validated
	// fields set) as a draft and fills in its ID, FlagKey and times. A
	// flag of another product is ErrNotFound; a flag that already has an
	// experiment not completed is ErrDuplicate.
	CreateExperiment(ctx context.Context, e *Experiment) error
	// Experiment returns one experiment of a product, or ErrNotFound.
	Experiment(ctx context.Context, productID, id int64) (Experiment, error)
	// ListExperiments returns a product's experiments, oldest first.
	ListExperiments(ctx context.Context, productID int64) ([]Experiment, error)
	// UpdateExperiment stores e's fields as they are now (the caller
	// checked the transition), or returns ErrNotFound.
	UpdateExperiment(ctx context.Context, e *Experiment) error
}
