package analytics

import (
	"context"
	"time"
)

// ImportStore is an event store that can say which events of an import's
// batch it holds already. An imported event's uuid is derived from the
// source's own id (docs/import.md, "Importing twice"), so a file imported
// twice, or an import resumed from before its last batch, names events
// already stored; the importer leaves those out, whenever they were
// stored, where the ingest writer's window remembers only recent uuids.
type ImportStore interface {
	// StoredUUIDs calls fn for each of uuids the product holds an event
	// of with a time in [from, to]. The range lets the store read only
	// the parts of the table that can hold them: an import's batch spans
	// a short stretch of its history.
	StoredUUIDs(ctx context.Context, productID int64, from, to time.Time, uuids [][16]byte, fn func([16]byte)) error
}
