// Package query is Strata's query engine: it validates funnel, trend,
// retention, sessions and AI-bot requests, asks an analytics.QueryStore for
// the aggregates, and shapes the answers the API returns (conversion
// percentages, zero-filled buckets, ordered breakdowns, cohort triangles,
// bounce rates).
// It holds no SQL, so every backend answers through the same rules.
package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
)

// Engine runs queries against a store.
type Engine struct {
	Store analytics.QueryStore
	// Sync, when set, waits until every event acknowledged so far is
	// visible to the store, so that a query sent after a 202 sees its
	// events. The write-ahead spool provides it.
	Sync func(context.Context) error
	// Admission, when set, bounds how many queries read events at once
	// and how many wait (admission.go).
	Admission *Admission
	// Live, when set, is the live visitors' own lane and cache (live.go);
	// live counts never take an Admission slot.
	Live *Live
	// Cohorts, when set, finds the cohorts that cohort filters name;
	// without it a query with one is refused.
	Cohorts CohortReader
	// PersonSets, when set, finds the persons of person-property
	// filters; without it a query with one is refused.
	PersonSets PersonSetter
	Now        func() time.Time
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// ErrUnknownKind is the answer to a query kind other than funnel, trend,
// retention or paths.
var ErrUnknownKind = analytics.Errorf(analytics.KindInvalid, "invalid_request", "kind: must be funnel, trend, retention or paths")

// Prepare validates body as the request of a query of the given kind (the
// body of its endpoint, or a saved definition) and returns the query ready
// to run. It is the one place a kind is mapped to its parser and runner.
func (e *Engine) Prepare(kind analytics.QueryKind, scope analytics.EventRange, body []byte) (func(context.Context) (any, error), error) {
	now := e.now()
	switch kind {
	case analytics.QueryFunnel:
		q, err := ParseFunnel(body, scope, now)
		return func(ctx context.Context) (any, error) { return e.RunFunnel(ctx, q) }, err
	case analytics.QueryTrend:
		q, err := ParseTrend(body, scope, now)
		return func(ctx context.Context) (any, error) { return e.RunTrend(ctx, q) }, err
	case analytics.QueryRetention:
		q, err := ParseRetention(body, scope, now)
		return func(ctx context.Context) (any, error) { return e.RunRetention(ctx, q) }, err
	case analytics.QueryPaths:
		q, err := ParsePaths(body, scope, now)
		return func(ctx context.Context) (any, error) { return e.RunPaths(ctx, q) }, err
	}
	return nil, ErrUnknownKind
}

// PrepareSaved is Prepare for a saved definition run over the dates the
// caller picked: a dateFrom or dateTo given here replaces the definition's
// own, as a saved report in other analytics tools runs over the range on
// screen. With neither given the definition runs as stored (its own dates,
// else the last 30 days as of now). The dates are checked as the
// endpoint's body would check them.
func (e *Engine) PrepareSaved(kind analytics.QueryKind, scope analytics.EventRange, definition []byte, dateFrom, dateTo string) (func(context.Context) (any, error), error) {
	if dateFrom == "" && dateTo == "" {
		return e.Prepare(kind, scope, definition)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(definition, &fields); err != nil {
		return nil, fmt.Errorf("reading the saved definition: %w", err)
	}
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	// Both ends are replaced together: a saved dateTo kept beside a picked
	// dateFrom would make a range nobody picked.
	delete(fields, "dateFrom")
	delete(fields, "dateTo")
	for name, v := range map[string]string{"dateFrom": dateFrom, "dateTo": dateTo} {
		if v != "" {
			raw, _ := json.Marshal(v)
			fields[name] = raw
		}
	}
	body, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("writing the saved definition with the picked dates: %w", err)
	}
	return e.Prepare(kind, scope, body)
}

// read runs one read of the store: it waits for acknowledged events to be
// visible, then for a slot (Admission), and holds the slot while f asks the
// store. Every query that reads events goes through here.
func (e *Engine) read(ctx context.Context, f func(context.Context) error) error {
	if e.Sync != nil {
		if err := e.Sync(ctx); err != nil {
			return err
		}
	}
	if e.Admission != nil {
		release, err := e.Admission.Acquire(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	return storeError(f(ctx))
}

// ReadMeta runs a read of the metadata store that can grow with what is
// stored (a survey's responses, a list), under the same admission and
// memory rules as a query of events: it waits for a slot, holds it while
// f reads, and a store that ran out of memory answers query_too_large.
// With DuckDB both stores share one buffer pool, so a metadata read
// admitted beside the event queries cannot add to them unseen
// (docs/security.md, "Reads never break writes"). It does not wait for
// the spool: metadata is not spooled.
func (e *Engine) ReadMeta(ctx context.Context, f func(context.Context) error) error {
	if e == nil {
		return f(ctx)
	}
	if e.Admission != nil {
		release, err := e.Admission.Acquire(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	return storeError(f(ctx))
}

// storeError turns a store that ran out of memory into the answer a client
// can act on: 503 query_too_large, with what to ask for instead. It is not
// a server fault: the query asked for more than the memory the operator
// gave queries, or than was left while other queries ran.
func storeError(err error) error {
	if errors.Is(err, analytics.ErrOutOfMemory) {
		return &analytics.Error{Kind: analytics.KindUnavailable, Code: "query_too_large",
			Message: "This query needs more memory than the server could give it. Narrow the date range, " +
				"use a coarser interval, or ask for fewer steps, series or breakdown values; it may also pass " +
				"when the server is less busy. Operators can give queries more memory with --duckdb-memory " +
				"(or ClickHouse's max_memory_usage).",
			RetryAfter: queryTooLargeRetry, Err: err}
	}
	return err
}

// queryTooLargeRetry is the Retry-After of query_too_large: a query that ran
// out of memory beside others may pass once they are done.
const queryTooLargeRetry = 10 * time.Second

// ConversionPct is the share of prev that reached n, in percent rounded to
// one decimal place; 0 when prev is 0.
func ConversionPct(n, prev int64) float64 {
	if prev == 0 {
		return 0
	}
	return math.Round(1000*float64(n)/float64(prev)) / 10
}

// Point is one bucket of a trend line.
type Point struct {
	// Date is the bucket's start: YYYY-MM-DD, or an RFC 3339 time for
	// hourly buckets.
	Date  string `json:"date"`
	Value int64  `json:"value"`
}

// TrendLine is one line of a trend answer.
type TrendLine struct {
	Label string `json:"label"`
	Event string `json:"event"`
	// BreakdownValue is the breakdown property's value ("" when not set),
	// or null for the other bucket and when there is no breakdown.
	BreakdownValue *string `json:"breakdownValue"`
	Other          bool    `json:"other,omitempty"`
	Data           []Point `json:"data"`
	// Total is, without a breakdown, the line's figure over the whole
	// range: its events (the sum of Data), or its distinct users (or
	// groups), which the buckets' unique users do not add up to. It is
	// left out under a breakdown.
	Total *int64 `json:"total,omitempty"`
}

// TrendResult is the answer of POST /query/trend.
type TrendResult struct {
	Series []TrendLine `json:"series"`
}

// RunTrend computes a validated trend. Without a breakdown every series
// gives one line, even when empty; with one, a series gives a line per top
// value (most first) and an "other" line when values were left out, and no
// line when it matched no event.
func (e *Engine) RunTrend(ctx context.Context, q analytics.TrendQuery) (TrendResult, error) {
	if err := e.resolveTrend(ctx, &q); err != nil {
		return TrendResult{}, err
	}
	var rows []analytics.TrendRow
	err := e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.Trend(ctx, q)
		return err
	})
	if err != nil {
		return TrendResult{}, err
	}
	starts := q.Buckets(q.Interval)
	index := positions(starts)
	type lineKey struct {
		series, rank int
		other        bool
	}
	lines := map[lineKey]*TrendLine{}
	newLine := func(s analytics.TrendSeries) *TrendLine {
		l := &TrendLine{Label: s.Event, Event: s.Event, Data: make([]Point, len(starts))}
		for i, b := range starts {
			l.Data[i].Date = formatBucket(q.EventRange, q.Interval, b)
		}
		return l
	}
	if q.Breakdown == nil {
		for i, s := range q.Series {
			l := newLine(s)
			l.Total = new(int64)
			lines[lineKey{series: i}] = l
		}
	}
	for _, r := range rows {
		if r.Total {
			// Only unique-users series without a breakdown have one.
			if l := lines[lineKey{series: r.Series}]; l != nil && q.Breakdown == nil {
				*l.Total = r.Value
			}
			continue
		}
		k := lineKey{series: r.Series, rank: r.Rank, other: r.Other}
		l := lines[k]
		if l == nil {
			l = newLine(q.Series[r.Series])
			if q.Breakdown != nil {
				if r.Other {
					l.Other, l.Label = true, l.Event+" · Other"
				} else {
					v := r.Breakdown
					l.BreakdownValue = &v
					l.Label = l.Event + " · " + breakdownLabel(v)
				}
			}
			lines[k] = l
		}
		if i, ok := index[r.Bucket]; ok {
			l.Data[i].Value += r.Value
			if l.Total != nil && !q.Series[r.Series].UniqueUsers {
				*l.Total += r.Value
			}
		}
	}
	keys := make([]lineKey, 0, len(lines))
	for k := range lines {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.series != b.series {
			return a.series < b.series
		}
		if a.other != b.other {
			return !a.other
		}
		return a.rank < b.rank
	})
	res := TrendResult{Series: make([]TrendLine, 0, len(keys))}
	for _, k := range keys {
		res.Series = append(res.Series, *lines[k])
	}
	return res, nil
}

// breakdownLabel shows an unset breakdown value as "(none)".
func breakdownLabel(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// formatBucket writes the label of the bucket whose wall start is w: its
// local date, or for an hour its start as an RFC 3339 time with the zone's
// offset then (Z in UTC, as before zones). The repeated hour of an autumn
// change is one bucket, labelled with its first instant's offset.
func formatBucket(sc analytics.EventRange, iv analytics.Interval, w time.Time) string {
	if iv == analytics.Hour {
		return sc.Instant(w).In(sc.Location()).Format(time.RFC3339)
	}
	return w.UTC().Format(dateLayout)
}

// Cohort is one row of a retention table: Values[k] users of the cohort
// came back k periods after it started (Values[0] is Size).
type Cohort struct {
	Date   string  `json:"date"`
	Size   int64   `json:"size"`
	Values []int64 `json:"values"`
}

// RetentionResult is the answer of POST /query/retention.
type RetentionResult struct {
	Period  analytics.Interval `json:"period"`
	Cohorts []Cohort           `json:"cohorts"`
}

// RunRetention computes a validated retention query. Every period of the
// range has a cohort row, empty ones included; cohort i of P has P-i values.
func (e *Engine) RunRetention(ctx context.Context, q analytics.RetentionQuery) (RetentionResult, error) {
	var err error
	if q.Filters, err = e.resolveCohorts(ctx, q.ProductID, q.Filters); err != nil {
		return RetentionResult{}, err
	}
	var rows []analytics.RetentionRow
	err = e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.Retention(ctx, q)
		return err
	})
	if err != nil {
		return RetentionResult{}, err
	}
	starts := q.Buckets(q.Period)
	index := positions(starts)
	res := RetentionResult{Period: q.Period, Cohorts: make([]Cohort, len(starts))}
	for i, b := range starts {
		res.Cohorts[i] = Cohort{Date: b.Format(dateLayout), Values: make([]int64, len(starts)-i)}
	}
	for _, r := range rows {
		ci, ok1 := index[r.Cohort]
		ri, ok2 := index[r.Return]
		if !ok1 || !ok2 || ri < ci {
			continue
		}
		res.Cohorts[ci].Values[ri-ci] = r.Users
		if ri == ci {
			res.Cohorts[ci].Size = r.Users
		}
	}
	return res, nil
}

// Bot is one AI bot in the Acquisition panel.
type Bot struct {
	Name          string    `json:"name"`
	Category      string    `json:"category"`
	CategoryLabel string    `json:"categoryLabel"`
	Hits          int64     `json:"hits"`
	LastSeen      time.Time `json:"lastSeen"`
}

// Page is one row of "Top pages accessed by AI".
type Page struct {
	URL  string `json:"url"`
	Hits int64  `json:"hits"`
	Bots int64  `json:"bots"`
}

// BotsResult is the answer of GET /query/bots.
type BotsResult struct {
	Bots     []Bot  `json:"bots"`
	TopPages []Page `json:"topPages"`
	// Allowlist is the version of the AI-bot allowlist this server
	// classifies with.
	Allowlist Allowlist `json:"allowlist"`
}

// Allowlist names a version of the AI-bot allowlist.
type Allowlist struct {
	Version  int    `json:"version"`
	Reviewed string `json:"reviewed"`
	Bots     int    `json:"bots"`
}

// Bots validates the query string and lists AI-bot activity.
func (e *Engine) Bots(ctx context.Context, scope analytics.EventRange, dateFrom, dateTo, limit string) (BotsResult, error) {
	q, err := ParseBots(dateFrom, dateTo, limit, scope, e.now())
	if err != nil {
		return BotsResult{}, err
	}
	var activity []analytics.BotActivity
	var pages []analytics.PageActivity
	err = e.read(ctx, func(ctx context.Context) (err error) {
		activity, pages, err = e.Store.Bots(ctx, q)
		return err
	})
	if err != nil {
		return BotsResult{}, err
	}
	list := bots.Default()
	res := BotsResult{Bots: make([]Bot, len(activity)), TopPages: make([]Page, len(pages)),
		Allowlist: Allowlist{Version: list.Version(), Reviewed: list.Reviewed(), Bots: len(list.Bots())}}
	for i, a := range activity {
		res.Bots[i] = Bot{Name: a.Name, Category: a.Category, CategoryLabel: bots.CategoryLabel(a.Category),
			Hits: a.Hits, LastSeen: a.LastSeen}
	}
	for i, p := range pages {
		res.TopPages[i] = Page(p)
	}
	return res, nil
}

// EventName is one event name of GET /query/events.
type EventName struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// EventNamesResult is the answer of GET /query/events.
type EventNamesResult struct {
	Events []EventName `json:"events"`
	// ProductHasEvents tells a range without events from a product that
	// never received one: the dashboard says "nothing in this range" to
	// the first and shows how to install the SDK to the second.
	ProductHasEvents bool `json:"productHasEvents"`
}

// EventNames validates the query string and lists the event names seen in
// the range, most events first: the builders' step and series suggestions.
func (e *Engine) EventNames(ctx context.Context, scope analytics.EventRange, dateFrom, dateTo, limit string) (EventNamesResult, error) {
	q, err := ParseEventNames(dateFrom, dateTo, limit, scope, e.now())
	if err != nil {
		return EventNamesResult{}, err
	}
	var names []analytics.EventCount
	var has bool
	err = e.read(ctx, func(ctx context.Context) (err error) {
		names, err = e.Store.EventNames(ctx, q)
		if err != nil || len(names) > 0 {
			return err
		}
		// Only an empty range needs the second, cheap look: a range with
		// names already says the product has events.
		has, err = e.Store.HasEvents(ctx, q.EventRange)
		return err
	})
	if err != nil {
		return EventNamesResult{}, err
	}
	res := EventNamesResult{Events: make([]EventName, len(names)), ProductHasEvents: has || len(names) > 0}
	for i, n := range names {
		res.Events[i] = EventName(n)
	}
	return res, nil
}

// positions maps each bucket start to its place in starts.
func positions(starts []time.Time) map[time.Time]int {
	index := make(map[time.Time]int, len(starts))
	for i, b := range starts {
		index[b] = i
	}
	return index
}

// ErrorActivity reads the error groups' activity the alert job's rules
// need (analytics.ErrorActivityQuery), as a read of the store like every
// query: after the read-your-writes barrier, with an admission slot.
func (e *Engine) ErrorActivity(ctx context.Context, q analytics.ErrorActivityQuery) ([]analytics.ErrorActivityRow, error) {
	var rows []analytics.ErrorActivityRow
	err := e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.ErrorActivity(ctx, q)
		return err
	})
	return rows, err
}

