package query

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/jsontext"
)

// Limits on query requests. They keep one request from asking for more work
// than a dashboard could ever show.
const (
	MinSteps           = 2
	MaxSteps           = 20
	MaxNameLen         = 255
	DefaultWindowHours = 24
	MaxWindowHours     = 720
	DefaultRangeDays   = 30
	MaxRangeDays       = 3660
	MaxBuckets         = 5000
	MaxSeries          = 10
	MaxFilters         = 20
	MaxRegexLen        = 1000
	DefaultBreakdown   = 10
	MaxBreakdown       = 100
	DefaultTopPages    = 20
	MaxTopPages        = 100
	DefaultEventNames  = 100
	MaxEventNames      = 1000
	DefaultPages       = 10
	MaxPages           = 100
)

// PlaceholderSteps are the steps a new funnel starts from.
var PlaceholderSteps = []string{"page_viewed", "button_clicked", "form_submitted"}

// dateLayout is the API's date form, a day of the product's time zone
// (docs/queries.md, "Dates" and "Time zones").
const dateLayout = "2006-01-02"

// FilterRequest is one property filter as sent.
type FilterRequest struct {
	Property string `json:"property"`
	Operator string `json:"operator"`
	Value    any    `json:"value,omitempty"`
}

// SeriesRequest is one line of a trend as sent.
type SeriesRequest struct {
	Event   string          `json:"event"`
	Math    string          `json:"math,omitempty"`
	Filters []FilterRequest `json:"filters,omitempty"`
}

// TrendRequest is the body of POST /api/v1/query/trend.
type TrendRequest struct {
	Series         []SeriesRequest `json:"series"`
	DateFrom       string          `json:"dateFrom,omitempty"`
	DateTo         string          `json:"dateTo,omitempty"`
	Interval       string          `json:"interval,omitempty"`
	Filters        []FilterRequest `json:"filters,omitempty"`
	Breakdown      string          `json:"breakdown,omitempty"`
	BreakdownLimit int             `json:"breakdownLimit,omitempty"`
	AggregateBy    string          `json:"aggregateBy,omitempty"`
}

// RetentionRequest is the body of POST /api/v1/query/retention.
type RetentionRequest struct {
	StartEvent  string          `json:"startEvent"`
	ReturnEvent string          `json:"returnEvent,omitempty"`
	DateFrom    string          `json:"dateFrom,omitempty"`
	DateTo      string          `json:"dateTo,omitempty"`
	Period      string          `json:"period,omitempty"`
	Filters     []FilterRequest `json:"filters,omitempty"`
}

// SessionsRequest is the body of POST /api/v1/query/sessions.
type SessionsRequest struct {
	DateFrom string          `json:"dateFrom,omitempty"`
	DateTo   string          `json:"dateTo,omitempty"`
	Interval string          `json:"interval,omitempty"`
	Filters  []FilterRequest `json:"filters,omitempty"`
	Limit    int             `json:"limit,omitempty"`
}

// parseBody decodes a query request's body as an R (unknown fields and
// wrong types refused, package jsontext) and validates it into the store
// query Q for scope.
func parseBody[Q any, R interface {
	Query(analytics.EventRange, time.Time) (Q, error)
}](body []byte, scope analytics.EventRange, now time.Time) (Q, error) {
	var req R
	if err := jsontext.Decode(body, &req); err != nil {
		var zero Q
		return zero, err
	}
	return req.Query(scope, now)
}

