package experiment

import (
	"context"
	"errors"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

// code is the API code of an analytics error, or "" for another error.
func code(err error) string {
	var e *analytics.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TestFlagRules runs the flag operations on a real DuckDB store: a new
// flag's defaults, the key that cannot be taken twice nor changed, and the
// arms that cannot change, nor the flag go, while an experiment on it runs
// (a change of anything else can), each refusal leaving the flag as it was.
func TestFlagRules(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	flags, experiments := &Flags{Store: st}, &Service{Store: st}
	str := func(s string) *string { return &s }

	f, err := flags.Create(ctx, "test", p.ID, FlagFields{Name: str("New checkout")})
	if err != nil {
		t.Fatal(err)
	}
	if f.ID == 0 || f.Key != analytics.Slug("New checkout") || f.Enabled || f.Rollout != 100 || f.Variants == nil || len(f.Variants) != 0 {
		t.Errorf("a new flag's defaults: %+v", f)
	}
	if _, err := flags.Create(ctx, "test", p.ID, FlagFields{Name: str("New checkout")}); code(err) != "flag_key_taken" {
		t.Errorf("a second flag with the key: %v", err)
	}
	if _, err := flags.Create(ctx, "test", p.ID, FlagFields{Name: str("Bad"), Rollout: new(150.0)}); code(err) != "invalid_request" {
		t.Errorf("a rollout of 150: %v", err)
	}
	if _, err := flags.Update(ctx, "test", p.ID, f.ID, FlagFields{Key: str("other")}); code(err) != "invalid_request" {
		t.Errorf("a change of key: %v", err)
	}
	if _, err := flags.Update(ctx, "test", p.ID, f.ID+100, FlagFields{Name: str("x")}); !errors.Is(err, analytics.ErrFlagNotFound) {
		t.Errorf("an update of a missing flag: %v", err)
	}

	arms := []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}
	if f, err = flags.Update(ctx, "test", p.ID, f.ID, FlagFields{Key: str(f.Key), Variants: arms}); err != nil || len(f.Variants) != 2 {
		t.Fatalf("arms on a flag without an experiment: %+v %v", f, err)
	}
	e := analytics.Experiment{ProductID: p.ID, Name: "Checkout", SecondaryEvents: []string{}}
	if err := experiments.Create(ctx, "test", &e, &f.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := experiments.Act(ctx, p.ID, e.ID, "start"); err != nil {
		t.Fatal(err)
	}
	skewed := []analytics.FlagVariant{{Key: "control", Weight: 90}, {Key: "treatment", Weight: 10}}
	if _, err := flags.Update(ctx, "test", p.ID, f.ID, FlagFields{Variants: skewed}); code(err) != "experiment_running" {
		t.Errorf("new weights under a running experiment: %v", err)
	}
	if err := flags.Delete(ctx, "test", p.ID, f.ID); code(err) != "experiment_running" {
		t.Errorf("a delete under a running experiment: %v", err)
	}
	if got, err := st.Flag(ctx, p.ID, f.ID); err != nil || got.Variants[0].Weight != 50 {
		t.Errorf("the refusals changed the flag: %+v %v", got, err)
	}
	if f, err = flags.Update(ctx, "test", p.ID, f.ID, FlagFields{Name: str("Renamed"), Variants: arms}); err != nil || f.Name != "Renamed" {
		t.Errorf("a rename with the same arms under a running experiment: %+v %v", f, err)
	}

	if _, err := experiments.Act(ctx, p.ID, e.ID, "pause"); err != nil {
		t.Fatal(err)
	}
	if f, err = flags.Update(ctx, "test", p.ID, f.ID, FlagFields{Variants: skewed}); err != nil || f.Variants[0].Weight != 90 {
		t.Errorf("new weights once paused: %+v %v", f, err)
	}
	if err := flags.Delete(ctx, "test", p.ID, f.ID); err != nil {
		t.Errorf("a delete once paused: %v", err)
	}
	if err := flags.Delete(ctx, "test", p.ID, f.ID); !errors.Is(err, analytics.ErrFlagNotFound) {
		t.Errorf("a second delete: %v", err)
	}
}

// TestFlagReads checks the reads the API, the SDK configuration and the
// CLI share: a flag of another product or that never existed is
// flag_not_found, and so is its trail; the trail outlives the flag; and
// the SDK's view gives a flag its open experiment over a completed one,
// else its latest completed one.
func TestFlagReads(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	flags, experiments := &Flags{Store: st}, &Service{Store: st}
	other, err := st.CreateProduct(ctx, p.WorkspaceID, "Other")
	if err != nil {
		t.Fatal(err)
	}

	first := analytics.Experiment{ProductID: p.ID, Name: "Checkout", SecondaryEvents: []string{}}
	if err := experiments.Create(ctx, "test", &first, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := experiments.Act(ctx, p.ID, first.ID, "start"); err != nil {
		t.Fatal(err)
	}
	if _, err := experiments.ApplyWinner(ctx, "test", p.ID, first.ID, new("treatment")); err != nil {
		t.Fatal(err)
	}
	sdk := func() map[string]int64 {
		t.Helper()
		list, err := flags.ForSDK(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, f := range list {
			if f.Experiment == nil || len(f.Variants) != 2 {
				t.Fatalf("the SDK's flag %+v", f)
			}
			out[f.Key+" "+f.Experiment.Status] = f.Experiment.ID
		}
		return out
	}
	if got := sdk(); len(got) != 1 || got["checkout completed"] != first.ID {
		t.Errorf("a flag with a completed experiment: %v", got)
	}
	second := analytics.Experiment{ProductID: p.ID, Name: "Checkout again", SecondaryEvents: []string{}}
	if err := experiments.Create(ctx, "test", &second, &first.FlagID, nil); err != nil {
		t.Fatal(err)
	}
	if got := sdk(); len(got) != 1 || got["checkout draft"] != second.ID {
		t.Errorf("a flag with a draft after a completed experiment: %v", got)
	}

	if f, err := flags.Get(ctx, p.ID, first.FlagID); err != nil || f.Key != "checkout" {
		t.Errorf("Get: %+v %v", f, err)
	}
	for _, c := range []struct {
		name          string
		product, flag int64
	}{{"another product's", other.ID, first.FlagID}, {"a missing", p.ID, first.FlagID + 100}} {
		if _, err := flags.Get(ctx, c.product, c.flag); !errors.Is(err, analytics.ErrFlagNotFound) {
			t.Errorf("Get of %s flag: %v", c.name, err)
		}
		if _, err := flags.Changes(ctx, c.product, c.flag); !errors.Is(err, analytics.ErrFlagNotFound) {
			t.Errorf("Changes of %s flag: %v", c.name, err)
		}
	}
	if list, err := experiments.List(ctx, other.ID); err != nil || len(list) != 0 {
		t.Errorf("another product's experiments: %+v %v", list, err)
	}
	if _, err := experiments.Get(ctx, other.ID, first.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of another product's experiment: %v", err)
	}
	if err := flags.Delete(ctx, "test", p.ID, first.FlagID); err != nil {
		t.Fatal(err)
	}
	if changes, err := flags.Changes(ctx, p.ID, first.FlagID); err != nil || len(changes) != 3 || changes[0].Action != "deleted" {
		t.Errorf("the trail of a deleted flag: %+v %v", changes, err)
	}
}
