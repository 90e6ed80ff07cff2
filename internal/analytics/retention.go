package analytics

import (
	"context"
	"time"
)

// Retention per product (docs/privacy.md, "Retention"). A product may keep
// its events, its error occurrences ($exception events) and its session
// replays for a number of days; a retention job deletes what is older. Zero
// days means the default: events and error occurrences are kept forever,
// replays for the server-wide --replay-retention, which is also the longest
// a product may ask for replays (a product may keep them for less, never
// for more, so that the operator's disk plan holds).

// The bounds of a retention period, in days. A day is the shortest: the
// job deletes whole local days. Ten years is the longest worth naming;
// past it, keep forever (0).
const (
	MinRetentionDays = 1
	MaxRetentionDays = 3650
)

// DataRetention is a product's retention periods in days; 0 is the default
// (see above).
type DataRetention struct {
	EventsDays  int `json:"eventsDays"`
	ErrorsDays  int `json:"errorsDays"`
	ReplaysDays int `json:"replaysDays"`
}

// Check refuses a period outside [MinRetentionDays, MaxRetentionDays]
// other than 0 with the code invalid_retention.
func (r DataRetention) Check() error {
	for _, p := range []struct {
		name string
		days int
	}{{"eventsDays", r.EventsDays}, {"errorsDays", r.ErrorsDays}, {"replaysDays", r.ReplaysDays}} {
		if p.days != 0 && (p.days < MinRetentionDays || p.days > MaxRetentionDays) {
			return Errorf(KindInvalid, "invalid_retention",
				"%s: must be a number of days from %d to %d, or 0 to keep the default, not %d", p.name, MinRetentionDays, MaxRetentionDays, p.days)
		}
	}
	return nil
}

// RetentionCutoff is the instant before which a product whose zone is loc
// keeps no event under a period of days at now: the local midnight that
// starts the day days−1 days before today's. What is kept is today and the
// days−1 whole local days before it; so a period of 1 keeps today only,
// and an event leaves when the local day days days after its own begins.
// The midnight is taken in wall time, so a daylight-saving change moves it
// with the clocks.
func RetentionCutoff(now time.Time, loc *time.Location, days int) time.Time {
	local := now.In(loc)
	y, m, d := local.Date()
	return time.Date(y, m, d-(days-1), 0, 0, 0, 0, loc)
}

// RetentionStore is what a retention job deletes events through: the
// events stores implement it (DuckDB, ClickHouse).
type RetentionStore interface {
	// DropEventsBefore deletes a product's events whose time is before
	// before, only those named name when name is not empty (the error
	// occurrences: ExceptionEvent), in every environment, and reports how
	// many it deleted (-1 when the store cannot tell). It returns once the
	// events are gone from every answer.
	DropEventsBefore(ctx context.Context, productID int64, name string, before time.Time) (int64, error)
}