// dateRange turns optional dateFrom/dateTo strings, days of the product's
// zone loc, into the half-open range [local midnight of from, local
// midnight after to) as instants. Missing dates default to the last
// DefaultRangeDays days ending today (in loc); a lone date extends the
// range from or to it. It is the one place a query's dates become instants
// (docs/queries.md, "Time zones").
func dateRange(fromText, toText string, now time.Time, loc *time.Location) (from, to time.Time, err error) {
	parse := func(field, s string) (time.Time, error) {
		t, err := time.Parse(dateLayout, s)
		if err != nil || t.Format(dateLayout) != s {
			return time.Time{}, analytics.InvalidField(field, "must be a date in the form YYYY-MM-DD, not %q", s)
		}
		return t, nil
	}
	// from and to are local days, written as UTC midnights, until the end.
	today := analytics.Day.Truncate(analytics.Wall(now, loc))
	switch {
	case fromText == "" && toText == "":
		to = today
		from = to.AddDate(0, 0, -(DefaultRangeDays - 1))
	case fromText == "":
		if to, err = parse("dateTo", toText); err != nil {
			return
		}
		from = to.AddDate(0, 0, -(DefaultRangeDays - 1))
	case toText == "":
		if from, err = parse("dateFrom", fromText); err != nil {
			return
		}
		to = today
		if to.Before(from) {
			to = from
		}
	default:
		if from, err = parse("dateFrom", fromText); err != nil {
			return
		}
		if to, err = parse("dateTo", toText); err != nil {
			return
		}
	}
	if to.Before(from) {
		return from, to, analytics.InvalidField("dateTo", "%s is before dateFrom %s", to.Format(dateLayout), from.Format(dateLayout))
	}
	if days := int(to.Sub(from).Hours()/24) + 1; days > MaxRangeDays {
		return from, to, analytics.InvalidField("dateTo", "the range spans %d days; at most %d are allowed", days, MaxRangeDays)
	}
	return analytics.Instant(from, loc), analytics.Instant(to.AddDate(0, 0, 1), loc), nil
}

// eventName checks one event name as a query names it.
func eventName(field, name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxNameLen {
		return analytics.InvalidField(field, "an event name must be 1 to %d characters, not %d", MaxNameLen, n)
	}
	if !utf8.ValidString(name) {
		return analytics.InvalidField(field, "must be valid UTF-8")
	}
	return nil
}

// windowHours reads the optional windowHours number, which must be an
// integer from 1 to MaxWindowHours.
func windowHours(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return DefaultWindowHours, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, analytics.InvalidField("windowHours", "must be an integer from 1 to %d, not %s", MaxWindowHours, raw)
	}
	if f != math.Trunc(f) || f < 1 || f > MaxWindowHours {
		return 0, analytics.InvalidField("windowHours", "must be an integer from 1 to %d, not %s", MaxWindowHours, raw)
	}
	return int(f), nil
}

// ParseTrend validates a trend request body into a store query.
func ParseTrend(body []byte, scope analytics.EventRange, now time.Time) (analytics.TrendQuery, error) {
	return parseBody[analytics.TrendQuery, TrendRequest](body, scope, now)
}

// Query validates the request into a store query for scope.
func (req TrendRequest) Query(scope analytics.EventRange, now time.Time) (analytics.TrendQuery, error) {
	q := analytics.TrendQuery{EventRange: scope}
	var err error
	if q.EventRange, q.Interval, err = bucketedRange(scope, req.DateFrom, req.DateTo, req.Interval, now); err != nil {
		return q, err
	}
	if len(req.Series) == 0 || len(req.Series) > MaxSeries {
		return q, analytics.InvalidField("series", "must hold 1 to %d series, not %d", MaxSeries, len(req.Series))
	}
	if q.Filters, err = filters("filters", req.Filters); err != nil {
		return q, err
	}
	for i, s := range req.Series {
		field := fmt.Sprintf("series[%d]", i)
		if err := eventName(field+".event", s.Event); err != nil {
			return q, err
		}
		ts := analytics.TrendSeries{Event: s.Event}
		switch s.Math {
		case "", "total":
		case "unique_users":
			ts.UniqueUsers = true
		default:
			return q, analytics.InvalidField(field+".math", "must be total or unique_users, not %q", s.Math)
		}
		if ts.Filters, err = filters(field+".filters", s.Filters); err != nil {
			return q, err
		}
		q.Series = append(q.Series, ts)
	}
	if q.Breakdown, q.BreakdownLimit, err = breakdown(req.Breakdown, req.BreakdownLimit); err != nil {
		return q, err
	}
	if q.AggregateBy, err = aggregateBy(req.AggregateBy); err != nil {
		return q, err
	}
	return q, nil
}

