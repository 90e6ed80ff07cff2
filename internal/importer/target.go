package importer

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// Target stores the batches of an import: in a running server through its
// group-commit writer (durable at acknowledgement, deduplicated like any
// POST /e), or, with --fast, straight into a stopped data directory's
// store. Either way each event passes the same validation and enrichment
// as POST /e (ingest.Pipeline): a contract violation is refused with the
// same reason, a bot's user agent makes the event a bot's. Imported
// events have no client address, so no location.
type Target struct {
	Pipeline *ingest.Pipeline
	// Stored says which of a batch's events are stored already (any
	// time before); nil skips the check. Sync, when set, is called
	// first: it returns once the store holds every event acknowledged
	// before (a running server's spool loaded), so that an event of an
	// earlier batch is found there, and counted as stored before.
	Stored analytics.ImportStore
	Sync   func(context.Context) error
	// Write stores accepted events; it returns once they are durable.
	Write func(ctx context.Context, events []ingest.Pending) error
	Now   func() time.Time
}

// Result is what became of the records of a batch, or of a whole import.
type Result struct {
	// Imported events were stored; Duplicates were stored before (the
	// same source event imported again) and left out.
	Imported   int `json:"imported"`
	Duplicates int `json:"duplicates"`
	// Refused counts the events ingest's contract refused, by reason
	// (the POST /e rejection codes), and Unmapped the records the source
	// could not map, by MappingError reason; Examples holds the first
	// message of each reason.
	Refused  map[string]int    `json:"refused,omitempty"`
	Unmapped map[string]int    `json:"unmapped,omitempty"`
	Examples map[string]string `json:"examples,omitempty"`
}

// Records is how many records the result accounts for.
func (r Result) Records() int {
	n := r.Imported + r.Duplicates
	for _, c := range r.Refused {
		n += c
	}
	for _, c := range r.Unmapped {
		n += c
	}
	return n
}

// add counts other into r.
func (r *Result) add(other Result) {
	r.Imported += other.Imported
	r.Duplicates += other.Duplicates
	for k, v := range other.Refused {
		r.count(&r.Refused, k, v, other.Examples[k])
	}
	for k, v := range other.Unmapped {
		r.count(&r.Unmapped, k, v, other.Examples[k])
	}
}

// count adds n records of reason to m, keeping the reason's first
// example.
func (r *Result) count(m *map[string]int, reason string, n int, example string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[reason] += n
	if example == "" {
		return
	}
	if r.Examples == nil {
		r.Examples = map[string]string{}
	}
	if _, ok := r.Examples[reason]; !ok {
		r.Examples[reason] = example
	}
}

// Reasons lists a count map's reasons, most records first.
func Reasons(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// MaxBatch is the most events one Import call takes: a --fast batch. A
// paced batch is the spec's 500.
const MaxBatch = 20000

// envelopeEvents is the most events of one POST /e envelope, which the
// pipeline's decoder takes at once.
const envelopeEvents = 500

// Import validates, enriches, deduplicates and stores one batch of wire
// events (the event objects of POST /e) for the product and environment.
// The events are stored in one commit or not at all: on an error nothing
// of the batch was stored, and the caller may send it again.
func (t *Target) Import(ctx context.Context, product int64, env analytics.Env, batch []json.RawMessage) (Result, error) {
	var res Result
	if len(batch) > MaxBatch {
		return res, analytics.Errorf(analytics.KindInvalid, "batch_too_large", "An import batch holds at most %d events.", MaxBatch)
	}
	req := ingest.Request{Product: product, Env: env, ReceivedAt: t.Now().UTC()}
	events := make([]ingest.Pending, 0, len(batch))
	for start := 0; start < len(batch); start += envelopeEvents {
		part := batch[start:min(start+envelopeEvents, len(batch))]
		accepted, rejected := t.Pipeline.Process(ingest.Envelope{Batch: part}, req)
		for _, rej := range rejected {
			res.count(&res.Refused, string(rej.Code), 1, rej.Message)
		}
		for _, p := range accepted {
			if p.Chunk != nil {
				// A recording is not history to import: its chunks
				// belong to the replay store of a live session.
				res.count(&res.Refused, "replay_not_imported", 1, "$snapshot events (session recordings) are not imported.")
				continue
			}
			// Derived uuids are as good as a client's for the writer's
			// window: a retried batch is stored once.
			p.ClientUUID = true
			events = append(events, p)
		}
		ingest.Release(accepted)
	}
	if len(events) == 0 {
		return res, nil
	}
	events, dup, err := t.fresh(ctx, product, events)
	if err != nil {
		return Result{}, err
	}
	res.Duplicates = dup
	if len(events) > 0 {
		if err := t.Write(ctx, events); err != nil {
			return Result{}, err
		}
	}
	res.Imported = len(events)
	return res, nil
}

// fresh leaves out the events the store holds already, and repeats
// within the batch.
func (t *Target) fresh(ctx context.Context, product int64, events []ingest.Pending) ([]ingest.Pending, int, error) {
	seen := make(map[[16]byte]bool, len(events))
	uuids := make([][16]byte, 0, len(events))
	from, to := events[0].Event.Timestamp, events[0].Event.Timestamp
	for _, p := range events {
		uuids = append(uuids, p.Event.UUID)
		if ts := p.Event.Timestamp; ts.Before(from) {
			from = ts
		} else if ts.After(to) {
			to = ts
		}
	}
	stored := map[[16]byte]bool{}
	if t.Sync != nil {
		if err := t.Sync(ctx); err != nil {
			return nil, 0, err
		}
	}
	if t.Stored != nil {
		if err := t.Stored.StoredUUIDs(ctx, product, from, to, uuids, func(u [16]byte) { stored[u] = true }); err != nil {
			return nil, 0, err
		}
	}
	kept := events[:0]
	for _, p := range events {
		if stored[p.Event.UUID] || seen[p.Event.UUID] {
			continue
		}
		seen[p.Event.UUID] = true
		kept = append(kept, p)
	}
	return kept, len(events) - len(kept), nil
}

// Local is a Sink in this process: a Target for one product and
// environment.
type Local struct {
	Target  *Target
	Product int64
	Env     analytics.Env
}

// ImportBatch stores a batch through the target.
func (l Local) ImportBatch(ctx context.Context, batch []json.RawMessage) (Result, error) {
	return l.Target.Import(ctx, l.Product, l.Env, batch)
}
