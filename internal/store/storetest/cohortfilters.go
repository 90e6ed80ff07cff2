package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/cohorts"
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

	testPersonFilters(ctx, t, s)

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

// personPlans stands in for the metadata store's persons (this half of
// the suite does not open one): each product's persons and their plan
// ("" for none). It streams the ids that pass a filter of the key plan
// with the people list's semantics, in byte order.
type personPlans map[int64]map[string]string

func (pp personPlans) EachPersonID(_ context.Context, productID int64, filters []analytics.PersonFilter, fn func(string) error) error {
	ids := slices.Sorted(maps.Keys(pp[productID]))
	for _, id := range ids {
		plan := pp[productID][id]
		pass := true
		for _, f := range filters {
			if f.Key != "plan" {
				return fmt.Errorf("personPlans knows the key plan only, not %q", f.Key)
			}
			switch f.Operator {
			case analytics.OpEq:
				pass = pass && plan != "" && plan == f.Value
			case analytics.OpNeq:
				pass = pass && plan != f.Value
			case analytics.OpIsSet:
				pass = pass && plan != ""
			default:
				return fmt.Errorf("personPlans: operator %q", f.Operator)
			}
		}
		if pass {
			if err := fn(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// testPersonFilters checks person-property filters ("person.plan eq pro"),
// which the engine turns into cohort filters of person sets
// (cohorts.PersonSets) written to the store: a trend and a funnel on
// random datasets equal the reference given the persons that pass; a set
// is computed once while it is fresh and again after, and the sweep of a
// later computation deletes its old generation.
func testPersonFilters(ctx context.Context, t *testing.T, s Events) {
	ms := s.(analytics.CohortMemberStore)
	plans := personPlans{}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	sets := &cohorts.PersonSets{Persons: plans, Events: ms, Now: func() time.Time { return now }}
	engine := &query.Engine{Store: s, PersonSets: sets}
	for seed := int64(1); seed <= datasets(4); seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 43))
		ds := querytest.Generate(seed)
		p := 1800 + seed
		if err := s.AppendEvents(ctx, storeEvents(p, ds.Events)); err != nil {
			t.Fatal(err)
		}
		plans[p] = map[string]string{}
		for _, e := range ds.Events {
			if _, ok := plans[p][e.DistinctID]; !ok {
				plans[p][e.DistinctID] = []string{"", "pro", "free"}[rng.IntN(3)]
			}
		}
		// The persons a filter keeps, as the reference's cohort.
		members := func(f analytics.PersonFilter) querytest.CohortValue {
			v := querytest.CohortValue{Members: map[string]bool{}}
			plans.EachPersonID(ctx, p, []analytics.PersonFilter{f}, func(id string) error { v.Members[id] = true; return nil })
			return v
		}
		pro := members(analytics.PersonFilter{Key: "plan", Operator: analytics.OpEq, Value: "pro"})
		notFree := members(analytics.PersonFilter{Key: "plan", Operator: analytics.OpNeq, Value: "free"})
		from, to := ds.From.Format("2006-01-02"), ds.To.Format("2006-01-02")
		scope := analytics.EventRange{ProductID: p, Env: analytics.EnvLive}

		req := query.TrendRequest{Interval: "week", DateFrom: from, DateTo: to,
			Filters: []query.FilterRequest{{Property: "person.plan", Operator: "eq", Value: "pro"}},
			Series:  []query.SeriesRequest{{Event: ds.Steps[0], Math: "unique_users"}}}
		tq, err := req.Query(scope, now)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := engine.RunTrend(ctx, tq)
		if err != nil {
			t.Fatal(err)
		}
		ref := querytest.Trend(ds.Events, false, []querytest.Series{{Event: ds.Steps[0], Math: "unique_users"}},
			[]querytest.Filter{{Property: "cohort", Operator: "in", Value: pro}}, ds.From, ds.To, "week", "", 0)
		if !reflect.DeepEqual(tr.Series[0].Total, ref[0].Total) {
			t.Errorf("seed %d unique users of %s on pro: %s, want %s", seed, ds.Steps[0], optional(tr.Series[0].Total), optional(ref[0].Total))
		}

		freq := query.FunnelRequest{Steps: query.EventSteps(ds.Steps), WindowHours: windowJSON(ds.WindowHours), DateFrom: from, DateTo: to}
		freq.Steps[0].Where = []query.FilterRequest{{Property: "person.plan", Operator: "neq", Value: "free"}}
		fq, err := freq.Query(scope, now)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := engine.RunFunnel(ctx, fq)
		if err != nil {
			t.Fatal(err)
		}
		refSteps := querytest.PlainSteps(ds.Steps)
		refSteps[0].Filters = []querytest.Filter{{Property: "cohort", Operator: "in", Value: notFree}}
		want := querytest.FunnelSteps(time.UTC, ds.Events, false, refSteps, ds.From, ds.To, ds.WindowHours)
		for i, st := range fr.Steps {
			if st.Count != want[i] {
				t.Errorf("seed %d funnel %v, step 0 not on free: step %d = %d, want %d", seed, ds.Steps, i, st.Count, want[i])
			}
		}
		if fr.Steps[0].Where == nil || fr.Steps[0].Where[0].Property != "person.plan" {
			t.Errorf("seed %d: the funnel's first step is named %+v, want its person filter", seed, fr.Steps[0])
		}
	}

	// One set while it is fresh; a new generation after; the next
	// computation past PersonSetKeep deletes the first.
	f := analytics.PersonFilter{Key: "plan", Operator: analytics.OpEq, Value: "pro"}
	first, err := sets.Set(ctx, 1801, f)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(cohorts.PersonSetFresh / 2)
	if again, err := sets.Set(ctx, 1801, f); err != nil || again != first {
		t.Errorf("a fresh set was computed again: %+v, then %+v (%v)", first, again, err)
	}
	now = now.Add(cohorts.PersonSetKeep + time.Minute)
	second, err := sets.Set(ctx, 1801, f)
	if err != nil || second.Generation == first.Generation || second.ID != first.ID || first.ID >= 0 {
		t.Fatalf("after PersonSetKeep: %+v, then %+v (%v)", first, second, err)
	}
	size := func(r analytics.CohortRef) int64 {
		n, err := ms.CohortSize(ctx, r.ProductID, r.ID, r.Generation)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := size(second); n != int64(len(pro1801(plans))) {
		t.Errorf("the new set has %d members, want %d", n, len(pro1801(plans)))
	}
	waitFor(t, func() bool { return size(first) == 0 }, "the old person set dropped")
	// A person set is no cohort of a person's.
	for id, plan := range plans[1801] {
		if plan != "pro" {
			continue
		}
		pc, err := ms.PersonCohorts(ctx, 1801, id)
		if err != nil || len(pc) != 0 {
			t.Errorf("PersonCohorts(%q) = %v, %v: a person set listed", id, pc, err)
		}
		break
	}
}

// pro1801 is the persons on pro of the first person-filter dataset.
func pro1801(plans personPlans) []string {
	var out []string
	for id, plan := range plans[1801] {
		if plan == "pro" {
			out = append(out, id)
		}
	}
	return out
}
