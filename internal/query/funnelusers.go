package query

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"strata/internal/analytics"
)

// Limits on a funnel users request (docs/queries.md, "Who converted, who
// dropped off").
const (
	DefaultFunnelUsers = 50
	MaxFunnelUsers     = 100
)

// FunnelUsersRequest is the body of POST /api/v1/query/funnel/users: the
// funnel request, the step and status whose users to list, the breakdown
// row (a value, or other) when the funnel has a breakdown, and the page.
type FunnelUsersRequest struct {
	FunnelRequest
	Step int `json:"step"`
	// Status is "converted" (the users who reached the step) or "dropped"
	// (those who reached it but not the next).
	Status         string  `json:"status"`
	BreakdownValue *string `json:"breakdownValue,omitempty"`
	Other          bool    `json:"other,omitempty"`
	Limit          int     `json:"limit,omitempty"`
	Cursor         string  `json:"cursor,omitempty"`
}

// The statuses of a funnel users request.
const (
	FunnelConverted = "converted"
	FunnelDropped   = "dropped"
)

// FunnelUsersQuery is a validated funnel users request: the store's query
// and, for the other row, that the engine must first find the top values.
type FunnelUsersQuery struct {
	analytics.FunnelUsersQuery
	Other bool
}

// ParseFunnelUsers validates a funnel users request body.
func ParseFunnelUsers(body []byte, scope analytics.EventRange, now time.Time) (FunnelUsersQuery, error) {
	return parseBody[FunnelUsersQuery, FunnelUsersRequest](body, scope, now)
}

// Query validates the request into a query for scope. The view and its
// interval are validated as the funnel's and do not change the users: a
// step's users are the same in every view.
func (req FunnelUsersRequest) Query(scope analytics.EventRange, now time.Time) (FunnelUsersQuery, error) {
	fq, err := req.FunnelRequest.Query(scope, now)
	q := FunnelUsersQuery{FunnelUsersQuery: analytics.FunnelUsersQuery{FunnelQuery: fq, Step: req.Step, Limit: DefaultFunnelUsers}}
	if err != nil {
		return q, err
	}
	if q.AggregateBy != "" {
		return q, analytics.InvalidField("aggregateBy", "a funnel of groups has no users to list: ask the funnel of users")
	}
	switch req.Status {
	case FunnelConverted:
	case FunnelDropped:
		q.Dropped = true
	default:
		return q, analytics.InvalidField("status", "must be converted or dropped, not %q", req.Status)
	}
	last := len(fq.Steps) - 1
	if req.Step < 0 || req.Step > last {
		return q, analytics.InvalidField("step", "must be a step index from 0 to %d, not %d", last, req.Step)
	}
	if q.Dropped && req.Step == last {
		return q, analytics.InvalidField("step", "nobody drops off after the last step, %d: ask the converted users", last)
	}
	if fq.Breakdown == nil && (req.BreakdownValue != nil || req.Other) {
		return q, analytics.InvalidField("breakdownValue", "is only allowed with a breakdown")
	}
	if req.BreakdownValue != nil && req.Other {
		return q, analytics.InvalidField("other", "name a breakdown value, or set other for the other values, not both")
	}
	q.BreakdownValue, q.Other = req.BreakdownValue, req.Other
	if req.Limit != 0 {
		q.Limit = req.Limit
	}
	if q.Limit < 1 || q.Limit > MaxFunnelUsers {
		return q, analytics.InvalidField("limit", "must be from 1 to %d, not %d", MaxFunnelUsers, req.Limit)
	}
	if req.Cursor != "" {
		if q.BeforeMicros, q.BeforeID, err = readCursor(req.Cursor); err != nil {
			return q, err
		}
	}
	return q, nil
}

// FunnelUser is one user of a funnel's step. Link is the user's page in
// the dashboard (their events and replays), ReplaysLink the Replays list
// of their recorded sessions.
type FunnelUser struct {
	DistinctID string    `json:"distinctId"`
	ReachedAt  time.Time `json:"reachedAt"`
	// NextReachedAt is when they reached the next step, null when they
	// did not (always for the dropped, and after the last step).
	NextReachedAt *time.Time `json:"nextReachedAt"`
	Link          string     `json:"link"`
	ReplaysLink   string     `json:"replaysLink"`
}

// FunnelUsersResult is the answer of POST /query/funnel/users: a page of
// users, newest first, and the cursor of the next page, null after the
// last.
type FunnelUsersResult struct {
	Users      []FunnelUser `json:"users"`
	NextCursor *string      `json:"nextCursor"`
}

// FunnelUsers validates a funnel users request body and lists the page, as
// a read of the store. For the other row it first reads the funnel's top
// values (the store's FunnelRows, as the funnel answer folds them), whose
// users the page leaves out. The store is asked for one user more than the
// page, to tell whether another page follows.
func (e *Engine) FunnelUsers(ctx context.Context, scope analytics.EventRange, body []byte) (FunnelUsersResult, error) {
	q, err := ParseFunnelUsers(body, scope, e.now())
	if err != nil {
		return FunnelUsersResult{}, err
	}
	sq := q.FunnelUsersQuery
	if err := e.resolveFunnel(ctx, &sq.FunnelQuery); err != nil {
		return FunnelUsersResult{}, err
	}
	page := sq.Limit
	sq.Limit++
	var rows []analytics.FunnelUser
	err = e.read(ctx, func(ctx context.Context) error {
		if q.Other {
			fr, err := e.Store.FunnelRows(ctx, sq.FunnelQuery)
			if err != nil {
				return err
			}
			sq.OtherThan = []string{}
			for _, r := range fr {
				if !r.Other {
					sq.OtherThan = append(sq.OtherThan, r.Breakdown)
				}
			}
		}
		var err error
		rows, err = e.Store.FunnelUsers(ctx, sq)
		return err
	})
	if err != nil {
		return FunnelUsersResult{}, err
	}
	res := FunnelUsersResult{Users: make([]FunnelUser, 0, min(len(rows), page))}
	if len(rows) > page {
		rows = rows[:page]
		c := writeCursor(analytics.PathUser{DistinctID: rows[page-1].DistinctID, Micros: rows[page-1].Micros})
		res.NextCursor = &c
	}
	for _, r := range rows {
		u := FunnelUser{DistinctID: r.DistinctID, ReachedAt: time.UnixMicro(r.Micros).UTC(),
			Link: UserLink(scope.ProductID, r.DistinctID), ReplaysLink: ReplaysLink(scope.ProductID, r.DistinctID)}
		if r.NextMicros != 0 {
			next := time.UnixMicro(r.NextMicros).UTC()
			u.NextReachedAt = &next
		}
		res.Users = append(res.Users, u)
	}
	return res, nil
}

// ReplaysLink is the dashboard's Replays list of one user of a product:
// /replays?product={id}&distinct_id={distinctId}.
func ReplaysLink(productID int64, distinctID string) string {
	return "/replays?product=" + strconv.FormatInt(productID, 10) + "&distinct_id=" + url.QueryEscape(distinctID)
}
