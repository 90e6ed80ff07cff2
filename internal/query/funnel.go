package query

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"strata/internal/analytics"
)

// FunnelRequest is the body of POST /api/v1/query/funnel.
type FunnelRequest struct {
	Steps       []FunnelStepRequest `json:"steps"`
	DateFrom    string              `json:"dateFrom,omitempty"`
	DateTo      string              `json:"dateTo,omitempty"`
	WindowHours json.RawMessage     `json:"windowHours,omitempty"`
	AggregateBy string              `json:"aggregateBy,omitempty"`
	Exclusions  []FunnelExclusion   `json:"exclusions,omitempty"`
	// Breakdown and BreakdownLimit split the funnel by a property as a
	// trend's do: the value on each user's step-0 event.
	Breakdown      string `json:"breakdown,omitempty"`
	BreakdownLimit int    `json:"breakdownLimit,omitempty"`
	// View is "steps" (the default: the counts), "time_to_convert" (the
	// counts and how long each step took) or "trends" (the counts and the
	// conversion by the Interval in which users entered step 0). With a
	// breakdown, the view's answer is the whole funnel's and each
	// breakdown row's.
	View     string `json:"view,omitempty"`
	Interval string `json:"interval,omitempty"`
}

// FunnelExclusion is one exclusion as sent: users who did Event (passing
// Where) between their events of steps FromStep and ToStep are left out.
type FunnelExclusion struct {
	Event    string          `json:"event"`
	Where    []FilterRequest `json:"where,omitempty"`
	FromStep int             `json:"fromStep"`
	ToStep   int             `json:"toStep"`
}

// MaxExclusions bounds a funnel's exclusions, as MaxSteps its steps.
const MaxExclusions = 10

// FunnelStepRequest is one step as sent: an event name (a JSON string, the
// spec's form), or an object naming the event and the filters its events
// must pass, {"event": "$pageview", "where": [filter…]}, the filters in
// the trend's shape (docs/queries.md, "Funnels").
type FunnelStepRequest struct {
	Event string          `json:"event"`
	Where []FilterRequest `json:"where,omitempty"`
}

// EventSteps returns plain steps, one for each event name.
func EventSteps(names []string) []FunnelStepRequest {
	out := make([]FunnelStepRequest, len(names))
	for i, n := range names {
		out[i].Event = n
	}
	return out
}

// UnmarshalJSON reads a step sent as a string or as an object.
func (s *FunnelStepRequest) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		*s = FunnelStepRequest{}
		return json.Unmarshal(data, &s.Event)
	}
	if len(data) == 0 || data[0] != '{' {
		return analytics.InvalidField("steps", `each step must be an event name or an object {"event": …, "where": […]}, not %.40s`, data)
	}
	// The object's own decoder, so that a misspelt field is refused as
	// the request's are.
	type plain FunnelStepRequest
	var p plain
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return analytics.InvalidField("steps", `a step object holds only "event" and "where", not %s`, name)
		}
		return analytics.InvalidField("steps", `a step object is {"event": "<name>", "where": [filter…]}, each filter {"property", "operator", "value"}: %v`, err)
	}
	*s = FunnelStepRequest(p)
	return nil
}

// MarshalJSON writes a step without filters as its event name, the form
// saved funnels and the spec use, and any other as the object.
func (s FunnelStepRequest) MarshalJSON() ([]byte, error) {
	if len(s.Where) == 0 {
		return json.Marshal(s.Event)
	}
	type plain FunnelStepRequest
	return json.Marshal(plain(s))
}

// ParseFunnel validates a funnel request body into a store query.
func ParseFunnel(body []byte, scope analytics.EventRange, now time.Time) (analytics.FunnelQuery, error) {
	return parseBody[analytics.FunnelQuery, FunnelRequest](body, scope, now)
}

