package querytest

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"time"
)

// ErrorActivity is one group's activity, as the alert rules read it.
type ErrorActivity struct {
	Fingerprint   string
	Type, Message string
	Recent, Users int64
	History       int64
	FirstSeen     time.Time
}

// ErrorActivities groups the live, non-bot "$exception" events with a time
// in [from, to) by the text form of their $exception_fingerprint ("" when
// unset): each group's events and distinct users in [recent, to), its
// events in [from, recent), its first event, and the type and message of
// its latest event (as ErrorGroups picks it). It keeps the groups with at
// least minRecent recent events and, with firstOnly, none in the history;
// they come ordered by fingerprint. An event whose fingerprint is a key of
// aliases counts in the group of its value.
func ErrorActivities(events []Event, from, recent, to time.Time, minRecent int64, firstOnly bool, aliases map[string]string) []ErrorActivity {
	type acc struct {
		g      ErrorActivity
		users  map[string]bool
		latest Event
	}
	groups := map[string]*acc{}
	for _, e := range events {
		if e.Test || e.Bot || e.Name != "$exception" || e.Time.Before(from) || !e.Time.Before(to) {
			continue
		}
		fp := groupOf(e, aliases)
		a := groups[fp]
		if a == nil {
			a = &acc{g: ErrorActivity{Fingerprint: fp, FirstSeen: e.Time}, users: map[string]bool{}, latest: e}
			groups[fp] = a
		}
		if e.Time.Before(recent) {
			a.g.History++
		} else {
			a.g.Recent++
			a.users[e.DistinctID] = true
		}
		if e.Time.Before(a.g.FirstSeen) {
			a.g.FirstSeen = e.Time
		}
		if later(e, a.latest) {
			a.latest = e
		}
	}
	var out []ErrorActivity
	for _, a := range groups {
		if a.g.Recent < minRecent || firstOnly && a.g.History > 0 {
			continue
		}
		a.g.Users = int64(len(a.users))
		a.g.Type, _ = propertyValue(a.latest, "properties.$exception_type")
		a.g.Message, _ = propertyValue(a.latest, "properties.$exception_message")
		out = append(out, a.g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fingerprint < out[j].Fingerprint })
	return out
}

// ActivityDataset is a random set of exceptions and the activity query to
// ask of them.
type ActivityDataset struct {
	Events           []Event
	From, Recent, To time.Time
	MinRecent        int64
	FirstOnly        bool
	// Aliases merge groups: none, a new group into an old one, or two.
	Aliases map[string]string
}

// GenerateErrorActivity returns a reproducible random dataset for the
// seed: a week and an hour of exceptions of a few groups, some of them
// only in the last hour, bursts in it, events on the range's and the
// split's boundaries, and test, bot, other and out-of-range events.
func GenerateErrorActivity(seed int64) ActivityDataset {
	r := rand.New(rand.NewPCG(uint64(seed), 34))
	to := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(100)).Add(time.Duration(r.IntN(24)) * time.Hour)
	ds := ActivityDataset{To: to, Recent: to.Add(-time.Hour), From: to.Add(-time.Hour - 7*24*time.Hour),
		MinRecent: int64(1 + r.IntN(6)), FirstOnly: r.IntN(2) == 0}
	add := func(fp string, at time.Time) {
		e := Event{DistinctID: "u" + strconv.Itoa(r.IntN(30)), Name: "$exception", Time: at}
		e.Properties = map[string]any{
			"$exception_type":    []string{"TypeError", "RangeError"}[r.IntN(2)],
			"$exception_message": "failed " + strconv.Itoa(r.IntN(3)),
		}
		if fp != "" {
			e.Properties["$exception_fingerprint"] = fp
		}
		leaveOut(r, &e, 25)
		ds.Events = append(ds.Events, e)
	}
	span := ds.To.Sub(ds.From)
	// Old groups: spread over the week, before and after the range too.
	for range 40 + r.IntN(200) {
		fp := []string{"a1", "b2", "c3", ""}[r.IntN(4)]
		at := ds.From.Add(-3*time.Hour + time.Duration(r.Int64N(int64(span+6*time.Hour))))
		add(fp, at.Truncate(time.Second))
	}
	// New groups and bursts: in the last hour only.
	for range 10 + r.IntN(60) {
		fp := []string{"a1", "n1", "n2", "n3"}[r.IntN(4)]
		add(fp, ds.Recent.Add(time.Duration(r.Int64N(int64(time.Hour)))).Truncate(time.Millisecond))
	}
	// A burst, over every minimum.
	for range 8 {
		add("n1", ds.Recent.Add(time.Duration(r.Int64N(int64(time.Hour)))).Truncate(time.Microsecond))
	}
	// The boundaries: from and recent are in, to is out.
	add("n2", ds.Recent)
	add("b2", ds.Recent.Add(-time.Microsecond))
	add("n3", ds.To)
	add("a1", ds.From)
	add("n4", ds.To.Add(-time.Microsecond))
	ds.Aliases = []map[string]string{nil, {"n2": "b2"}, {"n1": "a1", "n3": "n4"}}[r.IntN(3)]
	return ds
}