// RunExperiment counts an experiment's exposed and converted users
// (analytics.ExperimentQuery), as a read of the store like every query.
func (e *Engine) RunExperiment(ctx context.Context, q analytics.ExperimentQuery) ([]analytics.ExperimentRow, error) {
	var rows []analytics.ExperimentRow
	err := e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.ExperimentCounts(ctx, q)
		return err
	})
	return rows, err
}

// RunErrorGroups lists error groups, as a read of the store.
func (e *Engine) RunErrorGroups(ctx context.Context, q analytics.ErrorGroupsQuery) ([]analytics.ErrorGroupRow, error) {
	var rows []analytics.ErrorGroupRow
	err := e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.ErrorGroups(ctx, q)
		return err
	})
	return rows, err
}

// RunErrorOccurrences lists a group's latest events, as a read of the store.
func (e *Engine) RunErrorOccurrences(ctx context.Context, q analytics.ErrorOccurrencesQuery) ([]analytics.ErrorOccurrence, error) {
	var rows []analytics.ErrorOccurrence
	err := e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.ErrorOccurrences(ctx, q)
		return err
	})
	return rows, err
}

// UserEvent is one event of GET /api/v1/users/{distinctId}/events.
// SessionID is null when the event has no $session_id.
type UserEvent struct {
	UUID       string          `json:"uuid"`
	Name       string          `json:"name"`
	Timestamp  time.Time       `json:"timestamp"`
	URL        string          `json:"url"`
	Path       string          `json:"path"`
	Browser    string          `json:"browser"`
	OS         string          `json:"os"`
	DeviceType string          `json:"deviceType"`
	SessionID  *string         `json:"sessionId"`
	Properties json.RawMessage `json:"properties"`
}

