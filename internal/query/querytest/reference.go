// Package querytest is a small, deliberately naive reference implementation
// ("oracle") of the product-analytics queries: funnels, trends and retention.
//
// Tests use it to check the real SQL-based query server: they feed the same
// events to both and compare the answers. Every function here is a plain
// loop over a slice of events, written to be read and checked by a reviewer
// in minutes; speed does not matter. The package must not share code with
// any SQL engine.
package querytest

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Event is one ingested event as the oracle sees it.
type Event struct {
	// DistinctID identifies the user; funnels, unique users and retention
	// group by it.
	DistinctID string
	// Name is the event name, for example "signup".
	Name string
	// Time is when the event happened, in UTC with microsecond precision.
	Time time.Time
	// Test is true when the event was sent with a test key (env=test).
	Test bool
	// Bot is true when the event was classified as an AI bot at ingest.
	Bot bool
	// URL, Path, Referrer, Browser, OS and DeviceType are the fixed
	// columns; the empty string means not set.
	URL, Path, Referrer, Browser, OS, DeviceType string
	// Source, Channel, UTMSource, UTMMedium and UTMCampaign are the
	// acquisition columns ingest fills in; "" means not set.
	Source, Channel, UTMSource, UTMMedium, UTMCampaign string
	// Country, Region and City are the location ingest finds from the
	// client address, and ScreenClass the class of the $viewport_width
	// property; "" means not set.
	Country, Region, City, ScreenClass string
	// Properties holds the custom properties. Values are string, int64,
	// bool or nil (JSON null). A nil map is the same as an empty one.
	Properties map[string]any
}

// Filter is one condition on a property of an event.
type Filter struct {
	// Property is a fixed column (url, path, referrer, browser, os,
	// device_type, source, channel, utm_source, utm_medium, utm_campaign,
	// country, region, city, screen_class) or "properties.<key>".
	Property string
	// Operator is one of eq, neq, contains, not_contains, regex, gt, lt,
	// is_set and is_not_set.
	Operator string
	// Value is a string, an int64 or float64, a bool, or nil; for the
	// Property "cohort" (with the operators in and not_in) a CohortValue.
	Value any
}

// CohortValue is a cohort filter's value: the cohort's id, as a request
// names it, and its members' distinct ids. The filter passes the events
// of users who are (in) or are not (not_in) among them.
type CohortValue struct {
	ID      int64
	Members map[string]bool
}

// Series is one line asked of a trend query.
type Series struct {
	// Event is the event name counted.
	Event string
	// Math is "total" (number of events) or "unique_users" (number of
	// distinct DistinctIDs).
	Math string
	// Filters must all pass for an event to count in this series, in
	// addition to the query's global filters.
	Filters []Filter
}

// Point is the value of one trend series in one time bucket.
type Point struct {
	// Date is the start of the bucket in UTC.
	Date time.Time
	// Value is the count for the bucket.
	Value int64
}

// TrendSeries is one line of a trend answer.
type TrendSeries struct {
	// Event is the event name of the input series this line belongs to.
	Event string
	// BreakdownValue is the breakdown value of this line: a pointer to ""
	// for events where the breakdown property is not set, and nil both for
	// the "other" line and when the query has no breakdown.
	BreakdownValue *string
	// Other is true only for the "other" line, which gathers every
	// breakdown value outside the top limit.
	Other bool
	// Data holds one point per bucket, in time order, zeros included.
	Data []Point
	// Total is, without a breakdown, the series' measure over the whole
	// range: its events for "total", its distinct users for
	// "unique_users". It is nil under a breakdown.
	Total *int64
}

// Cohort is one row of a retention answer.
type Cohort struct {
	// Date is the start of the cohort's period in UTC.
	Date time.Time
	// Size is the number of users whose first start event falls in the
	// period.
	Size int64
	// Values[0] is Size; Values[k] is the number of cohort users with a
	// return event k periods after the cohort's period.
	Values []int64
}

// day is the length of one UTC day; all query ranges are whole days.
const day = 24 * time.Hour

// ---------------------------------------------------------------------------
// Event selection
// ---------------------------------------------------------------------------

// inRange reports whether t is in [from, to+1day).
func inRange(t, from, to time.Time, loc *time.Location) bool {
	return !t.Before(midnight(from, loc)) && t.Before(midnight(to.AddDate(0, 0, 1), loc))
}

// midnight returns the instant at which day d (a date written as a UTC
// midnight) starts in loc, by Go's own calendar: the reference computes
// local time with time.Location only, independently of the stores'
// offset tables.
func midnight(d time.Time, loc *time.Location) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
}

