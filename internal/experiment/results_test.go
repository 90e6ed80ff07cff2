package experiment

import (
	"testing"
	"time"

	"strata/internal/analytics"
)

func day(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }

// TestAnalyse builds the results of counts written by hand: two arms over
// three days, the holdout, the users outside the rollout (excluded) and
// mixed users apart, a variant the flag does
// not have ignored, and a secondary metric.
func TestAnalyse(t *testing.T) {
	f := analytics.Flag{Key: "pricing", Variants: []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}}
	e := analytics.Experiment{ID: 7, PrimaryEvent: "", SecondaryEvents: []string{"signup"}, Status: analytics.ExperimentRunning}
	rows := []analytics.ExperimentRow{
		{Metric: -1, Variant: "control", Day: day(20), Users: 600},
		{Metric: -1, Variant: "control", Day: day(22), Users: 400},
		{Metric: -1, Variant: "treatment", Day: day(20), Users: 1000},
		{Metric: -1, Variant: "holdout", Day: day(20), Users: 111},
		{Metric: -1, Variant: "excluded", Day: day(21), Users: 222},
		{Metric: 0, Variant: "excluded", Day: day(22), Users: 20},
		{Metric: -1, Mixed: true, Day: day(21), Users: 9},
		{Metric: -1, Variant: "stale_arm", Day: day(21), Users: 50},
		{Metric: 0, Variant: "control", Day: day(21), Users: 60},
		{Metric: 0, Variant: "control", Day: day(22), Users: 40},
		{Metric: 0, Variant: "treatment", Day: day(22), Users: 130},
		{Metric: 0, Variant: "holdout", Day: day(22), Users: 5},
		{Metric: 1, Variant: "treatment", Day: day(22), Users: 10},
	}
	r := Analyse(e, f, rows, day(20), day(22).Add(12*time.Hour), time.UTC)
	if r.Holdout != 111 || r.Excluded != 222 || r.MultipleArms != 9 || r.Arms[0].Exposed != 1000 || r.Arms[1].Exposed != 1000 || !r.EnoughData {
		t.Fatalf("exposures: %+v", r)
	}
	p := r.Metrics[0]
	if !p.Primary || p.Label != "converted = 1" || p.Arms[0].Converted != 100 || p.Arms[1].Converted != 130 || p.Arms[1].Rate != 0.13 {
		t.Fatalf("primary metric: %+v", p)
	}
	if p.Arms[0].PValue != nil || p.Arms[0].AbsoluteUplift != nil || p.Arms[0].ChanceToBeatControl != nil {
		t.Errorf("control compared with itself: %+v", p.Arms[0])
	}
	want := Compare(100, 1000, 130, 1000)
	if got := p.Arms[1]; *got.PValue != want.PValue || *got.AbsoluteUplift != want.Absolute || *got.RelativeUplift != *want.Relative {
		t.Errorf("treatment: %+v, want %+v", got, want)
	}
	s := r.Metrics[1]
	if s.Primary || s.Event != "signup" || s.Arms[0].Converted != 0 || s.Arms[1].Converted != 10 || s.Arms[1].RelativeUplift != nil {
		t.Errorf("secondary metric (control at 0: no relative uplift): %+v", s)
	}
	if r.RecommendedPerArm == nil || *r.RecommendedPerArm != SampleSize(0.1, 0.1) {
		t.Errorf("recommended per arm: %v", r.RecommendedPerArm)
	}
	// Cumulative per day: control 600/0, 600/60, 1000/100.
	var control []TimelinePoint
	for _, pt := range r.Timeline {
		if pt.Variant == "control" {
			control = append(control, pt)
		}
	}
	if len(control) != 3 || control[0].Date != "2026-11-20" || control[0].Exposed != 600 || control[0].Converted != 0 ||
		control[1].Converted != 60 || control[1].Rate != 0.1 || control[2].Exposed != 1000 || control[2].Converted != 100 {
		t.Errorf("control's timeline: %+v", control)
	}
}

