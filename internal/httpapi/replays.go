package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/query"
)

// Session replay (docs/replay.md): ingest hands the chunks of $snapshot
// events to the replay store (storeChunks); the dashboard lists a
// product's sessions, reads one to play it, and deletes one or every
// session of a user (a privacy request). Query token or dashboard session
// only; an API key is 403 like on every read.

var errReplayNotFound = analytics.Errorf(analytics.KindNotFound, "replay_not_found", "This product has no recorded session with this id.")

// replaySessionJSON is ReplaySession in api/openapi.yaml.
type replaySessionJSON struct {
	SessionID  string    `json:"sessionId"`
	DistinctID string    `json:"distinctId"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	DurationMs int64     `json:"durationMs"`
	Pages      int       `json:"pages"`
	Clicks     int       `json:"clicks"`
	Errors     int       `json:"errors"`
	Chunks     int       `json:"chunks"`
	Bytes      int64     `json:"bytes"`
}

// replayChunkJSON is ReplayChunk in api/openapi.yaml: the data as the SDK
// sent it, base64 again.
type replayChunkJSON struct {
	WindowID       string    `json:"windowId"`
	Index          int       `json:"index"`
	DistinctID     string    `json:"distinctId"`
	FirstTimestamp time.Time `json:"firstTimestamp"`
	LastTimestamp  time.Time `json:"lastTimestamp"`
	Encoding       string    `json:"encoding"`
	Data           string    `json:"data"`
}

func sessionOf(s analytics.ReplaySession) replaySessionJSON {
	return replaySessionJSON{SessionID: s.SessionID, DistinctID: s.DistinctID, Start: s.Start, End: s.End,
		DurationMs: s.End.Sub(s.Start).Milliseconds(), Pages: s.Pages, Clicks: s.Clicks, Errors: s.Errors, Chunks: s.Chunks, Bytes: s.Bytes}
}

// storeChunks writes the replay chunks among accepted events to the replay
// store, synchronously: it returns once they are durable (the disk store
// fsyncs each file, PostgreSQL commits), so that 202 means durable for
// chunks as for events. It returns the other events, for the writer.
func (s *Server) storeChunks(ctx context.Context, accepted []ingest.Pending) ([]ingest.Pending, error) {
	// Most requests carry no chunk: they pass as they are, without a copy.
	first := -1
	for i := range accepted {
		if accepted[i].Chunk != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return accepted, nil
	}
	var chunks []analytics.ReplayChunk
	events := append(make([]ingest.Pending, 0, len(accepted)), accepted[:first]...)
	for _, p := range accepted[first:] {
		if p.Chunk != nil {
			chunks = append(chunks, *p.Chunk)
		} else {
			events = append(events, p)
		}
	}
	if s.ReplayAdmit != nil {
		if err := s.ReplayAdmit(); err != nil {
			return nil, err
		}
	}
	if err := s.Replays.AppendReplayChunks(ctx, chunks); err != nil {
		return nil, &analytics.Error{Kind: analytics.KindUnavailable, Code: "storage_unavailable",
			Message: "The replay chunks could not be stored; retry shortly.", RetryAfter: 5 * time.Second, Err: err}
	}
	return events, nil
}

// replayDisabled refuses the chunks of a server started with --replay=false.
func replayDisabled(accepted []ingest.Pending, rejected []ingest.Rejection) ([]ingest.Pending, []ingest.Rejection) {
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

// parseReplayTime reads a dateFrom or dateTo parameter: a date (dateTo
// then includes its whole day) or an RFC 3339 time.
func parseReplayTime(field, v string, endOfDay bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if endOfDay {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return t, analytics.InvalidField(field, "must be a date such as 2026-05-01 or an RFC 3339 time, not %q", v)
	}
	return t, nil
}

// handleListReplays is GET /api/v1/replays: the product's sessions, latest
// first, of one user when distinct_id names one, overlapping the dates.
func (s *Server) handleListReplays(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := analytics.ReplayFilter{DistinctID: q.Get("distinct_id"), Limit: analytics.DefaultReplayList}
	if f.From, err = parseReplayTime("dateFrom", q.Get("dateFrom"), false); err != nil {
		return err
	}
	if f.To, err = parseReplayTime("dateTo", q.Get("dateTo"), true); err != nil {
		return err
	}
	if l := q.Get("limit"); l != "" {
		if f.Limit, err = query.ParseLimit(l, analytics.MaxReplayList); err != nil {
			return err
		}
	}
	list, err := s.Replays.ListReplaySessions(r.Context(), p.ProductID, f)
	if err != nil {
		return err
	}
	items := make([]replaySessionJSON, len(list))
	for i, x := range list {
		items[i] = sessionOf(x)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

// handleGetReplay is GET /api/v1/replays/{sessionId}: the session and its
// chunks, in playing order per window.
func (s *Server) handleGetReplay(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id := r.PathValue("sessionId")
	if !analytics.ValidReplayID(id) {
		return errReplayNotFound
	}
	chunks, err := s.Replays.ReplayChunks(r.Context(), p.ProductID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return errReplayNotFound
	}
	if err != nil {
		return err
	}
	sessions := analytics.SummarizeReplay(chunks)
	out := make([]replayChunkJSON, len(chunks))
	for i, c := range chunks {
		out[i] = replayChunkJSON{WindowID: c.WindowID, Index: c.Index, DistinctID: c.DistinctID, FirstTimestamp: c.FirstTS,
			LastTimestamp: c.LastTS, Encoding: c.Encoding, Data: base64.StdEncoding.EncodeToString(c.Data)}
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeJSON(w, http.StatusOK, map[string]any{"session": sessionOf(sessions[0]), "chunks": out})
	return nil
}

// handleDeleteReplay is DELETE /api/v1/replays/{sessionId}.
func (s *Server) handleDeleteReplay(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id := r.PathValue("sessionId")
	if !analytics.ValidReplayID(id) {
		return errReplayNotFound
	}
	if err := s.Replays.DeleteReplaySession(r.Context(), p.ProductID, id); err != nil {
		if errors.Is(err, analytics.ErrNotFound) {
			return errReplayNotFound
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleDeleteUserReplays is DELETE /api/v1/replays?distinct_id=: every
// session of the product in which the user appears (a privacy request),
// answered with how many were deleted.
func (s *Server) handleDeleteUserReplays(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	user := r.URL.Query().Get("distinct_id")
	if user == "" {
		return analytics.InvalidField("distinct_id", "is required: the user whose sessions to delete")
	}
	list, err := s.Replays.ListReplaySessions(r.Context(), p.ProductID, analytics.ReplayFilter{DistinctID: user})
	if err != nil {
		return err
	}
	deleted := 0
	for _, x := range list {
		if err := s.Replays.DeleteReplaySession(r.Context(), p.ProductID, x.SessionID); err != nil && !errors.Is(err, analytics.ErrNotFound) {
			return err
		}
		deleted++
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": deleted})
	return nil
}