// wall returns loc's wall clock at t as a UTC time, the form of a local
// bucket's start.
func wall(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// funnelOrRetentionEvents returns the events of the requested environment,
// bots left out.
func funnelOrRetentionEvents(events []Event, test bool) []Event {
	var out []Event
	for _, e := range events {
		if e.Test == test && !e.Bot {
			out = append(out, e)
		}
	}
	return out
}

// trendEvents returns the events of the requested environment, bots left
// out except for events named "$bot_pageview".
func trendEvents(events []Event, test bool) []Event {
	var out []Event
	for _, e := range events {
		if e.Test != test {
			continue
		}
		if e.Bot && e.Name != "$bot_pageview" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// ---------------------------------------------------------------------------
// Funnel
// ---------------------------------------------------------------------------

// Funnel returns, for each step, the number of users who reached it.
//
// A user enters the funnel at t0, the earliest steps[0] event with time in
// [from, to+1day). For N ≥ 1, tN is the earliest steps[N] event of that user
// with t(N-1) < time ≤ t(N-1) + windowHours hours; when there is none, the
// user stops at step N-1. Only events with Test == test count, and bot
// events never do. The result has one count per step.
func Funnel(events []Event, test bool, steps []string, from, to time.Time, windowHours int) []int64 {
	return FunnelIn(time.UTC, events, test, steps, from, to, windowHours)
}

// FunnelIn is Funnel with from and to days of the zone loc.
func FunnelIn(loc *time.Location, events []Event, test bool, steps []string, from, to time.Time, windowHours int) []int64 {
	return FunnelSteps(loc, events, test, PlainSteps(steps), from, to, windowHours)
}

// FunnelStep is one step of a funnel: an event name and the filters its
// events must all pass (none for a plain step).
type FunnelStep struct {
	Event   string
	Filters []Filter
}

// PlainSteps returns steps without filters, one for each name.
func PlainSteps(names []string) []FunnelStep {
	out := make([]FunnelStep, len(names))
	for i, n := range names {
		out[i].Event = n
	}
	return out
}

// matches reports whether e is one of step's events.
func (step FunnelStep) matches(e Event) bool {
	return e.Name == step.Event && passesAll(e, step.Filters)
}

// FunnelSteps is FunnelIn for steps that may carry filters: an event
// counts for a step only when it has the step's name and passes every one
// of its filters.
func FunnelSteps(loc *time.Location, events []Event, test bool, steps []FunnelStep, from, to time.Time, windowHours int) []int64 {
	counts := make([]int64, len(steps))
	for _, userEvents := range byUser(events, test) {
		for n := range stepTimes(userEvents, steps, from, to, windowHours, loc) {
			counts[n]++
		}
	}
	return counts
}

// byUser groups the events a funnel may use by user.
func byUser(events []Event, test bool) map[string][]Event {
	out := map[string][]Event{}
	for _, e := range funnelOrRetentionEvents(events, test) {
		out[e.DistinctID] = append(out[e.DistinctID], e)
	}
	return out
}

// stepTimes returns the times of the steps one user reached, in order:
// none without a step-0 event in the range.
func stepTimes(userEvents []Event, steps []FunnelStep, from, to time.Time, windowHours int, loc *time.Location) []time.Time {
	window := time.Duration(windowHours) * time.Hour
	// Step 0: the earliest steps[0] event inside the date range.
	var prev time.Time
	found := false
	for _, e := range userEvents {
		if !steps[0].matches(e) || !inRange(e.Time, from, to, loc) {
			continue
		}
		if !found || e.Time.Before(prev) {
			prev = e.Time
			found = true
		}
	}
	if !found {
		return nil
	}
	times := []time.Time{prev}
	// Steps 1..: the earliest matching event strictly after the previous
	// step and at most window later.
	for n := 1; n < len(steps); n++ {
		var next time.Time
		found = false
		for _, e := range userEvents {
			if !steps[n].matches(e) {
				continue
			}
			if !e.Time.After(prev) || e.Time.After(prev.Add(window)) {
				continue
			}
			if !found || e.Time.Before(next) {
				next = e.Time
				found = true
			}
		}
		if !found {
			break
		}
		times = append(times, next)
		prev = next
	}
	return times
}

// FunnelExclusion leaves out of a funnel every user with an event of
// Event passing Filters strictly between their events of steps FromStep
// and ToStep; a user who did not reach ToStep is kept.
type FunnelExclusion struct {
	Event            string
	Filters          []Filter
	FromStep, ToStep int
}

// FunnelBreakdownRow is the funnel of one breakdown value (Value), or of
// the values outside the top ones (Other).
type FunnelBreakdownRow struct {
	Value  *string
	Other  bool
	Counts []int64
}

// funnelUser is one user a funnel with exclusions keeps: the times of
// the steps they reached, and their breakdown value.
type funnelUser struct {
	times []time.Time
	value string
}

// funnelUsers returns the users who entered the funnel and no exclusion
// leaves out, each with the breakdown property's value on their step-0
// event (the least value of several at that instant, "" when not set or
// without a breakdown).
func funnelUsers(loc *time.Location, events []Event, test bool, steps []FunnelStep, exclusions []FunnelExclusion,
	breakdown string, from, to time.Time, windowHours int) []funnelUser {
	var out []funnelUser
	for _, userEvents := range byUser(events, test) {
		times := stepTimes(userEvents, steps, from, to, windowHours, loc)
		if len(times) == 0 || excluded(userEvents, times, exclusions) {
			continue
		}
		value, set := "", false
		for _, e := range userEvents {
			if e.Time.Equal(times[0]) && steps[0].matches(e) {
				if v := breakdownValue(e, breakdown); !set || v < value {
					value, set = v, true
				}
			}
		}
		out = append(out, funnelUser{times: times, value: value})
	}
	return out
}

// rowOf returns the index in rows (FunnelBreakdown's) of the row a value
// counts in: its own, or the other row.
func rowOf(rows []FunnelBreakdownRow, value string) int {
	for i, r := range rows {
		if r.Other || *r.Value == value {
			return i
		}
	}
	panic("querytest: a value outside the breakdown's rows")
}

// FunnelBreakdown is FunnelSteps with exclusions and a breakdown: a user
// an exclusion leaves out counts at no step; each user counts under the
// breakdown property's value on their step-0 event (the least value of
// several at that instant, "" when not set). It returns the whole funnel
// and, with a breakdown, the limit values with the most step-0 users (ties
// by value) and then the other values' users together; without one, rows
// is nil.
func FunnelBreakdown(loc *time.Location, events []Event, test bool, steps []FunnelStep, exclusions []FunnelExclusion,
	breakdown string, limit int, from, to time.Time, windowHours int) (total []int64, rows []FunnelBreakdownRow) {
	total = make([]int64, len(steps))
	byValue := map[string][]int64{}
	for _, u := range funnelUsers(loc, events, test, steps, exclusions, breakdown, from, to, windowHours) {
		if byValue[u.value] == nil {
			byValue[u.value] = make([]int64, len(steps))
		}
		for n := range u.times {
			total[n]++
			byValue[u.value][n]++
		}
	}
	if breakdown == "" {
		return total, nil
	}
	values := make([]string, 0, len(byValue))
	for v := range byValue {
		values = append(values, v)
	}
	slices.SortFunc(values, func(a, b string) int {
		if ca, cb := byValue[a][0], byValue[b][0]; ca != cb {
			if ca > cb {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for i, v := range values {
		if i < limit {
			rows = append(rows, FunnelBreakdownRow{Value: &v, Counts: byValue[v]})
			continue
		}
		if i == limit {
			rows = append(rows, FunnelBreakdownRow{Other: true, Counts: make([]int64, len(steps))})
		}
		for n, c := range byValue[v] {
			rows[limit].Counts[n] += c
		}
	}
	return total, rows
}

// ConvertBuckets are the time-to-convert histogram's lower bounds in
// seconds, as docs/queries.md ("Time to convert") lists them.
var ConvertBuckets = []int64{0, 10, 30, 60, 300, 1800, 3600, 10800, 86400, 259200, 604800}

// StepTime is how long one step's users took from the step before.
type StepTime struct {
	Converted int64
	// Median is the lower median (of an even number, the lower middle),
	// 0 when no user reached the step.
	Median    time.Duration
	Histogram []int64
}

// FunnelTimes is FunnelBreakdown without a breakdown that also returns,
// for each step after the first, how long its users took from the step
// before.
func FunnelTimes(loc *time.Location, events []Event, test bool, steps []FunnelStep, exclusions []FunnelExclusion,
	from, to time.Time, windowHours int) (counts []int64, times []StepTime) {
	counts, times, _ = FunnelTimesBy(loc, events, test, steps, exclusions, "", 0, from, to, windowHours)
	return counts, times
}

// FunnelTimesRow is the time to convert of the users of one row of a
// breakdown (FunnelBreakdownRow's Value or Other): their counts at each
// step and their times.
type FunnelTimesRow struct {
	Value  *string
	Other  bool
	Counts []int64
	Times  []StepTime
}

// FunnelTimesBy is FunnelTimes with a breakdown: the whole funnel's counts
// and times, and for each row of FunnelBreakdown (the same values in the
// same order, the other values together last) the counts and times of its
// users alone. Without a breakdown rows is nil.
func FunnelTimesBy(loc *time.Location, events []Event, test bool, steps []FunnelStep, exclusions []FunnelExclusion,
	breakdown string, limit int, from, to time.Time, windowHours int) (counts []int64, times []StepTime, rows []FunnelTimesRow) {
	users := funnelUsers(loc, events, test, steps, exclusions, breakdown, from, to, windowHours)
	counts, times = timesOf(users, len(steps))
	if breakdown == "" {
		return counts, times, nil
	}
	_, ranked := FunnelBreakdown(loc, events, test, steps, exclusions, breakdown, limit, from, to, windowHours)
	byRow := make([][]funnelUser, len(ranked))
	for _, u := range users {
		i := rowOf(ranked, u.value)
		byRow[i] = append(byRow[i], u)
	}
	for i, r := range ranked {
		c, t := timesOf(byRow[i], len(steps))
		rows = append(rows, FunnelTimesRow{Value: r.Value, Other: r.Other, Counts: c, Times: t})
	}
	return counts, times, rows
}

// timesOf returns how many of users reached each of n steps and, for each
// step after the first, how long they took from the step before.
func timesOf(users []funnelUser, n int) (counts []int64, times []StepTime) {
	counts = make([]int64, n)
	took := make([][]time.Duration, n)
	for _, u := range users {
		for k := range u.times {
			counts[k]++
			if k > 0 {
				took[k] = append(took[k], u.times[k].Sub(u.times[k-1]))
			}
		}
	}
	for k := 1; k < n; k++ {
		st := StepTime{Converted: counts[k], Histogram: make([]int64, len(ConvertBuckets))}
		slices.Sort(took[k])
		if len(took[k]) > 0 {
			st.Median = took[k][(len(took[k])-1)/2]
		}
		for _, d := range took[k] {
			b := len(ConvertBuckets) - 1
			for b > 0 && d < time.Duration(ConvertBuckets[b])*time.Second {
				b--
			}
			st.Histogram[b]++
		}
		times = append(times, st)
	}
	return counts, times
}

// FunnelPoint is the funnel of the users who entered step 0 in one bucket
// (Date, the bucket's start as bucketStart writes it).
type FunnelPoint struct {
	Date   time.Time
	Counts []int64
}

// FunnelOverTime is FunnelBreakdown without a breakdown, split by the
// bucket of interval ("day" or "week", of the zone loc) holding each
// user's step-0 time: every bucket of the range, in order.
func FunnelOverTime(loc *time.Location, events []Event, test bool, steps []FunnelStep, exclusions []FunnelExclusion,
	from, to time.Time, windowHours int, interval string) []FunnelPoint {
	points, _ := FunnelOverTimeBy(loc, events, test, steps, exclusions, "", 0, from, to, windowHours, interval)
	return points
}

// FunnelOverTimeRow is the conversion over time of the users of one row
// of a breakdown (FunnelBreakdownRow's Value or Other).
type FunnelOverTimeRow struct {
	Value  *string
	Other  bool
	Points []FunnelPoint
}

// FunnelOverTimeBy is FunnelOverTime with a breakdown: the whole funnel's
// points, and for each row of FunnelBreakdown (the same values in the same
// order, the other values together last) the points of its users alone.
// Without a breakdown rows is nil.
func FunnelOverTimeBy(loc *time.Location, events []Event, test bool, steps []FunnelStep, exclusions []FunnelExclusion,
	breakdown string, limit int, from, to time.Time, windowHours int, interval string) (points []FunnelPoint, rows []FunnelOverTimeRow) {
	users := funnelUsers(loc, events, test, steps, exclusions, breakdown, from, to, windowHours)
	points = pointsOf(users, len(steps), loc, from, to, interval)
	if breakdown == "" {
		return points, nil
	}
	_, ranked := FunnelBreakdown(loc, events, test, steps, exclusions, breakdown, limit, from, to, windowHours)
	byRow := make([][]funnelUser, len(ranked))
	for _, u := range users {
		i := rowOf(ranked, u.value)
		byRow[i] = append(byRow[i], u)
	}
	for i, r := range ranked {
		rows = append(rows, FunnelOverTimeRow{Value: r.Value, Other: r.Other, Points: pointsOf(byRow[i], len(steps), loc, from, to, interval)})
	}
	return points, rows
}

// pointsOf counts users, of a funnel of n steps, by the bucket of interval
// holding their step-0 time: every bucket of the range [from, to], in
// order.
func pointsOf(users []funnelUser, n int, loc *time.Location, from, to time.Time, interval string) []FunnelPoint {
	buckets := bucketsBetween(midnight(from, loc), midnight(to.AddDate(0, 0, 1), loc).Add(-time.Microsecond), interval, loc)
	out := make([]FunnelPoint, len(buckets))
	index := map[time.Time]int{}
	for i, b := range buckets {
		out[i] = FunnelPoint{Date: b, Counts: make([]int64, n)}
		index[b] = i
	}
	for _, u := range users {
		p := out[index[bucketStart(u.times[0], interval, loc)]]
		for k := range u.times {
			p.Counts[k]++
		}
	}
	return out
}

// excluded reports whether an exclusion leaves out the user whose step
// times are times.
func excluded(userEvents []Event, times []time.Time, exclusions []FunnelExclusion) bool {
	for _, x := range exclusions {
		if x.ToStep >= len(times) {
			continue
		}
		for _, e := range userEvents {
			if e.Name == x.Event && passesAll(e, x.Filters) && e.Time.After(times[x.FromStep]) && e.Time.Before(times[x.ToStep]) {
				return true
			}
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Time buckets
// ---------------------------------------------------------------------------

// bucketStart returns the start of the bucket holding t: the hour, the UTC
// day, the Monday of the ISO week, or the first of the month.
func bucketStart(t time.Time, interval string, loc *time.Location) time.Time {
	t = wall(t, loc)
	switch interval {
	case "hour":
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, time.UTC)
	case "day":
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case "week":
		midnight := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		daysSinceMonday := (int(midnight.Weekday()) + 6) % 7 // Monday 0 … Sunday 6
		return midnight.AddDate(0, 0, -daysSinceMonday)
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	panic("querytest: unknown interval " + strconv.Quote(interval))
}

// advance returns the start of the bucket k buckets after the bucket
// starting at b.
func advance(b time.Time, interval string, k int) time.Time {
	switch interval {
	case "hour":
		return b.Add(time.Duration(k) * time.Hour)
	case "day":
		return b.AddDate(0, 0, k)
	case "week":
		return b.AddDate(0, 0, 7*k)
	case "month":
		return b.AddDate(0, k, 0)
	}
	panic("querytest: unknown interval " + strconv.Quote(interval))
}

// bucketsBetween lists every bucket start from the bucket of first through
// the bucket of last, both included, in order.
// In a zone, first and last are instants and the buckets local ones; an
// hour the zone skips (its wall time never shows) is left out.
func bucketsBetween(first, last time.Time, interval string, loc *time.Location) []time.Time {
	var out []time.Time
	end := bucketStart(last, interval, loc)
	for b := bucketStart(first, interval, loc); !b.After(end); b = advance(b, interval, 1) {
		l := time.Date(b.Year(), b.Month(), b.Day(), b.Hour(), 0, 0, 0, loc)
		if interval == "hour" && l.Hour() != b.Hour() {
			continue
		}
		out = append(out, b)
	}
	return out
}

// ---------------------------------------------------------------------------
// Properties and filters
// ---------------------------------------------------------------------------

// propertyValue returns the string form of an event's property and whether
// the property is set. Fixed columns are set when not empty; a custom
// property is set when the key is present with a non-nil value (the empty
// string counts as set). An unknown property name is never set.
func propertyValue(e Event, property string) (string, bool) {
	switch property {
	case "url":
		return e.URL, e.URL != ""
	case "path":
		return e.Path, e.Path != ""
	case "referrer":
		return e.Referrer, e.Referrer != ""
	case "browser":
		return e.Browser, e.Browser != ""
	case "os":
		return e.OS, e.OS != ""
	case "device_type":
		return e.DeviceType, e.DeviceType != ""
	case "source":
		return e.Source, e.Source != ""
	case "channel":
		return e.Channel, e.Channel != ""
	case "utm_source":
		return e.UTMSource, e.UTMSource != ""
	case "utm_medium":
		return e.UTMMedium, e.UTMMedium != ""
	case "utm_campaign":
		return e.UTMCampaign, e.UTMCampaign != ""
	case "country":
		return e.Country, e.Country != ""
	case "region":
		return e.Region, e.Region != ""
	case "city":
		return e.City, e.City != ""
	case "screen_class":
		return e.ScreenClass, e.ScreenClass != ""
	}
	key, ok := strings.CutPrefix(property, "properties.")
	if !ok {
		return "", false
	}
	v, ok := e.Properties[key] // a nil map reads as empty
	if !ok || v == nil {
		return "", false
	}
	return stringForm(v), true
}

// stringForm renders a property or filter value: strings as they are,
// integers in decimal, floats in the shortest exact decimal, and booleans
// as "true" or "false".
func stringForm(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	panic("querytest: unsupported value type")
}

// number returns a filter value as a float64 and whether it is a number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// passes reports whether event e satisfies filter f.
func passes(e Event, f Filter) bool {
	if f.Property == "cohort" {
		members := f.Value.(CohortValue).Members
		switch f.Operator {
		case "in":
			return members[e.DistinctID]
		case "not_in":
			return !members[e.DistinctID]
		}
		panic("querytest: unknown cohort operator " + strconv.Quote(f.Operator))
	}
	form, set := propertyValue(e, f.Property)
	switch f.Operator {
	case "eq":
		return equals(form, set, f.Value)
	case "neq":
		return !equals(form, set, f.Value)
	case "contains":
		return set && containsFold(form, f.Value)
	case "not_contains":
		return !(set && containsFold(form, f.Value))
	case "regex":
		return set && regexp.MustCompile(stringForm(f.Value)).MatchString(form)
	case "gt", "lt":
		want, ok := number(f.Value)
		if !set || !ok {
			return false
		}
		got, err := strconv.ParseFloat(form, 64)
		if err != nil {
			return false
		}
		if f.Operator == "gt" {
			return got > want
		}
		return got < want
	case "is_set":
		return set
	case "is_not_set":
		return !set
	}
	panic("querytest: unknown operator " + strconv.Quote(f.Operator))
}

// equals is the eq operator: the property is set and its string form
// matches the value (numerically when the value is a number). A nil value
// never matches.
func equals(form string, set bool, value any) bool {
	if !set || value == nil {
		return false
	}
	if want, ok := number(value); ok {
		got, err := strconv.ParseFloat(form, 64)
		return err == nil && got == want
	}
	return form == stringForm(value)
}

// containsFold is the contains operator on a set property: a
// case-insensitive substring test.
func containsFold(form string, value any) bool {
	if value == nil {
		return false
	}
	return strings.Contains(strings.ToLower(form), strings.ToLower(stringForm(value)))
}

// passesAll reports whether event e satisfies every filter.
func passesAll(e Event, filters []Filter) bool {
	for _, f := range filters {
		if !passes(e, f) {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// Trend
// ---------------------------------------------------------------------------

// Trend counts events per time bucket, one line per series, or with a
// breakdown one line per top breakdown value of each series plus an
// "other" line.
//
// An event counts for a series when its name is the series' event, its
// time is in [from, to+1day), and every global and series filter passes.
// Only events with Test == test count; bot events count only when named
// "$bot_pageview".
//
// Buckets run from the bucket of from through the bucket of the last
// instant of to (to+1day−1µs), which for "day", "week" and "month" is the
// bucket of to itself and for "hour" is 23:00 on day to. Every bucket is
// listed, empty ones with 0.
//
// With a breakdown, each series' values are ranked by their count over the
// whole range (events for "total", distinct users for "unique_users"),
// descending, ties by value ascending. The first limit values get a line
// each; when more values exist, one more line with Other set counts the
// events of all the remaining values. A series with no counted events gives
// no line at all under a breakdown.
//
// Without a breakdown each line also has a Total over the whole range: the
// events counted, or for "unique_users" the distinct users among them.
func Trend(events []Event, test bool, series []Series, filters []Filter, from, to time.Time, interval, breakdown string, limit int) []TrendSeries {
	return TrendIn(time.UTC, events, test, series, filters, from, to, interval, breakdown, limit)
}

// TrendIn is Trend with from and to days of the zone loc and its buckets
// local ones, their dates wall times written as UTC times.
func TrendIn(loc *time.Location, events []Event, test bool, series []Series, filters []Filter, from, to time.Time, interval, breakdown string, limit int) []TrendSeries {
	buckets := bucketsBetween(midnight(from, loc), midnight(to.AddDate(0, 0, 1), loc).Add(-time.Microsecond), interval, loc)
	usable := trendEvents(events, test)

	var out []TrendSeries
	for _, s := range series {
		// The events this series counts.
		var counted []Event
		for _, e := range usable {
			if e.Name == s.Event && inRange(e.Time, from, to, loc) &&
				passesAll(e, filters) && passesAll(e, s.Filters) {
				counted = append(counted, e)
			}
		}

		if breakdown == "" {
			total := measure(counted, s.Math)
			out = append(out, TrendSeries{
				Event: s.Event,
				Data:  bucketValues(counted, buckets, interval, s.Math, loc),
				Total: &total,
			})
			continue
		}

		// Group the counted events by breakdown value.
		byValue := map[string][]Event{}
		for _, e := range counted {
			v := breakdownValue(e, breakdown)
			byValue[v] = append(byValue[v], e)
		}

		// Rank the values by their whole-range total.
		var values []string
		for v := range byValue {
			values = append(values, v)
		}
		total := func(v string) int64 { return measure(byValue[v], s.Math) }
		slices.SortFunc(values, func(a, b string) int {
			if ta, tb := total(a), total(b); ta != tb {
				if ta > tb {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})

		top := values
		var rest []string
		if len(values) > limit {
			top = values[:max(limit, 0)]
			rest = values[max(limit, 0):]
		}
		for _, v := range top {
			out = append(out, TrendSeries{
				Event:          s.Event,
				BreakdownValue: &v,
				Data:           bucketValues(byValue[v], buckets, interval, s.Math, loc),
			})
		}
		if len(rest) > 0 {
			var others []Event
			for _, v := range rest {
				others = append(others, byValue[v]...)
			}
			out = append(out, TrendSeries{
				Event: s.Event,
				Other: true,
				Data:  bucketValues(others, buckets, interval, s.Math, loc),
			})
		}
	}
	return out
}

// breakdownValue is the string form of the breakdown property, or "" when
// it is not set.
func breakdownValue(e Event, breakdown string) string {
	form, set := propertyValue(e, breakdown)
	if !set {
		return ""
	}
	return form
}

// bucketValues returns one point per bucket with the measure of the events
// falling in it.
func bucketValues(events []Event, buckets []time.Time, interval, math string, loc *time.Location) []Point {
	points := make([]Point, len(buckets))
	for i, b := range buckets {
		var inBucket []Event
		for _, e := range events {
			if bucketStart(e.Time, interval, loc).Equal(b) {
				inBucket = append(inBucket, e)
			}
		}
		points[i] = Point{Date: b, Value: measure(inBucket, math)}
	}
	return points
}

// measure is the series math over a set of events: the number of events
// for "total", the number of distinct users for "unique_users".
func measure(events []Event, math string) int64 {
	switch math {
	case "total":
		return int64(len(events))
	case "unique_users":
		users := map[string]bool{}
		for _, e := range events {
			users[e.DistinctID] = true
		}
		return int64(len(users))
	}
	panic("querytest: unknown math " + strconv.Quote(math))
}

// ---------------------------------------------------------------------------
// Retention
// ---------------------------------------------------------------------------

// Retention returns one cohort per period from the period of from through
// the period of to, empty cohorts included.
//
// A user belongs to the cohort of the period holding their earliest
// startEvent in [from, to+1day). For cohort i of P, Values has P−i
// entries: Values[0] is the cohort size and Values[k] the number of cohort
// users with at least one returnEvent (at any time) in the period k
// periods after the cohort's. Only events with Test == test count, and bot
// events never do. period is "day", "week" or "month".
func Retention(events []Event, test bool, startEvent, returnEvent string, from, to time.Time, period string) []Cohort {
	return RetentionIn(time.UTC, events, test, startEvent, returnEvent, from, to, period)
}

// RetentionIn is Retention with from and to days of the zone loc and its
// periods local ones.
func RetentionIn(loc *time.Location, events []Event, test bool, startEvent, returnEvent string, from, to time.Time, period string) []Cohort {
	return RetentionWhere(loc, events, test, nil, startEvent, returnEvent, from, to, period)
}

// RetentionWhere is RetentionIn counting only the start and return events
// that pass every filter.
func RetentionWhere(loc *time.Location, events []Event, test bool, filters []Filter, startEvent, returnEvent string, from, to time.Time, period string) []Cohort {
	var usable []Event
	for _, e := range funnelOrRetentionEvents(events, test) {
		if passesAll(e, filters) {
			usable = append(usable, e)
		}
	}

	// Each user's earliest start event in range.
	first := map[string]time.Time{}
	for _, e := range usable {
		if e.Name != startEvent || !inRange(e.Time, from, to, loc) {
			continue
		}
		if t, ok := first[e.DistinctID]; !ok || e.Time.Before(t) {
			first[e.DistinctID] = e.Time
		}
	}

	periods := bucketsBetween(midnight(from, loc), midnight(to, loc), period, loc)
	cohorts := make([]Cohort, len(periods))
	for i, start := range periods {
		// The users of this cohort.
		var users []string
		for user, t := range first {
			if bucketStart(t, period, loc).Equal(start) {
				users = append(users, user)
			}
		}

		values := make([]int64, len(periods)-i)
		values[0] = int64(len(users))
		for k := 1; k < len(values); k++ {
			target := advance(start, period, k)
			for _, user := range users {
				if returnedIn(usable, user, returnEvent, target, period, loc) {
					values[k]++
				}
			}
		}
		cohorts[i] = Cohort{Date: start, Size: values[0], Values: values}
	}
	return cohorts
}

// returnedIn reports whether user has a returnEvent in the period starting
// at target.
func returnedIn(events []Event, user, returnEvent string, target time.Time, period string, loc *time.Location) bool {
	for _, e := range events {
		if e.DistinctID == user && e.Name == returnEvent && bucketStart(e.Time, period, loc).Equal(target) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------

// ByGroup returns the events as a query counting groups of groupType sees
// them (aggregateBy): the events that carry a group of that type in their
// "$groups" property, each with DistinctID replaced by the group's key,
// so that Funnel, Trend and Retention over the result count groups: a
// group enters a funnel with any of its users' events and moves on with
// any other's. The "$groups" value is a map[string]any or a
// map[string]string of group type to key.
func ByGroup(events []Event, groupType string) []Event {
	var out []Event
	for _, e := range events {
		var key string
		switch g := e.Properties["$groups"].(type) {
		case map[string]string:
			key = g[groupType]
		case map[string]any:
			key, _ = g[groupType].(string)
		}
		if key == "" {
			continue
		}
		e.DistinctID = key
		out = append(out, e)
	}
	return out
}

// ---------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------

// The session rules of docs/queries.md, "Sessions", written out again here
// rather than imported, so that the reference does not lean on the code it
// checks.
const (
	sessionGap       = 30 * time.Minute
	sessionLookahead = 24 * time.Hour
)

// SessionStats are sums over a set of visits.
type SessionStats struct {
	Visits, Bounces, Pageviews int64
	// DurationMicros sums each visit's last event time minus its first.
	DurationMicros int64
}

// SessionBucket is one non-empty bucket of visits, by their start.
type SessionBucket struct {
	Date time.Time
	SessionStats
}

// SessionPage is one entry or exit page and its visits.
type SessionPage struct {
	Path string
	SessionStats
}

// SessionsResult is the reference's answer to a sessions query.
type SessionsResult struct {
	Totals   SessionStats
	Visitors int64
	// Buckets holds the non-empty buckets, in order.
	Buckets []SessionBucket
	// Entry and Exit hold at most limit pages, most visits first, ties by
	// path.
	Entry, Exit []SessionPage
}

// visit is one visit the reference built.
type visit struct {
	user   string
	events []Event // by time, then path
}

// Sessions computes the visits that start between the first instant of
// from and the end of the day to, one by one:
//
//  1. It reads the environment's events that are not bots, from 30
//     minutes before from to 24 hours after the range's end.
//  2. It groups them by user and session id (the property $session_id in
//     its text form; "" for events without one), orders each group by time,
//     then path, and cuts it wherever two consecutive events are 30
//     minutes or more apart: each piece is a visit.
//  3. It keeps the visits whose first event is inside the range and, with
//     filters, at least one of whose events passes every filter. A filter
//     of entry_page or exit_page (eq only) is the visit's: the visit's
//     entry (exit) page must be its value, so a visit without a page view
//     never passes it.
//  4. A visit is a bounce when it has at most one $pageview and no event
//     other than $pageview, $identify and $exposure. Its duration is its
//     last event's time minus its first's; its entry page is the path of
//     its first $pageview, its exit page the path of its last.
func Sessions(events []Event, test bool, filters []Filter, from, to time.Time, interval string, limit int) SessionsResult {
	return SessionsIn(time.UTC, events, test, filters, from, to, interval, limit)
}

// SessionsIn is Sessions with from and to days of the zone loc and its
// buckets local ones.
func SessionsIn(loc *time.Location, events []Event, test bool, filters []Filter, from, to time.Time, interval string, limit int) SessionsResult {
	from, end := midnight(from, loc), midnight(to.AddDate(0, 0, 1), loc)
	var eventFilters, pageFilters []Filter
	for _, f := range filters {
		if f.Property == "entry_page" || f.Property == "exit_page" {
			pageFilters = append(pageFilters, f)
		} else {
			eventFilters = append(eventFilters, f)
		}
	}
	groups := map[[2]string][]Event{}
	for _, e := range events {
		if e.Test != test || e.Bot || e.Time.Before(from.Add(-sessionGap)) || !e.Time.Before(end.Add(sessionLookahead)) {
			continue
		}
		sid, _ := propertyValue(e, "properties.$session_id")
		k := [2]string{e.DistinctID, sid}
		groups[k] = append(groups[k], e)
	}
	var visits []visit
	for k, evs := range groups {
		slices.SortFunc(evs, func(a, b Event) int {
			if c := a.Time.Compare(b.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Path, b.Path)
		})
		start := 0
		for i := 1; i <= len(evs); i++ {
			if i == len(evs) || evs[i].Time.Sub(evs[i-1].Time) >= sessionGap {
				visits = append(visits, visit{user: k[0], events: evs[start:i]})
				start = i
			}
		}
	}

	var res SessionsResult
	users := map[string]bool{}
	buckets := map[time.Time]*SessionStats{}
	entry, exit := map[string]*SessionStats{}, map[string]*SessionStats{}
	add := func(m map[string]*SessionStats, path string, s SessionStats) {
		if m[path] == nil {
			m[path] = &SessionStats{}
		}
		m[path].add(s)
	}
	for _, v := range visits {
		first, last := v.events[0], v.events[len(v.events)-1]
		if first.Time.Before(from) || !first.Time.Before(end) {
			continue
		}
		matched := false
		for _, e := range v.events {
			matched = matched || passesAll(e, eventFilters)
		}
		if !matched {
			continue
		}
		s := SessionStats{Visits: 1, DurationMicros: last.Time.Sub(first.Time).Microseconds()}
		interactive := false
		var pages []string
		for _, e := range v.events {
			switch e.Name {
			case "$pageview":
				s.Pageviews++
				pages = append(pages, e.Path)
			case "$identify", "$exposure":
			default:
				interactive = true
			}
		}
		if s.Pageviews <= 1 && !interactive {
			s.Bounces = 1
		}
		if !pagesPass(pages, pageFilters) {
			continue
		}
		res.Totals.add(s)
		users[v.user] = true
		b := bucketStart(first.Time, interval, loc)
		if buckets[b] == nil {
			buckets[b] = &SessionStats{}
		}
		buckets[b].add(s)
		if len(pages) > 0 {
			add(entry, pages[0], s)
			add(exit, pages[len(pages)-1], s)
		}
	}
	res.Visitors = int64(len(users))
	for b, s := range buckets {
		res.Buckets = append(res.Buckets, SessionBucket{Date: b, SessionStats: *s})
	}
	slices.SortFunc(res.Buckets, func(a, b SessionBucket) int { return a.Date.Compare(b.Date) })
	res.Entry, res.Exit = topPages(entry, limit), topPages(exit, limit)
	return res
}

func (s *SessionStats) add(o SessionStats) {
	s.Visits += o.Visits
	s.Bounces += o.Bounces
	s.Pageviews += o.Pageviews
	s.DurationMicros += o.DurationMicros
}

// topPages returns the limit pages of most visits, ties by path.
func topPages(m map[string]*SessionStats, limit int) []SessionPage {
	var out []SessionPage
	for p, s := range m {
		out = append(out, SessionPage{Path: p, SessionStats: *s})
	}
	slices.SortFunc(out, func(a, b SessionPage) int {
		if a.Visits != b.Visits {
			if a.Visits > b.Visits {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// pagesPass reports whether a visit of page views pages (their paths, in
// order) passes every entry_page and exit_page filter.
func pagesPass(pages []string, filters []Filter) bool {
	for _, f := range filters {
		if len(pages) == 0 {
			return false
		}
		page := pages[0]
		if f.Property == "exit_page" {
			page = pages[len(pages)-1]
		}
		if page != f.Value {
			return false
		}
	}
	return true
}
