package httpapi

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"strata/internal/analytics"
	"strata/internal/query"
	"strata/internal/replay"
)

// Session replay (docs/replay.md): ingest hands the chunks of $snapshot
// events to the replay service (replay.Service.StoreChunks); the
// dashboard lists a product's sessions, reads one to play it, and deletes
// one or every session of a user (a privacy request) through the same
// service. Query token or dashboard session only; an API key is 403 like
// on every read.

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

func sessionOf(s analytics.ReplaySession) replaySessionJSON {
	return replaySessionJSON{SessionID: s.SessionID, DistinctID: s.DistinctID, Start: s.Start, End: s.End,
		DurationMs: s.End.Sub(s.Start).Milliseconds(), Pages: s.Pages, Clicks: s.Clicks, Errors: s.Errors, Chunks: s.Chunks, Bytes: s.Bytes}
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
	// A read that grows with what the product keeps (PostgreSQL reads
	// every chunk's metadata; the segment store copies every session's
	// summary before it sorts them): under the query admission.
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.ReplaySession, error) {
		return s.ReplayOps.List(ctx, p.ProductID, f)
	})
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

// replayCursor reads the cursor parameter of GET /api/v1/replays/{id}:
// the window and index of the last chunk of the page before,
// "<windowId>.<index>" (a window id has no dot).
func replayCursor(v string) (analytics.ReplayCursor, error) {
	if v == "" {
		return analytics.ReplayCursor{}, nil
	}
	w, i, ok := strings.Cut(v, ".")
	index, err := strconv.Atoi(i)
	if !ok || err != nil || !analytics.ValidReplayID(w) || index < 0 || index > analytics.MaxReplayChunkIndex {
		return analytics.ReplayCursor{}, analytics.InvalidField("cursor", "must be the next of an earlier page, such as 1b0c….12, not %q", v)
	}
	return analytics.ReplayCursor{WindowID: w, Index: index}, nil
}

// handleGetReplay is GET /api/v1/replays/{sessionId}: the session and a
// page of its chunks, in playing order per window, with the cursor of the
// next page (next) while chunks follow. A page is at most
// analytics.MaxReplayPageBytes of chunk data, so that what a read holds
// does not grow with the session (docs/replay.md, "API"); its data is
// base64-encoded as it is written, and the response streamed.
func (s *Server) handleGetReplay(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id := r.PathValue("sessionId")
	if !analytics.ValidReplayID(id) {
		return replay.ErrNotFound
	}
	after, err := replayCursor(r.URL.Query().Get("cursor"))
	if err != nil {
		return err
	}
	// The session's summary and the page, read under the query
	// admission like the other metadata reads: a page holds up to
	// MaxReplayPageBytes of chunk data, and PostgreSQL sums the session's
	// rows. The page is written after the slot is given back.
	var session analytics.ReplaySession
	var page []analytics.ReplayChunk
	var more bool
	err = s.Queries.ReadMeta(r.Context(), func(ctx context.Context) error {
		var err error
		session, page, more, err = s.ReplayOps.Page(ctx, p.ProductID, id, after)
		return err
	})
	if err != nil {
		return err
	}
	var next *string
	if more && len(page) > 0 {
		last := page[len(page)-1]
		c := last.WindowID + "." + strconv.Itoa(last.Index)
		next = &c
	}
	w.Header().Set("Cache-Control", "private, no-store")
	setJSONHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	writeReplayPage(w, sessionOf(session), next, page)
	return nil
}

// replayChunkMeta is a ReplayChunk of api/openapi.yaml without its data,
// which writeReplayPage writes after it.
type replayChunkMeta struct {
	WindowID       string    `json:"windowId"`
	Index          int       `json:"index"`
	DistinctID     string    `json:"distinctId"`
	FirstTimestamp time.Time `json:"firstTimestamp"`
	LastTimestamp  time.Time `json:"lastTimestamp"`
	Encoding       string    `json:"encoding"`
}

// writeReplayPage writes a ReplayDetail a chunk at a time, each chunk's
// data base64-encoded straight into the response, so that the response is
// streamed to the client rather than held whole beside the page. It
// flushes once, after the session and the cursor: fasthttpadaptor streams
// a response once its handler flushes (before, it holds the whole body),
// and every write after that goes down the stream, so the chunks then fill
// the 32 KiB buffer, which goes out when full (a flush a chunk sent a
// frame, and a write, a chunk). The status is sent: a failed write has no
// one left to tell.
func writeReplayPage(w http.ResponseWriter, session replaySessionJSON, next *string, page []analytics.ReplayChunk) {
	out := bufio.NewWriterSize(w, 32<<10)
	head, _ := json.Marshal(struct {
		Session replaySessionJSON `json:"session"`
		Next    *string           `json:"next"`
	}{session, next})
	out.Write(head[:len(head)-1])
	out.WriteString(`,"chunks":[`)
	if out.Flush() == nil {
		http.NewResponseController(w).Flush()
	}
	for i, c := range page {
		if i > 0 {
			out.WriteByte(',')
		}
		meta, _ := json.Marshal(replayChunkMeta{WindowID: c.WindowID, Index: c.Index, DistinctID: c.DistinctID,
			FirstTimestamp: c.FirstTS, LastTimestamp: c.LastTS, Encoding: c.Encoding})
		out.Write(meta[:len(meta)-1])
		out.WriteString(`,"data":"`)
		enc := base64.NewEncoder(base64.StdEncoding, out)
		enc.Write(c.Data)
		enc.Close()
		out.WriteString(`"}`)
	}
	out.WriteString("]}\n")
	out.Flush()
}

// handleDeleteReplay is DELETE /api/v1/replays/{sessionId}.
func (s *Server) handleDeleteReplay(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	if err := s.ReplayOps.Delete(r.Context(), p.ProductID, r.PathValue("sessionId")); err != nil {
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
	deleted, err := s.ReplayOps.DeleteUser(r.Context(), p.ProductID, r.URL.Query().Get("distinct_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": deleted})
	return nil
}