// ParseSessions validates a sessions request body into a store query.
func ParseSessions(body []byte, scope analytics.EventRange, now time.Time) (analytics.SessionsQuery, error) {
	return parseBody[analytics.SessionsQuery, SessionsRequest](body, scope, now)
}

// Query validates the request into a store query for scope: the range and
// interval as a trend takes them, the trend's filters and the visit's
// entry_page and exit_page, and how many entry and exit pages to list.
func (req SessionsRequest) Query(scope analytics.EventRange, now time.Time) (analytics.SessionsQuery, error) {
	q := analytics.SessionsQuery{EventRange: scope, Limit: DefaultPages}
	var err error
	if q.EventRange, q.Interval, err = bucketedRange(scope, req.DateFrom, req.DateTo, req.Interval, now); err != nil {
		return q, err
	}
	// Entry and exit pages are a visit's, not an event's: they are taken
	// out of the list here, and the rest are the trend's event filters.
	if len(req.Filters) > MaxFilters {
		return q, analytics.InvalidField("filters", "at most %d filters are allowed, not %d", MaxFilters, len(req.Filters))
	}
	for i, f := range req.Filters {
		fld := fmt.Sprintf("filters[%d]", i)
		if f.Property != analytics.EntryPageProperty && f.Property != analytics.ExitPageProperty {
			x, err := filter(fld, f)
			if err != nil {
				return q, err
			}
			q.Filters = append(q.Filters, x)
			continue
		}
		if f.Operator != string(analytics.OpEq) {
			return q, analytics.InvalidField(fld+".operator", "%s takes only eq (the visits whose page is the value), not %q", f.Property, f.Operator)
		}
		path, ok := f.Value.(string)
		if !ok {
			return q, analytics.InvalidField(fld+".value", "%s needs a path as a string value", f.Property)
		}
		q.Pages = append(q.Pages, analytics.PageFilter{Exit: f.Property == analytics.ExitPageProperty, Path: path})
	}
	if req.Limit != 0 {
		q.Limit = req.Limit
	}
	if q.Limit < 1 || q.Limit > MaxPages {
		return q, analytics.InvalidField("limit", "must be from 1 to %d, not %d", MaxPages, req.Limit)
	}
	return q, nil
}

// bucketedRange reads the dates and the interval of a query charted by
// bucket (a trend, the sessions series) into scope: the interval defaults
// to day, and the range may make at most MaxBuckets buckets.
func bucketedRange(scope analytics.EventRange, fromText, toText, iv string, now time.Time) (_ analytics.EventRange, in analytics.Interval, err error) {
	if scope.From, scope.To, err = dateRange(fromText, toText, now, scope.Location()); err != nil {
		return scope, in, err
	}
	if in, err = interval("interval", iv, analytics.Day, true); err != nil {
		return scope, in, err
	}
	if n := len(scope.Buckets(in)); n > MaxBuckets {
		err = analytics.InvalidField("interval", "%s buckets over this range make %d points; at most %d are allowed", in, n, MaxBuckets)
	}
	return scope, in, err
}

// aggregateBy reads the optional group type a trend or funnel counts
// instead of users; "" counts users.
func aggregateBy(t string) (string, error) {
	if t == "" {
		return "", nil
	}
	return t, analytics.CheckGroupType("aggregateBy", t)
}

// ParseRetention validates a retention request body into a store query.
func ParseRetention(body []byte, scope analytics.EventRange, now time.Time) (analytics.RetentionQuery, error) {
	return parseBody[analytics.RetentionQuery, RetentionRequest](body, scope, now)
}

