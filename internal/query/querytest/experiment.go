package querytest

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"time"
)

// ExperimentCell is one count of an experiment's results: Users whose
// first exposure (Metric -1) or first conversion on metric Metric after it
// fell on the day Day (of the zone asked for, as a UTC midnight), by the
// variant their exposures named. Users
// whose exposures named more than one variant are Mixed, with Variant "",
// and have no conversions.
type ExperimentCell struct {
	Metric  int
	Variant string
	Mixed   bool
	Day     time.Time
	Users   int64
}

// Experiment counts an experiment's exposed and converted users.
//
// Only live (not Test), non-bot events of the days from through to count. An
// exposure is a "$exposure" event whose experiment_id property equals
// experimentID (a number, or text that reads as that number). Each exposed
// user's first exposure time is t0; the variants are the string forms of
// the variant property of the user's exposures ("" when unset). A user
// with one variant converts on metric i at the earliest event at or after
// t0 that is named metrics[i], or, for the metric "", that carries
// converted equal to the number 1.
//
// The cells come sorted by metric, variant, mixed and day.
func Experiment(events []Event, experimentID int64, metrics []string, from, to time.Time) []ExperimentCell {
	return ExperimentIn(time.UTC, events, experimentID, metrics, from, to)
}

// ExperimentIn is Experiment in the zone loc: the days from through to are
// loc's, and so are the cells' days.
func ExperimentIn(loc *time.Location, events []Event, experimentID int64, metrics []string, from, to time.Time) []ExperimentCell {
	var live []Event
	for _, e := range events {
		if !e.Test && !e.Bot && inRange(e.Time, from, to, loc) {
			live = append(live, e)
		}
	}
	exposure := Filter{Property: "properties.experiment_id", Operator: "eq", Value: experimentID}
	type user struct {
		t0       time.Time
		variants map[string]bool
	}
	users := map[string]*user{}
	for _, e := range live {
		if e.Name != "$exposure" || !passes(e, exposure) {
			continue
		}
		u := users[e.DistinctID]
		if u == nil {
			u = &user{t0: e.Time, variants: map[string]bool{}}
			users[e.DistinctID] = u
		}
		if e.Time.Before(u.t0) {
			u.t0 = e.Time
		}
		v, _ := propertyValue(e, "properties.variant")
		u.variants[v] = true
	}

	type key struct {
		metric  int
		variant string
		mixed   bool
		day     time.Time
	}
	counts := map[key]int64{}
	day := func(t time.Time) time.Time { return wall(t, loc).Truncate(24 * time.Hour) }
	converted := Filter{Property: "properties.converted", Operator: "eq", Value: int64(1)}
	for id, u := range users {
		variant, mixed := "", len(u.variants) > 1
		for v := range u.variants {
			if !mixed {
				variant = v
			}
		}
		counts[key{-1, variant, mixed, day(u.t0)}]++
		if mixed {
			continue
		}
		for i, m := range metrics {
			var first time.Time
			for _, e := range live {
				if e.DistinctID != id || e.Time.Before(u.t0) {
					continue
				}
				if (m == "" && passes(e, converted)) || (m != "" && e.Name == m) {
					if first.IsZero() || e.Time.Before(first) {
						first = e.Time
					}
				}
			}
			if !first.IsZero() {
				counts[key{i, variant, false, day(first)}]++
			}
		}
	}
	var out []ExperimentCell
	for k, n := range counts {
		out = append(out, ExperimentCell{Metric: k.metric, Variant: k.variant, Mixed: k.mixed, Day: k.day, Users: n})
	}
	SortCells(out)
	return out
}

// SortCells orders cells by metric, variant, mixed and day.
func SortCells(cells []ExperimentCell) {
	sort.Slice(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		if a.Metric != b.Metric {
			return a.Metric < b.Metric
		}
		if a.Variant != b.Variant {
			return a.Variant < b.Variant
		}
		if a.Mixed != b.Mixed {
			return !a.Mixed
		}
		return a.Day.Before(b.Day)
	})
}

// ExperimentDataset is a random experiment's events and what to ask of
// them.
type ExperimentDataset struct {
	Events       []Event
	ExperimentID int64
	Metrics      []string
	From, To     time.Time
}

// GenerateExperiment returns a reproducible random experiment dataset for
// the seed: exposures of the experiment and of another one, users who saw
// two arms, holdout users, users outside the rollout (excluded),
// exposures without a variant, conversions named
// and by converted = 1 (as a number, as text, and as values that are not
// 1), events before the exposure, bot and test events, and events outside
// the range.
func GenerateExperiment(seed int64) ExperimentDataset {
	r := rand.New(rand.NewPCG(uint64(seed), 7))
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(200))
	ds := ExperimentDataset{ExperimentID: 1 + r.Int64N(1000), Metrics: []string{"", "signup", "$pageview"}[:1+r.IntN(3)],
		From: base, To: base.AddDate(0, 0, 1+r.IntN(10))}
	if r.IntN(3) == 0 {
		ds.Metrics[0] = "purchase"
	}
	span := ds.To.Sub(ds.From)
	at := func() time.Time {
		// From a day before the range to a day after it, on a minute grid
		// so that equal times occur.
		d := time.Duration(r.Int64N(int64(span+48*time.Hour))) - 24*time.Hour
		return ds.From.Add(d.Truncate(time.Minute))
	}
	variants := []string{"control", "treatment", "b", "holdout", "excluded"}
	for u := range 30 + r.IntN(120) {
		id := "user_" + strconv.Itoa(u)
		if u%7 == 0 {
			id = "ユーザー" + strconv.Itoa(u)
		}
		v := variants[r.IntN(len(variants))]
		for range 1 + r.IntN(3) {
			e := Event{DistinctID: id, Name: "$exposure", Time: at(),
				Properties: map[string]any{"flag": "pricing", "experiment_id": ds.ExperimentID, "variant": v}}
			switch r.IntN(12) {
			case 0:
				e.Properties["variant"] = variants[r.IntN(len(variants))] // a second arm
			case 1:
				e.Properties["experiment_id"] = strconv.FormatInt(ds.ExperimentID, 10)
			case 2:
				e.Properties["experiment_id"] = ds.ExperimentID + 1 // another experiment
			case 3:
				delete(e.Properties, "variant")
			case 4:
				e.Test = true
			case 5:
				e.Bot = true
			}
			ds.Events = append(ds.Events, e)
		}
		for range r.IntN(5) {
			e := Event{DistinctID: id, Name: []string{"signup", "purchase", "$pageview", "other"}[r.IntN(4)], Time: at()}
			switch r.IntN(6) {
			case 0:
				e.Properties = map[string]any{"converted": int64(1)}
			case 1:
				e.Properties = map[string]any{"converted": "1"}
			case 2:
				e.Properties = map[string]any{"converted": []any{int64(0), int64(2), true, "yes"}[r.IntN(4)]}
			case 3:
				e.Test = true
			}
			ds.Events = append(ds.Events, e)
		}
	}
	return ds
}
