package querytest

import (
	"slices"
	"strings"
	"time"
)

// FunnelUser is one user of a funnel's step: when they reached it and
// when they reached the next step (zero when they did not).
type FunnelUser struct {
	DistinctID string
	Time, Next time.Time
}

// FunnelUsersParams picks a funnel step's users: those who reached step
// Step, or with Dropped those who reached it but not the next; with a
// breakdown, those of one value (Value), of the values outside the top
// Limit (Other), or of every value (neither).
type FunnelUsersParams struct {
	Step      int
	Dropped   bool
	Breakdown string
	Limit     int
	Value     *string
	Other     bool
}

// FunnelUsers lists the users FunnelBreakdown counts at a step, newest
// first by their time of the step, of equal times by distinct id.
func FunnelUsers(loc *time.Location, events []Event, test bool, steps []FunnelStep, exclusions []FunnelExclusion,
	from, to time.Time, windowHours int, p FunnelUsersParams) []FunnelUser {
	top := map[string]bool{}
	if p.Other {
		_, rows := FunnelBreakdown(loc, events, test, steps, exclusions, p.Breakdown, p.Limit, from, to, windowHours)
		for _, r := range rows {
			if !r.Other {
				top[*r.Value] = true
			}
		}
	}
	var out []FunnelUser
	for id, userEvents := range byUser(events, test) {
		times := stepTimes(userEvents, steps, from, to, windowHours, loc)
		if len(times) <= p.Step || excluded(userEvents, times, exclusions) {
			continue
		}
		if p.Dropped && len(times) > p.Step+1 {
			continue
		}
		if p.Breakdown != "" && (p.Value != nil || p.Other) {
			value, set := "", false
			for _, e := range userEvents {
				if e.Time.Equal(times[0]) && steps[0].matches(e) {
					if v := breakdownValue(e, p.Breakdown); !set || v < value {
						value, set = v, true
					}
				}
			}
			if (p.Value != nil && value != *p.Value) || (p.Other && top[value]) {
				continue
			}
		}
		u := FunnelUser{DistinctID: id, Time: times[p.Step].UTC()}
		if len(times) > p.Step+1 {
			u.Next = times[p.Step+1].UTC()
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b FunnelUser) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return strings.Compare(a.DistinctID, b.DistinctID)
	})
	return out
}
