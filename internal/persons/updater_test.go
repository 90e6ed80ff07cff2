package persons

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"strata/internal/analytics"
)

// fake records the updates written, and the persons they would have
// created (an update that is not ExistingOnly creates its person).
type fake struct {
	mu      sync.Mutex
	written []analytics.PersonUpdate
	discard bool
	persons map[key]bool
	counts  int
}

func (f *fake) ApplyPersons(_ context.Context, us []analytics.PersonUpdate) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.discard {
		f.written = append(f.written, us...)
	}
	for _, u := range us {
		if !u.ExistingOnly {
			if f.persons == nil {
				f.persons = map[key]bool{}
			}
			f.persons[key{u.ProductID, u.DistinctID}] = true
		}
	}
	return nil
}
func (f *fake) CountPersons(_ context.Context, product int64) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts++
	n := int64(0)
	for k := range f.persons {
		if k.product == product {
			n++
		}
	}
	return n, nil
}
func (f *fake) Person(context.Context, int64, string) (analytics.Person, error) {
	return analytics.Person{}, analytics.ErrNotFound
}
func (f *fake) ListPersons(context.Context, analytics.PersonQuery) ([]analytics.Person, error) {
	return nil, nil
}
func (f *fake) DeletePersonProfiles(context.Context, int64, []string) (int64, error) { return 0, nil }

func (f *fake) take() []analytics.PersonUpdate {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.written
	f.written = nil
	return out
}

var day = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func event(id, name string, at time.Duration, props string) analytics.Event {
	return analytics.Event{ProductID: 1, DistinctID: id, Name: name, Timestamp: day.Add(at), Properties: json.RawMessage(props)}
}

func text(m map[string]json.RawMessage) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

// TestUpdaterCoalesces checks what a batch says about its persons:
// $identify's traits without its $ properties, $set and $set_once of any
// event in event time order (a later $set wins, the earliest $set_once
// wins, a $set after a $set_once of a key replaces it), first and last
// seen, one update per person, none for an event without a distinct id.
func TestUpdaterCoalesces(t *testing.T) {
	f := &fake{}
	u := New(Options{Interval: time.Hour})
	u.Start(f)
	defer u.Close()
	u.Observe([]analytics.Event{
		event("a", "$pageview", 5*time.Hour, `{"$session_id":"s"}`),
		event("a", "clicked", 3*time.Hour, `{"$set":{"plan":"pro"},"$set_once":{"source":"late"}}`),
		event("a", "$identify", time.Hour, `{"email":"a@x.example","plan":"free","$anon_distinct_id":"anon"}`),
		event("a", "x", 2*time.Hour, `{"$set_once":{"source":"ads","ref":"r"},"other":1}`),
		event("a", "x", 4*time.Hour, `{"$set":{"ref":"direct"}}`),
		event("b", "$pageview", 30*time.Minute, `{}`),
		event("", "$pageview", 0, `{"$set":{"x":1}}`),
	})
	if err := u.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := f.take()
	if len(got) != 2 {
		t.Fatalf("updates = %+v, want one for a and one for b", got)
	}
	a, b := got[0], got[1]
	if a.DistinctID != "a" {
		a, b = b, a
	}
	if want := map[string]string{"email": `"a@x.example"`, "plan": `"pro"`, "ref": `"direct"`}; !reflect.DeepEqual(text(a.Set), want) {
		t.Errorf("a's Set = %v, want %v", text(a.Set), want)
	}
	if want := map[string]string{"source": `"ads"`}; !reflect.DeepEqual(text(a.SetOnce), want) {
		t.Errorf("a's SetOnce = %v, want %v", text(a.SetOnce), want)
	}
	if !a.FirstSeen.Equal(day.Add(time.Hour)) || !a.LastSeen.Equal(day.Add(5*time.Hour)) {
		t.Errorf("a seen %v – %v", a.FirstSeen, a.LastSeen)
	}
	if b.DistinctID != "b" || len(b.Set)+len(b.SetOnce) != 0 || !b.LastSeen.Equal(day.Add(30*time.Minute)) {
		t.Errorf("b's update = %+v", b)
	}
}

