package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// funnelUsersAnswer pages through a funnel step's users on the engine,
// limit at a time, and returns them all in the reference's terms.
func funnelUsersAnswer(t *testing.T, e *query.Engine, scope analytics.EventRange, req query.FunnelUsersRequest, limit int) []querytest.FunnelUser {
	t.Helper()
	var out []querytest.FunnelUser
	req.Limit = limit
	for range 200 {
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		page, err := e.FunnelUsers(context.Background(), scope, body)
		if err != nil {
			t.Fatalf("FunnelUsers %s: %v", body, err)
		}
		if len(page.Users) > limit {
			t.Fatalf("FunnelUsers answered %d users for a page of %d", len(page.Users), limit)
		}
		for _, u := range page.Users {
			fu := querytest.FunnelUser{DistinctID: u.DistinctID, Time: u.ReachedAt}
			if u.NextReachedAt != nil {
				fu.Next = *u.NextReachedAt
			}
			out = append(out, fu)
		}
		if page.NextCursor == nil {
			return out
		}
		req.Cursor = *page.NextCursor
	}
	t.Fatal("FunnelUsers did not reach the last page in 200 pages")
	return nil
}

// testFunnelUsers lists, for seeded random datasets (live and test, with
// the exclusions, the step filters of half of them and the breakdown),
// the converted and the dropped users of every step, of the whole funnel
// and of each breakdown row, page by page; each list must equal the
// reference's, and its length the funnel's count of that step (or the
// step's count less the next step's).
func testFunnelUsers(ctx context.Context, t *testing.T, s Events) {
	engine := &query.Engine{Store: s}
	for seed := int64(1); seed <= datasets(12); seed++ {
		ds := querytest.Generate(seed)
		p := analytics.Product{ID: 1400 + seed}
		if err := s.AppendEvents(ctx, storeEvents(p.ID, ds.Events)); err != nil {
			t.Fatal(err)
		}
		freq := query.FunnelRequest{Steps: query.EventSteps(ds.Steps), WindowHours: json.RawMessage(strconv.Itoa(ds.WindowHours)),
			DateFrom: ds.From.Format("2006-01-02"), DateTo: ds.To.Format("2006-01-02"), Breakdown: ds.Breakdown}
		refSteps := querytest.PlainSteps(ds.Steps)
		if seed%2 == 0 {
			for i := range freq.Steps {
				freq.Steps[i].Where = filterRequests(ds.StepFilters[i])
				refSteps[i].Filters = ds.StepFilters[i]
			}
		}
		for _, x := range ds.Exclusions {
			freq.Exclusions = append(freq.Exclusions, query.FunnelExclusion{Event: x.Event, Where: filterRequests(x.Filters), FromStep: x.FromStep, ToStep: x.ToStep})
		}
		if ds.Breakdown != "" {
			freq.BreakdownLimit = 2
		}
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			test := env == analytics.EnvTest
			scope := analytics.EventRange{ProductID: p.ID, Env: env}
			fq, err := freq.Query(scope, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			funnel, err := engine.RunFunnel(ctx, fq)
			if err != nil {
				t.Fatal(err)
			}
			// The rows to list: the whole funnel, and each breakdown row.
			type row struct {
				value *string
				other bool
				steps []query.FunnelStep
			}
			rows := []row{{steps: funnel.Steps}}
			for _, b := range funnel.Breakdown {
				rows = append(rows, row{value: b.BreakdownValue, other: b.Other, steps: b.Steps})
			}
			for _, r := range rows {
				for step := range ds.Steps {
					for _, dropped := range []bool{false, true} {
						if dropped && step == len(ds.Steps)-1 {
							continue
						}
						req := query.FunnelUsersRequest{FunnelRequest: freq, Step: step, Status: query.FunnelConverted,
							BreakdownValue: r.value, Other: r.other}
						want := r.steps[step].Count
						if dropped {
							req.Status = query.FunnelDropped
							want -= r.steps[step+1].Count
						}
						what := fmt.Sprintf("seed %d %s funnel %v excluding %v by %q row %v/%v, step %d %s",
							seed, env, ds.Steps, ds.Exclusions, ds.Breakdown, optionalText(r.value), r.other, step, req.Status)
						got := funnelUsersAnswer(t, engine, scope, req, 2+int(seed%3))
						ref := querytest.FunnelUsers(time.UTC, ds.Events, test, refSteps, ds.Exclusions, ds.From, ds.To, ds.WindowHours,
							querytest.FunnelUsersParams{Step: step, Dropped: dropped, Breakdown: ds.Breakdown, Limit: 2, Value: r.value, Other: r.other})
						if int64(len(got)) != want {
							t.Errorf("%s: %d users, the funnel counts %d", what, len(got), want)
						}
						if !reflect.DeepEqual(got, ref) {
							t.Errorf("%s:\n got %+v\nwant %+v", what, got, ref)
						}
					}
				}
			}
		}
	}
}

// optionalText shows an optional value: quoted, or "none".
func optionalText(s *string) string {
	if s == nil {
		return "none"
	}
	return strconv.Quote(*s)
}
