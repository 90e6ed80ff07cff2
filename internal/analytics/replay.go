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
	// ReplayChunkOverhead is what each chunk counts for beside its data
	// in a session's Bytes, and so in the caps that count them (a
	// session's, --replay-max-session-bytes; a product's,
	// --replay-max-bytes): about what its metadata takes in storage and
	// in the embedded store's index. Without it a flood of chunks of a
	// few bytes each would store many times what the caps say.
	ReplayChunkOverhead = 512
	// MaxReplayPageBytes bounds the chunk data one read of a session
	// returns (a page of GET /api/v1/replays/{id}), and
	// MaxReplayPageChunks its chunks, so that what a read holds does not
	// grow with the session; a page always holds at least one chunk, which
	// is at most MaxReplayChunkBytes.
	MaxReplayPageBytes  = 4 << 20
	MaxReplayPageChunks = 1000
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
	// Bytes is what the session takes in storage, as the caps count it:
	// its chunks' data and ReplayChunkOverhead for each chunk.
	Bytes int64
	// LastReceived is when the server took the session's latest chunk.
	LastReceived time.Time
}

// ReplayChunkCharge is what a chunk of size bytes of data adds to its
// session's Bytes.
func ReplayChunkCharge(size int) int64 { return int64(size) + ReplayChunkOverhead }

