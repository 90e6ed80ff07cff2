package messages

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"strata/internal/analytics"
)

// Campaigns are the operations on a product's campaigns, below every door
// that changes them (the HTTP API today; the CLI and the jobs call the
// same). A campaign with two or more variants owns a flag and an
// experiment, and each change that writes them writes the campaign in the
// same metadata transaction: it is made whole or not at all.
type Campaigns struct {
	Store CampaignTx
	// Cohorts finds the cohorts an audience's conditions name; nil skips
	// the check.
	Cohorts analytics.CohortLookup
	// Now is the clock of an experiment's start; nil means time.Now.
	Now func() time.Time
}

// CampaignTx is what Campaigns writes through: the campaigns, and a
// transaction over them with their flags and experiments.
type CampaignTx interface {
	analytics.CampaignStore
	analytics.Transactor
}

var (
	// ErrTooManyActive refuses a campaign that would make the product's
	// active campaigns more than analytics.MaxActiveCampaigns.
	ErrTooManyActive = analytics.Errorf(analytics.KindConflict, "too_many_active_campaigns",
		"The product has %d active campaigns, the most it may have; pause or archive one first.", analytics.MaxActiveCampaigns)
	errExperimentRunning = analytics.Errorf(analytics.KindConflict, "experiment_running",
		"The campaign's experiment is running, so its variants and weights cannot change; pause it first.")
	errFlagKeys = analytics.Errorf(analytics.KindConflict, "flag_key_taken",
		"Every flag key this campaign's name gives (message_ and its name, numbered up to %d) is taken; rename the campaign.", flagKeyTries)
)

// flagKeyTries is how many keys a campaign's flag may try: its name's
// slug, then the slug numbered _2, _3, ….
const flagKeyTries = 50

// txRetries is how many times a change whose flag key another change took
// meanwhile is tried again.
const txRetries = 3

// Get returns the product's campaign id, or ErrNotFound.
func (s *Campaigns) Get(ctx context.Context, productID, id int64) (analytics.Campaign, error) {
	c, err := s.Store.Campaign(ctx, productID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return c, ErrNotFound
	}
	return c, err
}

// List returns the product's campaigns, oldest first.
func (s *Campaigns) List(ctx context.Context, productID int64) ([]analytics.Campaign, error) {
	return s.Store.ListCampaigns(ctx, productID)
}

// Stats counts each of the product's campaigns' users by outcome, by
// campaign id: an aggregate over every user a campaign reached.
func (s *Campaigns) Stats(ctx context.Context, productID int64) (map[int64]analytics.CampaignStats, error) {
	return s.Store.CampaignStats(ctx, productID)
}

// Delete deletes the product's campaign id with its users' states and its
// survey responses; its experiment stays.
func (s *Campaigns) Delete(ctx context.Context, productID, id int64) error {
	return s.Store.DeleteCampaign(ctx, productID, id)
}

// AutoRender reports the product's auto-render setting (off until set).
func (s *Campaigns) AutoRender(ctx context.Context, productID int64) (bool, error) {
	return s.Store.AutoRender(ctx, productID)
}

// SetAutoRender sets the product's auto-render setting.
func (s *Campaigns) SetAutoRender(ctx context.Context, productID int64, on bool) error {
	return s.Store.SetAutoRender(ctx, productID, on)
}

// Enabled reports whether the SDK should load its message renderer: the
// product's auto-render setting is on and one of its campaigns is active.
func (s *Campaigns) Enabled(ctx context.Context, productID int64) (bool, error) {
	on, err := s.Store.AutoRender(ctx, productID)
	if err != nil || !on {
		return false, err
	}
	list, err := s.Store.ListCampaigns(ctx, productID)
	if err != nil {
		return false, err
	}
	for _, c := range list {
		if c.Status == analytics.CampaignActive {
			return true, nil
		}
	}
	return false, nil
}

