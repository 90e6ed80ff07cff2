package duckdb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/query/querytest"
	"strata/internal/store/storetest"
)

// countsDay is the first day of the kept-counts tests' events: Berlin's
// clocks go forward on 2026-03-29 at 01:00 UTC and New York's on
// 2026-03-08, so the four days hold a DST day in one zone of each test.
var countsDay = time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC)

// randomPageviews returns n events over four days from countsDay: mostly
// page views of a few paths, browsers and sources (some unset), some other
// events, some bots, some test-environment ones.
func randomPageviews(r *rand.Rand, n int) []querytest.Event {
	paths := []string{"/", "/a", "/b", "/c", "/d", ""}
	browsers := []string{"Chrome", "Firefox", "Safari", ""}
	sources := []string{"google", "bing", "", "", ""}
	countries := []string{"DE", "US", "FR", ""}
	// Some datasets have more users than a word of a user set.
	users := []int{30, 150}[r.IntN(2)]
	var out []querytest.Event
	for i := 0; i < n; i++ {
		e := querytest.Event{Name: analytics.PageviewEvent, DistinctID: fmt.Sprintf("u%d", r.IntN(users)),
			Time: countsDay.Add(time.Duration(r.Int64N(int64(96 * time.Hour)))).Truncate(time.Microsecond),
			Path: paths[r.IntN(len(paths))], Browser: browsers[r.IntN(len(browsers))], Source: sources[r.IntN(len(sources))],
			Country: countries[r.IntN(len(countries))]}
		switch r.IntN(12) {
		case 0:
			e.Name = "signup"
		case 1:
			e.Bot = true
		case 2:
			e.Test = true
		}
		out = append(out, e)
	}
	return out
}

// countsQueries are the trend queries the kept counts and users may
// answer, over ranges inside, across and outside the events, in zones of
// whole hours (UTC, Berlin, New York) and one of half hours (Kolkata,
// which takes the statement), and one they may not (a filter).
func countsQueries(product int64, r *rand.Rand) []analytics.TrendQuery {
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"}
	path, browser, source := analytics.Property{Column: "path"}, analytics.Property{Column: "browser"}, analytics.Property{Column: "source"}
	country := analytics.Property{Column: "country"}
	users := []analytics.TrendSeries{{Event: analytics.PageviewEvent, UniqueUsers: true}}
	var out []analytics.TrendQuery
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			panic(err)
		}
		day := func(d int) time.Time {
			return time.Date(countsDay.Year(), countsDay.Month(), countsDay.Day()+d, 0, 0, 0, 0, loc).UTC()
		}
		from, to := day(r.IntN(3)-1), day(2+r.IntN(4))
		rg := analytics.EventRange{ProductID: product, Env: analytics.EnvLive, From: from, To: to, Zone: loc}
		if r.IntN(4) == 0 {
			rg.Env = analytics.EnvTest
		}
		pv := []analytics.TrendSeries{{Event: analytics.PageviewEvent}}
		iv := []analytics.Interval{analytics.Hour, analytics.Day, analytics.Week, analytics.Month}[r.IntN(4)]
		out = append(out,
			analytics.TrendQuery{EventRange: rg, Series: pv, Interval: iv},
			analytics.TrendQuery{EventRange: rg, Series: []analytics.TrendSeries{{Event: "signup"}, {Event: analytics.PageviewEvent}}, Interval: analytics.Day},
			analytics.TrendQuery{EventRange: rg, Series: pv, Interval: analytics.Month, Breakdown: &path, BreakdownLimit: 1 + r.IntN(4)},
			analytics.TrendQuery{EventRange: rg, Series: pv, Interval: iv, Breakdown: &browser, BreakdownLimit: 1 + r.IntN(3)},
			analytics.TrendQuery{EventRange: rg, Series: pv, Interval: analytics.Day, Breakdown: &source, BreakdownLimit: 1,
				Filters: []analytics.Filter{{Property: source, Operator: analytics.OpIsSet}}},
			analytics.TrendQuery{EventRange: rg, Series: users, Interval: analytics.Day, Breakdown: &path, BreakdownLimit: 2},
			// The Overview's visitors and page views, and its countries.
			analytics.TrendQuery{EventRange: rg, Series: append(slices.Clone(users), pv...), Interval: iv},
			analytics.TrendQuery{EventRange: rg, Series: users, Interval: analytics.Month, Breakdown: &country, BreakdownLimit: 1 + r.IntN(3)},
			analytics.TrendQuery{EventRange: rg, Series: users, Interval: iv, Breakdown: &browser, BreakdownLimit: 1 + r.IntN(3)},
			analytics.TrendQuery{EventRange: rg, Series: users, Interval: analytics.Hour, Breakdown: &source, BreakdownLimit: 1,
				Filters: []analytics.Filter{{Property: source, Operator: analytics.OpIsSet}}},
			analytics.TrendQuery{EventRange: rg, Series: pv, Interval: analytics.Day, Breakdown: &path, BreakdownLimit: 2,
				Filters: []analytics.Filter{{Property: browser, Operator: analytics.OpEq, Value: "Chrome"}}},
		)
	}
	// A range that starts and ends inside hours.
	out = append(out, analytics.TrendQuery{EventRange: analytics.EventRange{ProductID: product, Env: analytics.EnvLive,
		From: countsDay.Add(90 * time.Minute), To: countsDay.Add(70*time.Hour + 20*time.Minute)},
		Series: []analytics.TrendSeries{{Event: analytics.PageviewEvent}}, Interval: analytics.Hour, Breakdown: &path, BreakdownLimit: 3},
		analytics.TrendQuery{EventRange: analytics.EventRange{ProductID: product, Env: analytics.EnvLive,
			From: countsDay.Add(150 * time.Minute), To: countsDay.Add(50*time.Hour + 40*time.Minute)},
			Series: []analytics.TrendSeries{{Event: analytics.PageviewEvent, UniqueUsers: true}}, Interval: analytics.Day})
	return out
}

