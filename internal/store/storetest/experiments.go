package storetest

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"strata/internal/analytics"
	"strata/internal/query/querytest"
)

// testExperimentCounts runs the experiment counts on the store for seeded
// random datasets and compares each answer with the reference in
// querytest: exposures of the experiment only, users of two arms apart,
// conversions at or after the first exposure, and the default metric
// converted = 1.
func testExperimentCounts(ctx context.Context, t *testing.T, s Events) {
	for seed := int64(1); seed <= 25; seed++ {
		ds := querytest.GenerateExperiment(seed)
		p := analytics.Product{ID: 300 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		q := analytics.ExperimentQuery{EventRange: analytics.EventRange{ProductID: p.ID, Env: analytics.EnvLive, From: ds.From, To: ds.To.AddDate(0, 0, 1)},
			ExperimentID: ds.ExperimentID, Metrics: ds.Metrics}
		rows, err := s.ExperimentCounts(ctx, q)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got := make([]querytest.ExperimentCell, len(rows))
		for i, r := range rows {
			got[i] = querytest.ExperimentCell{Metric: r.Metric, Variant: r.Variant, Mixed: r.Mixed, Day: r.Day, Users: r.Users}
		}
		querytest.SortCells(got)
		want := querytest.Experiment(ds.Events, ds.ExperimentID, ds.Metrics, ds.From, ds.To)
		if len(want) == 0 {
			t.Fatalf("seed %d: the dataset has no exposure", seed)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d metrics %q:\n got %+v\nwant %+v", seed, ds.Metrics, got, want)
		}

		// The same dataset in a zone: the range's days and the counts'
		// days are the zone's (docs/experiments.md). The datasets start
		// from March to September, so some cross a DST change.
		zq := q
		zq.EventRange = zoneScope(t, p.ID, analytics.EnvLive, experimentZones[seed%int64(len(experimentZones))])
		loc := zq.Location()
		zq.From, zq.To = analytics.Instant(ds.From, loc), analytics.Instant(ds.To.AddDate(0, 0, 1), loc)
		rows, err = s.ExperimentCounts(ctx, zq)
		if err != nil {
			t.Fatalf("seed %d in %s: %v", seed, loc, err)
		}
		got = got[:0]
		for _, r := range rows {
			got = append(got, querytest.ExperimentCell{Metric: r.Metric, Variant: r.Variant, Mixed: r.Mixed, Day: r.Day, Users: r.Users})
		}
		querytest.SortCells(got)
		want = querytest.ExperimentIn(loc, ds.Events, ds.ExperimentID, ds.Metrics, ds.From, ds.To)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d in %s metrics %q:\n got %+v\nwant %+v", seed, loc, ds.Metrics, got, want)
		}
	}
}

// experimentZones are the zones the experiment counts are also checked
// in: one either side of UTC with a DST change, and one a half hour off.
var experimentZones = []string{"Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata"}