// Query validates the request into a store query for scope.
func (req RetentionRequest) Query(scope analytics.EventRange, now time.Time) (analytics.RetentionQuery, error) {
	q := analytics.RetentionQuery{EventRange: scope}
	if err := eventName("startEvent", req.StartEvent); err != nil {
		return q, err
	}
	q.StartEvent, q.ReturnEvent = req.StartEvent, req.StartEvent
	if req.ReturnEvent != "" {
		if err := eventName("returnEvent", req.ReturnEvent); err != nil {
			return q, err
		}
		q.ReturnEvent = req.ReturnEvent
	}
	var err error
	if q.From, q.To, err = dateRange(req.DateFrom, req.DateTo, now, scope.Location()); err != nil {
		return q, err
	}
	if q.Period, err = interval("period", req.Period, analytics.Week, false); err != nil {
		return q, err
	}
	if n := len(q.Buckets(q.Period)); n > 400 {
		return q, analytics.InvalidField("period", "%s cohorts over this range make %d rows; at most 400 are allowed", q.Period, n)
	}
	if q.Filters, err = filters("filters", req.Filters); err != nil {
		return q, err
	}
	return q, nil
}

// ParseBots validates the query string of GET /api/v1/query/bots.
func ParseBots(dateFrom, dateTo, limit string, scope analytics.EventRange, now time.Time) (analytics.BotsQuery, error) {
	q := analytics.BotsQuery{EventRange: scope, TopPages: DefaultTopPages}
	var err error
	if q.From, q.To, err = dateRange(dateFrom, dateTo, now, scope.Location()); err != nil {
		return q, err
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || strconv.Itoa(n) != limit || n < 1 || n > MaxTopPages {
			return q, analytics.InvalidField("limit", "must be an integer from 1 to %d, not %q", MaxTopPages, limit)
		}
		q.TopPages = n
	}
	return q, nil
}

// ParseEventNames validates the query string of GET /api/v1/query/events.
func ParseEventNames(dateFrom, dateTo, limit string, scope analytics.EventRange, now time.Time) (analytics.EventNamesQuery, error) {
	q := analytics.EventNamesQuery{EventRange: scope, Limit: DefaultEventNames}
	var err error
	if q.From, q.To, err = dateRange(dateFrom, dateTo, now, scope.Location()); err != nil {
		return q, err
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || strconv.Itoa(n) != limit || n < 1 || n > MaxEventNames {
			return q, analytics.InvalidField("limit", "must be an integer from 1 to %d, not %q", MaxEventNames, limit)
		}
		q.Limit = n
	}
	return q, nil
}

// interval reads an interval name; hour is allowed only for trends.
func interval(field, s string, def analytics.Interval, hour bool) (analytics.Interval, error) {
	switch iv := analytics.Interval(s); iv {
	case "":
		return def, nil
	case analytics.Day, analytics.Week, analytics.Month:
		return iv, nil
	case analytics.Hour:
		if hour {
			return iv, nil
		}
	}
	if hour {
		return "", analytics.InvalidField(field, "must be hour, day, week or month, not %q", s)
	}
	return "", analytics.InvalidField(field, "must be day, week or month, not %q", s)
}

// property parses a filter or breakdown property name.
func property(field, name string) (analytics.Property, error) {
	if key, ok := strings.CutPrefix(name, "properties."); ok {
		if n := utf8.RuneCountInString(key); n < 1 || n > MaxNameLen {
			return analytics.Property{}, analytics.InvalidField(field, "a property key must be 1 to %d characters", MaxNameLen)
		}
		return analytics.Property{Key: key}, nil
	}
	for _, c := range analytics.Columns {
		if name == c {
			return analytics.Property{Column: c}, nil
		}
	}
	if name == analytics.EntryPageProperty || name == analytics.ExitPageProperty {
		return analytics.Property{}, analytics.InvalidField(field, "%s is a property of a visit, not of an event: only the sessions query (POST /api/v1/query/sessions) filters by it", name)
	}
	return analytics.Property{}, analytics.InvalidField(field, "must be one of %s or properties.<key>, not %q",
		strings.Join(analytics.Columns, ", "), name)
}