// Query validates the request into a store query for scope (whose From and
// To it sets).
func (req FunnelRequest) Query(scope analytics.EventRange, now time.Time) (analytics.FunnelQuery, error) {
	q := analytics.FunnelQuery{EventRange: scope}
	if len(req.Steps) < MinSteps {
		return q, analytics.InvalidField("steps", "a funnel needs at least %d steps, not %d", MinSteps, len(req.Steps))
	}
	if len(req.Steps) > MaxSteps {
		return q, analytics.InvalidField("steps", "a funnel has at most %d steps, not %d", MaxSteps, len(req.Steps))
	}
	filtered := false
	stepFilters := make([][]analytics.Filter, len(req.Steps))
	for i, s := range req.Steps {
		field := fmt.Sprintf("steps[%d]", i)
		if len(s.Where) > 0 {
			// An object step's name is its event field.
			field += ".event"
		}
		if err := eventName(field, s.Event); err != nil {
			return q, err
		}
		fs, err := filters(fmt.Sprintf("steps[%d].where", i), s.Where)
		if err != nil {
			return q, err
		}
		if len(fs) > 0 {
			stepFilters[i], filtered = fs, true
		}
		q.Steps = append(q.Steps, s.Event)
	}
	if filtered {
		q.StepFilters = stepFilters
	}
	hours, err := windowHours(req.WindowHours)
	if err != nil {
		return q, err
	}
	if q.From, q.To, err = dateRange(req.DateFrom, req.DateTo, now, scope.Location()); err != nil {
		return q, err
	}
	if q.AggregateBy, err = aggregateBy(req.AggregateBy); err != nil {
		return q, err
	}
	q.Window = time.Duration(hours) * time.Hour
	if len(req.Exclusions) > MaxExclusions {
		return q, analytics.InvalidField("exclusions", "a funnel has at most %d exclusions, not %d", MaxExclusions, len(req.Exclusions))
	}
	for i, x := range req.Exclusions {
		field := fmt.Sprintf("exclusions[%d]", i)
		if err := eventName(field+".event", x.Event); err != nil {
			return q, err
		}
		fs, err := filters(field+".where", x.Where)
		if err != nil {
			return q, err
		}
		if x.FromStep < 0 || x.FromStep >= len(q.Steps)-1 {
			return q, analytics.InvalidField(field+".fromStep", "must be a step index from 0 to %d, not %d", len(q.Steps)-2, x.FromStep)
		}
		if x.ToStep <= x.FromStep || x.ToStep >= len(q.Steps) {
			return q, analytics.InvalidField(field+".toStep", "must be a later step than fromStep, from %d to %d, not %d", x.FromStep+1, len(q.Steps)-1, x.ToStep)
		}
		q.Exclusions = append(q.Exclusions, analytics.FunnelExclusion{Event: x.Event, Filters: fs, FromStep: x.FromStep, ToStep: x.ToStep})
	}
	if q.Breakdown, q.BreakdownLimit, err = breakdown(req.Breakdown, req.BreakdownLimit); err != nil {
		return q, err
	}
	if req.Interval != "" && req.View != "trends" {
		return q, analytics.InvalidField("interval", "is only allowed with the view trends")
	}
	switch req.View {
	case "", "steps":
	case "time_to_convert", "trends":
		if req.View == "time_to_convert" {
			q.TimeToConvert = true
			break
		}
		switch iv := analytics.Interval(req.Interval); iv {
		case "":
			q.OverTime = analytics.Day
		case analytics.Day, analytics.Week:
			q.OverTime = iv
		default:
			return q, analytics.InvalidField("interval", "must be day or week, not %q", req.Interval)
		}
		if n := len(q.Buckets(q.OverTime)); n > MaxBuckets {
			return q, analytics.InvalidField("interval", "%s buckets over this range make %d points; at most %d are allowed", q.OverTime, n, MaxBuckets)
		}
	default:
		return q, analytics.InvalidField("view", "must be steps, time_to_convert or trends, not %q", req.View)
	}
	return q, nil
}

// FunnelStep is one step of a funnel answer.
type FunnelStep struct {
	// Name is the step's event.
	Name string `json:"name"`
	// Where is the step's filters as validated, absent for a step without
	// filters (whose answer is the spec's): with Name it names the step,
	// so two steps of one event tell apart.
	Where []FilterRequest `json:"where,omitempty"`
	Count int64           `json:"count"`
	// ConversionPct is null for the first step.
	ConversionPct *float64 `json:"conversionPct"`
}

