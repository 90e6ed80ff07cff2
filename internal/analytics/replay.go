package analytics

import (
	"context"
	"regexp"
	"sort"
	"time"
)

// Session replay (docs/replay.md): the browser SDK records the page with
// rrweb and sends the recording in chunks, as $snapshot events. Ingest
// takes the chunks out of the event stream and keeps them in a ReplayStore,
// apart from the events table: they are large, opaque to queries, and
// deleted by their own rules (retention, a size cap per product, a user's
// privacy request).

// SnapshotEvent is the reserved event name that carries a replay chunk.
const SnapshotEvent = "$snapshot"

// SessionIDProperty is the property of every event the SDK sends during a
// recorded session (and of every event, recorded or not), which links a
// replay to the events of its session.
const SessionIDProperty = "$session_id"

// Limits of replay chunks (docs/replay.md, "Limits").
const (
	// MaxReplayChunkBytes bounds a chunk's data as stored ($snapshot_data
	// after base64 decoding, still compressed).
	MaxReplayChunkBytes = 1 << 20
	// MaxReplayChunkJSON bounds a chunk's rrweb events once decompressed:
	// what ingest reads to count page views, clicks and errors.
	MaxReplayChunkJSON = 32 << 20
	// MaxReplayChunkIndex bounds a chunk's index in its window: five
	// seconds a chunk is more than two years of recording.
	MaxReplayChunkIndex = 1<<31 - 1
	// DefaultReplayList and MaxReplayList bound the sessions one list
	// answers.
	DefaultReplayList = 100
	MaxReplayList     = 1000
)

// The encodings of a chunk's data: rrweb's events as one JSON array,
// gzipped (CompressionStream) or not (browsers without it).
const (
	ReplayGzipJSON = "gzip-json"
	ReplayJSON     = "json"
)

// replayIDRE is the form of session and window ids: the SDK sends UUIDs;
// anything of this alphabet is taken, which keeps ids safe as file names.
var replayIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidReplayID reports whether id may name a replay session or window: 1
// to 64 letters, digits, '-' or '_'.
func ValidReplayID(id string) bool { return replayIDRE.MatchString(id) }

// ReplayChunk is one piece of a recording: the rrweb events one window
// (a page load of a tab) recorded in a few seconds, as the SDK encoded
// them. The counts and times are read from the events at ingest.
type ReplayChunk struct {
	ProductID  int64
	SessionID  string
	WindowID   string
	Index      int
	DistinctID string
	// FirstTS and LastTS are the times of the chunk's first and last rrweb
	// events, by the browser's clock.
	FirstTS time.Time
	LastTS  time.Time
	// Encoding is ReplayGzipJSON or ReplayJSON; Data the bytes as sent.
	Encoding string
	Data     []byte
	// Size is len(Data), also when a listing did not read the data.
	Size int
	// Pages, Clicks and Errors count the chunk's page loads and
	// navigations (rrweb meta events), mouse clicks, and $exception
	// custom events.
	Pages, Clicks, Errors int
	// ReceivedAt is when the server took the chunk, by its own clock;
	// retention counts from the session's latest.
	ReceivedAt time.Time
}

// ReplaySession is what a store knows of a session from its chunks'
// metadata: a row of the replay list.
type ReplaySession struct {
	SessionID string
	// DistinctID is the user of the session's latest chunk (an identify
	// in the middle of a session changes it); DistinctIDs every user the
	// chunks name.
	DistinctID  string
	DistinctIDs []string
	Start       time.Time
	End         time.Time
	Pages       int
	Clicks      int
	Errors      int
	Chunks      int
	Bytes       int64
	// LastReceived is when the server took the session's latest chunk.
	LastReceived time.Time
}

// ReplayFilter selects sessions of a list: of one user (any chunk naming
// DistinctID), overlapping [From, To) when set, at most Limit of them (0:
// all, for the retention job).
type ReplayFilter struct {
	DistinctID string
	From, To   time.Time
	Limit      int
}

