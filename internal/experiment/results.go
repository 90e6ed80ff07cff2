package experiment

import (
	"time"

	"strata/internal/analytics"
	"strata/internal/flags"
)

// Results is an experiment's results page: ExperimentResults in
// api/openapi.yaml.
type Results struct {
	ExperimentID      int64                      `json:"experimentId"`
	FlagKey           string                     `json:"flagKey"`
	Status            analytics.ExperimentStatus `json:"status"`
	PauseReason       string                     `json:"pauseReason"`
	From              time.Time                  `json:"from"`
	To                time.Time                  `json:"to"`
	Arms              []ArmExposure              `json:"arms"`
	Holdout           int64                      `json:"holdout"`
	Excluded          int64                      `json:"excluded"`
	MultipleArms      int64                      `json:"multipleArms"`
	MinExposedPerArm  int                        `json:"minExposedPerArm"`
	EnoughData        bool                       `json:"enoughData"`
	RecommendedPerArm *int64                     `json:"recommendedPerArm"`
	Metrics           []MetricResult             `json:"metrics"`
	Timeline          []TimelinePoint            `json:"timeline"`
	SampleRatio       *analytics.SampleRatio     `json:"sampleRatio"`
}

// ArmExposure is one arm of the flag and the users exposed to it.
type ArmExposure struct {
	Variant string  `json:"variant"`
	Weight  float64 `json:"weight"`
	Exposed int64   `json:"exposed"`
}

// MetricResult is every arm on one metric.
type MetricResult struct {
	// Event is the metric's event name, "" for the events carrying
	// converted = 1.
	Event   string      `json:"event"`
	Label   string      `json:"label"`
	Primary bool        `json:"primary"`
	Arms    []ArmResult `json:"arms"`
}

// ArmResult is one arm on one metric, compared with control (nil on
// control itself, and while either has no exposed user).
type ArmResult struct {
	Variant             string    `json:"variant"`
	Exposed             int64     `json:"exposed"`
	Converted           int64     `json:"converted"`
	Rate                float64   `json:"rate"`
	AbsoluteUplift      *Estimate `json:"absoluteUplift"`
	RelativeUplift      *Estimate `json:"relativeUplift"`
	PValue              *float64  `json:"pValue"`
	ChanceToBeatControl *float64  `json:"chanceToBeatControl"`
}

// TimelinePoint is one arm's primary metric up to the end of one day of
// the product's zone.
type TimelinePoint struct {
	Date      string  `json:"date"`
	Variant   string  `json:"variant"`
	Exposed   int64   `json:"exposed"`
	Converted int64   `json:"converted"`
	Rate      float64 `json:"rate"`
}

// The variants the SDKs name in the $exposure of a user who is not in the
// experiment: Holdout for a user kept out of it, Excluded for a user
// outside the flag's rollout (docs/experiments.md). Neither counts in an
// arm, in the results or in the sample-ratio check.
const (
	Holdout  = flags.ExposeHoldout
	Excluded = flags.ExposeExcluded
)

// detectableLift is the relative change RecommendedPerArm is sized for.
const detectableLift = 0.1

// maxTimelineDays bounds the timeline: the last days of a longer range.
const maxTimelineDays = 400

// Metrics returns an experiment's metrics in the order results list them
// and ExperimentCounts takes them: the primary, then the secondary ones.
func Metrics(e analytics.Experiment) []string {
	return append([]string{e.PrimaryEvent}, e.SecondaryEvents...)
}

// Range returns the events an experiment's results read, in the product's
// zone loc (docs/experiments.md): from the local midnight of its start
// date, else of the local day it was first started, else of the day it
// was created; to the local midnight after its end date, or now,
// whichever is first. The dates are calendar dates, held as UTC
// midnights; the start and creation times are instants.
func Range(e analytics.Experiment, now time.Time, loc *time.Location) (from, to time.Time) {
	switch {
	case e.StartDate != nil:
		from = analytics.Day.Truncate(e.StartDate.UTC())
	case e.StartedAt != nil:
		from = analytics.Day.Truncate(analytics.Wall(*e.StartedAt, loc))
	default:
		from = analytics.Day.Truncate(analytics.Wall(e.CreatedAt, loc))
	}
	from = analytics.Instant(from, loc)
	to = now.UTC()
	if e.EndDate != nil {
		if end := analytics.Instant(analytics.Day.Truncate(e.EndDate.UTC()).AddDate(0, 0, 1), loc); end.Before(to) {
			to = end
		}
	}
	if to.Before(from) {
		to = from
	}
	return from, to
}

