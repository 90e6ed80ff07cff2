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
	Winner string `json:"winner"`
	// StartedAt is when the experiment was first started.
	StartedAt *time.Time `json:"startedAt"`
	// SampleRatio is the latest sample-ratio check that had enough
	// exposures to count, or nil.
	SampleRatio *SampleRatio `json:"sampleRatio"`
	CreatedAt   time.Time    `json:"createdAt"`
	UpdatedAt   time.Time    `json:"updatedAt"`
}

// Validate checks an experiment's own fields, in field order.
func (e *Experiment) Validate() error {
	if err := validName(e.Name); err != nil {
		return err
	}
	if err := validPercent("holdout", e.Holdout, MaxHoldout); err != nil {
		return err
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
	// RunningExperiments returns the running experiments of every
	// product.
	RunningExperiments(ctx context.Context) ([]Experiment, error)
	// RecordSampleRatio stores the latest sample-ratio check of an
	// experiment and, with pause, pauses it for the mismatch if it is
	// still running; paused reports whether it did.
	RecordSampleRatio(ctx context.Context, productID, id int64, check SampleRatio, pause bool) (paused bool, err error)
}

// PauseSampleRatio is the pause reason of an experiment the sample-ratio
// check paused; PauseManual, of one paused by hand.
const (
	PauseSampleRatio = "sample_ratio_mismatch"
	PauseManual      = "manual"
)

// LeaseStore lets one node of several run a periodic job at a time.
type LeaseStore interface {
	// AcquireLease takes or renews the lease name for holder until
	// expires, unless another holder has it unexpired at now, and reports
	// whether holder has it.
	AcquireLease(ctx context.Context, name, holder string, now, expires time.Time) (bool, error)
}

// SampleRatio is the outcome of one sample-ratio check: the users exposed
// to each arm against the shares the flag's weights call for, and the
// p-value of Pearson's chi-square test of the difference
// (docs/experiments.md). Mismatch (p below SRMThreshold) pauses a running
// experiment.
type SampleRatio struct {
	CheckedAt time.Time        `json:"checkedAt"`
	PValue    float64          `json:"pValue"`
	Mismatch  bool             `json:"mismatch"`
	Arms      []SampleRatioArm `json:"arms"`
}

// SampleRatioArm is one arm in a sample-ratio check: Observed and Expected
// are shares of the exposed users, 0–1.
type SampleRatioArm struct {
	Variant  string  `json:"variant"`
	Exposed  int64   `json:"exposed"`
	Observed float64 `json:"observed"`
	Expected float64 `json:"expected"`
}

// Experiment analysis constants (docs/experiments.md).
const (
	// SRMThreshold is the p-value below which a sample-ratio check
	// reports a mismatch and pauses the experiment.
	SRMThreshold = 0.001
	// MinExposures is how many exposed users (all arms together) a
	// sample-ratio check needs before it may pause an experiment, and how
	// many each arm needs before its results are read.
	MinExposures = 100
)

// ExperimentQuery asks for the raw counts of an experiment's results:
// exposed users per arm, and per metric the users who converted after
// their first exposure. Exposures are the $exposure events whose
// experiment_id property is ExperimentID.
type ExperimentQuery struct {
	EventRange
	ExperimentID int64
	// Metrics are the conversion events, primary first; "" is the events
	// carrying the property converted = 1.
	Metrics []string
}

// ExperimentRow is one cell of an experiment's counts: Users whose first
// exposure (Metric -1) or first conversion on Metrics[Metric] after it
// fell on the day Day of the scope's zone (written as a UTC midnight), by
// the variant their exposures named. Users whose exposures named more than
// one variant have Mixed set and Variant empty; they are counted apart and
// never converted.
type ExperimentRow struct {
	Metric  int
	Variant string
	Mixed   bool
	Day     time.Time
	Users   int64
}

// ExposureEvent is the event the SDKs send the first time a user sees a
// flag in a session, with the properties flag, experiment_id and variant.
const ExposureEvent = "$exposure"

// ExposureOf is the filter of an experiment's exposures: its id in the
// experiment_id property, as a number or its text.
func ExposureOf(id int64) Filter {
	return Filter{Property: Property{Key: "experiment_id"}, Operator: OpEq, Value: float64(id)}
}

// Converted is the default conversion: the events carrying converted = 1
// (the number, or its text).
var Converted = Filter{Property: Property{Key: "converted"}, Operator: OpEq, Value: 1.0}