// UserEventsResult is the answer of GET /api/v1/users/{distinctId}/events:
// the events, newest first, and NextBefore, the before of the next page,
// null when there are no older events.
type UserEventsResult struct {
	DistinctID string      `json:"distinctId"`
	Events     []UserEvent `json:"events"`
	NextBefore *time.Time  `json:"nextBefore"`
}

// UserEvents validates the request and lists one user's latest events, as
// a read of the store like every query (the spool barrier, then a slot).
//
// Pages follow each other by time (before: strictly older), so a page must
// not end between two events of the same microsecond, or the next page
// would skip the rest of them. The store is asked for one event more than
// the limit: when it shares the page's last time, the page gives back its
// events of that time, and NextBefore is the time of the event now last,
// so that the next page starts with them. Only when more than limit events
// of the user share one microsecond (a page that would give back
// everything) are the ones past the limit skipped.
func (e *Engine) UserEvents(ctx context.Context, scope analytics.EventRange, distinctID, before, limit string) (UserEventsResult, error) {
	q, err := ParseUserEvents(distinctID, before, limit, scope)
	if err != nil {
		return UserEventsResult{}, err
	}
	page := q.Limit
	q.Limit++
	var rows []analytics.UserEvent
	err = e.read(ctx, func(ctx context.Context) (err error) {
		rows, err = e.Store.UserEvents(ctx, q)
		return err
	})
	if err != nil {
		return UserEventsResult{}, err
	}
	res := UserEventsResult{DistinctID: distinctID}
	if len(rows) > page {
		cut := page
		for cut > 0 && rows[cut-1].Time.Equal(rows[page].Time) {
			cut--
		}
		if cut == 0 {
			cut = page
		}
		rows = rows[:cut]
		next := rows[cut-1].Time
		res.NextBefore = &next
	}
	res.Events = make([]UserEvent, len(rows))
	for i, r := range rows {
		ev := UserEvent{UUID: uuid.UUID(r.UUID).String(), Name: r.Name, Timestamp: r.Time, URL: r.URL, Path: r.Path,
			Browser: r.Browser, OS: r.OS, DeviceType: r.DeviceType, Properties: r.Properties}
		if r.SessionID != "" {
			ev.SessionID = &r.SessionID
		}
		res.Events[i] = ev
	}
	return res, nil
}

