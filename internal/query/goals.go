package query

import (
	"context"
	"slices"
	"time"

	"strata/internal/analytics"
	"strata/internal/jsontext"
)

// Goals (docs/queries.md, "Goals"): each goal's converted visitors,
// conversions and conversion rate over a range, and one goal's rate by
// the source, channel, country or device type of its visitors.

// GoalBreakdowns are the properties a goal's conversion rate may be split
// by: each visitor's value is the one on their first page view in the
// range.
var GoalBreakdowns = []string{"source", "channel", "country", "device_type"}

// GoalsRequest is the body of POST /api/v1/query/goals. Without Goal it
// asks for every goal of the product; with Goal (a goal's id) and
// Breakdown, for that goal's rows by the breakdown.
type GoalsRequest struct {
	DateFrom  string          `json:"dateFrom,omitempty"`
	DateTo    string          `json:"dateTo,omitempty"`
	Filters   []FilterRequest `json:"filters,omitempty"`
	Goal      int64           `json:"goal,omitempty"`
	Breakdown string          `json:"breakdown,omitempty"`
	Limit     int             `json:"limit,omitempty"`
}

// ErrGoalNotFound answers a goals request naming a goal the product does
// not have.
var ErrGoalNotFound = analytics.Errorf(analytics.KindNotFound, "goal_not_found",
	"There is no goal with this id in this product; list the product's goals for their ids.")

// ParseGoals decodes a goals request body.
func ParseGoals(body []byte) (GoalsRequest, error) {
	var req GoalsRequest
	err := jsontext.Decode(body, &req)
	return req, err
}

// Query validates the request into a store query for scope over the
// product's goals, and returns the goals it asks about, in the query's
// order.
func (req GoalsRequest) Query(scope analytics.EventRange, goals []analytics.Goal, now time.Time) (analytics.GoalsQuery, []analytics.Goal, error) {
	q := analytics.GoalsQuery{EventRange: scope, Limit: DefaultPages}
	var err error
	if q.From, q.To, err = dateRange(req.DateFrom, req.DateTo, now, scope.Location()); err != nil {
		return q, nil, err
	}
	if q.Filters, err = filters("filters", req.Filters); err != nil {
		return q, nil, err
	}
	if req.Limit != 0 {
		q.Limit = req.Limit
	}
	if q.Limit < 1 || q.Limit > MaxPages {
		return q, nil, analytics.InvalidField("limit", "must be from 1 to %d, not %d", MaxPages, req.Limit)
	}
	if req.Breakdown != "" {
		if !slices.Contains(GoalBreakdowns, req.Breakdown) {
			return q, nil, analytics.InvalidField("breakdown", "must be one of %v, not %q", GoalBreakdowns, req.Breakdown)
		}
		if req.Goal == 0 {
			return q, nil, analytics.InvalidField("goal", "a breakdown is of one goal: name its id")
		}
		q.Breakdown = &analytics.Property{Column: req.Breakdown}
	}
	if req.Goal != 0 {
		i := slices.IndexFunc(goals, func(g analytics.Goal) bool { return g.ID == req.Goal })
		if i < 0 {
			return q, nil, ErrGoalNotFound
		}
		goals = goals[i : i+1]
	}
	for _, g := range goals {
		q.Goals = append(q.Goals, g.Match())
	}
	return q, goals, nil
}

// GoalFigures are one goal's figures over the range: Visitors converted
// (each once), their Conversions, and ConversionRate, the converted
// visitors' share of the range's visitors in percent to one decimal.
type GoalFigures struct {
	Visitors       int64   `json:"visitors"`
	Conversions    int64   `json:"conversions"`
	ConversionRate float64 `json:"conversionRate"`
}

// GoalResult is one goal with its figures.
type GoalResult struct {
	ID    int64              `json:"id"`
	Kind  analytics.GoalKind `json:"kind"`
	Event string             `json:"event,omitempty"`
	Path  string             `json:"path,omitempty"`
	Name  string             `json:"name"`
	GoalFigures
}

// GoalBreakdownRow is one value of a goal's breakdown: the visitors
// attributed to it (Total) and the goal's figures among them, the rate
// being of Total. Value is "" for visitors without the property.
type GoalBreakdownRow struct {
	Value string `json:"value"`
	Total int64  `json:"total"`
	GoalFigures
}

// GoalsResult is the answer of POST /query/goals: the range's visitors,
// each goal asked about with its figures and, with a breakdown, the rows
// of that goal.
type GoalsResult struct {
	Visitors  int64              `json:"visitors"`
	Goals     []GoalResult       `json:"goals"`
	Breakdown string             `json:"breakdown,omitempty"`
	Rows      []GoalBreakdownRow `json:"rows,omitempty"`
}

// RunGoals computes a validated goals query over goals (as Query returned
// them): the store's counts become rates.
func (e *Engine) RunGoals(ctx context.Context, q analytics.GoalsQuery, goals []analytics.Goal) (GoalsResult, error) {
	var a analytics.GoalsAnswer
	var err error
	if q.Filters, err = e.resolveCohorts(ctx, q.ProductID, q.Filters); err != nil {
		return GoalsResult{}, err
	}
	if len(q.Goals) > 0 {
		err := e.read(ctx, func(ctx context.Context) (err error) {
			a, err = e.Store.GoalConversions(ctx, q)
			return err
		})
		if err != nil {
			return GoalsResult{}, err
		}
	}
	res := GoalsResult{Visitors: a.Visitors, Goals: make([]GoalResult, len(goals))}
	for i, g := range goals {
		res.Goals[i] = GoalResult{ID: g.ID, Kind: g.Kind, Event: g.Event, Path: g.Path, Name: g.Name()}
		if i < len(a.Goals) {
			c := a.Goals[i]
			res.Goals[i].GoalFigures = GoalFigures{Visitors: c.Converted, Conversions: c.Conversions,
				ConversionRate: ConversionPct(c.Converted, a.Visitors)}
		}
	}
	if q.Breakdown != nil {
		res.Breakdown = q.Breakdown.Column
		res.Rows = make([]GoalBreakdownRow, len(a.Rows))
		for i, r := range a.Rows {
			res.Rows[i] = GoalBreakdownRow{Value: r.Value, Total: r.Visitors, GoalFigures: GoalFigures{Visitors: r.Converted,
				Conversions: r.Conversions, ConversionRate: ConversionPct(r.Converted, r.Visitors)}}
		}
	}
	return res, nil
}
