package analytics

import (
	"errors"
	"testing"
	"time"
)

// TestRetentionCutoff checks the boundary of a period: the local midnight
// that starts the oldest day kept, across a daylight-saving change.
func TestRetentionCutoff(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	utc := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	for _, c := range []struct {
		now  string
		loc  *time.Location
		days int
		want string
	}{
		{"2026-03-10T23:59:59Z", time.UTC, 1, "2026-03-10T00:00:00Z"},
		{"2026-03-10T00:00:00Z", time.UTC, 30, "2026-02-09T00:00:00Z"},
		{"2026-03-29T10:00:00Z", berlin, 1, "2026-03-28T23:00:00Z"},   // the day the clocks go forward, from its CET midnight
		{"2026-03-29T10:00:00Z", berlin, 2, "2026-03-27T23:00:00Z"},   // CET
		{"2026-03-29T22:30:00Z", berlin, 1, "2026-03-29T22:00:00Z"},   // 00:30 CEST on the 30th
		{"2026-03-29T21:30:00Z", berlin, 1, "2026-03-28T23:00:00Z"},   // 23:30 CEST on the 29th
		{"2026-01-01T05:00:00Z", berlin, 366, "2024-12-31T23:00:00Z"}, // across a leap year
	} {
		if got := RetentionCutoff(utc(c.now), c.loc, c.days); !got.Equal(utc(c.want)) {
			t.Errorf("RetentionCutoff(%s, %s, %d) = %v; want %s", c.now, c.loc, c.days, got.UTC(), c.want)
		}
	}
}

// TestRetentionCheck checks the bounds of a period.
func TestRetentionCheck(t *testing.T) {
	for _, r := range []DataRetention{{}, {EventsDays: 1}, {EventsDays: 3650, ErrorsDays: 30, ReplaysDays: 7}} {
		if err := r.Check(); err != nil {
			t.Errorf("%+v refused: %v", r, err)
		}
	}
	for _, r := range []DataRetention{{EventsDays: -1}, {ErrorsDays: 3651}, {ReplaysDays: -30}} {
		var e *Error
		if err := r.Check(); !errors.As(err, &e) || e.Code != "invalid_retention" {
			t.Errorf("%+v: %v; want invalid_retention", r, err)
		}
	}
}