// SessionTotals are the visits of a sessions answer summed over the range
// (docs/queries.md, "Sessions"). BounceRate is the share of visits that
// bounced, in percent to one decimal; VisitDuration the mean visit's
// duration in seconds, to one decimal; PagesPerVisit the mean visit's page
// views, to two decimals. Each is 0 without visits.
type SessionTotals struct {
	Visits        int64   `json:"visits"`
	Visitors      int64   `json:"visitors"`
	Pageviews     int64   `json:"pageviews"`
	BounceRate    float64 `json:"bounceRate"`
	VisitDuration float64 `json:"visitDuration"`
	PagesPerVisit float64 `json:"pagesPerVisit"`
}

// SessionPoint is one bucket of the visits series, by the visits' start.
type SessionPoint struct {
	Date       string  `json:"date"`
	Visits     int64   `json:"visits"`
	BounceRate float64 `json:"bounceRate"`
}

// EntryPage is one page visits entered by, with their bounce rate.
type EntryPage struct {
	Path       string  `json:"path"`
	Visits     int64   `json:"visits"`
	BounceRate float64 `json:"bounceRate"`
}

// ExitPage is one page visits left by.
type ExitPage struct {
	Path   string `json:"path"`
	Visits int64  `json:"visits"`
}

// SessionsResult is the answer of POST /query/sessions.
type SessionsResult struct {
	Interval   analytics.Interval `json:"interval"`
	Totals     SessionTotals      `json:"totals"`
	Series     []SessionPoint     `json:"series"`
	EntryPages []EntryPage        `json:"entryPages"`
	ExitPages  []ExitPage         `json:"exitPages"`
}

