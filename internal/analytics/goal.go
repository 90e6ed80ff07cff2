package analytics

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Goals (docs/queries.md, "Goals"): a custom event or a page path marked
// as a goal, whose conversions and conversion rate the Overview shows.

// GoalKind says what a goal matches.
type GoalKind string

// The kinds of goal.
const (
	// GoalEvent matches the events of one name.
	GoalEvent GoalKind = "event"
	// GoalPage matches the $pageview events whose path matches a pattern.
	GoalPage GoalKind = "page"
)

// Goal is one of a product's goals. An event goal has Event set and Path
// empty; a page goal has Path set (a pattern: PathPattern) and Event
// empty.
type Goal struct {
	ID        int64     `json:"id"`
	ProductID int64     `json:"productId"`
	Kind      GoalKind  `json:"kind"`
	Event     string    `json:"event,omitempty"`
	Path      string    `json:"path,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// Name is how the dashboard and the answers name a goal: the event's name,
// or "Visit " and the path pattern, as Plausible names pageview goals.
func (g Goal) Name() string {
	if g.Kind == GoalPage {
		return "Visit " + g.Path
	}
	return g.Event
}

// Match is what a goal counts, as a store query takes it.
func (g Goal) Match() GoalMatch {
	if g.Kind == GoalPage {
		return GoalMatch{Event: PageviewEvent, PathRegex: PathPattern(g.Path)}
	}
	return GoalMatch{Event: g.Event}
}

// PathPattern turns a page goal's path into the RE2 expression a store
// matches the event's path with: the whole path must match, every
// character stands for itself except '*', which matches any run of
// characters, '/' included, or none ("/blog/*" matches "/blog/" and
// "/blog/a/b", not "/blog"). A path with no '*' matches only itself.
func PathPattern(path string) string {
	parts := strings.Split(path, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return "^" + strings.Join(parts, "(?s:.*)") + "$"
}

// GoalMatch is one goal in a GoalsQuery: the events named Event, and when
// PathRegex is set only those whose path matches it (RE2, from
// PathPattern).
type GoalMatch struct {
	Event     string
	PathRegex string
}

// GoalStore keeps the products' goals.
type GoalStore interface {
	// CreateGoal stores g and fills in its ID and creation time, unless
	// the product already has max goals; then nothing is stored and the
	// answer is GoalsFull.
	CreateGoal(ctx context.Context, g *Goal, max int) error
	// Goals returns a product's goals, oldest first.
	Goals(ctx context.Context, productID int64) ([]Goal, error)
	// DeleteGoal deletes the product's goal id; a goal of another product
	// is ErrNotFound.
	DeleteGoal(ctx context.Context, productID, id int64) error
}

// GoalsFull is the refusal of a goal past a product's cap.
func GoalsFull(max int) error {
	return Errorf(KindConflict, "goals_full",
		"This product already has %d goals, the most it may have; delete one it no longer needs first.", max)
}

// GoalsQuery asks, for each of Goals over the range, how many visitors
// converted and how many conversions they made (docs/queries.md,
// "Goals"). The visitors are the users with a human $pageview in the
// range (with Filters, one that passes every filter); a conversion is a
// goal's event in the range by one of them. With Breakdown set (a
// column), the query has one goal and the answer splits the visitors by
// the property's value on each visitor's first $pageview in the range
// (of equal times, the least value), the Limit values with most
// converted visitors, then most visitors, then by value.
type GoalsQuery struct {
	EventRange
	Filters   []Filter
	Goals     []GoalMatch
	Breakdown *Property
	Limit     int
}

// GoalCounts are one goal's figures: Converted visitors (each once) and
// their Conversions (every matching event).
type GoalCounts struct {
	Converted, Conversions int64
}

// GoalRow is one value of a goal's breakdown: the Visitors attributed to
// it and the goal's figures among them. Value is "" for visitors whose
// first page view did not set the property.
type GoalRow struct {
	Value    string
	Visitors int64
	GoalCounts
}

// GoalsAnswer is a store's answer to a GoalsQuery: the visitors of the
// range, each goal's figures in the order asked, and with a breakdown the
// goal's rows, in order.
type GoalsAnswer struct {
	Visitors int64
	Goals    []GoalCounts
	Rows     []GoalRow
}

// SortRows puts a breakdown's rows in their order: most converted
// visitors first, then most visitors, then by value. A store may gather
// them in any order.
func (a *GoalsAnswer) SortRows() {
	sort.Slice(a.Rows, func(i, j int) bool {
		x, y := a.Rows[i], a.Rows[j]
		if x.Converted != y.Converted {
			return x.Converted > y.Converted
		}
		if x.Visitors != y.Visitors {
			return x.Visitors > y.Visitors
		}
		return x.Value < y.Value
	})
}