// ReplayStore keeps replay chunks. Embedded servers keep them as files in
// the data directory, servers with a PostgreSQL metadata store in a table
// of it (docs/replay.md, "Storage"). Every method is scoped to a product:
// no call reads or deletes another product's sessions.
type ReplayStore interface {
	// AppendReplayChunks stores chunks durably before it returns (the
	// caller then acknowledges them). A chunk whose product, session,
	// window and index are already stored is kept as it was: a retry is
	// not an error.
	AppendReplayChunks(ctx context.Context, chunks []ReplayChunk) error
	// ListReplaySessions returns a product's sessions that f selects,
	// latest start first.
	ListReplaySessions(ctx context.Context, productID int64, f ReplayFilter) ([]ReplaySession, error)
	// ReplayChunks returns a session's chunks with their data, by window
	// (in order of each window's first chunk) and index; ErrNotFound when
	// the product has no such session.
	ReplayChunks(ctx context.Context, productID int64, sessionID string) ([]ReplayChunk, error)
	// DeleteReplaySession deletes a session's chunks; ErrNotFound when
	// the product has no such session.
	DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error
	// ReplayProducts returns the products that have chunks, for the
	// retention job.
	ReplayProducts(ctx context.Context) ([]int64, error)
}

// OrderReplayChunks sorts a session's chunks by window, in order of each
// window's first chunk, then by index: the order ReplayChunks returns.
func OrderReplayChunks(chunks []ReplayChunk) []ReplayChunk {
	first := map[string]time.Time{}
	for _, c := range chunks {
		if t, ok := first[c.WindowID]; !ok || c.FirstTS.Before(t) {
			first[c.WindowID] = c.FirstTS
		}
	}
	sort.SliceStable(chunks, func(i, j int) bool {
		a, b := chunks[i], chunks[j]
		if a.WindowID != b.WindowID {
			if !first[a.WindowID].Equal(first[b.WindowID]) {
				return first[a.WindowID].Before(first[b.WindowID])
			}
			return a.WindowID < b.WindowID
		}
		return a.Index < b.Index
	})
	return chunks
}

// SummarizeReplay folds chunks' metadata (Data unused) into sessions,
// latest start first: the one summary both stores give, so that they
// cannot disagree on what a session's duration or counts are.
func SummarizeReplay(chunks []ReplayChunk) []ReplaySession {
	by := map[string]*ReplaySession{}
	latest := map[string]time.Time{}
	for _, c := range chunks {
		s := by[c.SessionID]
		if s == nil {
			s = &ReplaySession{SessionID: c.SessionID, Start: c.FirstTS, End: c.LastTS}
			by[c.SessionID] = s
		}
		if c.FirstTS.Before(s.Start) {
			s.Start = c.FirstTS
		}
		if c.LastTS.After(s.End) {
			s.End = c.LastTS
		}
		if !c.LastTS.Before(latest[c.SessionID]) {
			latest[c.SessionID], s.DistinctID = c.LastTS, c.DistinctID
		}
		found := false
		for _, d := range s.DistinctIDs {
			found = found || d == c.DistinctID
		}
		if !found {
			s.DistinctIDs = append(s.DistinctIDs, c.DistinctID)
		}
		s.Pages += c.Pages
		s.Clicks += c.Clicks
		s.Errors += c.Errors
		s.Chunks++
		s.Bytes += int64(c.Size)
		if c.ReceivedAt.After(s.LastReceived) {
			s.LastReceived = c.ReceivedAt
		}
	}
	out := make([]ReplaySession, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.After(out[j].Start)
		}
		return out[i].SessionID < out[j].SessionID
	})
	return out
}

// FilterReplay applies f to sessions in their order.
func FilterReplay(sessions []ReplaySession, f ReplayFilter) []ReplaySession {
	out := sessions[:0:0]
	for _, s := range sessions {
		if f.DistinctID != "" {
			found := false
			for _, d := range s.DistinctIDs {
				found = found || d == f.DistinctID
			}
			if !found {
				continue
			}
		}
		if !f.From.IsZero() && s.End.Before(f.From) {
			continue
		}
		if !f.To.IsZero() && !s.Start.Before(f.To) {
			continue
		}
		out = append(out, s)
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out
}
