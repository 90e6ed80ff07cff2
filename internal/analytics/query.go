package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// The query engine (package query) validates requests and shapes answers;
// a QueryStore turns validated queries into the engine's aggregates. The
// types below are the contract between the two: plain values, already
// checked, with no SQL in them, so that DuckDB and ClickHouse each compile
// them in their own dialect.

// Interval is the width of a trend bucket or a retention period. Every
// bucket starts at a boundary of the product's wall clock: the hour, the
// day, the Monday of the ISO week, or the first of the month. The methods
// below work on wall times written as UTC times (Wall, in zone.go), where
// every day has 24 hours.
type Interval string

// The intervals trends and retention accept.
const (
	Hour  Interval = "hour"
	Day   Interval = "day"
	Week  Interval = "week"
	Month Interval = "month"
)

// Truncate returns the start of the bucket holding t.
func (iv Interval) Truncate(t time.Time) time.Time {
	t = t.UTC()
	switch iv {
	case Hour:
		return t.Truncate(time.Hour)
	case Week:
		d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// Next returns the start of the bucket after the one starting at t.
func (iv Interval) Next(t time.Time) time.Time {
	switch iv {
	case Hour:
		return t.Add(time.Hour)
	case Week:
		return t.AddDate(0, 0, 7)
	case Month:
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

// Buckets returns the start of every bucket that [from, to) touches, in
// order: the first holds from, the last holds the final instant before to.
func (iv Interval) Buckets(from, to time.Time) []time.Time {
	var out []time.Time
	for b := iv.Truncate(from); b.Before(to); b = iv.Next(b) {
		out = append(out, b)
	}
	return out
}

// Property names an event attribute a filter or breakdown reads: one of
// the stored columns (Column set), or a top-level key of the event's
// properties object (Key set). Column is one of the names in Columns, never
// free text, so a backend maps it to an identifier through a fixed table.
type Property struct {
	Column string
	Key    string
}

// Columns are the event columns filters and breakdowns may name directly.
var Columns = []string{"url", "path", "referrer", "browser", "os", "device_type",
	"source", "channel", "utm_source", "utm_medium", "utm_campaign",
	"country", "region", "city", "screen_class"}

// Operator is a filter comparison.
type Operator string

// The filter operators. Comparisons are on the property's text form, except
// gt and lt (and eq/neq with a numeric value), which compare numbers; a
// value that is not a number never matches them. contains is
// case-insensitive. regex is RE2, unanchored. neq, not_contains and
// is_not_set match events where the property is not set.
const (
	OpEq          Operator = "eq"
	OpNeq         Operator = "neq"
	OpContains    Operator = "contains"
	OpNotContains Operator = "not_contains"
	OpRegex       Operator = "regex"
	OpGt          Operator = "gt"
	OpLt          Operator = "lt"
	OpIsSet       Operator = "is_set"
	OpIsNotSet    Operator = "is_not_set"
)

// The cohort filter's operators: the event's person is, or is not, a
// member of a cohort (docs/queries.md, "Cohort filters").
const (
	OpInCohort    Operator = "in"
	OpNotInCohort Operator = "not_in"
)

// CohortNegated reports whether a cohort filter's operator keeps the
// events of the cohort's non-members (not_in) rather than its members.
func CohortNegated(op Operator) (bool, error) {
	switch op {
	case OpInCohort:
		return false, nil
	case OpNotInCohort:
		return true, nil
	}
	return false, fmt.Errorf("unknown cohort operator %q", op)
}

// CohortFilterProperty is the name a request gives a cohort filter's
// property.
const CohortFilterProperty = "cohort"

// PersonPropertyPrefix starts the name a request gives a person-property
// filter's property: "person.plan" is the person's property plan.
const PersonPropertyPrefix = "person."

// CohortRef names the member set a cohort filter reads: the cohort's
// current generation, which the query engine finds when the query runs
// (0 when the cohort was never computed: no members).
type CohortRef struct {
	ProductID, ID, Generation int64
}

// Filter keeps the events whose property compares true with Value. Value
// is a string, a float64 (for gt, lt, and numeric eq/neq) or nil (is_set,
// is_not_set); booleans arrive as the strings "true" and "false". A cohort
// filter has Cohort set instead of Property and Value, and the operator
// OpInCohort or OpNotInCohort: it keeps the events whose distinct id is
// (is not) among the cohort's members. A person-property filter has
// Person set instead: it keeps the events whose person passes it, and
// the query engine turns it into a cohort filter of the persons that do
// (docs/queries.md, "Person filters").
type Filter struct {
	Property Property
	Operator Operator
	Value    any
	Cohort   *CohortRef
	Person   *PersonFilter
}

// EventRange is what every query reads: one product's events of one
// environment inside [From, To). Human queries (funnels, trends,
// retention) never read AI-bot events, except a trend of $bot_pageview
// itself.
type EventRange struct {
	ProductID int64
	Env       Env
	From, To  time.Time
	// Zone is the product's time zone, nil for UTC: buckets are local
	// hours, days, weeks and months in it (zone.go). From and To are
	// instants whatever the zone.
	Zone *time.Location
}

// FunnelQuery asks how many users went through Steps in order, each step
// within Window of the previous one. From/To bound step 0 only.
type FunnelQuery struct {
	EventRange
	Steps []string
	// StepFilters, when set, holds one list for each step: a step's
	// events count only when they pass every filter of its list (a nil
	// list passes all), as a trend's filters do.
	StepFilters [][]Filter
	Window      time.Duration
	// AggregateBy, when set, is a group type (ValidGroupType): the funnel
	// counts groups of that type instead of users.
	AggregateBy string
	// Exclusions leave out every user who did one of their events between
	// the two steps they name (FunnelExclusion).
	Exclusions []FunnelExclusion
	// Breakdown, when set, splits the funnel by the property's value on
	// each user's step-0 event (the earliest in the range; of several at
	// that instant, the least value), into at most BreakdownLimit values
	// with the most step-0 users plus one "other" row.
	Breakdown      *Property
	BreakdownLimit int
	// TimeToConvert asks the engine for how long each step took
	// (QueryStore.FunnelTimes); the stores do not read it.
	TimeToConvert bool
	// OverTime, when set (day or week), asks the engine for the funnel's
	// conversion by the bucket in which users entered step 0
	// (QueryStore.FunnelOverTime, which alone reads it).
	OverTime Interval
	// TopValues, with a Breakdown, are the values FunnelTimes and
	// FunnelOverTime split the funnel by; the users of every other value
	// count together, as the other row. The engine sends the values of
	// FunnelRows' rows, so that the views rank values as the steps do.
	// Funnel and FunnelRows do not read it.
	TopValues []string
	// RankTop, with a Breakdown, tells the FunnelTimes and FunnelOverTime
	// of a FunnelRanker to pick the top BreakdownLimit values (all of
	// them when it is 0) in their own statement, in place of TopValues,
	// by the order of FunnelRows: most step-0 users first, ties by value.
	RankTop bool
}

// FunnelRanker is a QueryStore whose FunnelTimes and FunnelOverTime take
// FunnelQuery.RankTop, so that a view with a breakdown is one statement
// rather than FunnelRows' and then the view's.
type FunnelRanker interface {
	RanksFunnelValues()
}

// FunnelBucket is the funnel of the users who entered its step 0 in one
// bucket (its start as a wall time of the product's zone, written as UTC,
// as a TrendRow's): Counts[i] of them reached step i.
// With a breakdown, a bucket holds the users of one value only: Breakdown,
// or the other values' when Other is set (as a FunnelRow's).
type FunnelBucket struct {
	Bucket    time.Time
	Breakdown string
	Other     bool
	Counts    []int64
}

// FunnelExclusion leaves out of the whole funnel every user who did Event
// (passing Filters) strictly after their event of step FromStep and
// strictly before their event of step ToStep, as PostHog's exclusion
// steps do. A user who never reached ToStep is not left out by it.
// 0 <= FromStep < ToStep < len(Steps).
type FunnelExclusion struct {
	Event            string
	Filters          []Filter
	FromStep, ToStep int
}

// FunnelRow is the funnel of one breakdown value: the users (or groups)
// reaching each step, Counts[i] for step i. Without a breakdown a store
// returns one row, of the value "".
type FunnelRow struct {
	// Breakdown is the property's text form, "" when not set; it is
	// meaningless when Other is set.
	Breakdown string
	// Other marks the row of every value outside the top values.
	Other  bool
	Counts []int64
}

// ConvertBuckets are the lower bounds, in seconds, of the time-to-convert
// histogram's buckets; each runs to the next bound, the last without end:
// under 10 s, 10–30 s, 30 s–1 min, 1–5 min, 5–30 min, 30 min–1 h, 1–3 h,
// 3–24 h, 1–3 days, 3–7 days, 7 days and more (docs/queries.md, "Time to
// convert").
var ConvertBuckets = []int64{0, 10, 30, 60, 300, 1800, 3600, 10800, 86400, 259200, 604800}

// FunnelTimes is a funnel's counts (Counts[i] for step i) and, for each
// later step, how long its users took from the step before (Steps[i-1]
// for step i). With a breakdown they are the whole funnel's, and
// Breakdown holds the same of each value's users.
type FunnelTimes struct {
	Counts    []int64
	Steps     []StepTimes
	Breakdown []FunnelTimesRow
}

// FunnelTimesRow is the counts and times of the users of one breakdown
// value (Breakdown, as a FunnelRow's), or of the other values together
// (Other).
type FunnelTimesRow struct {
	Breakdown string
	Other     bool
	Counts    []int64
	Steps     []StepTimes
}

// StepTimes is how long one step's users took from the step before: the
// lower median in microseconds (meaningless when no user reached the
// step), and the users in each bucket of ConvertBuckets.
type StepTimes struct {
	MedianMicros int64
	Histogram    []int64
}

// FunnelRows folds a store's per-value funnels, read in order of step-0
// users (most first, ties by value), into the top limit values and one
// other row, so that what a store holds does not grow with the number of
// values.
type FunnelRows struct {
	Limit int
	Rows  []FunnelRow
}

// Add takes the next value's counts.
func (f *FunnelRows) Add(value string, counts []int64) {
	if len(f.Rows) < f.Limit || f.Limit == 0 {
		f.Rows = append(f.Rows, FunnelRow{Breakdown: value, Counts: counts})
		return
	}
	last := &f.Rows[len(f.Rows)-1]
	if !last.Other {
		f.Rows = append(f.Rows, FunnelRow{Other: true, Counts: make([]int64, len(counts))})
		last = &f.Rows[len(f.Rows)-1]
	}
	for i, c := range counts {
		last.Counts[i] += c
	}
}

// StepFilter returns the filters of step i, none when the query has none.
func (q FunnelQuery) StepFilter(i int) []Filter {
	if i < len(q.StepFilters) {
		return q.StepFilters[i]
	}
	return nil
}

// Counting groups (docs/queries.md, "Counting groups"): with AggregateBy
// set, a query's actor is no longer the event's user but the key of its
// group of that type, read from the event's GroupsProperty. Events
// without a group of the type are left out; a unique count counts
// distinct group keys; a funnel follows each group through the steps, so
// the steps may be done by different users of one group, as in PostHog's
// group-aggregated funnels. A store reads the key only through an
// expression of its own built from the validated type, never from free
// text.

// TrendSeries is one line of a trend chart before any breakdown.
type TrendSeries struct {
	Event string
	// UniqueUsers counts distinct users instead of events.
	UniqueUsers bool
	Filters     []Filter
}

// TrendQuery counts events per bucket for each series, optionally split by
// a property into at most BreakdownLimit values plus one "other" bucket.
type TrendQuery struct {
	EventRange
	Series         []TrendSeries
	Filters        []Filter
	Interval       Interval
	Breakdown      *Property
	BreakdownLimit int
	// AggregateBy, when set, is a group type: only events with a group of
	// that type count, and UniqueUsers counts distinct groups.
	AggregateBy string
}

// TrendRow is one non-empty bucket of one line. Stores return only buckets
// that hold events; the engine fills the gaps with zeros.
type TrendRow struct {
	Series int
	// Breakdown is the property's text form, "" when not set. It is
	// meaningless when Other is set or the query has no breakdown.
	Breakdown string
	// Rank orders the top values of a line, from 1 (most events, or most
	// users) up; it is 0 without a breakdown and for the other bucket.
	Rank int
	// Other marks the bucket of every value outside the top values.
	Other bool
	// Total marks, for a unique-users series without a breakdown, the
	// series' distinct users (or groups) over the whole range rather than
	// a bucket's; Bucket is then meaningless. Stores return at most one
	// such row for each such series (none meaning 0), and none for other
	// series: the engine sums a count's buckets itself, but distinct users
	// over the range are not the sum of each bucket's.
	Total  bool
	Bucket time.Time
	Value  int64
}

// RetentionQuery groups users by the period of their first StartEvent in
// the scope and counts, for each later period, how many of them did
// ReturnEvent in it.
type RetentionQuery struct {
	EventRange
	StartEvent  string
	ReturnEvent string
	Period      Interval
	// Filters must all pass for a start or a return event to count.
	Filters []Filter
}

// RetentionRow is one cell of the cohort table: Users of the cohort whose
// period starts at Cohort did the return event in the period starting at
// Return. The row with Return equal to Cohort holds the cohort's size.
type RetentionRow struct {
	Cohort time.Time
	Return time.Time
	Users  int64
}

// BotActivity is one AI bot's traffic in the scope.
type BotActivity struct {
	Name     string
	Category string
	Hits     int64
	LastSeen time.Time
}

// PageActivity is one URL fetched by AI bots.
type PageActivity struct {
	URL  string
	Hits int64
	Bots int64
}

// BotsQuery asks for the AI-bot panel: every bot seen in the scope, and the
// TopPages URLs bots fetched most.
type BotsQuery struct {
	EventRange
	TopPages int
}

// EventNamesQuery asks for the event names seen in the scope, most events
// first, at most Limit of them. AI-bot events are left out: the list feeds
// the funnel and trend builders, which count human events.
type EventNamesQuery struct {
	EventRange
	Limit int
}

// EventCount is one event name and how many events of it the scope holds.
type EventCount struct {
	Name  string
	Count int64
}

// Visits (docs/queries.md, "Sessions"): a visit is a run of one user's
// human events that share a session id (the SessionIDProperty, or none)
// in which no two consecutive events are SessionGap or more apart. A visit
// belongs to the range and to the bucket holding its first event; its
// events after the range's end still count, up to SessionLookahead past
// it. Events from SessionGap before the range are read only to tell
// whether a visit started before the range, which leaves it out.
const (
	SessionGap       = 30 * time.Minute
	SessionLookahead = 24 * time.Hour
	// PageviewEvent is the event of a page view.
	PageviewEvent = "$pageview"
)

// NonInteractiveEvents are the events the SDK sends on its own, which do
// not make a visit a non-bounce: a bounce is a visit with at most one page
// view and no event outside these and $pageview.
var NonInteractiveEvents = []string{"$identify", "$exposure"}

// SessionsQuery asks for the visits that start in the range: totals, a
// series by Interval, and the Limit most frequent entry and exit pages.
// With Filters, a visit counts when at least one of its events passes
// every filter; with Pages, when its entry or exit page is each one's
// path as well.
type SessionsQuery struct {
	EventRange
	Filters  []Filter
	Pages    []PageFilter
	Interval Interval
	Limit    int
}

// The properties of a visit rather than of an event (docs/queries.md,
// "Sessions"): only the sessions query filters by them.
const (
	EntryPageProperty = "entry_page"
	ExitPageProperty  = "exit_page"
)

// PageFilter keeps the visits whose entry page (or, with Exit, exit page)
// is Path. A visit without a page view has neither, so it never passes.
type PageFilter struct {
	Exit bool
	Path string
}

// SessionStats are sums over a set of visits: the engine derives the
// rates and means from them, so that every store answers in integers.
// DurationMicros sums each visit's last event time minus its first.
type SessionStats struct {
	Visits, Bounces, Pageviews int64
	DurationMicros             int64
}

// SessionBucket is one non-empty bucket of the visits series.
type SessionBucket struct {
	Bucket time.Time
	SessionStats
}

// SessionPage is one entry or exit page: the path of a visit's first (or
// last) page view, with the visits entering (or leaving) by it. Visits
// without a page view have neither.
type SessionPage struct {
	Path string
	SessionStats
}

// SessionsAnswer is a store's answer to a SessionsQuery. Visitors counts
// the distinct users of the visits. Buckets holds only non-empty buckets;
// Entry and Exit hold at most Limit pages each, most visits first, ties
// by path.
type SessionsAnswer struct {
	Totals      SessionStats
	Visitors    int64
	Buckets     []SessionBucket
	Entry, Exit []SessionPage
}

// Sort puts the buckets in time order and the pages most visits first,
// ties by path: a store may gather its rows in any order.
func (a *SessionsAnswer) Sort() {
	sort.Slice(a.Buckets, func(i, j int) bool { return a.Buckets[i].Bucket.Before(a.Buckets[j].Bucket) })
	for _, pages := range [][]SessionPage{a.Entry, a.Exit} {
		sort.Slice(pages, func(i, j int) bool {
			if pages[i].Visits != pages[j].Visits {
				return pages[i].Visits > pages[j].Visits
			}
			return pages[i].Path < pages[j].Path
		})
	}
}

// QueryStore answers the query engine. Every method reads only the scope's
// product and environment. A query that fails because the store ran out of
// memory for it returns an error wrapping ErrOutOfMemory, so that the engine
// can tell the client to ask for less instead of reporting a server fault.
type QueryStore interface {
	// Funnel returns the number of users (or groups) reaching each step.
	// It reads neither Exclusions nor Breakdown.
	Funnel(ctx context.Context, q FunnelQuery) ([]int64, error)
	// FunnelRows returns the funnel with its exclusions, one row for each
	// breakdown value (FunnelRows folds them), or one row without a
	// breakdown.
	FunnelRows(ctx context.Context, q FunnelQuery) ([]FunnelRow, error)
	// FunnelTimes returns the funnel with its exclusions and the time
	// each later step's users took from the step before. With a
	// breakdown it also returns, in any order, a row for each of
	// q.TopValues with users and one for the users of every other value
	// (Other) when there are some.
	FunnelTimes(ctx context.Context, q FunnelQuery) (FunnelTimes, error)
	// FunnelOverTime returns, for each bucket of q.OverTime with users,
	// the funnel of the users who entered step 0 in it, with the
	// exclusions. With a breakdown it returns, in any order, one for
	// each bucket and each of q.TopValues with users in it, and one for
	// each bucket with users of the other values (Other).
	FunnelOverTime(ctx context.Context, q FunnelQuery) ([]FunnelBucket, error)
	// Trend returns the non-empty buckets of every line.
	Trend(ctx context.Context, q TrendQuery) ([]TrendRow, error)
	// Retention returns the non-zero cells of the cohort table.
	Retention(ctx context.Context, q RetentionQuery) ([]RetentionRow, error)
	// Bots returns bot activity, most hits first, and the top pages.
	Bots(ctx context.Context, q BotsQuery) ([]BotActivity, []PageActivity, error)
	// EventNames returns the scope's event names, most events first, ties
	// by name.
	EventNames(ctx context.Context, q EventNamesQuery) ([]EventCount, error)
	// HasEvents reports whether the scope's product has ever received a
	// human event in the scope's environment, on any day (From and To are
	// not read). It stops at the first event found, so it costs little
	// however much is stored.
	HasEvents(ctx context.Context, scope EventRange) (bool, error)
	// LiveVisitors returns how many distinct users sent a human event of
	// the scope's product and environment with an event time in
	// [From, To). The engine asks it for the last few minutes only
	// (query.LiveWindow), so a store must read no more than that range:
	// both stores prune by time before they read a row (docs/queries.md,
	// "Live visitors").
	LiveVisitors(ctx context.Context, scope EventRange) (int64, error)
	// ExperimentCounts returns the non-zero cells of an experiment's
	// exposures and conversions.
	ExperimentCounts(ctx context.Context, q ExperimentQuery) ([]ExperimentRow, error)
	// ErrorGroups returns the groups of $exception events, most events
	// first, ties by fingerprint, at most Limit of them.
	ErrorGroups(ctx context.Context, q ErrorGroupsQuery) ([]ErrorGroupRow, error)
	// ErrorOccurrences returns a group's latest events.
	ErrorOccurrences(ctx context.Context, q ErrorOccurrencesQuery) ([]ErrorOccurrence, error)
	// ErrorActivity returns the groups of $exception events with at least
	// MinRecent events in the recent part of the range, ties by
	// fingerprint (docs/errors.md, "Alerts").
	ErrorActivity(ctx context.Context, q ErrorActivityQuery) ([]ErrorActivityRow, error)
	// UserEvents returns one user's latest events, newest first, of equal
	// times by uuid, at most Limit of them.
	UserEvents(ctx context.Context, q UserEventsQuery) ([]UserEvent, error)
	// Sessions returns the visits that start in the range
	// (SessionsQuery, and docs/queries.md, "Sessions").
	Sessions(ctx context.Context, q SessionsQuery) (SessionsAnswer, error)
	// GoalConversions returns the goals' conversions among the range's visitors
	// (GoalsQuery, and docs/queries.md, "Goals").
	GoalConversions(ctx context.Context, q GoalsQuery) (GoalsAnswer, error)
	// PathStore answers paths (paths.go).
	PathStore
	// FunnelUserStore lists a funnel step's users (funnelusers.go).
	FunnelUserStore
}

// ErrOutOfMemory is wrapped by a QueryStore's error when the store could not
// get the memory a query needed: DuckDB's buffer pool was full, or a
// ClickHouse memory limit was reached. Each store recognises its own
// driver's error in one function (outOfMemory in each store package).
var ErrOutOfMemory = errors.New("the store ran out of memory for this query")

// QueryKind says which query a saved query runs.
type QueryKind string

// The kinds of saved query.
const (
	QueryFunnel    QueryKind = "funnel"
	QueryTrend     QueryKind = "trend"
	QueryRetention QueryKind = "retention"
	QueryPaths     QueryKind = "paths"
)

// SavedQuery is a named query definition kept for re-running. Definition
// is the request body of the query's endpoint, as validated when saved.
type SavedQuery struct {
	ID         int64           `json:"id"`
	ProductID  int64           `json:"productId"`
	Kind       QueryKind       `json:"kind"`
	Name       string          `json:"name"`
	Definition json.RawMessage `json:"definition"`
	CreatedAt  time.Time       `json:"createdAt"`
	UpdatedAt  time.Time       `json:"updatedAt"`
}

// SavedQueryStore keeps saved query definitions. Every method is scoped to
// one product: a saved query of another product is ErrNotFound.
type SavedQueryStore interface {
	// CreateSavedQuery stores q (ProductID, Kind, Name and Definition set)
	// and fills in its ID and times.
	CreateSavedQuery(ctx context.Context, q *SavedQuery) error
	// SavedQuery returns one saved query, or ErrNotFound.
	SavedQuery(ctx context.Context, productID, id int64) (SavedQuery, error)
	// ListSavedQueries returns a product's saved queries, newest first.
	ListSavedQueries(ctx context.Context, productID int64) ([]SavedQuery, error)
	// UpdateSavedQuery replaces the name and definition and sets
	// UpdatedAt, or returns ErrNotFound.
	UpdateSavedQuery(ctx context.Context, q *SavedQuery) error
	// DeleteSavedQuery removes a saved query, or returns ErrNotFound. The
	// query-scoped annotations drawn on it and the board tiles that show it
	// are deleted with it, in the same transaction, since no chart can show
	// them any more.
	DeleteSavedQuery(ctx context.Context, productID, id int64) error
}

// ExceptionEvent is the event of an error the SDKs or a server captured.
const ExceptionEvent = "$exception"

// ErrorGroupsQuery asks for the groups of the scope's $exception events:
// the events of one fingerprint (the property $exception_fingerprint,
// which ingest sets) form a group (docs/errors.md, "Groups").
type ErrorGroupsQuery struct {
	EventRange
	// Release keeps only the events whose $release is it, when not "";
	// Fingerprint, only the group of that fingerprint.
	Release, Fingerprint string
	// Days are the starts (instants) of the days of the product's zone
	// the sparkline counts, oldest first (the last seven of the range);
	// each day ends at the next local midnight.
	Days  []time.Time
	Limit int
	// Aliases are the product's merged groups (ErrorAliasStore): an event
	// whose fingerprint is a key counts in the group of its value, and
	// Fingerprint selects the events that count in its group.
	Aliases map[string]string
	// Fingerprints, when Fingerprint is "", keeps only the events whose
	// own fingerprint is one of them, in one scan: a group's page
	// describes the fingerprints merged into it so (with no Aliases, each
	// is its own group).
	Fingerprints []string
}

// ErrorGroupRow is one group: its type and message are those of its
// latest event (of equal times, the greatest type and message).
type ErrorGroupRow struct {
	Fingerprint         string
	Type, Message       string
	Events, Users       int64
	FirstSeen, LastSeen time.Time
	// Daily counts the group's events on each of the query's Days.
	Daily []int64
}

// ErrorOccurrencesQuery asks for a group's latest events.
type ErrorOccurrencesQuery struct {
	EventRange
	Fingerprint string
	Limit       int
	// Aliases, as in ErrorGroupsQuery: the group's events are those of
	// Fingerprint and of the fingerprints merged into it.
	Aliases map[string]string
}

// ErrorOccurrence is one event of a group, newest first: of events at the
// same microsecond, by distinct_id, then properties.
type ErrorOccurrence struct {
	Time                    time.Time
	DistinctID, Browser, OS string
	URL                     string
	Properties              json.RawMessage
}

// ErrorGroupStatus is what a person decided about a group: open, resolved
// (in a release) or ignored. A group nobody decided about is open.
type ErrorGroupStatus struct {
	Fingerprint     string     `json:"fingerprint"`
	Status          string     `json:"status"`
	ResolvedRelease string     `json:"resolvedRelease"`
	ChangedAt       *time.Time `json:"changedAt"`
	ChangedBy       string     `json:"changedBy"`
}

// The statuses of an error group.
const (
	ErrorOpen     = "open"
	ErrorResolved = "resolved"
	ErrorIgnored  = "ignored"
)

// ErrorGroupStore keeps the groups' statuses, per product.
type ErrorGroupStore interface {
	// ErrorGroupStatuses returns the statuses set for a product's groups,
	// by fingerprint.
	ErrorGroupStatuses(ctx context.Context, productID int64) (map[string]ErrorGroupStatus, error)
	// SetErrorGroupStatus records a status and fills in ChangedAt.
	SetErrorGroupStatus(ctx context.Context, productID int64, st *ErrorGroupStatus) error
}

// ErrorActivityQuery asks what the alert rules read of the scope's
// $exception events, by group (fingerprint): the range [From, To) is split
// at Recent into the history [From, Recent) and the recent part [Recent,
// To). Only groups with at least MinRecent events in the recent part are
// returned, and with FirstOnly only those without an event in the
// history. The new-group rule asks for the last hour with the week before
// it as history, FirstOnly; the spike rule for the last complete hour with
// the seven days before it, MinRecent the webhook's minimum count.
type ErrorActivityQuery struct {
	EventRange
	Recent    time.Time
	MinRecent int64
	FirstOnly bool
	// Aliases, as in ErrorGroupsQuery: a merged group's events count in
	// the group it was merged into.
	Aliases map[string]string
}

// ErrorActivityRow is one group's activity: its events and distinct users
// in the recent part, its events in the history, its first event in the
// range, and the type and message of its latest event in the range (of
// equal times, the greatest type and message, as in ErrorGroupRow).
type ErrorActivityRow struct {
	Fingerprint   string
	Type, Message string
	Recent, Users int64
	History       int64
	FirstSeen     time.Time
}

// UserEventsQuery asks for one user's latest events (the dashboard's
// person page, docs/queries.md, "A user's events"): those of DistinctID in
// the product and environment, strictly older than Before when it is set,
// newest first, at most Limit. It has no lower bound: a person's page
// shows their latest events however old. AI-bot events are left out, as
// from every human query.
type UserEventsQuery struct {
	ProductID  int64
	Env        Env
	DistinctID string
	Before     time.Time
	Limit      int
}

// UserEvent is one event of a user. SessionID is the text of its
// SessionIDProperty, "" when it has none; URL, Path, Browser, OS and
// DeviceType are "" when unknown.
type UserEvent struct {
	UUID                   [16]byte
	Time                   time.Time
	Name                   string
	URL, Path, Browser, OS string
	DeviceType, SessionID  string
	Properties             json.RawMessage
}
