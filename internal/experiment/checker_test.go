package experiment_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/experiment"
	"strata/internal/ingest"
	"strata/internal/query"
	"strata/internal/store/duckdb/duckdbtest"
)

// TestCheckerOneNodeAtATime runs two nodes' checkers on one real store
// with a clock of the test's: the node holding the lease checks and pauses
// a skewed experiment; the other skips its rounds until the lease has
// expired, then takes over.
func TestCheckerOneNodeAtATime(t *testing.T) {
	ctx := context.Background()
	s, p := duckdbtest.Product(t)
	now := time.Now().UTC().Truncate(time.Second)
	skewed := func(name string) analytics.Experiment {
		t.Helper()
		f := analytics.Flag{ProductID: p.ID, Key: analytics.Slug(name), Name: name, Enabled: true, Rollout: 100,
			Variants: []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}}
		if err := s.CreateFlag(ctx, &f, "test"); err != nil {
			t.Fatal(err)
		}
		e := analytics.Experiment{ProductID: p.ID, FlagID: f.ID, Name: name}
		if err := s.CreateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		e.Status, e.StartedAt = analytics.ExperimentRunning, &now
		if err := s.UpdateExperiment(ctx, &e); err != nil {
			t.Fatal(err)
		}
		var events []analytics.Event
		for i := range 2000 {
			v := "control"
			if i >= 1100 {
				v = "treatment"
			}
			id := name + strconv.Itoa(i)
			ev := analytics.Event{ProductID: p.ID, Env: analytics.EnvLive, Timestamp: now, ReceivedAt: now, Name: analytics.ExposureEvent,
				DistinctID: id, UserID: ingest.UserID(id),
				Properties: []byte(`{"flag":"` + f.Key + `","experiment_id":` + strconv.FormatInt(e.ID, 10) + `,"variant":"` + v + `"}`)}
			ev.UUID[0], ev.UUID[1], ev.UUID[2] = byte(i>>8), byte(i), byte(e.ID)
			events = append(events, ev)
		}
		if err := s.AppendEvents(ctx, events); err != nil {
			t.Fatal(err)
		}
		return e
	}
	clock := now.Add(time.Hour)
	engine := &query.Engine{Store: s}
	var paused []int64
	node := func(name string) *experiment.Checker {
		return &experiment.Checker{Store: s, Counter: engine, Node: name, Interval: time.Minute, Env: analytics.EnvLive,
			Paused: func(id int64) { paused = append(paused, id) }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Now: func() time.Time { return clock }}
	}
	a, b := node("a"), node("b")
	status := func(e analytics.Experiment) analytics.ExperimentStatus {
		t.Helper()
		got, err := s.Experiment(ctx, p.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}

	first := skewed("First")
	if err := a.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if status(first) != analytics.ExperimentPaused || len(paused) != 1 || paused[0] != p.ID {
		t.Fatalf("node a's round: %s, paused %v", status(first), paused)
	}
	second := skewed("Second")
	clock = clock.Add(time.Minute)
	if err := b.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if status(second) != analytics.ExperimentRunning {
		t.Fatal("node b checked while node a held the lease")
	}
	// Node a stops; its lease (two intervals) runs out and b takes over.
	clock = clock.Add(2*time.Minute + time.Second)
	if err := b.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if status(second) != analytics.ExperimentPaused {
		t.Fatal("node b did not take over the expired lease")
	}
}
