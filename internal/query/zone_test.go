package query

import (
	"errors"
	"testing"
	"time"

	"strata/internal/analytics"
)

// zoned is a scope in the named zone.
func zoned(t *testing.T, name string) analytics.EventRange {
	t.Helper()
	loc, err := analytics.LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, Zone: loc}
}

// A range's dates are local days: its bounds are the local midnights as
// instants, 23 hours apart on the spring change's day and 25 on the
// autumn's, and today is the zone's today.
func TestZonedDateRange(t *testing.T) {
	utc := func(s string) time.Time { x, _ := time.Parse(time.RFC3339, s); return x }
	for _, c := range []struct {
		zone, from, to   string
		wantFrom, wantTo string
	}{
		{"Europe/Berlin", "2026-03-29", "2026-03-29", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"},
		{"Europe/Berlin", "2026-10-25", "2026-10-25", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"},
		{"Asia/Kathmandu", "2026-01-01", "2026-01-02", "2025-12-31T18:15:00Z", "2026-01-02T18:15:00Z"},
		{"America/New_York", "2026-11-01", "2026-11-01", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"},
		// now is 2026-11-23 15:04 UTC: 2026-11-24 05:04 at +14, 04:04 on
		// the 23rd at -11.
		{"Pacific/Kiritimati", "", "", "2026-10-25T10:00:00Z", "2026-11-24T10:00:00Z"},
		{"Pacific/Pago_Pago", "2026-11-20", "", "2026-11-20T11:00:00Z", "2026-11-24T11:00:00Z"},
		{"UTC", "2026-03-29", "2026-03-29", "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z"},
	} {
		sc := zoned(t, c.zone)
		q, err := ParseFunnel([]byte(`{"steps":["a","b"],"dateFrom":"`+c.from+`","dateTo":"`+c.to+`"}`), sc, now)
		if c.from == "" {
			q, err = ParseFunnel([]byte(`{"steps":["a","b"]}`), sc, now)
		} else if c.to == "" {
			q, err = ParseFunnel([]byte(`{"steps":["a","b"],"dateFrom":"`+c.from+`"}`), sc, now)
		}
		if err != nil || !q.From.Equal(utc(c.wantFrom)) || !q.To.Equal(utc(c.wantTo)) {
			t.Errorf("%s %q..%q: From %v To %v (%v); want %s, %s", c.zone, c.from, c.to, q.From.UTC(), q.To.UTC(), err, c.wantFrom, c.wantTo)
		}
	}
}

// Hour buckets are local hours: the spring change's day has 23 (no 02:00),
// the autumn's 24, its 02:00 bucket holding both real hours and labelled
// with the first one's offset; day buckets are labelled by local date.
func TestZonedBuckets(t *testing.T) {
	sc := zoned(t, "Europe/Berlin")
	for _, c := range []struct {
		day   string
		n     int
		label string
	}{
		{"2026-03-29", 23, "2026-03-29T03:00:00+02:00"},
		{"2026-10-25", 24, "2026-10-25T02:00:00+02:00"},
	} {
		q, err := ParseTrend([]byte(`{"series":[{"event":"a"}],"interval":"hour","dateFrom":"`+c.day+`","dateTo":"`+c.day+`"}`), sc, now)
		if err != nil {
			t.Fatal(err)
		}
		starts := q.Buckets(q.Interval)
		var labels []string
		for _, b := range starts {
			labels = append(labels, formatBucket(q.EventRange, q.Interval, b))
		}
		if len(starts) != c.n || labels[2] != c.label {
			t.Errorf("%s: %d hour buckets %v; want %d, the third %s", c.day, len(starts), labels, c.n, c.label)
		}
		if want := c.day + "T00:00:00+0"; labels[0][:len(want)] != want {
			t.Errorf("%s: first bucket %s", c.day, labels[0])
		}
	}
	q, err := ParseTrend([]byte(`{"series":[{"event":"a"}],"dateFrom":"2026-10-24","dateTo":"2026-10-26"}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, b := range q.Buckets(q.Interval) {
		labels = append(labels, formatBucket(q.EventRange, q.Interval, b))
	}
	if len(labels) != 3 || labels[0] != "2026-10-24" || labels[2] != "2026-10-26" {
		t.Errorf("day buckets %v", labels)
	}
}

// An unknown zone name is refused with its own code.
func TestLoadZone(t *testing.T) {
	for _, name := range []string{"", "Mars/Olympus", "Local", "../etc/passwd", "Europe/Berlin\x00"} {
		_, err := analytics.LoadZone(name)
		var e *analytics.Error
		if !errors.As(err, &e) || e.Code != "invalid_time_zone" {
			t.Errorf("LoadZone(%q) = %v; want invalid_time_zone", name, err)
		}
	}
	for _, name := range []string{"UTC", "Europe/Berlin", "Asia/Kathmandu", "Pacific/Kiritimati", "America/St_Johns"} {
		if _, err := analytics.LoadZone(name); err != nil {
			t.Errorf("LoadZone(%q) = %v", name, err)
		}
	}
}