// filters validates a list of filters.
func filters(field string, in []FilterRequest) ([]analytics.Filter, error) {
	if len(in) > MaxFilters {
		return nil, analytics.InvalidField(field, "at most %d filters are allowed, not %d", MaxFilters, len(in))
	}
	out := make([]analytics.Filter, 0, len(in))
	for i, f := range in {
		x, err := filter(fmt.Sprintf("%s[%d]", field, i), f)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// filter validates one filter; fld names it in errors.
func filter(fld string, f FilterRequest) (analytics.Filter, error) {
	if f.Property == analytics.CohortFilterProperty {
		return cohortFilter(fld, f)
	}
	if key, ok := strings.CutPrefix(f.Property, analytics.PersonPropertyPrefix); ok {
		return personFilter(fld, key, f)
	}
	p, err := property(fld+".property", f.Property)
	if err != nil {
		return analytics.Filter{}, err
	}
	op := analytics.Operator(f.Operator)
	var v any
	switch op {
	case analytics.OpEq, analytics.OpNeq:
		switch x := f.Value.(type) {
		case string, float64:
			v = x
		case bool:
			v = fmt.Sprint(x)
		default:
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "%s needs a string, number or boolean value", op)
		}
	case analytics.OpContains, analytics.OpNotContains:
		s, ok := f.Value.(string)
		if !ok {
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "%s needs a string value", op)
		}
		v = s
	case analytics.OpRegex:
		s, ok := f.Value.(string)
		if !ok || len(s) > MaxRegexLen {
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "regex needs a string value of at most %d bytes", MaxRegexLen)
		}
		if _, err := regexp.Compile(s); err != nil {
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "is not a valid RE2 regular expression: %v", err)
		}
		v = s
	case analytics.OpGt, analytics.OpLt:
		n, ok := f.Value.(float64)
		if !ok {
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "%s needs a number value", op)
		}
		v = n
	case analytics.OpIsSet, analytics.OpIsNotSet:
		if f.Value != nil {
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "%s takes no value", op)
		}
	default:
		return analytics.Filter{}, analytics.InvalidField(fld+".operator", "must be one of eq, neq, contains, not_contains, regex, gt, lt, is_set, is_not_set, not %q", f.Operator)
	}
	return analytics.Filter{Property: p, Operator: op, Value: v}, nil
}

// cohortFilter validates a cohort filter: in or not_in, and the cohort's
// id as a whole positive number. Which generation it reads is decided when
// the query runs (Engine.resolveCohorts).
func cohortFilter(fld string, f FilterRequest) (analytics.Filter, error) {
	op := analytics.Operator(f.Operator)
	if op != analytics.OpInCohort && op != analytics.OpNotInCohort {
		return analytics.Filter{}, analytics.InvalidField(fld+".operator", "must be in or not_in for a cohort, not %q", f.Operator)
	}
	id, ok := f.Value.(float64)
	if !ok || id < 1 || id != math.Trunc(id) || id > 1<<53 {
		return analytics.Filter{}, analytics.InvalidField(fld+".value", "must be a cohort's id (a whole number from 1)")
	}
	return analytics.Filter{Operator: op, Cohort: &analytics.CohortRef{ID: int64(id)}}, nil
}

// personFilter validates a person-property filter: the people list's
// operators and semantics on the person's property key, and a value in
// its text form (a number or a boolean as JSON writes it).
func personFilter(fld, key string, f FilterRequest) (analytics.Filter, error) {
	pf := analytics.PersonFilter{Key: key, Operator: analytics.Operator(f.Operator)}
	switch v := f.Value.(type) {
	case nil:
	case string:
		pf.Value = v
	case float64, bool:
		b, _ := json.Marshal(v)
		pf.Value = string(b)
	default:
		return analytics.Filter{}, analytics.InvalidField(fld+".value", "must be a string, number or boolean")
	}
	switch pf.Operator {
	case analytics.OpEq, analytics.OpNeq, analytics.OpContains:
		if f.Value == nil {
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "%s needs a value", pf.Operator)
		}
	case analytics.OpIsSet, analytics.OpIsNotSet:
		if f.Value != nil {
			return analytics.Filter{}, analytics.InvalidField(fld+".value", "%s takes no value", pf.Operator)
		}
	default:
		return analytics.Filter{}, analytics.InvalidField(fld+".operator", "must be one of eq, neq, contains, is_set, is_not_set for a person property, not %q", f.Operator)
	}
	if pf.Key == "" || len(pf.Key) > 200 || strings.HasPrefix(pf.Key, "$") || strings.HasPrefix(pf.Key, "/") {
		return analytics.Filter{}, analytics.InvalidField(fld+".property", "a person property's key must be 1 to 200 bytes and not start with $ or /")
	}
	if err := analytics.ValidatePersonFilter(pf); err != nil {
		return analytics.Filter{}, analytics.InvalidField(fld+".value", "at most 1000 characters")
	}
	return analytics.Filter{Operator: analytics.OpInCohort, Person: &pf}, nil
}