// sortedTrend answers q and sorts its rows, which the store returns in no
// order.
func sortedTrend(t *testing.T, s *Store, q analytics.TrendQuery) []analytics.TrendRow {
	t.Helper()
	rows, err := s.Trend(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rows, func(a, b analytics.TrendRow) int {
		return strings.Compare(fmt.Sprint(a.Series, a.Bucket.UnixMicro(), a.Rank, a.Other, a.Breakdown, a.Total), fmt.Sprint(b.Series, b.Bucket.UnixMicro(), b.Rank, b.Other, b.Breakdown, b.Total))
	})
	return rows
}

// rowsDiff lists the rows only one of got and want has.
func rowsDiff(got, want []analytics.TrendRow) string {
	var out strings.Builder
	for _, d := range []struct {
		what     string
		in, from []analytics.TrendRow
	}{{"only got", got, want}, {"only want", want, got}} {
		for _, r := range d.in {
			if !slices.Contains(d.from, r) {
				fmt.Fprintf(&out, "%s %+v\n", d.what, r)
			}
		}
	}
	return out.String()
}

// checkCounts compares every query's answer, twice (the first keeps what
// the second reads), with the statement's, and returns how many answers
// read kept counts.
func checkCounts(t *testing.T, s *Store, qs []analytics.TrendQuery, what string) int64 {
	t.Helper()
	before := s.visits.counts.answered.Load()
	for _, q := range qs {
		s.visits.counts.off = true
		want := sortedTrend(t, s, q)
		s.visits.counts.off = false
		for round := range 2 {
			if got := sortedTrend(t, s, q); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, round %d, %+v:\n%s", what, round, q, rowsDiff(got, want))
			}
		}
	}
	return s.visits.counts.answered.Load() - before
}

