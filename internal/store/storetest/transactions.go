package storetest

import (
	"context"
	"errors"
	"testing"

	"strata/internal/analytics"
)

// testTransactions checks InTx, what a change that writes several
// entities runs in: a campaign with its flag and experiment is stored
// whole when the change succeeds; when it fails part-way, by the caller's
// error or by a statement the database refused, nothing of it is left
// (no flag, no flag history, no experiment, no campaign), and the store
// goes on working. Inside, reads see the change's own writes.
func testTransactions(ctx context.Context, t *testing.T, s Meta) {
	p := products(ctx, t, s, "P")[0]
	arms := []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}
	// change writes a flag, its experiment and a campaign naming both, then
	// returns what last says.
	change := func(key string, last func(tx analytics.MetaTx) error) error {
		return s.InTx(ctx, func(tx analytics.MetaTx) error {
			f := analytics.Flag{ProductID: p.ID, Key: key, Name: key, Enabled: true, Rollout: 100, Variants: arms}
			if err := tx.CreateFlag(ctx, &f, "test"); err != nil {
				return err
			}
			if got, err := tx.Flag(ctx, p.ID, f.ID); err != nil || got.Key != key {
				t.Errorf("%s: the change does not read its own flag: %+v %v", key, got, err)
			}
			e := analytics.Experiment{ProductID: p.ID, FlagID: f.ID, Name: key, SecondaryEvents: []string{}}
			if err := tx.CreateExperiment(ctx, &e); err != nil {
				return err
			}
			c := analytics.Campaign{ProductID: p.ID, Name: key, Status: analytics.CampaignDraft,
				Trigger: analytics.Trigger{Event: "$pageview"}, Cap: analytics.FrequencyCap{Kind: analytics.CapOnce, Count: 1},
				Variants: []analytics.CampaignVariant{
					{Key: "control", Weight: 50, Steps: []analytics.Step{{Kind: "banner", Title: "A", BodyFormat: "text", Placement: "top"}}},
					{Key: "treatment", Weight: 50, Steps: []analytics.Step{{Kind: "banner", Title: "B", BodyFormat: "text", Placement: "top"}}},
				},
				ExperimentID: &e.ID, FlagKey: f.Key}
			if err := tx.CreateCampaign(ctx, &c); err != nil {
				return err
			}
			return last(tx)
		})
	}
	count := func() (flags, experiments, campaigns, history int) {
		fl, err1 := s.ListFlags(ctx, p.ID)
		ex, err2 := s.ListExperiments(ctx, p.ID)
		ca, err3 := s.ListCampaigns(ctx, p.ID)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		for _, f := range fl {
			h, err := s.FlagChanges(ctx, p.ID, f.ID)
			if err != nil {
				t.Fatal(err)
			}
			history += len(h)
		}
		return len(fl), len(ex), len(ca), history
	}

	failed := errors.New("failed after the campaign")
	if err := change("first", func(analytics.MetaTx) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failing change returned %v", err)
	}
	if f, e, c, h := count(); f+e+c+h != 0 {
		t.Errorf("a change that failed part-way left %d flags (%d history entries), %d experiments, %d campaigns", f, h, e, c)
	}

	if err := change("kept", func(analytics.MetaTx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if f, e, c, h := count(); f != 1 || e != 1 || c != 1 || h != 1 {
		t.Errorf("a change that succeeded left %d flags (%d history entries), %d experiments, %d campaigns; want one of each", f, h, e, c)
	}

	// The database refuses a statement part-way: a second flag with a key
	// the product has. The first flag of that change goes too.
	err := change("second", func(tx analytics.MetaTx) error {
		return tx.CreateFlag(ctx, &analytics.Flag{ProductID: p.ID, Key: "kept", Name: "Again", Enabled: true, Rollout: 100, Variants: arms}, "test")
	})
	if !errors.Is(err, analytics.ErrDuplicate) {
		t.Errorf("a taken key part-way: %v; want ErrDuplicate", err)
	}
	if f, e, c, h := count(); f != 1 || e != 1 || c != 1 || h != 1 {
		t.Errorf("a change the database refused part-way left %d flags (%d history entries), %d experiments, %d campaigns; want only the earlier change's", f, h, e, c)
	}

	// A panic rolls back too, and reaches the caller.
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not reach the caller")
			}
		}()
		change("panicked", func(analytics.MetaTx) error { panic("part-way") })
	}()
	if f, _, _, _ := count(); f != 1 {
		t.Errorf("a change that panicked left %d flags; want the earlier change's only", f)
	}
}
