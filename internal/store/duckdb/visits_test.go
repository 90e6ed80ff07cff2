package duckdb

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"strata/internal/analytics"
	"strata/internal/query/querytest"
	"strata/internal/store/storetest"
)

// openVisits opens a store in a fresh directory for the kept-visits tests.
func openVisits(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkSessions compares the store's sessions over from..to (days) with
// the reference over events, both environments, and returns whether the
// live answer read kept visits.
// berlin is the zone checkSessions also asks in.
var berlin = func() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	return loc
}()

func checkSessions(t *testing.T, s *Store, product int64, events []querytest.Event, from, to time.Time, interval string, limit int, what string) bool {
	t.Helper()
	var kept bool
	for _, env := range []analytics.Env{analytics.EnvLive, analytics.EnvTest} {
		before := s.visits.answered.Load()
		got := storetest.SessionsOf(t, s, product, env, from, to, interval, nil, limit)
		if env == analytics.EnvLive {
			kept = s.visits.answered.Load() > before
		}
		want := querytest.Sessions(events, env == analytics.EnvTest, nil, from, to, interval, limit)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s, %s %s–%s by %s:\n got %+v\nwant %+v", what, env, from.Format("2006-01-02"), to.Format("2006-01-02"), interval, got, want)
		}
		// The same range as days of a zone east of UTC: the kept visits'
		// buckets are local too, and the range's ends move off midnight.
		got = storetest.SessionsOfIn(t, s, product, env, "Europe/Berlin", from, to, interval, limit)
		if want := querytest.SessionsIn(berlin, events, env == analytics.EnvTest, nil, from, to, interval, limit); !reflect.DeepEqual(got, want) {
			t.Errorf("%s, %s %s–%s by %s in Berlin:\n got %+v\nwant %+v", what, env, from.Format("2006-01-02"), to.Format("2006-01-02"), interval, got, want)
		}
	}
	return kept
}

// TestKeptVisitsRandom appends each random sessions dataset in a few
// batches in random order (so that later batches hold late events that
// join, extend and merge kept visits, and visits that cross the horizon),
// refreshes the kept visits at a random settled time between batches, and
// after every step compares the answer over the dataset's range, and over
// ranges that start and end inside it, with the reference over the events
// stored so far.
func TestKeptVisitsRandom(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	used := 0
	for seed := int64(1); seed <= 24; seed++ {
		ds := querytest.GenerateSessions(seed)
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		product := 900 + seed
		events := append([]querytest.Event(nil), ds.Events...)
		r.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
		cuts := []int{0}
		for range 1 + r.IntN(3) {
			cuts = append(cuts, r.IntN(len(events)+1))
		}
		cuts = append(cuts, len(events))
		slices.Sort(cuts)
		span := ds.To.AddDate(0, 0, 3).Sub(ds.From.AddDate(0, 0, -1))
		for k := 1; k < len(cuts); k++ {
			if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events[cuts[k-1]:cuts[k]])); err != nil {
				t.Fatal(err)
			}
			stored := events[:cuts[k]]
			ranges := [][2]time.Time{{ds.From, ds.To}, {ds.From.AddDate(0, 0, 1), ds.To.AddDate(0, 0, 1)}, {ds.From.AddDate(0, 0, -1), ds.From}}
			for _, rg := range ranges {
				checkSessions(t, s, product, stored, rg[0], rg[1], ds.Interval, ds.Limit, "before the refresh")
			}
			settled := ds.From.AddDate(0, 0, -1).Add(time.Duration(r.Int64N(int64(span)))).Truncate(time.Microsecond)
			if _, err := s.RefreshVisits(ctx, settled); err != nil {
				t.Fatal(err)
			}
			for _, rg := range ranges {
				if checkSessions(t, s, product, stored, rg[0], rg[1], ds.Interval, ds.Limit, "after a refresh at "+settled.Format(time.RFC3339Nano)) {
					used++
				}
			}
		}
	}
	// Most steps must have read the table, or this tested the statement.
	if used < 40 {
		t.Errorf("only %d answers read kept visits", used)
	}
}

