package persons

import (
	"context"
	"time"

	"strata/internal/analytics"
)

// rebuildBatch is how many persons a rebuild writes at once: the memory
// it holds besides the stores' streams.
const rebuildBatch = 5000

// RebuildReport is what a rebuild wrote.
type RebuildReport struct {
	// Persons is how many distinct ids the product's events have, each
	// written with its first and last seen.
	Persons int64 `json:"persons"`
	// TraitEvents is how many events set properties ($identify, $set,
	// $set_once), applied oldest first.
	TraitEvents int64   `json:"traitEvents"`
	Seconds     float64 `json:"seconds"`
}

// Rebuild writes a product's person profiles from the events its store
// holds, as the updater would have written them had it seen every one
// (docs/ingest.md, "Rebuilding profiles"): for events stored before
// profiles existed, or after profiles were lost. First and last seen come
// from one aggregation of the events; properties from the events that set
// them, applied oldest first, so that the latest $set of a key wins and the
// first $set_once. It merges into the profiles as the updater does, so the
// profiles of events arriving meanwhile stay, but a $set arriving while the
// rebuild replays an older one of the same key may be overwritten until
// that person's next $set. opt.MaxPersons caps the product's persons as
// the updater does.
func Rebuild(ctx context.Context, history analytics.PersonHistoryStore, store analytics.PersonStore, productID int64, opt Options) (RebuildReport, error) {
	start := time.Now()
	var report RebuildReport
	u := New(opt)
	u.store = store // no writer goroutine: the rebuild writes, batch by batch
	add := func(id string, up analytics.PersonUpdate) error {
		u.mu.Lock()
		u.add(key{productID, id}, up)
		full := len(u.order) >= rebuildBatch
		u.mu.Unlock()
		if full {
			return u.write(ctx, store)
		}
		return nil
	}
	err := history.EachPersonSeen(ctx, productID, func(id string, first, last time.Time) error {
		report.Persons++
		return add(id, analytics.PersonUpdate{FirstSeen: first, LastSeen: last})
	})
	if err == nil {
		err = u.write(ctx, store)
	}
	if err == nil {
		err = history.EachTraitEvent(ctx, productID, func(e analytics.Event) error {
			if !traits(&e) {
				return nil
			}
			set, once := extract(&e)
			if set == nil && once == nil {
				return nil
			}
			report.TraitEvents++
			return add(e.DistinctID, analytics.PersonUpdate{Set: set, SetOnce: once, FirstSeen: e.Timestamp, LastSeen: e.Timestamp})
		})
	}
	if err == nil {
		err = u.write(ctx, store)
	}
	report.Seconds = float64(time.Since(start).Round(time.Millisecond)) / float64(time.Second)
	return report, err
}