// Add folds one more chunk's metadata (Data unused) into s, the session
// of the chunks added so far: the one rule both stores follow, in
// SummarizeReplay and in the embedded store's index, so that they cannot
// disagree on what a session's duration, user or counts are.
func (s *ReplaySession) Add(c ReplayChunk) {
	if s.Chunks == 0 {
		s.SessionID, s.Start, s.End = c.SessionID, c.FirstTS, c.LastTS
	}
	if c.FirstTS.Before(s.Start) {
		s.Start = c.FirstTS
	}
	// The user is the latest chunk's (by its last event); of chunks that
	// end together, the one added last.
	if s.Chunks == 0 || !c.LastTS.Before(s.End) {
		s.DistinctID = c.DistinctID
	}
	if c.LastTS.After(s.End) {
		s.End = c.LastTS
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
	s.Bytes += ReplayChunkCharge(c.Size)
	if c.ReceivedAt.After(s.LastReceived) {
		s.LastReceived = c.ReceivedAt
	}
}

// ReplayFilter selects sessions of a list: of one user (any chunk naming
// DistinctID), overlapping [From, To) when set, at most Limit of them (0:
// all, for the retention job).
type ReplayFilter struct {
	DistinctID string
	From, To   time.Time
	Limit      int
}

// ReplayCursor names the last chunk a page of a session's chunks returned:
// the next page starts after it. The zero cursor starts at the first.
type ReplayCursor struct {
	WindowID string
	Index    int
}

// ReplayLimits are the caps AppendReplayChunks holds new chunks to
// (docs/replay.md, "Limits"); 0 is no cap.
type ReplayLimits struct {
	// SessionBytes is what one session may store, as its Bytes count it
	// (--replay-max-session-bytes).
	SessionBytes int64
	// Sessions is how many sessions one product may keep
	// (--replay-max-sessions). It bounds what the embedded store's index
	// holds for a product, which a flood of sessions of one tiny chunk
	// each would otherwise grow to gigabytes before the retention job's
	// next round.
	Sessions int
}

// ReplayRefused lists the chunks AppendReplayChunks did not store, by
// their positions in its chunks, in order: SessionFull those that would
// have taken their session past ReplayLimits.SessionBytes, ProductFull
// those that would have started a session beyond ReplayLimits.Sessions.
type ReplayRefused struct {
	SessionFull []int
	ProductFull []int
}

// Count is how many chunks were refused.
func (r ReplayRefused) Count() int { return len(r.SessionFull) + len(r.ProductFull) }

// ReplayStore keeps replay chunks. Embedded servers keep them in segment
// files in the data directory, servers with a PostgreSQL metadata store in
// a table of it (docs/replay.md, "Storage"). Every method is scoped to a
// product: no call reads or deletes another product's sessions.
type ReplayStore interface {
	// AppendReplayChunks stores chunks durably before it returns (the
	// caller then acknowledges them). A chunk whose product, session,
	// window and index are already stored is kept as it was: a retry is
	// not an error, and is not refused by a cap. A new chunk is not
	// stored, and is listed in refused, when its product keeps
	// limits.Sessions sessions and the chunk's is not one of them
	// (ProductFull; chunks of the sessions it keeps are never refused so),
	// or when it would take its session's Bytes past limits.SessionBytes
	// (SessionFull); the others are stored. Calls at the same time never
	// take a session or a product past a cap together (docs/replay.md,
	// "Limits").
	AppendReplayChunks(ctx context.Context, chunks []ReplayChunk, limits ReplayLimits) (refused ReplayRefused, err error)
	// ListReplaySessions returns a product's sessions that f selects,
	// latest start first.
	ListReplaySessions(ctx context.Context, productID int64, f ReplayFilter) ([]ReplaySession, error)
	// ReplaySession returns one session's summary, as ListReplaySessions
	// would (DistinctIDs may be left empty); ErrNotFound when the product
	// has no such session.
	ReplaySession(ctx context.Context, productID int64, sessionID string) (ReplaySession, error)
	// ReadReplayChunks returns a page of a session's chunks with their
	// data, in playing order (by window, in order of each window's first
	// chunk, then by index: OrderReplayChunks), starting after the chunk
	// after names (the zero cursor: at the first). A page holds the next
	// chunk, then the ones after it while their data stay within maxBytes,
	// and at most MaxReplayPageChunks; more reports whether chunks follow
	// it. Nothing follows a cursor past the end, or of an unknown session:
	// an empty page. What it holds is the page's, whatever the session's
	// size.
	ReadReplayChunks(ctx context.Context, productID int64, sessionID string, after ReplayCursor, maxBytes int) (page []ReplayChunk, more bool, err error)
	// DeleteReplaySession deletes a session's chunks; ErrNotFound when
	// the product has no such session.
	DeleteReplaySession(ctx context.Context, productID int64, sessionID string) error
	// DeleteReplaySessions deletes the chunks of the product's sessions
	// among sessionIDs at once (the retention job's deletions, a user's
	// privacy request), as durably as one DeleteReplaySession but in one
	// write (the embedded store: one write and one sync of every
	// tombstone; PostgreSQL: one transaction), and returns how many it
	// deleted. An id the product has no session of, or named twice, is
	// skipped, not an error.
	DeleteReplaySessions(ctx context.Context, productID int64, sessionIDs []string) (int, error)
	// ReplayProducts returns the products that have chunks, for the
	// retention job.
	ReplayProducts(ctx context.Context) ([]int64, error)
}

// ReplayCompactor is a ReplayStore that gives deleted sessions' space back
// in rounds rather than at once: the embedded store's segment files. The
// retention job calls CompactReplays after each of its rounds.
type ReplayCompactor interface {
	CompactReplays(ctx context.Context) error
}

// PageReplayChunks cuts the next page out of chunks' sizes, in playing
// order: the first, then more while the data stay within maxBytes, at most
// MaxReplayPageChunks. It returns how many chunks the page takes.
func PageReplayChunks(sizes func(i int) int, n, maxBytes int) int {
	if n == 0 {
		return 0
	}
	total, i := sizes(0), 1
	for ; i < n && i < MaxReplayPageChunks; i++ {
		if total+sizes(i) > maxBytes {
			break
		}
		total += sizes(i)
	}
	return i
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

// SummarizeReplay folds chunks' metadata (Data unused) into sessions
// (ReplaySession.Add), latest start first.
func SummarizeReplay(chunks []ReplayChunk) []ReplaySession {
	by := map[string]*ReplaySession{}
	for _, c := range chunks {
		s := by[c.SessionID]
		if s == nil {
			s = &ReplaySession{}
			by[c.SessionID] = s
		}
		s.Add(c)
	}
	out := make([]ReplaySession, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	SortReplaySessions(out)
	return out
}

// SortReplaySessions sorts sessions latest start first, then by id.
func SortReplaySessions(out []ReplaySession) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.After(out[j].Start)
		}
		return out[i].SessionID < out[j].SessionID
	})
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
