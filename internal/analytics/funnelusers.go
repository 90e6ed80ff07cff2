package analytics

import "context"

// FunnelUsersQuery asks for the users of one step of a funnel
// (docs/queries.md, "Who converted, who dropped off"): those who reached
// step Step, or with Dropped those who reached it but not step Step+1,
// exactly the users the funnel counts there (its step filters, window and
// exclusions). They come newest first by the time they reached step Step,
// of equal times by distinct_id, after the cursor when it is set, at most
// Limit of them. The funnel is of users: AggregateBy is not set.
type FunnelUsersQuery struct {
	FunnelQuery
	Step    int
	Dropped bool
	// With a breakdown, BreakdownValue keeps only the users whose value
	// (as FunnelQuery's Breakdown defines it) is the one it points to;
	// OtherThan, when not nil, only those whose value is none of its
	// values (the "other" row: the engine sends the top values). Neither
	// set keeps every value.
	BreakdownValue *string
	OtherThan      []string
	// BeforeMicros and BeforeID page: the users strictly after the last
	// one of the page before, in the order above. BeforeMicros 0 starts
	// at the newest.
	BeforeMicros int64
	BeforeID     string
	Limit        int
}

// FunnelUser is one user of a funnel's step: when they reached it and,
// when they did, the next step (Unix microseconds, 0 when not reached).
type FunnelUser struct {
	DistinctID string
	Micros     int64
	NextMicros int64
}

// FunnelUserStore lists a funnel step's users. Both event stores
// implement it beside QueryStore.
type FunnelUserStore interface {
	// FunnelUsers returns a page of the users of one step of a funnel.
	FunnelUsers(ctx context.Context, q FunnelUsersQuery) ([]FunnelUser, error)
}
