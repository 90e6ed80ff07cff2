package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/query/querytest"
)

// cohortFilterSeeds is how many random datasets of each kind (queries,
// sessions, paths) the cohort filters are checked on.
const cohortFilterSeeds = 8

// The generations the tests write: a cohort's current one, which queries
// must read, and a stale one of other members, which they must not.
const (
	currentGeneration = 3
	staleGeneration   = 2
)

// cohortTable stands in for the metadata store's cohorts, which this half
// of the suite does not open: the current generation of each cohort of a
// product.
type cohortTable map[[2]int64]int64

func (c cohortTable) Cohort(_ context.Context, productID, id int64) (analytics.Cohort, error) {
	g, ok := c[[2]int64{productID, id}]
	if !ok {
		return analytics.Cohort{}, analytics.ErrNotFound
	}
	return analytics.Cohort{ID: id, ProductID: productID, Generation: g}, nil
}

// resolve names the current generation in q's cohort filters, as the
// engine does when a query runs, for the queries the tests send to the
// store directly.
func (c cohortTable) resolve(productID int64, fs []analytics.Filter) {
	for i, f := range fs {
		if f.Cohort != nil {
			fs[i].Cohort = &analytics.CohortRef{ProductID: productID, ID: f.Cohort.ID, Generation: c[[2]int64{productID, f.Cohort.ID}]}
		}
	}
}

// makeCohort writes a cohort of product: about one user in every n of
// events as its current generation, and the others as a stale one, and
// the same id in product+10000 with the others as its current members,
// which a query of product must not read either. It returns the cohort
// as the reference's filter value.
func makeCohort(ctx context.Context, t *testing.T, s Events, cohorts cohortTable, product, id int64, events []querytest.Event, n int, rng *rand.Rand) querytest.CohortValue {
	t.Helper()
	ms, ok := s.(analytics.CohortMemberStore)
	if !ok {
		t.Fatal("the event store keeps no cohort members")
	}
	seen := map[string]bool{}
	var users []string
	for _, e := range events {
		if !seen[e.DistinctID] {
			seen[e.DistinctID] = true
			users = append(users, e.DistinctID)
		}
	}
	slices.Sort(users)
	value := querytest.CohortValue{ID: id, Members: map[string]bool{}}
	var in, out []string
	for _, u := range users {
		if rng.IntN(n) == 0 {
			value.Members[u] = true
			in = append(in, u)
		} else {
			out = append(out, u)
		}
	}
	for _, w := range []struct {
		product, generation int64
		ids                 []string
	}{{product, currentGeneration, in}, {product, staleGeneration, out}, {product + 10000, currentGeneration, out}} {
		if err := ms.AppendCohortMembers(ctx, w.product, id, w.generation, w.ids); err != nil {
			t.Fatal(err)
		}
		cohorts[[2]int64{w.product, id}] = currentGeneration
	}
	return value
}

