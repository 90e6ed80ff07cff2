package analytics

import (
	"time"
	// Every zone name must resolve on a machine without a zoneinfo
	// database (a scratch container): the binary carries its own copy.
	_ "time/tzdata"
)

// Time zones (docs/queries.md, "Time zones"). A product has a time zone,
// an IANA name, UTC by default. Its dates and buckets are local: the range
// of a dateFrom/dateTo is [local midnight of dateFrom, local midnight
// after dateTo) as instants, and a bucket is a local hour, day, week or
// month.
//
// The stores bucket in wall time: they map each event's instant to its
// local wall clock written as a UTC time (Wall), truncate that with the
// UTC arithmetic they always used, and return the bucket's wall start. So
// a local day is always 24 wall hours long, whether it lasts 23, 24 or 25
// real hours, and the repeated hour of an autumn change is one hour bucket
// holding both real hours.

// DefaultTimeZone is the zone of a product nobody set one for.
const DefaultTimeZone = "UTC"

// MaxTimeZoneLen bounds a zone name as stored; the longest IANA name is
// about 32 characters.
const MaxTimeZoneLen = 64

// LoadZone returns the location of an IANA zone name, or an invalid
// error with the code invalid_time_zone.
func LoadZone(name string) (*time.Location, error) {
	if name == "" || len(name) > MaxTimeZoneLen {
		return nil, Errorf(KindInvalid, "invalid_time_zone", "timeZone: must be an IANA time zone name such as Europe/Berlin, not %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, Errorf(KindInvalid, "invalid_time_zone", "timeZone: must be an IANA time zone name such as Europe/Berlin, not %q", name)
	}
	return loc, nil
}

// Location returns the scope's zone: UTC when Zone is nil.
func (r EventRange) Location() *time.Location {
	if r.Zone == nil {
		return time.UTC
	}
	return r.Zone
}

// IsUTC reports whether the scope's zone is UTC, whose wall time is the
// instant itself: the stores then write no offset mapping at all.
func (r EventRange) IsUTC() bool {
	return r.Zone == nil || r.Zone == time.UTC || r.Zone.String() == "UTC"
}

// Wall returns the scope's local wall clock at instant t, written as a
// UTC time.
func (r EventRange) Wall(t time.Time) time.Time { return Wall(t, r.Location()) }

// Instant returns the instant at which the scope's zone shows the wall
// clock w (written as a UTC time); see Instant.
func (r EventRange) Instant(w time.Time) time.Time { return Instant(w, r.Location()) }

// Buckets returns the wall starts of every bucket of iv that the scope's
// [From, To) touches, in order. A local hour that the zone skips (the
// spring change's) is left out, since no instant falls in it.
func (r EventRange) Buckets(iv Interval) []time.Time {
	walls := iv.Buckets(r.Wall(r.From), r.Wall(r.To))
	if iv != Hour || r.IsUTC() {
		return walls
	}
	out := walls[:0]
	for _, w := range walls {
		if r.Wall(r.Instant(w)).Equal(w) {
			out = append(out, w)
		}
	}
	return out
}

// Wall returns loc's wall clock at instant t, written as a UTC time: the
// form in which the stores bucket local time.
func Wall(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// Instant returns the earliest instant at which loc's wall clock shows w
// (written as a UTC time). A wall time shown twice (the repeated hour of
// an autumn change) maps to its first instant; one never shown (the
// skipped hour of a spring change, or a midnight a zone skips) maps to the
// instant of the change, the first one whose wall time is later.
func Instant(w time.Time, loc *time.Location) time.Time {
	if loc == time.UTC {
		return w
	}
	var best time.Time
	// The offsets in effect around w are those a day either side of it:
	// no zone changes its offset twice within a day.
	for _, probe := range []time.Duration{-26 * time.Hour, 0, 26 * time.Hour} {
		_, off := w.Add(probe).In(loc).Zone()
		t := w.Add(-time.Duration(off) * time.Second)
		if Wall(t, loc).Equal(w) && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	if !best.IsZero() {
		return best
	}
	// w falls in a gap: the change is the first instant after it.
	_, off := w.Add(-26 * time.Hour).In(loc).Zone()
	_, end := w.Add(-time.Duration(off) * time.Second).In(loc).ZoneBounds()
	return end.UTC()
}

// OffsetChange is an instant at which a zone's UTC offset becomes Offset.
type OffsetChange struct {
	At     time.Time
	Offset time.Duration
}

// Offsets returns loc's UTC offset at from and every change of it in
// [from, to): few, since zones change twice a year at most. The stores map
// an event's instant to its wall time with them, as a CASE over the
// change instants, bound as parameters.
func Offsets(loc *time.Location, from, to time.Time) (first time.Duration, changes []OffsetChange) {
	_, off := from.In(loc).Zone()
	first = time.Duration(off) * time.Second
	_, end := from.In(loc).ZoneBounds()
	for !end.IsZero() && end.Before(to) {
		_, off := end.In(loc).Zone()
		changes = append(changes, OffsetChange{At: end.UTC(), Offset: time.Duration(off) * time.Second})
		_, next := end.In(loc).ZoneBounds()
		if !next.After(end) {
			break
		}
		end = next
	}
	return first, changes
}

// OffsetsOf returns the offsets a store needs to map the instants of the
// scope's [from, to) to wall time, as Offsets does. It reads a day more on
// either side, so that a bound the store moved a little (a visit's
// lookback) is still mapped right.
func (r EventRange) OffsetsOf(from, to time.Time) (time.Duration, []OffsetChange) {
	return Offsets(r.Location(), from.Add(-48*time.Hour), to.Add(48*time.Hour))
}
