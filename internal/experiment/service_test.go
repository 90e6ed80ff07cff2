package experiment

import (
	"context"
	"errors"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
	"strata/internal/store/duckdb/duckdbtest"
)

// failingTx fails the last write of an experiment change, the experiment
// itself, as a failing disk would after the flag was written.
type failingTx struct{ analytics.MetaTx }

var errDisk = errors.New("the disk failed")

func (failingTx) CreateExperiment(context.Context, *analytics.Experiment) error { return errDisk }
func (failingTx) UpdateExperiment(context.Context, *analytics.Experiment) error { return errDisk }

// failingStore is st with every transaction's experiment writes failing.
func failingStore(st *duckdb.Store) duckdbtest.TxWrapped {
	return duckdbtest.TxWrapped{Store: st, Wrap: func(tx analytics.MetaTx) analytics.MetaTx { return failingTx{tx} }}
}

// TestChangesWithTheirFlag runs the changes that write an experiment and
// its flag on a real DuckDB store, first with the experiment's write
// failing: an experiment created with its flag leaves no flag behind, and
// a winner applied leaves the flag's arms, rollout and history as they
// were and the experiment running. Then both succeed.
func TestChangesWithTheirFlag(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	failing, ok := &Service{Store: failingStore(st)}, &Service{Store: st}

	e := analytics.Experiment{ProductID: p.ID, Name: "Checkout copy", SecondaryEvents: []string{}}
	if err := failing.Create(ctx, "test", &e, nil, nil); !errors.Is(err, errDisk) {
		t.Fatalf("create with a failing disk: %v", err)
	}
	if flags, err := st.ListFlags(ctx, p.ID); err != nil || len(flags) != 0 {
		t.Errorf("a failed create left flags %+v (%v)", flags, err)
	}
	if e.ID != 0 || e.FlagID != 0 {
		t.Errorf("a failed create changed the experiment: %+v", e)
	}
	if err := ok.Create(ctx, "test", &e, nil, []analytics.FlagVariant{{Key: "control", Weight: 30}, {Key: "short", Weight: 70}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ok.Act(ctx, p.ID, e.ID, "start"); err != nil {
		t.Fatal(err)
	}
	before, _ := st.FlagChanges(ctx, p.ID, e.FlagID)

	winner := "short"
	if _, err := failing.ApplyWinner(ctx, "test", p.ID, e.ID, &winner); !errors.Is(err, errDisk) {
		t.Fatalf("apply winner with a failing disk: %v", err)
	}
	f, err := st.Flag(ctx, p.ID, e.FlagID)
	after, _ := st.FlagChanges(ctx, p.ID, e.FlagID)
	got, _ := st.Experiment(ctx, p.ID, e.ID)
	if err != nil || f.Variants[1].Weight != 70 || len(after) != len(before) || got.Status != analytics.ExperimentRunning {
		t.Errorf("a failed apply left the flag %+v (%d history entries, %d before), the experiment %s", f.Variants, len(after), len(before), got.Status)
	}

	done, err := ok.ApplyWinner(ctx, "test", p.ID, e.ID, &winner)
	if err != nil || done.Status != analytics.ExperimentCompleted || done.Winner != winner {
		t.Fatalf("apply winner: %+v %v", done, err)
	}
	f, _ = st.Flag(ctx, p.ID, e.FlagID)
	after, _ = st.FlagChanges(ctx, p.ID, e.FlagID)
	if f.Variants[0].Weight != 0 || f.Variants[1].Weight != 100 || len(after) != len(before)+1 {
		t.Errorf("after the winner: flag %+v, %d history entries (%d before)", f.Variants, len(after), len(before))
	}
	if _, err := ok.Act(ctx, p.ID, e.ID, "pause"); err == nil {
		t.Error("a completed experiment was paused")
	}
}

// TestPauseForSampleRatio runs the sample-ratio job's operation on a real
// DuckDB store: a check that matches is recorded and pauses nothing; a
// mismatch pauses a running experiment for that reason; an experiment
// already paused by hand stays paused by hand (the check is still
// recorded); a completed one is never reopened; an experiment that is gone
// is no error.
func TestPauseForSampleRatio(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	svc := &Service{Store: st}
	running := func(name string) analytics.Experiment {
		t.Helper()
		e := analytics.Experiment{ProductID: p.ID, Name: name, SecondaryEvents: []string{}}
		if err := svc.Create(ctx, "test", &e, nil, nil); err != nil {
			t.Fatal(err)
		}
		e, err := svc.Act(ctx, p.ID, e.ID, "start")
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	check := func(mismatch bool) analytics.SampleRatio {
		pv := 0.5
		if mismatch {
			pv = 0.00001
		}
		return analytics.SampleRatio{PValue: pv, Mismatch: mismatch, Arms: []analytics.SampleRatioArm{}}
	}
	state := func(e analytics.Experiment) analytics.Experiment {
		t.Helper()
		got, err := st.Experiment(ctx, p.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	e := running("Matches")
	if paused, err := svc.PauseForSampleRatio(ctx, p.ID, e.ID, check(false)); err != nil || paused {
		t.Fatalf("a matching check: paused %v, %v", paused, err)
	}
	if got := state(e); got.Status != analytics.ExperimentRunning || got.SampleRatio == nil || got.SampleRatio.PValue != 0.5 {
		t.Errorf("after a matching check: %s, check %+v", got.Status, got.SampleRatio)
	}
	if paused, err := svc.PauseForSampleRatio(ctx, p.ID, e.ID, check(true)); err != nil || !paused {
		t.Fatalf("a mismatch: paused %v, %v", paused, err)
	}
	if got := state(e); got.Status != analytics.ExperimentPaused || got.PauseReason != analytics.PauseSampleRatio || !got.SampleRatio.Mismatch {
		t.Errorf("after a mismatch: %s (%q), check %+v", got.Status, got.PauseReason, got.SampleRatio)
	}

	byHand := running("By hand")
	if _, err := svc.Act(ctx, p.ID, byHand.ID, "pause"); err != nil {
		t.Fatal(err)
	}
	if paused, err := svc.PauseForSampleRatio(ctx, p.ID, byHand.ID, check(true)); err != nil || paused {
		t.Fatalf("a mismatch on a paused experiment: paused %v, %v", paused, err)
	}
	if got := state(byHand); got.Status != analytics.ExperimentPaused || got.PauseReason != analytics.PauseManual || got.SampleRatio == nil {
		t.Errorf("a paused experiment after a mismatch: %s (%q), check %+v", got.Status, got.PauseReason, got.SampleRatio)
	}

	done := running("Done")
	winner := "control"
	if _, err := svc.ApplyWinner(ctx, "test", p.ID, done.ID, &winner); err != nil {
		t.Fatal(err)
	}
	if paused, err := svc.PauseForSampleRatio(ctx, p.ID, done.ID, check(true)); err != nil || paused {
		t.Fatalf("a mismatch on a completed experiment: paused %v, %v", paused, err)
	}
	if got := state(done); got.Status != analytics.ExperimentCompleted {
		t.Errorf("a completed experiment after a mismatch: %s", got.Status)
	}

	if paused, err := svc.PauseForSampleRatio(ctx, p.ID, done.ID+100, check(true)); err != nil || paused {
		t.Errorf("a mismatch on a missing experiment: paused %v, %v", paused, err)
	}
}
