package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// Service holds the operations that store and delete recorded sessions,
// below every door that does (ingest's POST /e stores chunks, the replay
// API deletes a session or a user's, the retention job deletes expired
// ones): the caps on what a session and a product may keep and the disk's
// admission live here, so that every door applies the same rules.
type Service struct {
	Store analytics.ReplayStore
	// Limits are how much one session may store and how many sessions a
	// product may keep (0: no cap).
	Limits analytics.ReplayLimits
	// Admit, when set, says whether the disk has room for chunks; its
	// error refuses the whole batch.
	Admit func() error
	// OnStored, when set, is told the bytes of chunk data each batch
	// stored (the metrics).
	OnStored func(bytes int64)
}

// ErrNotFound answers a session id the product has not recorded.
var ErrNotFound = analytics.Errorf(analytics.KindNotFound, "replay_not_found", "This product has no recorded session with this id.")

// StoreChunks writes the replay chunks among accepted events to the replay
// store, synchronously: it returns once they are durable (the disk store
// fdatasyncs its segment, PostgreSQL commits), so that 202 means durable
// for chunks as for events. A chunk that would take its session past
// Limits.SessionBytes, or start a session beyond Limits.Sessions, is not
// stored and comes back as a rejection of its event (replay_session_full,
// replay_quota_full); the rest of the batch is not held back. It returns
// the other events, for the writer. This is the ingest path: a batch
// without a chunk passes as it is, without a copy or an allocation.
func (s *Service) StoreChunks(ctx context.Context, accepted []ingest.Pending) ([]ingest.Pending, []ingest.Rejection, error) {
	first := -1
	for i := range accepted {
		if accepted[i].Chunk != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return accepted, nil, nil
	}
	var chunks []analytics.ReplayChunk
	var at []int // each chunk's event's index in the batch
	events := append(make([]ingest.Pending, 0, len(accepted)), accepted[:first]...)
	for _, p := range accepted[first:] {
		if p.Chunk != nil {
			chunks = append(chunks, *p.Chunk)
			at = append(at, p.Index)
		} else {
			events = append(events, p)
		}
	}
	if s.Admit != nil {
		if err := s.Admit(); err != nil {
			return nil, nil, err
		}
	}
	full, err := s.Store.AppendReplayChunks(ctx, chunks, s.Limits)
	if err != nil {
		return nil, nil, &analytics.Error{Kind: analytics.KindUnavailable, Code: "storage_unavailable",
			Message: "The replay chunks could not be stored; retry shortly.", RetryAfter: 5 * time.Second, Err: err}
	}
	if s.OnStored != nil {
		s.OnStored(storedBytes(chunks, full))
	}
	refused := make([]ingest.Rejection, 0, full.Count())
	for _, i := range full.SessionFull {
		refused = append(refused, ingest.Rejection{Index: at[i], Code: ingest.RejectReplaySessionFull,
			Message: fmt.Sprintf("This session's recording reached the server's limit of %d bytes (--replay-max-session-bytes); "+
				"its later chunks are not stored. Do not send them again: a new session is recorded again.", s.Limits.SessionBytes)})
	}
	for _, i := range full.ProductFull {
		refused = append(refused, ingest.Rejection{Index: at[i], Code: ingest.RejectReplayQuotaFull,
			Message: fmt.Sprintf("This product keeps as many recorded sessions as the server allows (%d, --replay-max-sessions), "+
				"so this new session is not recorded; the sessions kept still take chunks. Do not send this session's chunks again: "+
				"the replay retention job makes room by deleting the oldest sessions (within --replay-interval), and a later session is recorded.",
				s.Limits.Sessions)})
	}
	return events, refused, nil
}

// storedBytes is the data of the chunks the store kept: every chunk but
// those full refused.
func storedBytes(chunks []analytics.ReplayChunk, full analytics.ReplayRefused) int64 {
	var n int64
	for _, c := range chunks {
		n += int64(len(c.Data))
	}
	for _, i := range full.SessionFull {
		n -= int64(len(chunks[i].Data))
	}
	for _, i := range full.ProductFull {
		n -= int64(len(chunks[i].Data))
	}
	return n
}

// RefuseChunks refuses every chunk among accepted, for a server started
// with --replay=false, and returns the other events and the rejections.
// It filters accepted in place.
func RefuseChunks(accepted []ingest.Pending, rejected []ingest.Rejection) ([]ingest.Pending, []ingest.Rejection) {
	kept := accepted[:0]
	for _, p := range accepted {
		if p.Chunk == nil {
			kept = append(kept, p)
			continue
		}
		rejected = append(rejected, ingest.Rejection{Index: p.Index, Code: ingest.RejectInvalidSnapshot,
			Message: "Session replay is turned off on this server (--replay=false)."})
	}
	return kept, rejected
}

// List returns the product's sessions that f selects, latest start first.
// The read grows with what the product keeps, so the API runs it under
// the query admission.
func (s *Service) List(ctx context.Context, productID int64, f analytics.ReplayFilter) ([]analytics.ReplaySession, error) {
	return s.Store.ListReplaySessions(ctx, productID, f)
}

// Page returns the summary of the product's session sessionID and a page
// of its chunks after the cursor, at most analytics.MaxReplayPageBytes of
// chunk data whatever the session's size; more reports whether chunks
// follow. ErrNotFound when the product has no such session.
func (s *Service) Page(ctx context.Context, productID int64, sessionID string, after analytics.ReplayCursor) (session analytics.ReplaySession, page []analytics.ReplayChunk, more bool, err error) {
	if !analytics.ValidReplayID(sessionID) {
		return session, nil, false, ErrNotFound
	}
	if session, err = s.Store.ReplaySession(ctx, productID, sessionID); err == nil {
		page, more, err = s.Store.ReadReplayChunks(ctx, productID, sessionID, after, analytics.MaxReplayPageBytes)
	}
	if errors.Is(err, analytics.ErrNotFound) {
		return session, nil, false, ErrNotFound
	}
	return session, page, more, err
}

// Delete deletes one of the product's sessions; ErrNotFound when the
// product has no session sessionID.
func (s *Service) Delete(ctx context.Context, productID int64, sessionID string) error {
	if !analytics.ValidReplayID(sessionID) {
		return ErrNotFound
	}
	err := s.Store.DeleteReplaySession(ctx, productID, sessionID)
	if errors.Is(err, analytics.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// DeleteUser deletes every session of the product in which the user
// distinctID appears (a privacy request), and returns how many it deleted.
func (s *Service) DeleteUser(ctx context.Context, productID int64, distinctID string) (int, error) {
	if distinctID == "" {
		return 0, analytics.InvalidField("distinct_id", "is required: the user whose sessions to delete")
	}
	list, err := s.Store.ListReplaySessions(ctx, productID, analytics.ReplayFilter{DistinctID: distinctID})
	if err != nil {
		return 0, err
	}
	ids := make([]string, len(list))
	for i, x := range list {
		ids[i] = x.SessionID
	}
	return s.DeleteSessions(ctx, productID, ids)
}

// DeleteSessions deletes the product's sessions ids at once, as the API's
// privacy request and the retention job both do: one write of the
// tombstones and one sync on the embedded store, one transaction on
// PostgreSQL, however many sessions there are. It returns how many it
// deleted.
func (s *Service) DeleteSessions(ctx context.Context, productID int64, ids []string) (int, error) {
	return s.Store.DeleteReplaySessions(ctx, productID, ids)
}
