package messages

import (
	"context"
	"errors"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

// failingTx fails the last write of a campaign change, the campaign
// itself, as a failing disk would after the flag and the experiment were
// written.
type failingTx struct{ analytics.MetaTx }

var errDisk = errors.New("the disk failed")

func (failingTx) CreateCampaign(context.Context, *analytics.Campaign) error { return errDisk }
func (failingTx) UpdateCampaign(context.Context, *analytics.Campaign) error { return errDisk }

func abTest(productID int64, name string, status analytics.CampaignStatus) analytics.Campaign {
	return analytics.Campaign{ProductID: productID, Name: name, Status: status,
		Trigger: analytics.Trigger{Event: "$pageview"}, Cap: analytics.FrequencyCap{Kind: analytics.CapOnce, Count: 1},
		Variants: []analytics.CampaignVariant{
			{Key: "control", Weight: 50, Steps: []analytics.Step{{Kind: "banner", Title: "A", BodyFormat: "text", Placement: "top"}}},
			{Key: "treatment", Weight: 50, Steps: []analytics.Step{{Kind: "banner", Title: "B", BodyFormat: "text", Placement: "top"}}},
		}}
}

// TestCampaignChangesAreWhole creates and changes campaigns with variants
// through Campaigns on a real DuckDB store: a campaign comes with its flag
// and experiment; when the campaign's own write fails after the flag and
// the experiment were written, none of the three is left, and the campaign
// is handed back as it was given; a later change of its variants that
// fails leaves the flag's arms as they were.
func TestCampaignChangesAreWhole(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	count := func() (flags, experiments, campaigns int) {
		fl, err1 := st.ListFlags(ctx, p.ID)
		ex, err2 := st.ListExperiments(ctx, p.ID)
		ca, err3 := st.ListCampaigns(ctx, p.ID)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		return len(fl), len(ex), len(ca)
	}

	failing := &Campaigns{Store: duckdbtest.TxWrapped{Store: st, Wrap: func(tx analytics.MetaTx) analytics.MetaTx { return failingTx{tx} }}}
	c := abTest(p.ID, "Welcome", analytics.CampaignActive)
	if err := failing.Create(ctx, "test", &c); !errors.Is(err, errDisk) {
		t.Fatalf("create with a failing disk: %v", err)
	}
	if f, e, n := count(); f+e+n != 0 {
		t.Errorf("a failed create left %d flags, %d experiments, %d campaigns", f, e, n)
	}
	if c.ExperimentID != nil || c.FlagKey != "" || c.ID != 0 {
		t.Errorf("a failed create changed the campaign: %+v", c)
	}

	// A flag holds the key the name gives: the campaign's takes the next.
	taken := analytics.Flag{ProductID: p.ID, Key: "message_welcome", Name: "Mine", Enabled: true, Rollout: 100}
	if err := st.CreateFlag(ctx, &taken, "test"); err != nil {
		t.Fatal(err)
	}
	ok := &Campaigns{Store: st}
	if err := ok.Create(ctx, "test", &c); err != nil {
		t.Fatal(err)
	}
	if f, e, n := count(); f != 2 || e != 1 || n != 1 {
		t.Errorf("a create left %d flags, %d experiments, %d campaigns; want 2, 1, 1", f, e, n)
	}
	exp, err := st.Experiment(ctx, p.ID, *c.ExperimentID)
	if err != nil || c.FlagKey != "message_welcome_2" || exp.FlagKey != c.FlagKey || exp.Status != analytics.ExperimentRunning {
		t.Errorf("the campaign's experiment: %+v %v (campaign flag %q)", exp, err, c.FlagKey)
	}

	// Paused, then a new split that fails to store: the flag keeps its arms.
	exp.Status = analytics.ExperimentPaused
	if err := st.UpdateExperiment(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	changed := c
	changed.Variants = []analytics.CampaignVariant{c.Variants[0], c.Variants[1]}
	changed.Variants[0].Weight, changed.Variants[1].Weight = 20, 80
	if err := failing.Update(ctx, "test", &changed, c.Status); !errors.Is(err, errDisk) {
		t.Fatalf("update with a failing disk: %v", err)
	}
	f, err := st.Flag(ctx, p.ID, exp.FlagID)
	if err != nil || f.Variants[0].Weight != 50 {
		t.Errorf("a failed update changed the flag's arms: %+v %v", f.Variants, err)
	}
	if err := ok.Update(ctx, "test", &changed, c.Status); err != nil {
		t.Fatal(err)
	}
	if f, err := st.Flag(ctx, p.ID, exp.FlagID); err != nil || f.Variants[0].Weight != 20 {
		t.Errorf("an update did not change the flag's arms: %+v %v", f.Variants, err)
	}
}