// FunnelResult is the answer of POST /query/funnel.
type FunnelResult struct {
	// Steps is the whole funnel: with a breakdown, every value's users
	// together.
	Steps []FunnelStep `json:"steps"`
	// Breakdown is, with a breakdown only, the funnel of each top value
	// (most step-0 users first, ties by value) and of the other values
	// together last; in the views time_to_convert and trends, each with
	// its own TimeToConvert or OverTime.
	Breakdown []FunnelBreakdown `json:"breakdown,omitempty"`
	// TimeToConvert is, with the view time_to_convert only, how long the
	// users of each step after the first took from the step before (with
	// a breakdown, every value's users together).
	TimeToConvert []StepTime `json:"timeToConvert,omitempty"`
	// OverTime is, with the view trends only, the conversion of the users
	// who entered step 0 in each bucket of the range, every bucket (with
	// a breakdown, every value's users together).
	OverTime []FunnelPoint `json:"overTime,omitempty"`
}

// FunnelPoint is the users who entered a funnel in one bucket and how many
// of them went through to its last step.
type FunnelPoint struct {
	// Date is the bucket's start, a day of the product's zone.
	Date      string `json:"date"`
	Entered   int64  `json:"entered"`
	Converted int64  `json:"converted"`
	// ConversionPct is 100·converted/entered rounded to one decimal, 0
	// without entrants.
	ConversionPct float64 `json:"conversionPct"`
}

// StepTime is how long the users who reached a step took from the step
// before.
type StepTime struct {
	// Step is the step's index, from 1.
	Step int `json:"step"`
	// Converted is the users who reached the step (its count).
	Converted int64 `json:"converted"`
	// MedianSeconds is the lower median of their times, in seconds to the
	// microsecond; null when none reached the step.
	MedianSeconds *float64 `json:"medianSeconds"`
	// Histogram counts them in the fixed buckets of
	// analytics.ConvertBuckets, all of them, in order.
	Histogram []TimeBucket `json:"histogram"`
}

// TimeBucket is one bucket of a time-to-convert histogram: the users who
// took from FromSeconds up to (not including) ToSeconds, null for the last
// bucket, which has no end.
type TimeBucket struct {
	FromSeconds int64  `json:"fromSeconds"`
	ToSeconds   *int64 `json:"toSeconds"`
	Count       int64  `json:"count"`
}

// FunnelBreakdown is the funnel of one breakdown value.
type FunnelBreakdown struct {
	// BreakdownValue is the property's value on the users' step-0 event
	// ("" when not set), null for the other values.
	BreakdownValue *string      `json:"breakdownValue"`
	Other          bool         `json:"other,omitempty"`
	Steps          []FunnelStep `json:"steps"`
	// TimeToConvert and OverTime are the view's answer for these users
	// alone, as FunnelResult's are for all of them: with the view
	// time_to_convert or trends only.
	TimeToConvert []StepTime    `json:"timeToConvert,omitempty"`
	OverTime      []FunnelPoint `json:"overTime,omitempty"`
}

// RunFunnel computes a validated funnel. A funnel without exclusions and
// breakdown is the store's plain Funnel, as before; any other is its
// FunnelRows.
func (e *Engine) RunFunnel(ctx context.Context, q analytics.FunnelQuery) (FunnelResult, error) {
	if err := e.resolveFunnel(ctx, &q); err != nil {
		return FunnelResult{}, err
	}
	if q.TimeToConvert {
		return e.runFunnelTimes(ctx, q)
	}
	if q.OverTime != "" {
		return e.runFunnelOverTime(ctx, q)
	}
	var rows []analytics.FunnelRow
	err := e.read(ctx, func(ctx context.Context) error {
		if len(q.Exclusions) == 0 && q.Breakdown == nil {
			counts, err := e.Store.Funnel(ctx, q)
			rows = []analytics.FunnelRow{{Counts: counts}}
			return err
		}
		var err error
		rows, err = e.Store.FunnelRows(ctx, q)
		return err
	})
	if err != nil {
		return FunnelResult{}, err
	}
	total := make([]int64, len(q.Steps))
	for _, r := range rows {
		if len(r.Counts) != len(q.Steps) {
			return FunnelResult{}, errors.New("the store answered a funnel with the wrong number of steps")
		}
		for i, c := range r.Counts {
			total[i] += c
		}
	}
	res := FunnelResult{Steps: funnelSteps(q, total)}
	if q.Breakdown != nil {
		res.Breakdown = []FunnelBreakdown{}
		for _, r := range rows {
			res.Breakdown = append(res.Breakdown, keyOf(r.Breakdown, r.Other).funnel(q, r.Counts))
		}
	}
	return res, nil
}