// at is a time of the cases' day.
var visitDay = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)

func at(h, m int) time.Time {
	return visitDay.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

func pageview(user string, t time.Time, path string) querytest.Event {
	return querytest.Event{Name: analytics.PageviewEvent, DistinctID: user, Time: t, Path: path}
}

// TestKeptVisitsLateEvents covers, one at a time, what a late event does
// to kept visits: it merges two, extends one, starts one before them, or
// lands after the horizon in a visit that crosses it; each is checked
// against the reference after the append and again after the next
// refresh, with the answer read from kept visits where the case allows.
func TestKeptVisitsLateEvents(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		stored []querytest.Event
		late   []querytest.Event
	}{
		{"merges two kept visits", []querytest.Event{pageview("a", at(9, 0), "/a"), pageview("a", at(9, 40), "/b"), pageview("b", at(8, 0), "/c")},
			[]querytest.Event{pageview("a", at(9, 20), "/m")}},
		{"extends a kept visit", []querytest.Event{pageview("a", at(9, 0), "/a"), pageview("a", at(9, 10), "/b")},
			[]querytest.Event{pageview("a", at(9, 39), "/x")}},
		{"starts a visit before a kept one", []querytest.Event{pageview("a", at(9, 0), "/a"), {Name: "signup", DistinctID: "a", Time: at(9, 5)}},
			[]querytest.Event{pageview("a", at(8, 31), "/early")}},
		{"a new visit between kept ones", []querytest.Event{pageview("a", at(6, 0), "/a"), pageview("a", at(12, 0), "/b")},
			[]querytest.Event{pageview("a", at(9, 0), "/mid")}},
		{"joins a visit that crosses the horizon", []querytest.Event{pageview("a", at(11, 0), "/a"), pageview("a", at(11, 20), "/b"), pageview("a", at(11, 40), "/c")},
			[]querytest.Event{pageview("a", at(10, 35), "/before")}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openVisits(t)
			product := int64(950 + i)
			if err := s.AppendEvents(ctx, storetest.StoreEvents(product, c.stored)); err != nil {
				t.Fatal(err)
			}
			// Settled at noon: the 11:00 run is still open then.
			if _, err := s.RefreshVisits(ctx, at(12, 0)); err != nil {
				t.Fatal(err)
			}
			if !checkSessions(t, s, product, c.stored, visitDay, visitDay, "hour", 5, "kept") && i < 4 {
				t.Errorf("the answer did not read kept visits")
			}
			all := append(append([]querytest.Event(nil), c.stored...), c.late...)
			if err := s.AppendEvents(ctx, storetest.StoreEvents(product, c.late)); err != nil {
				t.Fatal(err)
			}
			checkSessions(t, s, product, all, visitDay, visitDay, "hour", 5, "after the late event")
			if _, err := s.RefreshVisits(ctx, at(13, 0)); err != nil {
				t.Fatal(err)
			}
			checkSessions(t, s, product, all, visitDay, visitDay, "hour", 5, "after the next refresh")
			if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 3)); err != nil {
				t.Fatal(err)
			}
			if !checkSessions(t, s, product, all, visitDay, visitDay, "hour", 5, "all settled") {
				t.Errorf("the answer did not read kept visits once all settled")
			}
		})
	}
}

// TestKeptVisitsDeletion deletes stored events (as a deletion on this
// store must: eventsChanged before the commit) and checks the answers.
func TestKeptVisitsDeletion(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	const product = 970
	events := []querytest.Event{pageview("a", at(9, 0), "/a"), pageview("a", at(9, 20), "/bridge"), pageview("a", at(9, 40), "/b"),
		pageview("b", at(7, 0), "/c")}
	if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, events, visitDay, visitDay, "day", 5, "kept") {
		t.Fatal("the answer did not read kept visits")
	}
	// Deleting the event in the middle splits the visit in two.
	s.eventsChanged(product, analytics.EnvLive, at(9, 20))
	if _, err := s.DB().Exec(`DELETE FROM events WHERE product_id = $1 AND path = '/bridge'`, product); err != nil {
		t.Fatal(err)
	}
	left := []querytest.Event{events[0], events[2], events[3]}
	checkSessions(t, s, product, left, visitDay, visitDay, "day", 5, "after the deletion")
	if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, left, visitDay, visitDay, "day", 5, "after the next refresh") {
		t.Error("the answer did not read kept visits after the refresh")
	}
}