// TestUpdaterCapsPersons checks MaxPersons: a product is counted when the
// writer first meets it, and its batches are added to the count, so a
// batch that takes it past the cap is written whole and the next ones
// only update the persons that exist; another product is not affected;
// and without a cap nothing is counted.
func TestUpdaterCapsPersons(t *testing.T) {
	f := &fake{}
	u := New(Options{Interval: time.Hour, MaxPersons: 3})
	u.Start(f)
	defer u.Close()
	batch := func(product int64, ids ...string) []analytics.PersonUpdate {
		t.Helper()
		var evs []analytics.Event
		for i, id := range ids {
			e := event(id, "x", time.Duration(i)*time.Hour, `{"$set":{"n":1}}`)
			e.ProductID = product
			evs = append(evs, e)
		}
		u.Observe(evs)
		if err := u.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		return f.take()
	}
	existingOnly := func(us []analytics.PersonUpdate) map[string]bool {
		out := map[string]bool{}
		for _, u := range us {
			out[u.DistinctID] = u.ExistingOnly
		}
		return out
	}
	if got := existingOnly(batch(1, "a", "b")); !reflect.DeepEqual(got, map[string]bool{"a": false, "b": false}) {
		t.Errorf("under the cap: %v", got)
	}
	// Counted 2 and estimated 2 + 2: this batch passes the cap by one.
	if got := existingOnly(batch(1, "c", "d")); !reflect.DeepEqual(got, map[string]bool{"c": false, "d": false}) {
		t.Errorf("the batch that reaches the cap: %v", got)
	}
	if got := existingOnly(batch(1, "a", "e")); !reflect.DeepEqual(got, map[string]bool{"a": true, "e": true}) {
		t.Errorf("at the cap: %v, want only existing persons updated", got)
	}
	if n, _ := f.CountPersons(context.Background(), 1); n != 4 {
		t.Errorf("product 1 has %d persons, want 4", n)
	}
	if got := existingOnly(batch(2, "a", "z")); !reflect.DeepEqual(got, map[string]bool{"a": false, "z": false}) {
		t.Errorf("another product: %v", got)
	}

	g := &fake{}
	v := New(Options{Interval: time.Hour})
	v.Start(g)
	defer v.Close()
	v.Observe([]analytics.Event{event("a", "x", 0, `{}`)})
	if err := v.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.counts != 0 || len(g.take()) != 1 {
		t.Errorf("without a cap: %d counts", g.counts)
	}
}

// TestUpdaterOwnsItsKeys checks that the updater keeps its own copy of a
// distinct id: the spool's loader hands it events whose strings are views
// of a read buffer it reuses after the call (spool.view), and a key left
// pointing there changed under the pending map (a nil update at the
// write, a panic).
func TestUpdaterOwnsItsKeys(t *testing.T) {
	f := &fake{}
	u := New(Options{Interval: time.Hour})
	u.Start(f)
	defer u.Close()
	buf := []byte("user-1user-2")
	view := func(lo, hi int) string { return unsafe.String(&buf[lo], hi-lo) }
	u.Observe([]analytics.Event{event(view(0, 6), "$pageview", time.Hour, `{}`), event(view(6, 12), "$identify", 0, `{"plan":"pro"}`)})
	copy(buf, "xxxxxxyyyyyy") // the buffer reused for the next batch
	if err := u.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, up := range f.take() {
		ids = append(ids, up.DistinctID)
	}
	slices.Sort(ids)
	if want := []string{"user-1", "user-2"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("written ids %q, want %q", ids, want)
	}
}

// TestUpdaterSeenStep checks that an event without properties is written
// only when it moves last seen by the step or first seen earlier, and
// that one with properties always is.
func TestUpdaterSeenStep(t *testing.T) {
	f := &fake{}
	u := New(Options{Interval: time.Hour, SeenStep: 10 * time.Minute})
	u.Start(f)
	defer u.Close()
	step := func(events ...analytics.Event) int {
		t.Helper()
		u.Observe(events)
		if err := u.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		return len(f.take())
	}
	if n := step(event("a", "p", time.Hour, `{}`)); n != 1 {
		t.Errorf("a new person: %d updates", n)
	}
	if n := step(event("a", "p", time.Hour+9*time.Minute, `{}`)); n != 0 {
		t.Errorf("within the step: %d updates", n)
	}
	if n := step(event("a", "p", time.Hour+10*time.Minute, `{}`)); n != 1 {
		t.Errorf("a step later: %d updates", n)
	}
	if n := step(event("a", "p", 30*time.Minute, `{}`)); n != 1 {
		t.Errorf("before first seen: %d updates", n)
	}
	if n := step(event("a", "p", time.Hour+11*time.Minute, `{"$set":{"k":1}}`)); n != 1 {
		t.Errorf("properties within the step: %d updates", n)
	}
}

// TestUpdaterBounded checks that past MaxPending an update of seen times
// alone is dropped, and that Close writes what is pending.
func TestUpdaterBounded(t *testing.T) {
	f := &fake{}
	u := New(Options{Interval: time.Hour, MaxPending: 2})
	u.Start(f)
	u.Observe([]analytics.Event{event("a", "p", 0, `{}`), event("b", "p", 0, `{}`), event("c", "p", 0, `{}`)})
	u.Close()
	if got := f.take(); len(got) != 2 {
		t.Errorf("written after Close: %+v, want a and b", got)
	}
	u.Observe([]analytics.Event{event("d", "p", 0, `{}`)})
	if got := f.take(); len(got) != 0 {
		t.Errorf("written after Close: %+v", got)
	}
}