// Create stores c (ProductID and the validated fields set), with its flag
// and experiment when it has variants, as actor did it.
func (s *Campaigns) Create(ctx context.Context, actor string, c *analytics.Campaign) error {
	if err := s.checkCohorts(ctx, c); err != nil {
		return err
	}
	return s.change(ctx, c, func(tx analytics.MetaTx) error {
		if err := checkActivation(ctx, tx, c, ""); err != nil {
			return err
		}
		if err := s.linkExperiment(ctx, tx, actor, c); err != nil {
			return err
		}
		return tx.CreateCampaign(ctx, c)
	})
}

// Update stores c's fields, changed from a campaign whose status was
// before, and keeps its flag and experiment in step.
func (s *Campaigns) Update(ctx context.Context, actor string, c *analytics.Campaign, before analytics.CampaignStatus) error {
	if before == analytics.CampaignArchived && c.Status != analytics.CampaignArchived && c.Status != analytics.CampaignDraft {
		return analytics.Errorf(analytics.KindConflict, "invalid_transition", "An archived campaign can only go back to draft, not to %s.", c.Status)
	}
	if err := s.checkCohorts(ctx, c); err != nil {
		return err
	}
	return s.change(ctx, c, func(tx analytics.MetaTx) error {
		if err := checkActivation(ctx, tx, c, before); err != nil {
			return err
		}
		if err := s.linkExperiment(ctx, tx, actor, c); err != nil {
			return err
		}
		return tx.UpdateCampaign(ctx, c)
	})
}

// checkCohorts refuses an audience naming a cohort the product lacks.
func (s *Campaigns) checkCohorts(ctx context.Context, c *analytics.Campaign) error {
	if s.Cohorts == nil {
		return nil
	}
	return analytics.CheckCohorts(ctx, s.Cohorts, c.ProductID, "audience.conditions", c.Audience.Conditions)
}

// change runs fn, a change of c, in one transaction, again when a flag key
// it picked was taken by another change meanwhile (the key is picked from
// the keys the transaction reads, and a failed insert ends the
// transaction). Each try starts from c as it was given, and c is left as
// it was given when the change fails.
func (s *Campaigns) change(ctx context.Context, c *analytics.Campaign, fn func(analytics.MetaTx) error) error {
	given := *c
	for try := 1; ; try++ {
		*c = given
		err := s.Store.InTx(ctx, fn)
		if err != nil {
			*c = given
		}
		if !errors.Is(err, analytics.ErrDuplicate) || try == txRetries {
			return err
		}
	}
}

// checkActivation holds a product to MaxActiveCampaigns when c becomes
// active.
func checkActivation(ctx context.Context, tx analytics.MetaTx, c *analytics.Campaign, before analytics.CampaignStatus) error {
	if c.Status != analytics.CampaignActive || before == analytics.CampaignActive {
		return nil
	}
	list, err := tx.ListCampaigns(ctx, c.ProductID)
	if err != nil {
		return err
	}
	n := 0
	for _, x := range list {
		if x.Status == analytics.CampaignActive && x.ID != c.ID {
			n++
		}
	}
	if n >= analytics.MaxActiveCampaigns {
		return ErrTooManyActive
	}
	return nil
}

