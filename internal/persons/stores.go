package persons

import (
	"context"

	"strata/internal/analytics"
	"strata/internal/store/spool"
)

// Inner wraps the store behind the spool: each batch the spool's loader
// (or an import) commits is observed after the commit. Closing it writes
// the pending updates before the store closes, since the embedded store
// is also the metadata store they go to.
type Inner struct {
	spool.Inner
	Updater *Updater
}

// AppendEvents stores events, then hands them to the updater.
func (s Inner) AppendEvents(ctx context.Context, events []analytics.Event) error {
	if err := s.Inner.AppendEvents(ctx, events); err != nil {
		return err
	}
	s.Updater.Observe(events)
	return nil
}

// AppendMissing stores the events not stored yet, then hands all of them
// to the updater (an update observed twice changes nothing).
func (s Inner) AppendMissing(ctx context.Context, events []analytics.Event) error {
	if err := s.Inner.AppendMissing(ctx, events); err != nil {
		return err
	}
	s.Updater.Observe(events)
	return nil
}

// Close writes the pending updates, then closes the store.
func (s Inner) Close() error {
	s.Updater.Close()
	return s.Inner.Close()
}

// Events wraps an event store written without the spool (ClickHouse):
// each batch is observed after it commits, which is before the ingest
// writer answers, but observing only queues the batch's updates.
type Events struct {
	analytics.EventStore
	Updater *Updater
}

// AppendEvents stores events, then hands them to the updater.
func (s Events) AppendEvents(ctx context.Context, events []analytics.Event) error {
	if err := s.EventStore.AppendEvents(ctx, events); err != nil {
		return err
	}
	s.Updater.Observe(events)
	return nil
}
