package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"strata/internal/analytics"
)

// testFlags checks flag storage: the fields round-trip exactly (rollout
// and weights with two decimals, ordered arms, payloads), keys are unique
// per product, every method is scoped to its product, and the audit trail
// records each write with what changed, and nothing for a write that
// changed nothing.
func testFlags(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {

	f := analytics.Flag{ProductID: a.ID, Key: "pricing_copy_test", Name: "Pricing copy test", Description: "Which headline sells",
		Enabled: true, Rollout: 12.34, Variants: []analytics.FlagVariant{
			{Key: "control", Weight: 33.33}, {Key: "treatment", Weight: 66.67, Payload: json.RawMessage(`{"headline":"Ünïcode 😀"}`)}}}
	if err := s.CreateFlag(ctx, &f, "token st_tok_abcd…"); err != nil || f.ID == 0 || f.CreatedAt.IsZero() {
		t.Fatalf("create: %v %+v", err, f)
	}
	got, err := s.Flag(ctx, a.ID, f.ID)
	if err != nil || got.Key != f.Key || got.Name != f.Name || got.Description != f.Description || !got.Enabled ||
		got.Rollout != 12.34 || len(got.Variants) != 2 || got.Variants[0].Key != "control" || got.Variants[0].Weight != 33.33 || got.Variants[0].Payload != nil ||
		got.Variants[1].Weight != 66.67 || string(got.Variants[1].Payload) != `{"headline":"Ünïcode 😀"}` || !got.CreatedAt.Equal(f.CreatedAt) {
		t.Errorf("read back: %v %+v", err, got)
	}
	if _, err := s.Flag(ctx, b.ID, f.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's flag: %v, want ErrNotFound", err)
	}

	// The key is unique in its product, not across products.
	dup := analytics.Flag{ProductID: a.ID, Key: f.Key, Name: "Again"}
	if err := s.CreateFlag(ctx, &dup, "x"); !errors.Is(err, analytics.ErrDuplicate) {
		t.Errorf("a taken key: %v, want ErrDuplicate", err)
	}
	other := analytics.Flag{ProductID: b.ID, Key: f.Key, Name: "Same key elsewhere", Rollout: 100}
	if err := s.CreateFlag(ctx, &other, "x"); err != nil {
		t.Errorf("the same key in another product: %v", err)
	}
	onOff := analytics.Flag{ProductID: a.ID, Key: "new_onboarding", Name: "New onboarding", Rollout: 30}
	if err := s.CreateFlag(ctx, &onOff, "x"); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListFlags(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != f.ID || list[1].ID != onOff.ID || list[1].Variants == nil || len(list[1].Variants) != 0 {
		t.Errorf("list: %v %+v", err, list)
	}

	// An update changes what may change, never the key, and records the fields that changed.
	up := f
	up.Key, up.Rollout, up.Enabled = "renamed", 100, false
	up.Variants = []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}
	if err := s.UpdateFlag(ctx, &up, "user ana@example.com"); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Flag(ctx, a.ID, f.ID)
	if got.Key != "pricing_copy_test" || got.Rollout != 100 || got.Enabled || got.Variants[0].Weight != 50 || got.Variants[1].Payload != nil {
		t.Errorf("after update: %+v", got)
	}
	same := got
	if err := s.UpdateFlag(ctx, &same, "user ana@example.com"); err != nil {
		t.Fatal(err)
	}
	wrong := got
	wrong.ProductID = b.ID
	if err := s.UpdateFlag(ctx, &wrong, "x"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("update through another product: %v, want ErrNotFound", err)
	}
	if err := s.DeleteFlag(ctx, b.ID, f.ID, "x"); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("delete through another product: %v, want ErrNotFound", err)
	}
	if err := s.DeleteFlag(ctx, a.ID, f.ID, "user bo@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Flag(ctx, a.ID, f.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}

	trail, err := s.FlagChanges(ctx, a.ID, f.ID)
	if err != nil || len(trail) != 3 {
		t.Fatalf("trail: %v, %d entries, want 3 (create, one real update, delete): %+v", err, len(trail), trail)
	}
	del, upd, created := trail[0], trail[1], trail[2]
	if created.Action != "created" || created.Actor != "token st_tok_abcd…" || len(created.Changes) != 7 || created.FlagKey != "pricing_copy_test" {
		t.Errorf("created entry: %+v", created)
	}
	var fields []string
	for _, c := range upd.Changes {
		fields = append(fields, c.Field)
	}
	if upd.Action != "updated" || upd.Actor != "user ana@example.com" || len(fields) != 3 ||
		fields[0] != "enabled" || fields[1] != "rollout" || fields[2] != "variants" ||
		upd.Changes[1].From != 12.34 || upd.Changes[1].To != float64(100) {
		t.Errorf("update entry: %+v", upd)
	}
	if del.Action != "deleted" || del.Actor != "user bo@example.com" || del.At.Before(upd.At) || del.Changes[0].From != "pricing_copy_test" || del.Changes[0].To != nil {
		t.Errorf("delete entry: %+v", del)
	}
	all, _ := s.FlagChanges(ctx, a.ID, 0)
	if len(all) != 4 {
		t.Errorf("the product's trail has %d entries, want 4", len(all))
	}
	if others, _ := s.FlagChanges(ctx, b.ID, 0); len(others) != 1 || others[0].FlagID != other.ID {
		t.Errorf("product B's trail: %+v", others)
	}
}

// testExperiments checks experiment storage: the fields round-trip (the
// holdout with two decimals, dates as UTC days, secondary metrics), the
// flag's key comes with it, a flag of another product is refused, a flag
// carries one open experiment at a time, and every method is scoped to its
// product.
func testExperiments(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	f := analytics.Flag{ProductID: a.ID, Key: "pricing_copy_test", Name: "Pricing copy test", Rollout: 100,
		Variants: []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}}
	if err := s.CreateFlag(ctx, &f, "x"); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	e := analytics.Experiment{ProductID: a.ID, FlagID: f.ID, Name: "Pricing copy test", Holdout: 12.5,
		PrimaryEvent: "signup_completed", SecondaryEvents: []string{"$pageview", "checkout"}, StartDate: &start}
	if err := s.CreateExperiment(ctx, &e); err != nil || e.ID == 0 || e.Status != analytics.ExperimentDraft || e.FlagKey != f.Key {
		t.Fatalf("create: %v %+v", err, e)
	}
	got, err := s.Experiment(ctx, a.ID, e.ID)
	if err != nil || got.Name != e.Name || got.Holdout != 12.5 || got.FlagKey != "pricing_copy_test" || got.PrimaryEvent != "signup_completed" ||
		len(got.SecondaryEvents) != 2 || got.SecondaryEvents[1] != "checkout" || got.StartDate == nil || !got.StartDate.Equal(start) ||
		got.EndDate != nil || got.Status != analytics.ExperimentDraft {
		t.Errorf("read back: %v %+v", err, got)
	}
	if _, err := s.Experiment(ctx, b.ID, e.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's experiment: %v", err)
	}
	again := analytics.Experiment{ProductID: a.ID, FlagID: f.ID, Name: "Again"}
	if err := s.CreateExperiment(ctx, &again); !errors.Is(err, analytics.ErrDuplicate) {
		t.Errorf("a second open experiment on the flag: %v, want ErrDuplicate", err)
	}
	foreign := analytics.Experiment{ProductID: b.ID, FlagID: f.ID, Name: "Foreign"}
	if err := s.CreateExperiment(ctx, &foreign); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("an experiment on another product's flag: %v, want ErrNotFound", err)
	}

	end := time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC)
	got.Status, got.EndDate, got.SecondaryEvents = analytics.ExperimentPaused, &end, nil
	got.PauseReason = "sample_ratio_mismatch"
	if err := s.UpdateExperiment(ctx, &got); err != nil {
		t.Fatal(err)
	}
	wrong := got
	wrong.ProductID = b.ID
	if err := s.UpdateExperiment(ctx, &wrong); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("update through another product: %v", err)
	}
	got, _ = s.Experiment(ctx, a.ID, e.ID)
	if got.Status != analytics.ExperimentPaused || got.PauseReason != "sample_ratio_mismatch" || got.EndDate == nil || !got.EndDate.Equal(end) ||
		got.SecondaryEvents == nil || len(got.SecondaryEvents) != 0 {
		t.Errorf("after update: %+v", got)
	}
	// Once completed, the flag may carry a new experiment.
	got.Status, got.Winner = analytics.ExperimentCompleted, "treatment"
	if err := s.UpdateExperiment(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateExperiment(ctx, &again); err != nil {
		t.Errorf("a new experiment after the first completed: %v", err)
	}
	list, err := s.ListExperiments(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != e.ID || list[0].Winner != "treatment" || list[1].ID != again.ID {
		t.Errorf("list: %v %+v", err, list)
	}
	if list, _ := s.ListExperiments(ctx, b.ID); len(list) != 0 {
		t.Errorf("B lists %d experiments", len(list))
	}
	testSampleRatio(t, s, a.ID, b.ID, again)
}

// testSampleRatio checks what the sample-ratio check stores: the start
// time, the running experiments of every product, the latest check, and a
// pause that only a running experiment takes.
func testSampleRatio(t *testing.T, s Meta, a, b int64, e analytics.Experiment) {
	ctx := context.Background()
	started := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	e.Status, e.StartedAt = analytics.ExperimentRunning, &started
	if err := s.UpdateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	f := analytics.Flag{ProductID: b, Key: "other", Name: "Other", Rollout: 100,
		Variants: []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}}
	if err := s.CreateFlag(ctx, &f, "x"); err != nil {
		t.Fatal(err)
	}
	other := analytics.Experiment{ProductID: b, FlagID: f.ID, Name: "Other"}
	if err := s.CreateExperiment(ctx, &other); err != nil {
		t.Fatal(err)
	}
	running, err := s.RunningExperiments(ctx)
	if err != nil || len(running) != 1 || running[0].ID != e.ID || running[0].StartedAt == nil || !running[0].StartedAt.Equal(started) ||
		running[0].SampleRatio != nil {
		t.Fatalf("running experiments (B's is a draft): %v %+v", err, running)
	}
	check := analytics.SampleRatio{CheckedAt: started.Add(time.Hour), PValue: 0.0002, Mismatch: true,
		Arms: []analytics.SampleRatioArm{{Variant: "control", Exposed: 1100, Observed: 0.55, Expected: 0.5},
			{Variant: "treatment", Exposed: 900, Observed: 0.45, Expected: 0.5}}}
	if paused, err := s.RecordSampleRatio(ctx, b, e.ID, check, true); err != nil || paused {
		t.Errorf("a check through another product: paused %v, %v", paused, err)
	}
	if paused, err := s.RecordSampleRatio(ctx, a, e.ID, check, true); err != nil || !paused {
		t.Fatalf("a mismatch: paused %v, %v", paused, err)
	}
	got, _ := s.Experiment(ctx, a, e.ID)
	if got.Status != analytics.ExperimentPaused || got.PauseReason != analytics.PauseSampleRatio || got.SampleRatio == nil ||
		!got.SampleRatio.CheckedAt.Equal(check.CheckedAt) || got.SampleRatio.PValue != check.PValue || len(got.SampleRatio.Arms) != 2 ||
		got.SampleRatio.Arms[0] != check.Arms[0] {
		t.Errorf("after the mismatch: %+v %+v", got, got.SampleRatio)
	}
	// Resumed by hand, then completed: a later mismatch no longer pauses.
	got.Status, got.PauseReason = analytics.ExperimentCompleted, ""
	if err := s.UpdateExperiment(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if paused, err := s.RecordSampleRatio(ctx, a, e.ID, check, true); err != nil || paused {
		t.Errorf("a completed experiment: paused %v, %v", paused, err)
	}
	if got, _ := s.Experiment(ctx, a, e.ID); got.Status != analytics.ExperimentCompleted {
		t.Errorf("the check changed a completed experiment to %s", got.Status)
	}
}

// testLeases checks that one holder at a time has a lease: another holder
// gets it only once it expired, and the holder renews it.
func testLeases(ctx context.Context, t *testing.T, s Meta) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	take := func(holder string, at time.Time) bool {
		t.Helper()
		ok, err := s.AcquireLease(ctx, "srm", holder, at, at.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !take("node-a", now) {
		t.Fatal("a free lease was refused")
	}
	if take("node-b", now.Add(30*time.Second)) {
		t.Error("node-b took a lease node-a holds")
	}
	if !take("node-a", now.Add(50*time.Second)) {
		t.Error("node-a could not renew its lease")
	}
	if take("node-b", now.Add(100*time.Second)) {
		t.Error("node-b took the renewed lease before it expired")
	}
	if !take("node-b", now.Add(111*time.Second)) {
		t.Error("node-b could not take the expired lease")
	}
	if take("node-a", now.Add(112*time.Second)) {
		t.Error("node-a took back a lease node-b holds")
	}
	if ok, err := s.AcquireLease(ctx, "other", "node-a", now, now.Add(time.Minute)); err != nil || !ok {
		t.Errorf("another lease: %v %v", ok, err)
	}
}
