package sharing

import (
	"slices"

	"strata/internal/analytics"
	"strata/internal/query"
)

// What a shared link may read. The routes a link reaches are the
// transport's allowlist (internal/httpapi/share.go, shareRoutes); these are
// the rules of the queries on them: the Overview counts page views and
// breaks them down by a few event columns, so a link's trend and
// retention queries may name only these events and columns. Custom
// events, event properties (which may hold whatever a customer tracked,
// emails included), the full URL (whose query string may carry tokens)
// and group aggregation are refused, so that a link shows aggregates of
// page views and nothing a person could be picked out by.
var (
	Events  = []string{"$pageview"}
	Columns = []string{"path", "referrer", "browser", "os", "device_type", "screen_class",
		"country", "region", "city", "source", "channel", "utm_source", "utm_medium", "utm_campaign"}
)

// errNotShared answers a query a link may not run.
func errNotShared(what string) error {
	return analytics.Errorf(analytics.KindForbidden, "not_shared",
		"A shared link shows the Overview's page views only: %s is not shared.", what)
}

// CheckTrend reports whether a link may run trend q.
func CheckTrend(q analytics.TrendQuery) error {
	if q.AggregateBy != "" {
		return errNotShared("aggregateBy")
	}
	if err := checkFilters(q.Filters); err != nil {
		return err
	}
	for _, s := range q.Series {
		if !slices.Contains(Events, s.Event) {
			return errNotShared("the event " + s.Event)
		}
		if err := checkFilters(s.Filters); err != nil {
			return err
		}
	}
	if q.Breakdown != nil {
		return checkProperty(*q.Breakdown)
	}
	return nil
}

// CheckSessions reports whether a link may run sessions query q: visits
// are built from every human event, and a link may only filter them by
// the shared columns.
func CheckSessions(q analytics.SessionsQuery) error {
	return checkFilters(q.Filters)
}

// CheckGoals reports whether a link may run goals query q: the goals are
// the ones the product's owners chose to show on the Overview, and a link
// may only filter their visitors by the shared columns.
func CheckGoals(q analytics.GoalsQuery) error {
	return checkFilters(q.Filters)
}

// CheckRetention reports whether a link may run retention q: of page
// views, filtered by the shared columns only.
func CheckRetention(q analytics.RetentionQuery) error {
	for _, e := range []string{q.StartEvent, q.ReturnEvent} {
		if !slices.Contains(Events, e) {
			return errNotShared("the event " + e)
		}
	}
	return checkFilters(q.Filters)
}

// checkFilters refuses, besides the properties outside the shared
// columns, every cohort and person filter: a link's viewer could learn
// from their counts who is in a cohort, or whether a person with some
// email visited.
func checkFilters(fs []analytics.Filter) error {
	for _, f := range fs {
		if f.Cohort != nil {
			return errNotShared("a cohort filter")
		}
		if f.Person != nil {
			return errNotShared("a person filter")
		}
		if err := checkProperty(f.Property); err != nil {
			return err
		}
	}
	return nil
}

func checkProperty(p analytics.Property) error {
	if p.Key != "" || !slices.Contains(Columns, p.Column) {
		name := p.Column
		if p.Key != "" {
			name = "properties." + p.Key
		}
		return errNotShared("the property " + name)
	}
	return nil
}

// EventNames keeps, of a range's event names, those a link may see, so
// that a link does not list the product's custom events.
func EventNames(res query.EventNamesResult) query.EventNamesResult {
	kept := []query.EventName{}
	for _, e := range res.Events {
		if slices.Contains(Events, e.Name) {
			kept = append(kept, e)
		}
	}
	res.Events = kept
	return res
}
