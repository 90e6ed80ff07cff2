package experiment

import (
	"context"
	"errors"
	"testing"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

// failingStore is a real store whose transactions fail at the last write
// of an experiment change, the experiment itself, as a failing disk would
// after the flag was written.
type failingStore struct{ *duckdb.Store }

type failingTx struct{ analytics.MetaTx }

var errDisk = errors.New("the disk failed")

func (failingTx) CreateExperiment(context.Context, *analytics.Experiment) error { return errDisk }
func (failingTx) UpdateExperiment(context.Context, *analytics.Experiment) error { return errDisk }

func (f failingStore) InTx(ctx context.Context, fn func(analytics.MetaTx) error) error {
	return f.Store.InTx(ctx, func(tx analytics.MetaTx) error { return fn(failingTx{tx}) })
}

// TestChangesWithTheirFlag runs the changes that write an experiment and
// its flag on a real DuckDB store, first with the experiment's write
// failing: an experiment created with its flag leaves no flag behind, and
// a winner applied leaves the flag's arms, rollout and history as they
// were and the experiment running. Then both succeed.
func TestChangesWithTheirFlag(t *testing.T) {
	ctx := context.Background()
	st, err := duckdb.Open(ctx, t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, _ := st.CreateWorkspace(ctx, "W")
	p, _ := st.CreateProduct(ctx, ws.ID, "P")
	failing, ok := &Service{Store: failingStore{st}}, &Service{Store: st}

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
