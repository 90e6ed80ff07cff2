package storetest

import (
	"context"
	"testing"

	"strata/internal/analytics"
)

// TimeGoals fills s as SessionsBench does (STRATA_SESSIONS_BENCH_EVENTS
// events, 1 M when unset; see SessionsBenchEvents) and times, interleaved,
// five runs each of the Overview's goals query (three goals: the click
// event, the page /pricing and the pages /blog/*, over the 30 days), one
// goal's breakdown by device type, and the two-line trend beside them for
// scale. It reports the fastest of each as name-ms.
func TimeGoals(b *testing.B, s Events) {
	ctx := context.Background()
	_, tq := SessionsBench(b, s)
	goals := []analytics.GoalMatch{
		{Event: "click"},
		analytics.Goal{Kind: analytics.GoalPage, Path: "/pricing"}.Match(),
		analytics.Goal{Kind: analytics.GoalPage, Path: "/blog/*"}.Match(),
	}
	q := analytics.GoalsQuery{EventRange: tq.EventRange, Goals: goals, Limit: 10}
	by := analytics.GoalsQuery{EventRange: tq.EventRange, Goals: goals[2:], Breakdown: &analytics.Property{Column: "device_type"}, Limit: 10}
	// The answer must count something, or the timing says nothing.
	if a, err := s.GoalConversions(ctx, q); err != nil || a.Visitors == 0 || a.Goals[0].Converted == 0 {
		b.Fatalf("goals: %+v %v", a, err)
	}
	best := fastest{}
	for b.Loop() {
		for range 5 {
			best.time(b, "trend", func() error { _, err := s.Trend(ctx, tq); return err })
			best.time(b, "goals", func() error { _, err := s.GoalConversions(ctx, q); return err })
			best.time(b, "goal-by-device", func() error { _, err := s.GoalConversions(ctx, by); return err })
		}
	}
	for name, d := range best {
		b.ReportMetric(float64(d.Microseconds())/1000, name+"-ms")
	}
}