func TestAnalyseTooEarly(t *testing.T) {
	f := analytics.Flag{Variants: []analytics.FlagVariant{{Key: "control", Weight: 50}, {Key: "treatment", Weight: 50}}}
	r := Analyse(analytics.Experiment{}, f, []analytics.ExperimentRow{{Metric: -1, Variant: "control", Day: day(20), Users: 150},
		{Metric: -1, Variant: "treatment", Day: day(20), Users: 99}}, day(20), day(21), time.UTC)
	if r.EnoughData || r.RecommendedPerArm != nil || r.Metrics[0].Arms[1].PValue == nil {
		t.Errorf("99 users in treatment: %+v", r)
	}
	// An empty range has no timeline and no panic.
	if r := Analyse(analytics.Experiment{}, f, nil, day(20), day(20), time.UTC); len(r.Timeline) != 0 || r.EnoughData {
		t.Errorf("an empty range: %+v", r)
	}
}

func TestRange(t *testing.T) {
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	started := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	start, end := day(18), day(23)
	for _, c := range []struct {
		e        analytics.Experiment
		from, to time.Time
	}{
		{analytics.Experiment{CreatedAt: day(10)}, day(10), now},
		{analytics.Experiment{CreatedAt: day(10), StartedAt: &started}, day(21), now},
		{analytics.Experiment{CreatedAt: day(10), StartedAt: &started, StartDate: &start}, day(18), now},
		{analytics.Experiment{CreatedAt: day(10), EndDate: &end}, day(10), day(24)},
	} {
		if from, to := Range(c.e, now, time.UTC); !from.Equal(c.from) || !to.Equal(c.to) {
			t.Errorf("%+v: %v – %v, want %v – %v", c.e, from, to, c.from, c.to)
		}
	}
}

// TestRangeInZone holds an experiment's days to the product's zone: in
// Tokyo (UTC+9) a day starts at 15:00 UTC the day before, and in Los
// Angeles at 08:00 UTC in November, 07:00 UTC before its autumn change.
func TestRangeInZone(t *testing.T) {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	la, _ := time.LoadLocation("America/Los_Angeles")
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	// 05:30 UTC on the 21st: still the 20th in Los Angeles, the 21st in Tokyo.
	started := time.Date(2026, 11, 21, 5, 30, 0, 0, time.UTC)
	start, end := day(18), day(23)
	late := day(28)
	utc := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		loc      *time.Location
		e        analytics.Experiment
		from, to time.Time
	}{
		{tokyo, analytics.Experiment{CreatedAt: day(10), StartedAt: &started}, utc(20, 15), now},
		{la, analytics.Experiment{CreatedAt: day(10), StartedAt: &started}, utc(20, 8), now},
		{tokyo, analytics.Experiment{CreatedAt: day(10), StartedAt: &started, StartDate: &start}, utc(17, 15), now},
		{la, analytics.Experiment{CreatedAt: day(10), StartDate: &start, EndDate: &end}, utc(18, 8), utc(24, 8)},
		{tokyo, analytics.Experiment{CreatedAt: day(10), EndDate: &end}, utc(9, 15), utc(23, 15)},
		// Created at midnight UTC: the 9th in Los Angeles.
		{la, analytics.Experiment{CreatedAt: day(10), EndDate: &late}, utc(9, 8), now},
		// The 1st in Los Angeles is before the change on the 1st: 07:00 UTC.
		{la, analytics.Experiment{CreatedAt: day(10), StartDate: ptr(day(1))}, time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC), now},
	} {
		if from, to := Range(c.e, now, c.loc); !from.Equal(c.from) || !to.Equal(c.to) {
			t.Errorf("%s %+v: %v – %v, want %v – %v", c.loc, c.e, from, to, c.from, c.to)
		}
	}
}

func ptr[T any](v T) *T { return &v }