// ErrorGroupsLimits bound the error pages' lists.
const (
	DefaultErrorGroups = 100
	MaxErrorGroups     = 500
	DefaultOccurrences = 50
	MaxOccurrences     = 200
)

// ParseErrorGroups reads the error groups list's query string: the range
// (as the other queries take it), a release, and a limit. The sparkline's
// days are the range's last seven.
func ParseErrorGroups(dateFrom, dateTo, release, limit string, scope analytics.EventRange, now time.Time) (analytics.ErrorGroupsQuery, error) {
	q := analytics.ErrorGroupsQuery{EventRange: scope, Release: release, Limit: DefaultErrorGroups}
	var err error
	if q.From, q.To, err = dateRange(dateFrom, dateTo, now, scope.Location()); err != nil {
		return q, err
	}
	if q.Limit, err = limitOf(limit, DefaultErrorGroups, MaxErrorGroups); err != nil {
		return q, err
	}
	end := q.Wall(q.To)
	for i := 7; i >= 1; i-- {
		q.Days = append(q.Days, q.Instant(end.AddDate(0, 0, -i)))
	}
	return q, nil
}

// limitOf reads a limit parameter: def when empty, else 1 to max.
func limitOf(s string, def, max int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || strconv.Itoa(n) != s || n < 1 || n > max {
		return 0, analytics.InvalidField("limit", "must be an integer from 1 to %d, not %q", max, s)
	}
	return n, nil
}

// A user's events (GET /api/v1/users/{distinctId}/events) come a page of
// DefaultUserEvents at a time, at most MaxUserEvents. MaxDistinctIDChars
// is ingest's bound on a distinct_id: no event can have a longer one.
const (
	DefaultUserEvents  = 100
	MaxUserEvents      = 1000
	MaxDistinctIDChars = 255
)

// ParseUserEvents reads the user's events request: the distinct_id of the
// path, a limit, and before, an RFC 3339 time the events must be strictly
// older than. The stores keep microseconds, so a before with a fraction of
// a microsecond is rounded up to the next one: an event of that
// microsecond is older than the time asked for.
func ParseUserEvents(distinctID, before, limit string, scope analytics.EventRange) (analytics.UserEventsQuery, error) {
	q := analytics.UserEventsQuery{ProductID: scope.ProductID, Env: scope.Env, DistinctID: distinctID}
	if n := utf8.RuneCountInString(distinctID); n < 1 || n > MaxDistinctIDChars {
		return q, analytics.InvalidField("distinctId", "must be 1 to %d characters, not %d", MaxDistinctIDChars, n)
	}
	if before != "" {
		t, err := time.Parse(time.RFC3339Nano, before)
		if err != nil {
			return q, analytics.InvalidField("before", "must be an RFC 3339 time such as 2026-05-04T09:30:00Z, not %q", before)
		}
		if micro := t.Truncate(time.Microsecond); micro.Before(t) {
			t = micro.Add(time.Microsecond)
		}
		q.Before = t.UTC()
	}
	var err error
	q.Limit, err = limitOf(limit, DefaultUserEvents, MaxUserEvents)
	return q, err
}

// ParseLimit reads a limit parameter of 1 to max.
func ParseLimit(s string, max int) (int, error) { return limitOf(s, 0, max) }
