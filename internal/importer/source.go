// Package importer brings other tools' event exports into Strata
// (docs/import.md). A Source reads one vendor's export format and maps each
// record to Strata's ingest contract; the importer derives each event's
// uuid from the source's own id, marks it with $migrated_from, runs it
// through the same validation and enrichment as POST /e, and writes it
// paced into a running server or unpaced into a stopped one.
package importer

import (
	"io"
	"time"
)

// Event is one record of an export, mapped to the fields of Strata's
// ingest contract (the event object of POST /e). A Source fills it; the
// importer adds $migrated_from and the uuid, and validates it as ingest
// does, so a mapper does not repeat those rules.
type Event struct {
	// SourceID is the record's own id in the source (PostHog's uuid,
	// Mixpanel's $insert_id, …). The event's uuid is derived from it and
	// the source's name, so that importing a file twice stores each
	// event once. A format without ids derives one from the fields that
	// make a record unique (docs/import.md says which); it is never "".
	SourceID string
	// Name is the event's name in Strata's vocabulary: the source's own
	// reserved names are mapped (PostHog's $autocapture to $click, GA4's
	// page_view to $pageview, …) and a reserved name Strata has no use
	// for is kept under a plain name rather than refused.
	Name       string
	DistinctID string
	// Timestamp is the instant the event happened, with its zone
	// resolved (a source's local times and offsets are converted).
	Timestamp time.Time
	// UserAgent, URL and Referrer are "" when the record has none.
	UserAgent, URL, Referrer string
	// Properties are the record's properties, nested values as they
	// were; nil for none. The importer encodes them as ingest does.
	Properties map[string]any
}

// MappingError says why a record could not be mapped at all (it is not
// an event, or lacks what every event needs). The importer counts such
// records by Reason and goes on; it never drops a record silently.
type MappingError struct {
	// Reason is a short stable code such as "missing_event_name", used
	// as the key of the import report.
	Reason string
	// Detail says where and what, for the report's examples.
	Detail string
}

func (e *MappingError) Error() string { return e.Reason + ": " + e.Detail }

// Source reads one vendor's export format.
type Source interface {
	// Name is the source as --from names it and as $migrated_from
	// records it: "posthog", "mixpanel", "amplitude", "umami" or "ga4".
	Name() string
	// Read maps every record of one export file, in file order, calling
	// emit once per record: with the mapped event and a nil error, or
	// with a *MappingError for a record it cannot map. f is the whole
	// file and size its length, so that an archive format (Amplitude's
	// zip of gzipped JSON files) can seek; a line format reads it
	// through io.NewSectionReader. Read holds at most one record (or one
	// archive member's buffer) in memory at a time, whatever the file's
	// size. It returns emit's first non-nil error, or an error that
	// makes the rest of the file unreadable (a corrupt archive), with
	// how far it got in the message.
	Read(f io.ReaderAt, size int64, emit func(Event, error) error) error
}