// TestKeptCountsRandom appends random events in batches in random order
// (later batches hold late events for the hours already counted), refreshes
// at a random settled time between batches, and after each step compares
// the trends the kept counts answer with the statement's, in zones with a
// DST day and one of half hours; then deletes a person, drops the events
// before a cut, and reopens the store, comparing after each.
func TestKeptCountsRandom(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	var used int64
	for seed := int64(1); seed <= 12; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		product := 1200 + seed
		events := randomPageviews(r, 300+r.IntN(300))
		cuts := []int{0}
		for range 1 + r.IntN(3) {
			cuts = append(cuts, r.IntN(len(events)+1))
		}
		cuts = append(cuts, len(events))
		slices.Sort(cuts)
		for k := 1; k < len(cuts); k++ {
			if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events[cuts[k-1]:cuts[k]])); err != nil {
				t.Fatal(err)
			}
			settled := countsDay.Add(time.Duration(r.Int64N(int64(110 * time.Hour)))).Truncate(time.Microsecond)
			if _, err := s.RefreshVisits(ctx, settled); err != nil {
				t.Fatal(err)
			}
			used += checkCounts(t, s, countsQueries(product, r), fmt.Sprintf("seed %d, batch %d, settled %s", seed, k, settled.Format(time.RFC3339)))
		}
		// Every hour settled, then a person deleted and a cut through a day.
		if _, err := s.RefreshVisits(ctx, countsDay.AddDate(0, 0, 6)); err != nil {
			t.Fatal(err)
		}
		qs := countsQueries(product, r)
		used += checkCounts(t, s, qs, fmt.Sprintf("seed %d, all settled", seed))
		if _, err := s.DeletePersons(ctx, product, []string{"u1", "u2"}); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, qs, fmt.Sprintf("seed %d, after a deletion", seed))
		if _, err := s.DropEventsBefore(ctx, product, "", countsDay.Add(30*time.Hour+17*time.Minute)); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, s, qs, fmt.Sprintf("seed %d, after a cut", seed))
	}
	// A restart keeps nothing; the first refresh counts again.
	usersUsed := s.visits.counts.answeredUsers.Load()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(ctx, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 8))
	if n := checkCounts(t, s, countsQueries(1201, r), "after a restart"); n != 0 {
		t.Errorf("%d answers read kept counts before a refresh", n)
	}
	if _, err := s.RefreshVisits(ctx, countsDay.AddDate(0, 0, 6)); err != nil {
		t.Fatal(err)
	}
	used += checkCounts(t, s, countsQueries(1201, r), "after a restart and a refresh")
	if used < 200 {
		t.Errorf("only %d answers read kept counts", used)
	}
	if usersUsed += s.visits.counts.answeredUsers.Load(); usersUsed < 100 {
		t.Errorf("only %d answers read kept users", usersUsed)
	}
}

// TestKeptSpansJoin reads the Overview's previous period and then its range,
// which meet: the kept counts and users of the two join into one span, so
// that the range's second reading is answered from them (a span kept first
// once made the range's reading keep nothing).
func TestKeptSpansJoin(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(3, 3))
	if err := s.AppendEvents(ctx, storetest.StoreEvents(1, randomPageviews(r, 400))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, countsDay.AddDate(0, 0, 6)); err != nil {
		t.Fatal(err)
	}
	country := analytics.Property{Column: "country"}
	overview := func(from time.Time) []analytics.TrendQuery {
		rg := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: from, To: from.Add(48 * time.Hour)}
		users := analytics.TrendSeries{Event: analytics.PageviewEvent, UniqueUsers: true}
		return []analytics.TrendQuery{
			{EventRange: rg, Series: []analytics.TrendSeries{users, {Event: analytics.PageviewEvent}}, Interval: analytics.Day},
			{EventRange: rg, Series: []analytics.TrendSeries{users}, Interval: analytics.Month, Breakdown: &country, BreakdownLimit: 2},
		}
	}
	previous, current := overview(countsDay), overview(countsDay.Add(48*time.Hour))
	checkCounts(t, s, previous, "previous period")
	c := &s.visits.counts
	before, beforeUsers := c.answered.Load(), c.answeredUsers.Load()
	checkCounts(t, s, current, "range")
	// Each query is read twice: the first keeps, the second reads kept
	// counts (the page views) and users (visitors and countries).
	if n := c.answeredUsers.Load() - beforeUsers; n != 2 {
		t.Errorf("%d readings of the range read kept users, want 2", n)
	}
	if n := c.answered.Load() - before; n != 3 {
		t.Errorf("%d readings of the range read kept counts or users, want 3", n)
	}
	from, to := hourOf(countsDay), hourOf(countsDay.Add(96*time.Hour))
	for k, e := range c.users {
		if e.from != from || e.to != to {
			t.Errorf("users %+v kept hours [%d, %d), want [%d, %d)", k, e.from, e.to, from, to)
		}
	}
	for k, e := range c.entries {
		if e.from != from || e.to != to {
			t.Errorf("counts %+v kept hours [%d, %d), want [%d, %d)", k, e.from, e.to, from, to)
		}
	}
	if len(c.users) != 2 || len(c.entries) != 1 {
		t.Errorf("%d kinds of users and %d of counts kept, want 2 and 1", len(c.users), len(c.entries))
	}
}