// linkExperiment keeps a campaign's experiment in step with its variants
// (docs/messages.md, "A/B variants"): with 2 or more, the first time it
// creates the experiment and its flag (arms named and weighted as the
// variants, primary metric message_cta_click); later it updates the flag's
// arms when they changed, which a running experiment refuses. With one
// variant the campaign keeps no experiment. An active campaign starts its
// draft experiment.
func (s *Campaigns) linkExperiment(ctx context.Context, tx analytics.MetaTx, actor string, c *analytics.Campaign) error {
	if len(c.Variants) < 2 {
		c.ExperimentID, c.FlagKey = nil, ""
		return nil
	}
	arms := make([]analytics.FlagVariant, len(c.Variants))
	for i, v := range c.Variants {
		arms[i] = analytics.FlagVariant{Key: v.Key, Weight: v.Weight}
	}
	var e analytics.Experiment
	var err error
	if c.ExperimentID != nil {
		if e, err = tx.Experiment(ctx, c.ProductID, *c.ExperimentID); err != nil && !errors.Is(err, analytics.ErrNotFound) {
			return err
		}
	}
	if e.ID == 0 {
		if e, err = createExperiment(ctx, tx, actor, c, arms); err != nil {
			return err
		}
	} else {
		f, err := tx.Flag(ctx, c.ProductID, e.FlagID)
		if errors.Is(err, analytics.ErrNotFound) {
			return analytics.ErrFlagNotFound
		} else if err != nil {
			return err
		}
		if !analytics.SameSplit(f.Variants, arms) && e.Status != analytics.ExperimentCompleted {
			if e.Status == analytics.ExperimentRunning {
				return errExperimentRunning
			}
			f.Variants = arms
			if err := f.Validate(); err != nil {
				return err
			}
			if err := tx.UpdateFlag(ctx, &f, actor); err != nil {
				return err
			}
		}
	}
	c.ExperimentID, c.FlagKey = &e.ID, e.FlagKey
	if c.Status == analytics.CampaignActive && e.Status == analytics.ExperimentDraft {
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		t := now().UTC()
		e.Status, e.StartedAt = analytics.ExperimentRunning, &t
		if err := tx.UpdateExperiment(ctx, &e); err != nil {
			return err
		}
	}
	return nil
}

// createExperiment creates a campaign's experiment and its flag, whose key
// is message_ and the campaign's slug, numbered when taken.
func createExperiment(ctx context.Context, tx analytics.MetaTx, actor string, c *analytics.Campaign, arms []analytics.FlagVariant) (analytics.Experiment, error) {
	name := []rune("Message: " + c.Name)
	if len(name) > analytics.MaxFlagName {
		name = name[:analytics.MaxFlagName]
	}
	f := analytics.Flag{ProductID: c.ProductID, Name: string(name), Description: "The variants of a message campaign.",
		Enabled: true, Rollout: 100, Variants: arms}
	key, err := freeFlagKey(ctx, tx, c)
	if err != nil {
		return analytics.Experiment{}, err
	}
	f.Key = key
	if err := f.Validate(); err != nil {
		return analytics.Experiment{}, err
	}
	if err := tx.CreateFlag(ctx, &f, actor); err != nil {
		return analytics.Experiment{}, err
	}
	e := analytics.Experiment{ProductID: c.ProductID, FlagID: f.ID, Name: string(name), PrimaryEvent: analytics.MessageCTAClick,
		SecondaryEvents: []string{analytics.MessageComplete}}
	if err := e.Validate(); err != nil {
		return e, err
	}
	if err := tx.CreateExperiment(ctx, &e); err != nil {
		return e, err
	}
	return e, nil
}

// freeFlagKey is the first key of message_<slug>, message_<slug>_2, … up
// to flagKeyTries that no flag of the product has. It is read rather than
// tried: inside a transaction an insert that fails ends it.
func freeFlagKey(ctx context.Context, tx analytics.MetaTx, c *analytics.Campaign) (string, error) {
	base := analytics.Slug("message " + c.Name)
	if len(base) > analytics.MaxFlagKey-4 {
		base = strings.TrimRight(base[:analytics.MaxFlagKey-4], "_")
	}
	flags, err := tx.ListFlags(ctx, c.ProductID)
	if err != nil {
		return "", err
	}
	taken := make(map[string]bool, len(flags))
	for _, f := range flags {
		taken[f.Key] = true
	}
	for n := 1; n <= flagKeyTries; n++ {
		key := base
		if n > 1 {
			key = base + "_" + strconv.Itoa(n)
		}
		if !taken[key] {
			return key, nil
		}
	}
	return "", errFlagKeys
}