// Sessions validates a sessions request body and answers it, as a read of
// the store like every query.
func (e *Engine) Sessions(ctx context.Context, scope analytics.EventRange, body []byte) (SessionsResult, error) {
	q, err := ParseSessions(body, scope, e.now())
	if err != nil {
		return SessionsResult{}, err
	}
	return e.RunSessions(ctx, q)
}

// RunSessions computes a validated sessions query: the store's sums become
// rates and means, and every bucket of the range gets a point, empty ones
// included.
func (e *Engine) RunSessions(ctx context.Context, q analytics.SessionsQuery) (SessionsResult, error) {
	var err error
	if q.Filters, err = e.resolveCohorts(ctx, q.ProductID, q.Filters); err != nil {
		return SessionsResult{}, err
	}
	var a analytics.SessionsAnswer
	err = e.read(ctx, func(ctx context.Context) (err error) {
		a, err = e.Store.Sessions(ctx, q)
		return err
	})
	if err != nil {
		return SessionsResult{}, err
	}
	t := a.Totals
	res := SessionsResult{Interval: q.Interval,
		Totals: SessionTotals{Visits: t.Visits, Visitors: a.Visitors, Pageviews: t.Pageviews,
			BounceRate: ConversionPct(t.Bounces, t.Visits)},
		EntryPages: make([]EntryPage, len(a.Entry)), ExitPages: make([]ExitPage, len(a.Exit))}
	if t.Visits > 0 {
		res.Totals.VisitDuration = math.Round(float64(t.DurationMicros)/1e5/float64(t.Visits)) / 10
		res.Totals.PagesPerVisit = math.Round(100*float64(t.Pageviews)/float64(t.Visits)) / 100
	}
	starts := q.Buckets(q.Interval)
	index := positions(starts)
	res.Series = make([]SessionPoint, len(starts))
	for i, b := range starts {
		res.Series[i].Date = formatBucket(q.EventRange, q.Interval, b)
	}
	for _, b := range a.Buckets {
		if i, ok := index[b.Bucket]; ok {
			res.Series[i].Visits = b.Visits
			res.Series[i].BounceRate = ConversionPct(b.Bounces, b.Visits)
		}
	}
	for i, p := range a.Entry {
		res.EntryPages[i] = EntryPage{Path: p.Path, Visits: p.Visits, BounceRate: ConversionPct(p.Bounces, p.Visits)}
	}
	for i, p := range a.Exit {
		res.ExitPages[i] = ExitPage{Path: p.Path, Visits: p.Visits}
	}
	return res, nil
}
