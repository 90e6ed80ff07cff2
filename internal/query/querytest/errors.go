package querytest

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"time"
)

// ErrorGroup is one group of $exception events, as ErrorGroups counts it.
type ErrorGroup struct {
	Fingerprint         string
	Type, Message       string
	Events, Users       int64
	FirstSeen, LastSeen time.Time
	Daily               []int64
}

// ErrorGroups groups the live, non-bot "$exception" events with a time in
// [from, to) (and, when release is not "", whose $release is release) by
// the text form of their $exception_fingerprint property ("" when unset).
// A group's type and message are those of its latest event; of events of
// equal times, the one whose type, then message, is greatest. Daily counts
// the group's events on each day that starts at days[i]. Groups come most
// events first, ties by fingerprint, at most limit of them. An event
// whose fingerprint is a key of aliases counts in the group of its value
// (analytics.ErrorGroupsQuery.Aliases).
func ErrorGroups(events []Event, release string, from, to time.Time, days []time.Time, limit int, aliases map[string]string) []ErrorGroup {
	type acc struct {
		g      ErrorGroup
		users  map[string]bool
		latest Event
	}
	groups := map[string]*acc{}
	for _, e := range events {
		if e.Test || e.Bot || e.Name != "$exception" || e.Time.Before(from) || !e.Time.Before(to) {
			continue
		}
		if release != "" && !passes(e, Filter{Property: "properties.$release", Operator: "eq", Value: release}) {
			continue
		}
		fp := groupOf(e, aliases)
		a := groups[fp]
		if a == nil {
			a = &acc{g: ErrorGroup{Fingerprint: fp, FirstSeen: e.Time, LastSeen: e.Time, Daily: make([]int64, len(days))}, users: map[string]bool{}, latest: e}
			groups[fp] = a
		}
		a.g.Events++
		a.users[e.DistinctID] = true
		if e.Time.Before(a.g.FirstSeen) {
			a.g.FirstSeen = e.Time
		}
		if e.Time.After(a.g.LastSeen) {
			a.g.LastSeen = e.Time
		}
		if later(e, a.latest) {
			a.latest = e
		}
		for i, d := range days {
			if !e.Time.Before(d) && e.Time.Before(d.AddDate(0, 0, 1)) {
				a.g.Daily[i]++
			}
		}
	}
	var out []ErrorGroup
	for _, a := range groups {
		a.g.Users = int64(len(a.users))
		a.g.Type, _ = propertyValue(a.latest, "properties.$exception_type")
		a.g.Message, _ = propertyValue(a.latest, "properties.$exception_message")
		out = append(out, a.g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Events != out[j].Events {
			return out[i].Events > out[j].Events
		}
		return out[i].Fingerprint < out[j].Fingerprint
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// groupOf is the group an exception counts in: its fingerprint's text
// form ("" when unset), or the group aliases merge it into.
func groupOf(e Event, aliases map[string]string) string {
	fp, _ := propertyValue(e, "properties.$exception_fingerprint")
	if into, ok := aliases[fp]; ok {
		return into
	}
	return fp
}

// later reports whether e is a later event than cur, as ErrorGroups
// orders them.
func later(e, cur Event) bool {
	if !e.Time.Equal(cur.Time) {
		return e.Time.After(cur.Time)
	}
	et, _ := propertyValue(e, "properties.$exception_type")
	ct, _ := propertyValue(cur, "properties.$exception_type")
	if et != ct {
		return et > ct
	}
	em, _ := propertyValue(e, "properties.$exception_message")
	cm, _ := propertyValue(cur, "properties.$exception_message")
	return em > cm
}

// ErrorDataset is a random set of exceptions and what to ask of them.
type ErrorDataset struct {
	Events   []Event
	From, To time.Time
	Release  string
	Days     []time.Time
	// Aliases merge groups: none, or some of the fingerprints into
	// others, into one without events of its own too.
	Aliases map[string]string
}

// GenerateErrors returns a reproducible random dataset of exceptions for
// the seed: a few fingerprints, types and messages that vary within a
// group, two releases, equal times, events without a fingerprint, and
// test, bot and out-of-range events, among other events.
func GenerateErrors(seed int64) ErrorDataset {
	r := rand.New(rand.NewPCG(uint64(seed), 21))
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(100))
	ds := ErrorDataset{From: from, To: from.AddDate(0, 0, 3+r.IntN(10))}
	if r.IntN(2) == 0 {
		ds.Release = "1.4.2"
	}
	for i := range 7 {
		ds.Days = append(ds.Days, ds.To.AddDate(0, 0, i-7))
	}
	span := ds.To.Sub(from) + 48*time.Hour
	for range 50 + r.IntN(300) {
		e := Event{DistinctID: "u" + strconv.Itoa(r.IntN(40)), Name: "$exception",
			Time: from.Add(-24*time.Hour + time.Duration(r.Int64N(int64(span))).Truncate(time.Hour))}
		fp := []string{"a1", "b2", "c3", "d4", "e5"}[r.IntN(5)]
		e.Properties = map[string]any{
			"$exception_type":    []string{"TypeError", "RangeError", "Error"}[r.IntN(3)],
			"$exception_message": "failed on item " + strconv.Itoa(r.IntN(4)) + " of " + fp,
			"$release":           []string{"1.4.2", "1.4.3", "1.4.2"}[r.IntN(3)],
		}
		if r.IntN(12) != 0 {
			e.Properties["$exception_fingerprint"] = fp
		}
		leaveOut(r, &e, 20)
		ds.Events = append(ds.Events, e)
	}
	ds.Aliases = []map[string]string{nil, {"b2": "a1"}, {"b2": "a1", "e5": "a1", "d4": "z9"}, {"c3": "d4"}}[r.IntN(4)]
	return ds
}

// leaveOut makes one in n of the events an error generator makes a test
// event, one a bot's and one not an exception: the events the error
// queries must leave out.
func leaveOut(r *rand.Rand, e *Event, n int) {
	switch r.IntN(n) {
	case 0:
		e.Test = true
	case 1:
		e.Bot = true
	case 2:
		e.Name = "$pageview"
	}
}

// ErrorOccurrences returns the live, non-bot "$exception" events with a
// time in [from, to) whose $exception_fingerprint is fingerprint: newest
// first, of equal times by distinct_id, then by the properties' text as
// text(e) gives it, at most limit of them. With aliases, the events are
// those that count in fingerprint's group (ErrorGroups).
func ErrorOccurrences(events []Event, fingerprint string, from, to time.Time, limit int, text func(Event) string, aliases map[string]string) []Event {
	var out []Event
	for _, e := range events {
		if e.Test || e.Bot || e.Name != "$exception" || e.Time.Before(from) || !e.Time.Before(to) {
			continue
		}
		if _, ok := propertyValue(e, "properties.$exception_fingerprint"); ok && groupOf(e, aliases) == fingerprint {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Time.Equal(b.Time) {
			return a.Time.After(b.Time)
		}
		if a.DistinctID != b.DistinctID {
			return a.DistinctID < b.DistinctID
		}
		return text(a) < text(b)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
