// Package goals holds the operations on a product's goals (docs/queries.md,
// "Goals"), below every door that asks for them: create, list and delete
// the goals, and report their conversions over a range through the query
// engine. Who the caller is, the budgets and the wire forms are the
// transport's (internal/httpapi/goals.go).
package goals

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
	"strata/internal/query"
)

// Limits of a goal's definition.
const (
	// MaxPathLen bounds a page goal's path pattern, as long as a path a
	// page view may reasonably have.
	MaxPathLen = 512
	// MaxWildcards bounds the '*' of one pattern, which keeps the
	// expression the stores match with small.
	MaxWildcards = 5
)

// Refusals of the operations, in the API's vocabulary.
var (
	ErrNotFound = analytics.Errorf(analytics.KindNotFound, "goal_not_found",
		"There is no goal with this id in this product.")
	ErrExists = analytics.Errorf(analytics.KindConflict, "goal_exists",
		"This product already has this goal.")
)

// Service runs the operations on one metadata store's goals.
type Service struct {
	Store analytics.GoalStore
	// Queries answers the reports, under the query admission.
	Queries *query.Engine
	// Max is how many goals a product may have (--goal-limit).
	Max int
	Now func() time.Time
}

// Create adds a goal to productID: kind "event" with the event's name,
// or kind "page" with a path pattern that starts with '/' or '*'. The
// same goal twice is ErrExists.
func (s *Service) Create(ctx context.Context, productID int64, kind analytics.GoalKind, event, path string) (analytics.Goal, error) {
	g := analytics.Goal{ProductID: productID, Kind: kind}
	switch kind {
	case analytics.GoalEvent:
		if path != "" {
			return g, analytics.InvalidField("path", "an event goal has no path")
		}
		if n := utf8.RuneCountInString(event); n < 1 || n > query.MaxNameLen || !utf8.ValidString(event) {
			return g, analytics.InvalidField("event", "must be an event name of 1 to %d characters", query.MaxNameLen)
		}
		g.Event = event
	case analytics.GoalPage:
		if event != "" {
			return g, analytics.InvalidField("event", "a page goal has no event: it counts $pageview events by path")
		}
		if len(path) < 1 || len(path) > MaxPathLen || !utf8.ValidString(path) || (path[0] != '/' && path[0] != '*') {
			return g, analytics.InvalidField("path", "must be a path of 1 to %d bytes starting with / (or *), as /pricing or /blog/*", MaxPathLen)
		}
		if n := strings.Count(path, "*"); n > MaxWildcards {
			return g, analytics.InvalidField("path", "may hold at most %d wildcards (*), not %d", MaxWildcards, n)
		}
		g.Path = path
	default:
		return g, analytics.InvalidField("kind", `must be "event" or "page", not %q`, kind)
	}
	existing, err := s.Store.Goals(ctx, productID)
	if err != nil {
		return g, err
	}
	for _, e := range existing {
		if e.Kind == g.Kind && e.Event == g.Event && e.Path == g.Path {
			return g, ErrExists
		}
	}
	if err := s.Store.CreateGoal(ctx, &g, s.Max); err != nil {
		return g, err
	}
	return g, nil
}

// List returns the product's goals, oldest first.
func (s *Service) List(ctx context.Context, productID int64) ([]analytics.Goal, error) {
	goals, err := s.Store.Goals(ctx, productID)
	if goals == nil {
		goals = []analytics.Goal{}
	}
	return goals, err
}

// Delete deletes the product's goal id; a goal of another product is
// ErrNotFound.
func (s *Service) Delete(ctx context.Context, productID, id int64) error {
	err := s.Store.DeleteGoal(ctx, productID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// Report answers a goals request body (query.GoalsRequest) over scope's
// product and environment: its goals' conversions, or one goal's by a
// breakdown. check, when not nil, may refuse the validated query before
// it runs (a shared link's policy).
func (s *Service) Report(ctx context.Context, scope analytics.EventRange, body []byte, check func(analytics.GoalsQuery) error) (query.GoalsResult, error) {
	req, err := query.ParseGoals(body)
	if err != nil {
		return query.GoalsResult{}, err
	}
	goals, err := s.Store.Goals(ctx, scope.ProductID)
	if err != nil {
		return query.GoalsResult{}, err
	}
	q, goals, err := req.Query(scope, goals, s.Now())
	if err != nil {
		return query.GoalsResult{}, err
	}
	if check != nil {
		if err := check(q); err != nil {
			return query.GoalsResult{}, err
		}
	}
	return s.Queries.RunGoals(ctx, q, goals)
}