// Analyse turns an experiment's counts into its results, whose timeline
// has a point for each local day of loc that [from, to) touches (the rows'
// days are local days too, written as UTC midnights). The flag's first
// arm is control. Users whose exposures named a variant that is not an arm
// of the flag (nor the holdout) count nowhere.
func Analyse(e analytics.Experiment, f analytics.Flag, rows []analytics.ExperimentRow, from, to time.Time, loc *time.Location) Results {
	metrics := Metrics(e)
	r := Results{ExperimentID: e.ID, FlagKey: f.Key, Status: e.Status, PauseReason: e.PauseReason, From: from, To: to,
		MinExposedPerArm: analytics.MinExposures, SampleRatio: e.SampleRatio, Arms: []ArmExposure{},
		Metrics: []MetricResult{}, Timeline: []TimelinePoint{}}
	arm := map[string]int{}
	for i, v := range f.Variants {
		arm[v.Key] = i
		r.Arms = append(r.Arms, ArmExposure{Variant: v.Key, Weight: v.Weight})
	}
	// converted[m][a] counts arm a's conversions on metric m.
	converted := make([][]int64, len(metrics))
	for m := range converted {
		converted[m] = make([]int64, len(f.Variants))
	}
	days := timelineDays(from, to, loc)
	// byDay[a][d] counts arm a's new exposures (0) and primary
	// conversions (1) on day d.
	byDay := make([][][2]int64, len(f.Variants))
	for a := range byDay {
		byDay[a] = make([][2]int64, len(days))
	}
	for _, row := range rows {
		switch {
		case row.Mixed:
			if row.Metric < 0 {
				r.MultipleArms += row.Users
			}
			continue
		case row.Variant == Holdout:
			if row.Metric < 0 {
				r.Holdout += row.Users
			}
			continue
		case row.Variant == Excluded:
			if row.Metric < 0 {
				r.Excluded += row.Users
			}
			continue
		}
		a, ok := arm[row.Variant]
		if !ok || row.Metric >= len(metrics) {
			continue
		}
		if row.Metric < 0 {
			r.Arms[a].Exposed += row.Users
		} else {
			converted[row.Metric][a] += row.Users
		}
		if row.Metric <= 0 && len(days) > 0 {
			k := 0
			if row.Metric == 0 {
				k = 1
			}
			byDay[a][dayIndex(days, row.Day)][k] += row.Users
		}
	}

	r.EnoughData = len(r.Arms) > 0
	for _, a := range r.Arms {
		if a.Exposed < analytics.MinExposures {
			r.EnoughData = false
		}
	}
	for m, event := range metrics {
		mr := MetricResult{Event: event, Label: metricLabel(event), Primary: m == 0, Arms: []ArmResult{}}
		for a, exp := range r.Arms {
			ar := ArmResult{Variant: exp.Variant, Exposed: exp.Exposed, Converted: converted[m][a]}
			if exp.Exposed > 0 {
				ar.Rate = float64(ar.Converted) / float64(exp.Exposed)
			}
			if c := r.Arms[0]; a > 0 && c.Exposed > 0 && exp.Exposed > 0 {
				cmp := Compare(converted[m][0], c.Exposed, ar.Converted, exp.Exposed)
				ar.AbsoluteUplift, ar.RelativeUplift = &cmp.Absolute, cmp.Relative
				ar.PValue, ar.ChanceToBeatControl = &cmp.PValue, &cmp.ChanceToBeat
			}
			mr.Arms = append(mr.Arms, ar)
		}
		r.Metrics = append(r.Metrics, mr)
	}
	if c := r.Metrics[0].Arms; len(c) > 0 {
		if n := SampleSize(c[0].Rate, detectableLift); n > 0 {
			r.RecommendedPerArm = &n
		}
	}
	for a, exp := range r.Arms {
		var exposed, conv int64
		for d, day := range days {
			exposed += byDay[a][d][0]
			conv += byDay[a][d][1]
			p := TimelinePoint{Date: day.Format("2006-01-02"), Variant: exp.Variant, Exposed: exposed, Converted: conv}
			if exposed > 0 {
				p.Rate = float64(conv) / float64(exposed)
			}
			r.Timeline = append(r.Timeline, p)
		}
	}
	return r
}

// timelineDays returns the local days of loc that [from, to) touches, as
// UTC midnights, at most the last maxTimelineDays of them.
func timelineDays(from, to time.Time, loc *time.Location) []time.Time {
	days := analytics.Day.Buckets(analytics.Wall(from, loc), analytics.Wall(to, loc))
	if len(days) > maxTimelineDays {
		days = days[len(days)-maxTimelineDays:]
	}
	return days
}

// dayIndex returns the place of day in days; a day before the first (the
// timeline was cut) counts on the first.
func dayIndex(days []time.Time, day time.Time) int {
	if len(days) == 0 {
		return 0
	}
	i := int(day.Sub(days[0]).Hours() / 24)
	return min(max(i, 0), len(days)-1)
}

// metricLabel names a metric for people.
func metricLabel(event string) string {
	if event == "" {
		return "converted = 1"
	}
	return event
}