// TestKeptVisitsLongVisit is a kept visit that runs past the range's end
// by more than SessionLookahead: the statement cuts it there, and so must
// the answer.
func TestKeptVisitsLongVisit(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	const product = 980
	var events []querytest.Event
	for m := 0; m < 30*60; m += 20 { // 30 hours, a page every 20 minutes
		events = append(events, pageview("a", at(22, m), "/p"))
	}
	events = append(events, pageview("b", at(3, 0), "/short"))
	if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 5)); err != nil {
		t.Fatal(err)
	}
	checkSessions(t, s, product, events, visitDay, visitDay, "day", 5, "a 30-hour visit")
	checkSessions(t, s, product, events, visitDay, visitDay.AddDate(0, 0, 1), "day", 5, "a 30-hour visit, two days")
}

// TestKeptVisitsSurviveRestart keeps visits, closes the store and opens
// it again: the sessions answers read the table at once, with no refresh
// (the answered counter), and equal the reference. A late event appended
// after the restart, and one left unapplied by the close, still count. A
// copy of the file taken while the store runs (as a crash leaves it) has
// no horizon, so its answers do not read the table until a refresh
// builds it again.
func TestKeptVisitsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(dir string) *Store {
		t.Helper()
		s, err := Open(ctx, dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	const product = 990
	stored := []querytest.Event{pageview("a", at(9, 0), "/a"), pageview("a", at(9, 40), "/b"), pageview("b", at(8, 0), "/c"),
		pageview("b", at(8, 5), "/d"), {Name: "signup", DistinctID: "c", Time: at(10, 0)}, pageview("c", at(10, 1), "/e")}
	s := open(dir)
	if err := s.AppendEvents(ctx, storetest.StoreEvents(product, stored)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, at(12, 0)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, stored, visitDay, visitDay, "hour", 5, "kept") {
		t.Fatal("the answer did not read kept visits")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened: the table answers before any refresh.
	s = open(dir)
	if n := s.visits.restored.Load(); n != 1 {
		t.Errorf("restored %d scopes' horizons, want 1", n)
	}
	if !checkSessions(t, s, product, stored, visitDay, visitDay, "hour", 5, "after a restart") {
		t.Error("after a restart the answer did not read kept visits")
	}
	// A late event (it merges a's two visits) appended after the restart.
	all := append(append([]querytest.Event(nil), stored...), pageview("a", at(9, 20), "/m"))
	if err := s.AppendEvents(ctx, storetest.StoreEvents(product, all[len(stored):])); err != nil {
		t.Fatal(err)
	}
	checkSessions(t, s, product, all, visitDay, visitDay, "hour", 5, "a late event after a restart")
	// Closed with that mark unapplied: the saved horizon leaves it out.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(dir)
	checkSessions(t, s, product, all, visitDay, visitDay, "hour", 5, "a late mark across a restart")
	if _, err := s.RefreshVisits(ctx, at(13, 0)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, s, product, all, visitDay, visitDay, "hour", 5, "refreshed after a restart") {
		t.Error("after the refresh the answer did not read kept visits")
	}

	// The file as a crash leaves it: copied while the store runs.
	if _, err := s.DB().ExecContext(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	crashed := t.TempDir()
	copyFile(t, filepath.Join(dir, FileName), filepath.Join(crashed, FileName))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c := open(crashed)
	defer c.Close()
	if n := c.visits.restored.Load(); n != 0 {
		t.Errorf("after a crash %d scopes' horizons were restored", n)
	}
	if checkSessions(t, c, product, all, visitDay, visitDay, "hour", 5, "after a crash") {
		t.Error("after a crash the answer read kept visits before they were built again")
	}
	if _, err := c.RefreshVisits(ctx, at(13, 0)); err != nil {
		t.Fatal(err)
	}
	if !checkSessions(t, c, product, all, visitDay, visitDay, "hour", 5, "rebuilt after a crash") {
		t.Error("after the rebuild the answer did not read kept visits")
	}
}

// copyFile copies the file from to the path to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestKeptVisitsReadInPlace checks the shape of an answer from kept
// visits: the visits the statement builds from events are materialised,
// but the kept ones are read from their table, not copied into that set
// (at 10 M events the copy took most of the statement's time,
// docs/benchmarks.md), and only twice: once for the buckets, entry and
// exit pages together, once for the visitors, each user once (each of the
// four aggregates read them, and the paths twice, before "Sessions in one
// pass"); the answer still equals the reference.
func TestKeptVisitsReadInPlace(t *testing.T) {
	ctx := context.Background()
	s := openVisits(t)
	const product = 981
	var events []querytest.Event
	for i, user := range []string{"a", "b", "c"} {
		events = append(events, pageview(user, at(9+i, 0), "/"), pageview(user, at(9+i, 5), "/p"))
	}
	if err := s.AppendEvents(ctx, storetest.StoreEvents(product, events)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RefreshVisits(ctx, visitDay.AddDate(0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	var statements []string
	s.traceSQL = func(sql string, _ []any) { statements = append(statements, sql) }
	defer func() { s.traceSQL = nil }()
	if !checkSessions(t, s, product, events, visitDay, visitDay, "day", 5, "three kept visits") {
		t.Fatal("the answer did not read kept visits")
	}
	var read bool
	for _, sql := range statements {
		start := strings.Index(sql, "v AS MATERIALIZED (")
		if start < 0 || !strings.Contains(sql, "FROM visits") {
			continue
		}
		read = true
		// The materialised CTE ends where the first aggregate starts.
		end := strings.Index(sql[start:], ", c AS MATERIALIZED (")
		if end < 0 {
			t.Fatalf("no counts by bucket and page in %s", sql)
		}
		if cte := sql[start : start+end]; strings.Contains(cte, "FROM visits") {
			t.Errorf("the kept visits are copied into the materialised visits:\n%s", cte)
		}
		if n := strings.Count(sql[start+end:], "FROM visits"); n != 2 {
			t.Errorf("the aggregates read the kept visits %d times, want 2 (buckets and pages, visitors):\n%s", n, sql)
		}
		// The visitors' bitmap takes each kept user once, grouped by the
		// dense id (an array on this store), not once per visit.
		if !keptUsersGrouped.MatchString(sql) {
			t.Errorf("the visitors read the kept visits' users ungrouped:\n%s", sql)
		}
	}
	if !read {
		t.Fatal("no statement read the kept visits")
	}
}

var keptUsersGrouped = regexp.MustCompile(`SELECT uid FROM visits WHERE [^()]* GROUP BY uid\)`)

// TestVisitScopesOwnTheirEnv appends an event whose environment is a view
// of a buffer, as the spool's load hands them, and reuses the buffer: the
// kept visits' scope must still name "live" (it once read the reused
// bytes, and binding them failed: "could not bind parameter").
func TestVisitScopesOwnTheirEnv(t *testing.T) {
	s := openVisits(t)
	buf := []byte("live")
	ev := analytics.Event{UUID: [16]byte{1}, ProductID: 7, Env: analytics.Env(unsafe.String(&buf[0], len(buf))),
		Timestamp: time.Now().UTC(), ReceivedAt: time.Now().UTC(), Name: "$pageview", DistinctID: "a", Properties: []byte("{}")}
	if err := s.AppendEvents(context.Background(), []analytics.Event{ev}); err != nil {
		t.Fatal(err)
	}
	copy(buf, "\xff\xfe\xfd\xfc")
	s.visits.mu.Lock()
	defer s.visits.mu.Unlock()
	if len(s.visits.scopes) != 1 {
		t.Fatalf("%d scopes", len(s.visits.scopes))
	}
	for sc := range s.visits.scopes {
		if sc.env != analytics.EnvLive {
			t.Errorf("the scope's env reads %q after its buffer was reused", sc.env)
		}
	}
}