// rowKey names one row of a breakdown: a value, or the other values.
type rowKey struct {
	value string
	other bool
}

// keyOf names a store's row (whose value is meaningless when other).
func keyOf(value string, other bool) rowKey {
	if other {
		return rowKey{other: true}
	}
	return rowKey{value: value}
}

// funnel is the row's entry of the answer with the counts of its users.
func (k rowKey) funnel(q analytics.FunnelQuery, counts []int64) FunnelBreakdown {
	b := FunnelBreakdown{Other: k.other, Steps: funnelSteps(q, counts)}
	if !k.other {
		v := k.value
		b.BreakdownValue = &v
	}
	return b
}

// topValues reads, for a view with a breakdown, the funnel's rows as the
// steps view has them (the store's FunnelRows: the top values by step-0
// users, then the other values) and sets q.TopValues to their values, so
// that the view's statement splits its users alike. It returns the rows'
// keys in order; without a breakdown, none.
//
// A store that ranks values itself (analytics.FunnelRanker) is asked to,
// with q.RankTop, and no keys are returned: the view's rows are put in the
// steps view's order afterwards (rankedKeys).
func (e *Engine) topValues(ctx context.Context, q *analytics.FunnelQuery) ([]rowKey, error) {
	if q.Breakdown == nil {
		return nil, nil
	}
	if _, ok := e.Store.(analytics.FunnelRanker); ok {
		q.RankTop = true
		return nil, nil
	}
	rows, err := e.Store.FunnelRows(ctx, *q)
	if err != nil {
		return nil, err
	}
	keys := make([]rowKey, 0, len(rows))
	q.TopValues = []string{}
	for _, r := range rows {
		keys = append(keys, keyOf(r.Breakdown, r.Other))
		if !r.Other {
			q.TopValues = append(q.TopValues, r.Breakdown)
		}
	}
	return keys, nil
}

// rankedKeys puts the values of the rows a FunnelRanker answered (entered:
// each row's step-0 users) in the order of FunnelRows: most users first,
// ties by value. The other row is left to withOther.
func rankedKeys(entered map[rowKey]int64) []rowKey {
	var keys []rowKey
	for k := range entered {
		if !k.other {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		if c := cmp.Compare(entered[b], entered[a]); c != 0 {
			return c
		}
		return strings.Compare(a.value, b.value)
	})
	return keys
}

// withOther returns keys with the other row added last when the view
// found users of other values that the rows had not (events stored
// between the two statements), so that the rows still add up to the
// whole funnel.
func withOther(keys []rowKey, found bool) []rowKey {
	if found && !slices.Contains(keys, rowKey{other: true}) {
		return append(keys, rowKey{other: true})
	}
	return keys
}

