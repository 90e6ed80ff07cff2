package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// testCohorts checks cohort definitions (docs/queries.md, "Cohorts"):
// created pending under the product's cap, read and listed per product,
// a changed definition makes one pending, one computation at a time
// (a stale one taken over), a finish makes its generation current unless
// a later one is, a failure and an abandoned upload are recorded, due
// cohorts are listed, and persons are streamed in byte order.
func testCohorts(ctx context.Context, t *testing.T, s Meta, a, b analytics.Product) {
	cs, ok := s.(analytics.CohortStore)
	if !ok {
		t.Fatalf("%T does not implement analytics.CohortStore", s)
	}
	did := true
	def := &analytics.CohortDefinition{Groups: []analytics.CohortGroup{{Conditions: []analytics.CohortCondition{
		{Type: analytics.CohortBehavior, Event: "signup", Performed: &did, AtLeast: 1, Days: 7}}}}}
	dyn := analytics.Cohort{ProductID: a.ID, Name: "Signed up", Kind: analytics.CohortDynamic, Definition: def, CreatedBy: "u1"}
	if err := cs.CreateCohort(ctx, &dyn, 2); err != nil || dyn.ID == 0 {
		t.Fatalf("CreateCohort = %+v, %v", dyn, err)
	}
	static := analytics.Cohort{ProductID: a.ID, Name: "Beta", Kind: analytics.CohortStatic, CreatedBy: "u1"}
	if err := cs.CreateCohort(ctx, &static, 2); err != nil {
		t.Fatal(err)
	}
	third := analytics.Cohort{ProductID: a.ID, Name: "Third", Kind: analytics.CohortStatic}
	var e *analytics.Error
	if err := cs.CreateCohort(ctx, &third, 2); !errors.As(err, &e) || e.Code != "cohorts_full" {
		t.Errorf("a third cohort over a cap of 2: %v", err)
	}
	got, err := cs.Cohort(ctx, a.ID, dyn.ID)
	if err != nil || got.State != analytics.CohortPending || got.Generation != 0 || got.ComputedAt != nil ||
		!reflect.DeepEqual(got.Definition, def) || got.Name != "Signed up" || got.CreatedBy != "u1" {
		t.Errorf("Cohort = %+v, %v", got, err)
	}
	if _, err := cs.Cohort(ctx, b.ID, dyn.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("another product's cohort: %v", err)
	}
	list, err := cs.Cohorts(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].Name != "Beta" || list[1].Name != "Signed up" || list[0].Definition != nil {
		t.Errorf("Cohorts = %+v, %v", list, err)
	}
	if list, _ := cs.Cohorts(ctx, b.ID); len(list) != 0 {
		t.Errorf("product B lists %+v", list)
	}

	now := time.Now()
	gen, ok, err := cs.StartCohort(ctx, a.ID, dyn.ID, now.Add(-time.Hour))
	if err != nil || !ok || gen != 1 {
		t.Fatalf("StartCohort = %d, %v, %v", gen, ok, err)
	}
	if _, ok, _ := cs.StartCohort(ctx, a.ID, dyn.ID, now.Add(-time.Hour)); ok {
		t.Error("a second computation started while one runs")
	}
	if _, _, err := cs.StartCohort(ctx, b.ID, dyn.ID, now.Add(-time.Hour)); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("starting another product's cohort: %v", err)
	}
	if got, _ := cs.Cohort(ctx, a.ID, dyn.ID); got.State != analytics.CohortComputing {
		t.Errorf("state while computing = %q", got.State)
	}
	// A computation started before staleBefore is taken over.
	gen2, ok, err := cs.StartCohort(ctx, a.ID, dyn.ID, now.Add(time.Hour))
	if err != nil || !ok || gen2 != 2 {
		t.Fatalf("taking over a stale computation = %d, %v, %v", gen2, ok, err)
	}
	if ok, err := cs.FinishCohort(ctx, a.ID, dyn.ID, gen2, 42); !ok || err != nil {
		t.Fatalf("FinishCohort = %v, %v", ok, err)
	}
	got, _ = cs.Cohort(ctx, a.ID, dyn.ID)
	if got.State != analytics.CohortReady || got.Generation != 2 || got.Size != 42 || got.ComputedAt == nil {
		t.Errorf("after finishing: %+v", got)
	}
	// The older generation finishing late changes nothing.
	if ok, _ := cs.FinishCohort(ctx, a.ID, dyn.ID, gen, 7); ok {
		t.Error("an older generation finished over a newer one")
	}
	if got, _ := cs.Cohort(ctx, a.ID, dyn.ID); got.Generation != 2 || got.Size != 42 {
		t.Errorf("after a late finish: %+v", got)
	}
	gen3, _, _ := cs.StartCohort(ctx, a.ID, dyn.ID, now.Add(-time.Hour))
	if err := cs.FailCohort(ctx, a.ID, dyn.ID, gen3, "boom"); err != nil {
		t.Fatal(err)
	}
	if got, _ := cs.Cohort(ctx, a.ID, dyn.ID); got.State != analytics.CohortFailed || got.Error != "boom" || got.Generation != 2 {
		t.Errorf("after a failure: %+v", got)
	}
	// An abandoned upload puts back pending (no members yet) or ready.
	sg, _, _ := cs.StartCohort(ctx, a.ID, static.ID, now.Add(-time.Hour))
	if err := cs.AbandonCohort(ctx, a.ID, static.ID, sg); err != nil {
		t.Fatal(err)
	}
	if got, _ := cs.Cohort(ctx, a.ID, static.ID); got.State != analytics.CohortPending {
		t.Errorf("after an abandoned first upload: %q", got.State)
	}
	// Update: a changed definition makes it pending; the same one does not.
	got.Name = "Renamed"
	upd, _ := cs.Cohort(ctx, a.ID, dyn.ID)
	upd.Name = "Signed up lately"
	if err := cs.UpdateCohort(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	if got, _ := cs.Cohort(ctx, a.ID, dyn.ID); got.Name != "Signed up lately" || got.State != analytics.CohortFailed {
		t.Errorf("after renaming: %+v", got)
	}
	upd.Definition = &analytics.CohortDefinition{Groups: []analytics.CohortGroup{{Conditions: []analytics.CohortCondition{
		{Type: analytics.CohortProperty, Key: "plan", Operator: analytics.OpEq, Value: "pro"}}}}}
	if err := cs.UpdateCohort(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	if got, _ := cs.Cohort(ctx, a.ID, dyn.ID); got.State != analytics.CohortPending || !reflect.DeepEqual(got.Definition, upd.Definition) {
		t.Errorf("after a new definition: %+v", got)
	}
	upd.ProductID = b.ID
	if err := cs.UpdateCohort(ctx, &upd); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("updating through another product: %v", err)
	}
	// Due: the dynamic one computed before the cutoff, never the static.
	due, err := cs.DueCohorts(ctx, now.Add(time.Hour), now.Add(-time.Hour), 10)
	if err != nil || len(due) != 1 || due[0].ID != dyn.ID {
		t.Errorf("DueCohorts(later) = %+v, %v", due, err)
	}
	if due, _ := cs.DueCohorts(ctx, now.Add(-time.Hour), now.Add(-time.Hour), 10); len(due) != 0 {
		t.Errorf("DueCohorts(earlier) = %+v", due)
	}
	if err := cs.DeleteCohort(ctx, b.ID, dyn.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleting through another product: %v", err)
	}
	if err := cs.DeleteCohort(ctx, a.ID, dyn.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Cohort(ctx, a.ID, dyn.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("deleted cohort: %v", err)
	}

	// Persons streamed in byte order, filtered as the people list is.
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var ups []analytics.PersonUpdate
	for i, id := range []string{"b", "B", "a", "é", "z", "a b", "Z"} {
		set := map[string]json.RawMessage{}
		if i%2 == 0 {
			set["plan"] = json.RawMessage(`"pro"`)
		}
		ups = append(ups, analytics.PersonUpdate{ProductID: a.ID, DistinctID: id, Set: set, FirstSeen: day, LastSeen: day})
	}
	ups = append(ups, analytics.PersonUpdate{ProductID: b.ID, DistinctID: "other", FirstSeen: day, LastSeen: day})
	if err := s.ApplyPersons(ctx, ups); err != nil {
		t.Fatal(err)
	}
	ps, ok := s.(analytics.PersonIDStore)
	if !ok {
		t.Fatalf("%T does not implement analytics.PersonIDStore", s)
	}
	each := func(filters ...analytics.PersonFilter) []string {
		t.Helper()
		var out []string
		if err := ps.EachPersonID(ctx, a.ID, filters, func(id string) error { out = append(out, id); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got, want := each(), []string{"B", "Z", "a", "a b", "b", "z", "é"}; !slices.Equal(got, want) {
		t.Errorf("EachPersonID = %q, want %q (byte order)", got, want)
	}
	if got, want := each(analytics.PersonFilter{Key: "plan", Operator: analytics.OpNeq, Value: "pro"}), []string{"B", "a b", "é"}; !slices.Equal(got, want) {
		t.Errorf("EachPersonID(plan neq pro) = %q, want %q", got, want)
	}
	stop := errors.New("stop")
	n := 0
	if err := ps.EachPersonID(ctx, a.ID, nil, func(string) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("a stopped stream: %v after %d", err, n)
	}
}

// testCohortMembers checks cohort members and behaviour streams in the
// event store: generations kept apart, counted and paged distinct in byte
// order, dropped but one, a person's memberships listed and deleted,
// every method scoped to its product; a behaviour stream counts the live
// human events since its time, at least N of them, in byte order.
func testCohortMembers(ctx context.Context, t *testing.T, s Events) {
	ms, ok := s.(analytics.CohortMemberStore)
	if !ok {
		t.Fatalf("%T does not implement analytics.CohortMemberStore", s)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ms.AppendCohortMembers(ctx, 1, 10, 1, []string{"old", "b"}))
	must(ms.AppendCohortMembers(ctx, 1, 10, 2, []string{"b", "é", "B", "a"}))
	must(ms.AppendCohortMembers(ctx, 1, 10, 2, []string{"b", "z"})) // a duplicate, counted once
	must(ms.AppendCohortMembers(ctx, 1, 11, 2, []string{"a"}))
	must(ms.AppendCohortMembers(ctx, 2, 10, 2, []string{"other"}))
	size := func(p, c, g int64) int64 {
		t.Helper()
		n, err := ms.CohortSize(ctx, p, c, g)
		must(err)
		return n
	}
	if n := size(1, 10, 2); n != 5 {
		t.Errorf("size of generation 2 = %d, want 5", n)
	}
	if n := size(1, 10, 1); n != 2 {
		t.Errorf("size of generation 1 = %d, want 2", n)
	}
	page := func(after string, limit int) []string {
		t.Helper()
		ids, err := ms.CohortMembers(ctx, 1, 10, 2, after, limit)
		must(err)
		return ids
	}
	if got, want := page("", 3), []string{"B", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("first page = %q, want %q", got, want)
	}
	if got, want := page("b", 3), []string{"z", "é"}; !slices.Equal(got, want) {
		t.Errorf("second page = %q, want %q", got, want)
	}
	pc, err := ms.PersonCohorts(ctx, 1, "a")
	must(err)
	if want := []analytics.CohortMembership{{CohortID: 10, Generation: 2}, {CohortID: 11, Generation: 2}}; !reflect.DeepEqual(pc, want) {
		t.Errorf("PersonCohorts(a) = %v, want %v", pc, want)
	}
	must(ms.DropCohortGenerations(ctx, 1, 10, 2))
	// ClickHouse's mutation may finish after the call: wait for it.
	waitFor(t, func() bool { return size(1, 10, 1) == 0 }, "generation 1 dropped")
	if n := size(1, 10, 2); n != 5 {
		t.Errorf("the kept generation has %d members", n)
	}
	must(ms.DeleteCohortMemberships(ctx, 1, []string{"a", "nobody"}))
	if n, m := size(1, 10, 2), size(1, 11, 2); n != 4 || m != 0 {
		t.Errorf("after deleting a: sizes %d, %d", n, m)
	}
	if n := size(2, 10, 2); n != 1 {
		t.Errorf("another product's cohort lost members: %d", n)
	}
	must(ms.DropCohortGenerations(ctx, 1, 10, 0))
	waitFor(t, func() bool { return size(1, 10, 2) == 0 }, "every generation dropped")
	if n := size(2, 10, 2); n != 1 {
		t.Errorf("another product's cohort was dropped: %d", n)
	}

	// Behaviour streams.
	now := time.Date(2026, 6, 20, 12, 0, 0, 0, time.UTC)
	var events []analytics.Event
	add := func(product int64, env analytics.Env, bot bool, id, name string, ago time.Duration) {
		e := analytics.Event{ProductID: product, Env: env, IsBot: bot, Timestamp: now.Add(-ago), ReceivedAt: now,
			Name: name, DistinctID: id, UserID: ingest.UserID(id), Path: "/", URL: "https://x.example/", Properties: json.RawMessage(`{}`)}
		e.UUID[0], e.UUID[1], e.UUID[2] = 0xc0, byte(len(events)>>8), byte(len(events))
		events = append(events, e)
	}
	for _, id := range []string{"b", "B", "é", "a"} {
		add(1, analytics.EnvLive, false, id, "signup", time.Hour)
	}
	add(1, analytics.EnvLive, false, "a", "signup", 2*time.Hour)
	add(1, analytics.EnvLive, false, "old", "signup", 8*24*time.Hour)   // before the window
	add(1, analytics.EnvTest, false, "test", "signup", time.Hour)       // test data
	add(1, analytics.EnvLive, true, "bot", "signup", time.Hour)         // a bot
	add(1, analytics.EnvLive, false, "other-event", "login", time.Hour) // another event
	add(2, analytics.EnvLive, false, "product-2", "signup", time.Hour)  // another product
	must(s.AppendEvents(ctx, events))
	stream := func(atLeast int) []string {
		t.Helper()
		var out []string
		must(ms.EachBehaviorPerson(ctx, analytics.BehaviorQuery{ProductID: 1, Event: "signup", AtLeast: atLeast, Since: now.Add(-7 * 24 * time.Hour)},
			func(id string) error { out = append(out, id); return nil }))
		return out
	}
	if got, want := stream(1), []string{"B", "a", "b", "é"}; !slices.Equal(got, want) {
		t.Errorf("did signup in 7 days = %q, want %q", got, want)
	}
	if got, want := stream(2), []string{"a"}; !slices.Equal(got, want) {
		t.Errorf("did signup twice in 7 days = %q, want %q", got, want)
	}
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