// testErrorGroups runs the error groups on the store for seeded random
// datasets and compares each answer with the reference in querytest.
func testErrorGroups(ctx context.Context, t *testing.T, s Events) {
	for seed := int64(1); seed <= 20; seed++ {
		ds := querytest.GenerateErrors(seed)
		p := analytics.Product{ID: 500 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		rows, err := s.ErrorGroups(ctx, analytics.ErrorGroupsQuery{EventRange: analytics.EventRange{ProductID: p.ID, Env: analytics.EnvLive,
			From: ds.From, To: ds.To}, Release: ds.Release, Days: ds.Days, Limit: 4, Aliases: ds.Aliases})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got := make([]querytest.ErrorGroup, len(rows))
		for i, r := range rows {
			got[i] = querytest.ErrorGroup(r)
		}
		want := querytest.ErrorGroups(ds.Events, ds.Release, ds.From, ds.To, ds.Days, 4, ds.Aliases)
		if len(want) == 0 {
			t.Fatalf("seed %d: the dataset has no group", seed)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d release %q aliases %v:\n got %+v\nwant %+v", seed, ds.Release, ds.Aliases, got, want)
		}

		// Some fingerprints, each its own group (no aliases), in one
		// query: the reference's groups of those, in its order.
		all := querytest.ErrorGroups(ds.Events, ds.Release, ds.From, ds.To, ds.Days, 1000, nil)
		var some []string
		want = nil
		// (Not the group of events without a fingerprint, "": a merge
		// names groups by a fingerprint.)
		for i, g := range all {
			if i%2 == int(seed%2) && g.Fingerprint != "" {
				some = append(some, g.Fingerprint)
				want = append(want, g)
			}
		}
		some = append(some, "no-such-fingerprint")
		rows, err = s.ErrorGroups(ctx, analytics.ErrorGroupsQuery{EventRange: analytics.EventRange{ProductID: p.ID, Env: analytics.EnvLive,
			From: ds.From, To: ds.To}, Release: ds.Release, Days: ds.Days, Limit: len(some), Fingerprints: some})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		got = make([]querytest.ErrorGroup, len(rows))
		for i, r := range rows {
			got[i] = querytest.ErrorGroup(r)
		}
		if len(want) == 0 {
			want = []querytest.ErrorGroup{}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d release %q fingerprints %v:\n got %+v\nwant %+v", seed, ds.Release, some, got, want)
		}

		// The first group's latest occurrences.
		text := func(e querytest.Event) string { b, _ := json.Marshal(e.Properties); return string(b) }
		occ, err := s.ErrorOccurrences(ctx, analytics.ErrorOccurrencesQuery{EventRange: analytics.EventRange{ProductID: p.ID, Env: analytics.EnvLive,
			From: ds.From, To: ds.To}, Fingerprint: want[0].Fingerprint, Limit: 7, Aliases: ds.Aliases})
		if err != nil {
			t.Fatalf("seed %d occurrences: %v", seed, err)
		}
		wantOcc := querytest.ErrorOccurrences(ds.Events, want[0].Fingerprint, ds.From, ds.To, 7, text, ds.Aliases)
		if len(occ) != len(wantOcc) {
			t.Fatalf("seed %d: %d occurrences, want %d", seed, len(occ), len(wantOcc))
		}
		for i, o := range occ {
			w := wantOcc[i]
			if !o.Time.Equal(w.Time) || o.DistinctID != w.DistinctID || string(o.Properties) != text(w) {
				t.Errorf("seed %d occurrence %d: %v %s %s, want %v %s %s", seed, i, o.Time, o.DistinctID, o.Properties, w.Time, w.DistinctID, text(w))
			}
		}
	}
}

// testErrorActivity runs the alert rules' query on the store for seeded
// random datasets and compares each answer with the reference in
// querytest: the recent part and the history split at Recent, the minimum
// recent count, first-only groups and the range's boundaries.
func testErrorActivity(ctx context.Context, t *testing.T, s Events) {
	for seed := int64(1); seed <= 20; seed++ {
		ds := querytest.GenerateErrorActivity(seed)
		p := analytics.Product{ID: 700 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		for _, first := range []bool{ds.FirstOnly, !ds.FirstOnly} {
			rows, err := s.ErrorActivity(ctx, analytics.ErrorActivityQuery{EventRange: analytics.EventRange{ProductID: p.ID, Env: analytics.EnvLive,
				From: ds.From, To: ds.To}, Recent: ds.Recent, MinRecent: ds.MinRecent, FirstOnly: first, Aliases: ds.Aliases})
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			got := make([]querytest.ErrorActivity, len(rows))
			for i, r := range rows {
				got[i] = querytest.ErrorActivity(r)
			}
			want := querytest.ErrorActivities(ds.Events, ds.From, ds.Recent, ds.To, ds.MinRecent, first, ds.Aliases)
			if len(want) == 0 && !first {
				t.Fatalf("seed %d: the dataset has no recent group", seed)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d min %d first-only %v aliases %v:\n got %+v\nwant %+v", seed, ds.MinRecent, first, ds.Aliases, got, want)
			}
		}
	}
}