// runFunnelTimes computes the view time_to_convert: the whole funnel's
// times and, with a breakdown, each row's, the rows those of the steps
// view (topValues).
func (e *Engine) runFunnelTimes(ctx context.Context, q analytics.FunnelQuery) (FunnelResult, error) {
	var ft analytics.FunnelTimes
	var keys []rowKey
	err := e.read(ctx, func(ctx context.Context) (err error) {
		if keys, err = e.topValues(ctx, &q); err != nil {
			return err
		}
		ft, err = e.Store.FunnelTimes(ctx, q)
		return err
	})
	if err != nil {
		return FunnelResult{}, err
	}
	res := FunnelResult{}
	if res.TimeToConvert, err = stepTimes(q, ft.Counts, ft.Steps); err != nil {
		return FunnelResult{}, err
	}
	res.Steps = funnelSteps(q, ft.Counts)
	if q.Breakdown == nil {
		return res, nil
	}
	byKey := map[rowKey]analytics.FunnelTimesRow{}
	entered := map[rowKey]int64{}
	for _, r := range ft.Breakdown {
		k := keyOf(r.Breakdown, r.Other)
		byKey[k] = r
		if len(r.Counts) > 0 {
			entered[k] = r.Counts[0]
		}
	}
	if q.RankTop {
		keys = rankedKeys(entered)
	}
	res.Breakdown = []FunnelBreakdown{}
	for _, k := range withOther(keys, byKey[rowKey{other: true}].Counts != nil) {
		// A row without users in this statement has none at any step.
		r, ok := byKey[k]
		if !ok {
			r.Counts, r.Steps = make([]int64, len(q.Steps)), make([]analytics.StepTimes, len(q.Steps)-1)
		}
		b := k.funnel(q, r.Counts)
		if b.TimeToConvert, err = stepTimes(q, r.Counts, r.Steps); err != nil {
			return FunnelResult{}, err
		}
		res.Breakdown = append(res.Breakdown, b)
	}
	return res, nil
}