// testCohortFilters checks the cohort filters ("person in cohort", "not
// in cohort") against the reference on random datasets: in a trend's
// global and series filters, in a funnel's step filters and exclusions,
// in retention beside property filters (through the engine, which finds
// each cohort's generation), and in the sessions and paths queries. Each dataset's cohorts have a stale
// generation and a namesake in another product, both of other users.
func testCohortFilters(ctx context.Context, t *testing.T, s Events) {
	cohorts := cohortTable{}
	engine := &query.Engine{Store: s, Cohorts: cohorts}
	for seed := int64(1); seed <= datasets(cohortFilterSeeds); seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 41))
		ds := querytest.Generate(seed)
		p := 1500 + seed
		if err := s.AppendEvents(ctx, storeEvents(p, ds.Events)); err != nil {
			t.Fatal(err)
		}
		a := makeCohort(ctx, t, s, cohorts, p, 2*seed, ds.Events, 2, rng)
		b := makeCohort(ctx, t, s, cohorts, p, 2*seed+1, ds.Events, 3, rng)
		inA := querytest.Filter{Property: "cohort", Operator: "in", Value: a}
		notB := querytest.Filter{Property: "cohort", Operator: "not_in", Value: b}
		from, to := ds.From.Format("2006-01-02"), ds.To.Format("2006-01-02")
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			test := env == analytics.EnvTest
			scope := analytics.EventRange{ProductID: p, Env: env}

			// A trend: A among the global filters, not B on a series.
			filters := append(slices.Clone(ds.Filters), inA)
			req := query.TrendRequest{Interval: "day", Filters: filterRequests(filters), DateFrom: from, DateTo: to,
				Series: []query.SeriesRequest{{Event: ds.Steps[0]}, {Event: ds.Steps[1], Math: "unique_users", Filters: filterRequests([]querytest.Filter{notB})}}}
			tq, err := req.Query(scope, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			tr, err := engine.RunTrend(ctx, tq)
			if err != nil {
				t.Fatal(err)
			}
			ref := querytest.Trend(ds.Events, test, []querytest.Series{{Event: ds.Steps[0], Math: "total"},
				{Event: ds.Steps[1], Math: "unique_users", Filters: []querytest.Filter{notB}}}, filters, ds.From, ds.To, "day", "", 0)
			for i, l := range tr.Series {
				var got, want []int64
				for _, pt := range l.Data {
					got = append(got, pt.Value)
				}
				for _, pt := range ref[i].Data {
					want = append(want, pt.Value)
				}
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(l.Total, ref[i].Total) {
					t.Errorf("seed %d %s trend line %d in cohort A: %v (total %s), want %v (total %s)", seed, env, i, got, optional(l.Total), want, optional(ref[i].Total))
				}
			}

			// A funnel: A on the first step, not B on the last, beside
			// the dataset's step filters.
			freq := query.FunnelRequest{Steps: query.EventSteps(ds.Steps), WindowHours: windowJSON(ds.WindowHours), DateFrom: from, DateTo: to}
			refSteps := querytest.PlainSteps(ds.Steps)
			for i := range freq.Steps {
				fs := slices.Clone(ds.StepFilters[i])
				if i == 0 {
					fs = append(fs, inA)
				}
				if i == len(freq.Steps)-1 {
					fs = append(fs, notB)
				}
				freq.Steps[i].Where, refSteps[i].Filters = filterRequests(fs), fs
			}
			fq, err := freq.Query(scope, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			fr, err := engine.RunFunnel(ctx, fq)
			if err != nil {
				t.Fatal(err)
			}
			want := querytest.FunnelSteps(time.UTC, ds.Events, test, refSteps, ds.From, ds.To, ds.WindowHours)
			for i, st := range fr.Steps {
				if st.Count != want[i] {
					t.Errorf("seed %d %s funnel %v with cohorts: step %d = %d, want %d", seed, env, ds.Steps, i, st.Count, want[i])
				}
			}

			// The plain steps with an exclusion of B's users' events, and
			// the dataset's breakdown.
			freq = query.FunnelRequest{Steps: query.EventSteps(ds.Steps), WindowHours: windowJSON(ds.WindowHours), DateFrom: from, DateTo: to,
				Breakdown: ds.Breakdown}
			if ds.Breakdown != "" {
				freq.BreakdownLimit = 2
			}
			exclusions := []querytest.FunnelExclusion{{Event: ds.Steps[len(ds.Steps)-1], Filters: []querytest.Filter{inA}, FromStep: 0, ToStep: 1}}
			for _, x := range exclusions {
				freq.Exclusions = append(freq.Exclusions, query.FunnelExclusion{Event: x.Event, Where: filterRequests(x.Filters), FromStep: x.FromStep, ToStep: x.ToStep})
			}
			if fq, err = freq.Query(scope, time.Now()); err != nil {
				t.Fatal(err)
			}
			if fr, err = engine.RunFunnel(ctx, fq); err != nil {
				t.Fatal(err)
			}
			total, rows := querytest.FunnelBreakdown(time.UTC, ds.Events, test, querytest.PlainSteps(ds.Steps), exclusions, ds.Breakdown, 2, ds.From, ds.To, ds.WindowHours)
			checkFunnelRows(t, fmt.Sprintf("seed %d %s funnel %v excluding cohort A's %q by %q", seed, env, ds.Steps, exclusions[0].Event, ds.Breakdown), fr, total, rows)
		}

		// Retention of the users not in B, with the dataset's filters on
		// its start and return events.
		period := []string{"day", "week", "month"}[seed%3]
		rfilters := append(slices.Clone(ds.Filters), notB)
		rreq := query.RetentionRequest{StartEvent: ds.StartEvent, ReturnEvent: ds.ReturnEvent, DateFrom: from, DateTo: to,
			Period: period, Filters: filterRequests(rfilters)}
		rq, err := rreq.Query(analytics.EventRange{ProductID: p, Env: analytics.EnvLive}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		rr, err := engine.RunRetention(ctx, rq)
		if err != nil {
			t.Fatal(err)
		}
		rref := querytest.RetentionWhere(time.UTC, ds.Events, false, rfilters, ds.StartEvent, ds.ReturnEvent, ds.From, ds.To, period)
		if len(rr.Cohorts) != len(rref) {
			t.Errorf("seed %d retention not in cohort B: %d cohorts, want %d", seed, len(rr.Cohorts), len(rref))
		} else {
			for i, c := range rr.Cohorts {
				if c.Size != rref[i].Size || !reflect.DeepEqual(c.Values, rref[i].Values) {
					t.Errorf("seed %d retention by %s not in cohort B, filters %v, cohort %d: %d %v, want %d %v", seed, period, ds.Filters, i, c.Size, c.Values, rref[i].Size, rref[i].Values)
				}
			}
		}

		// The sessions (the Overview's figures) of A's users, or of the
		// users not in A, on a dataset of visits.
		sd := querytest.GenerateSessions(seed)
		sp := 1600 + seed
		if err := s.AppendEvents(ctx, storeEvents(sp, sd.Events)); err != nil {
			t.Fatal(err)
		}
		c := makeCohort(ctx, t, s, cohorts, sp, 1, sd.Events, 2, rng)
		op := []string{"in", "not_in"}[seed%2]
		sf := append(slices.Clone(sd.Filters), querytest.Filter{Property: "cohort", Operator: op, Value: c})
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			req := query.SessionsRequest{DateFrom: sd.From.Format("2006-01-02"), DateTo: sd.To.Format("2006-01-02"),
				Interval: sd.Interval, Filters: filterRequests(sf), Limit: sd.Limit}
			q, err := req.Query(analytics.EventRange{ProductID: sp, Env: env}, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			cohorts.resolve(sp, q.Filters)
			got := sessionsAnswer(t, s, q)
			want := querytest.Sessions(sd.Events, env == analytics.EnvTest, sf, sd.From, sd.To, sd.Interval, sd.Limit)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d %s sessions %s cohort:\n got %+v\nwant %+v", seed, env, op, got, want)
			}
		}

		// The paths of A's users, or of the others.
		pd := querytest.GeneratePaths(seed)
		pp := 1700 + seed
		if err := s.AppendEvents(ctx, storeEvents(pp, pd.Events)); err != nil {
			t.Fatal(err)
		}
		c = makeCohort(ctx, t, s, cohorts, pp, 1, pd.Events, 2, rng)
		params := pd.Params
		params.Filters = append(slices.Clone(params.Filters), querytest.Filter{Property: "cohort", Operator: op, Value: c})
		for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
			scope := analytics.EventRange{ProductID: pp, Env: env}
			q, err := pathsRequest(pd.From, pd.To, params).Query(scope, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			cohorts.resolve(pp, q.Filters)
			got := pathsAnswer(t, s, q)
			want := querytest.Paths(time.UTC, pd.Events, env == analytics.EnvTest, params, pd.From, pd.To)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d %s paths %s cohort, %+v:\n got %+v\nwant %+v", seed, env, op, params, got, want)
			}
		}
	}

	// A cohort the product does not have is refused, naming it.
	q, err := query.TrendRequest{Series: []query.SeriesRequest{{Event: "e"}}, DateFrom: "2026-03-01", DateTo: "2026-03-02",
		Filters: []query.FilterRequest{{Property: "cohort", Operator: "in", Value: 999.0}}}.Query(analytics.EventRange{ProductID: 1501, Env: analytics.EnvLive}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var ae *analytics.Error
	if _, err := engine.RunTrend(ctx, q); !errors.As(err, &ae) || ae.Kind != analytics.KindInvalid || ae.Message != "filters: no cohort 999 in this product" {
		t.Errorf("a trend in a cohort the product does not have: %v", err)
	}
}

// windowJSON is a window in hours as a request's JSON number.
func windowJSON(hours int) []byte { return []byte(strconv.Itoa(hours)) }