// stepTimes writes the times of one set of users (the whole funnel's, or
// a breakdown row's): counts at each step, and each later step's times.
func stepTimes(q analytics.FunnelQuery, counts []int64, steps []analytics.StepTimes) ([]StepTime, error) {
	if len(counts) != len(q.Steps) || len(steps) != len(q.Steps)-1 {
		return nil, errors.New("the store answered a funnel's times with the wrong number of steps")
	}
	out := []StepTime{}
	for i, st := range steps {
		t := StepTime{Step: i + 1, Converted: counts[i+1], Histogram: make([]TimeBucket, len(analytics.ConvertBuckets))}
		if t.Converted > 0 {
			s := float64(st.MedianMicros) / 1e6
			t.MedianSeconds = &s
		}
		for k, lo := range analytics.ConvertBuckets {
			t.Histogram[k] = TimeBucket{FromSeconds: lo}
			if k+1 < len(analytics.ConvertBuckets) {
				hi := analytics.ConvertBuckets[k+1]
				t.Histogram[k].ToSeconds = &hi
			}
			if k < len(st.Histogram) {
				t.Histogram[k].Count = st.Histogram[k]
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// runFunnelOverTime computes the view trends: every bucket of the range,
// zero where nobody entered, and the whole funnel, which the buckets add
// up to (each user entered in one bucket). With a breakdown, each row of
// the steps view (topValues) gets the same of its users, and the whole
// funnel is every row's users together.
func (e *Engine) runFunnelOverTime(ctx context.Context, q analytics.FunnelQuery) (FunnelResult, error) {
	var rows []analytics.FunnelBucket
	var keys []rowKey
	err := e.read(ctx, func(ctx context.Context) (err error) {
		if keys, err = e.topValues(ctx, &q); err != nil {
			return err
		}
		rows, err = e.Store.FunnelOverTime(ctx, q)
		return err
	})
	if err != nil {
		return FunnelResult{}, err
	}
	res := FunnelResult{}
	var counts []int64
	if res.OverTime, counts, err = overTime(q, rows); err != nil {
		return FunnelResult{}, err
	}
	res.Steps = funnelSteps(q, counts)
	if q.Breakdown == nil {
		return res, nil
	}
	byKey := map[rowKey][]analytics.FunnelBucket{}
	entered := map[rowKey]int64{}
	for _, r := range rows {
		k := keyOf(r.Breakdown, r.Other)
		byKey[k] = append(byKey[k], r)
		if len(r.Counts) > 0 {
			entered[k] += r.Counts[0]
		}
	}
	if q.RankTop {
		keys = rankedKeys(entered)
	}
	res.Breakdown = []FunnelBreakdown{}
	for _, k := range withOther(keys, byKey[rowKey{other: true}] != nil) {
		points, counts, err := overTime(q, byKey[k])
		if err != nil {
			return FunnelResult{}, err
		}
		b := k.funnel(q, counts)
		b.OverTime = points
		res.Breakdown = append(res.Breakdown, b)
	}
	return res, nil
}

// overTime lays a store's buckets out on every bucket of the range, the
// rows of one bucket added up (a breakdown's values, for the whole
// funnel), and returns the points and the counts they add up to.
func overTime(q analytics.FunnelQuery, rows []analytics.FunnelBucket) ([]FunnelPoint, []int64, error) {
	byStart := map[time.Time][]int64{}
	for _, r := range rows {
		if len(r.Counts) != len(q.Steps) {
			return nil, nil, errors.New("the store answered a funnel over time with the wrong number of steps")
		}
		c := byStart[r.Bucket]
		if c == nil {
			c = make([]int64, len(q.Steps))
			byStart[r.Bucket] = c
		}
		for i, n := range r.Counts {
			c[i] += n
		}
	}
	points := []FunnelPoint{}
	counts := make([]int64, len(q.Steps))
	for _, start := range q.Buckets(q.OverTime) {
		p := FunnelPoint{Date: start.Format(dateLayout)}
		if c, ok := byStart[start]; ok {
			for i, n := range c {
				counts[i] += n
			}
			p.Entered, p.Converted = c[0], c[len(c)-1]
		}
		p.ConversionPct = ConversionPct(p.Converted, p.Entered)
		points = append(points, p)
	}
	return points, counts, nil
}

// funnelSteps names a funnel's counts by its steps.
func funnelSteps(q analytics.FunnelQuery, counts []int64) []FunnelStep {
	steps := make([]FunnelStep, len(q.Steps))
	for i, name := range q.Steps {
		steps[i] = FunnelStep{Name: name, Where: filterRequests(q.StepFilter(i)), Count: counts[i]}
		if i > 0 {
			pct := ConversionPct(counts[i], counts[i-1])
			steps[i].ConversionPct = &pct
		}
	}
	return steps
}

// filterRequests writes validated filters back in the request's shape.
func filterRequests(fs []analytics.Filter) []FilterRequest {
	if len(fs) == 0 {
		return nil
	}
	out := make([]FilterRequest, len(fs))
	for i, f := range fs {
		if f.Person != nil {
			var v any
			if f.Person.Operator != analytics.OpIsSet && f.Person.Operator != analytics.OpIsNotSet {
				v = f.Person.Value
			}
			out[i] = FilterRequest{Property: analytics.PersonPropertyPrefix + f.Person.Key, Operator: string(f.Person.Operator), Value: v}
			continue
		}
		if f.Cohort != nil {
			out[i] = FilterRequest{Property: analytics.CohortFilterProperty, Operator: string(f.Operator), Value: float64(f.Cohort.ID)}
			continue
		}
		name := f.Property.Column
		if f.Property.Key != "" {
			name = "properties." + f.Property.Key
		}
		out[i] = FilterRequest{Property: name, Operator: string(f.Operator), Value: f.Value}
	}
	return out
}

// breakdown reads a breakdown property and its limit as a trend or a
// funnel takes them: the limit defaults to DefaultBreakdown and is refused
// without a property.
func breakdown(name string, limit int) (*analytics.Property, int, error) {
	if name == "" {
		if limit != 0 {
			return nil, 0, analytics.InvalidField("breakdownLimit", "is only allowed with a breakdown")
		}
		return nil, 0, nil
	}
	p, err := property("breakdown", name)
	if err != nil {
		return nil, 0, err
	}
	n := DefaultBreakdown
	if limit != 0 {
		n = limit
	}
	if n < 1 || n > MaxBreakdown {
		return nil, 0, analytics.InvalidField("breakdownLimit", "must be from 1 to %d, not %d", MaxBreakdown, limit)
	}
	return &p, n, nil
}
