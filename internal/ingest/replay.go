package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"io"
	"time"

	"strata/internal/analytics"
)

// $snapshot events carry session replay chunks (docs/replay.md). They are
// validated here like every event, then read into an analytics.ReplayChunk
// that the HTTP layer hands to the replay store instead of the writer: a
// chunk never reaches the events table.

// maxSnapshotPropertiesBytes bounds a $snapshot event's properties: the
// base64 text of a chunk of analytics.MaxReplayChunkBytes, and the usual
// room for the other properties.
const maxSnapshotPropertiesBytes = (analytics.MaxReplayChunkBytes+2)/3*4 + maxPropertiesBytes

// snapshotProps are the properties of a $snapshot event that ingest reads.
type snapshotProps struct {
	SessionID *string `json:"$session_id"`
	WindowID  *string `json:"$window_id"`
	Index     *int64  `json:"$chunk_index"`
	Data      *string `json:"$snapshot_data"`
	Encoding  *string `json:"$snapshot_encoding"`
}

// snapshotChunk reads a $snapshot event's compact properties into the
// chunk it carries, or says why the event is refused: invalid_snapshot for
// a missing or malformed property or data that is not the encoding it
// claims, snapshot_too_large for data over the limits.
func snapshotChunk(e *analytics.Event, props []byte) (*analytics.ReplayChunk, *Rejection) {
	var p snapshotProps
	if err := stdjson.Unmarshal(props, &p); err != nil {
		return nil, reject(RejectInvalidSnapshot, "A $snapshot event's properties could not be read: %s.", err.Error())
	}
	switch {
	case p.SessionID == nil || !analytics.ValidReplayID(*p.SessionID):
		return nil, reject(RejectInvalidSnapshot, "$session_id must be 1 to 64 letters, digits, - or _.")
	case p.WindowID == nil || !analytics.ValidReplayID(*p.WindowID):
		return nil, reject(RejectInvalidSnapshot, "$window_id must be 1 to 64 letters, digits, - or _.")
	case p.Index == nil || *p.Index < 0 || *p.Index > analytics.MaxReplayChunkIndex:
		return nil, reject(RejectInvalidSnapshot, "$chunk_index must be an integer from 0 to %d.", analytics.MaxReplayChunkIndex)
	case p.Encoding == nil || (*p.Encoding != analytics.ReplayGzipJSON && *p.Encoding != analytics.ReplayJSON):
		return nil, reject(RejectInvalidSnapshot, "$snapshot_encoding must be %s or %s.", analytics.ReplayGzipJSON, analytics.ReplayJSON)
	case p.Data == nil:
		return nil, reject(RejectInvalidSnapshot, "$snapshot_data is required: the chunk's rrweb events, base64-encoded.")
	}
	if base64.StdEncoding.DecodedLen(len(*p.Data)) > analytics.MaxReplayChunkBytes+2 {
		return nil, snapshotTooLarge()
	}
	data, err := base64.StdEncoding.DecodeString(*p.Data)
	if err != nil {
		return nil, reject(RejectInvalidSnapshot, "$snapshot_data is not base64 (RFC 4648, with padding).")
	}
	if len(data) > analytics.MaxReplayChunkBytes {
		return nil, snapshotTooLarge()
	}
	c := &analytics.ReplayChunk{ProductID: e.ProductID, SessionID: *p.SessionID, WindowID: *p.WindowID, Index: int(*p.Index),
		DistinctID: e.DistinctID, Encoding: *p.Encoding, Data: data, Size: len(data), ReceivedAt: e.ReceivedAt}
	if rej := readRRWeb(c); rej != nil {
		return nil, rej
	}
	return c, nil
}

func snapshotTooLarge() *Rejection {
	return reject(RejectSnapshotTooLarge, "$snapshot_data is over %d bytes once base64 is decoded, or over %d bytes of JSON once decompressed; send smaller chunks.",
		analytics.MaxReplayChunkBytes, analytics.MaxReplayChunkJSON)
}

// rrwebEvent is what ingest reads of an rrweb event: its type and time,
// and of its data what tells a click, a page and a custom event apart.
type rrwebEvent struct {
	Type      int   `json:"type"`
	Timestamp int64 `json:"timestamp"`
	Data      struct {
		Source *int   `json:"source"`
		Type   *int   `json:"type"`
		Tag    string `json:"tag"`
	} `json:"data"`
}

// rrweb's event types and incremental sources that the counts read.
const (
	rrwebIncremental      = 3
	rrwebMeta             = 4
	rrwebCustom           = 5
	rrwebMouseInteraction = 2
	rrwebClick            = 2
)

// maxRRWebTimestamp is the last millisecond of the year 9999, the last a
// chunk's events may carry: a later time cannot be written as RFC 3339,
// which the replay stores and the API use, and was once taken here only
// to fail the whole request when the chunk's header was written.
const maxRRWebTimestamp = 253402300799999

// readRRWeb decompresses c's data and reads its events one by one (never
// more than analytics.MaxReplayChunkJSON bytes of them), filling c's times
// and counts: a meta event is a page (a load or a navigation), a mouse
// interaction of type click a click, a custom event tagged $exception an
// error. The data must be a non-empty JSON array of objects with a
// timestamp, a time in milliseconds from 1970 to the end of the year 9999.
func readRRWeb(c *analytics.ReplayChunk) *Rejection {
	var r io.Reader = bytes.NewReader(c.Data)
	if c.Encoding == analytics.ReplayGzipJSON {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return reject(RejectInvalidSnapshot, "$snapshot_data is not gzip, as $snapshot_encoding says.")
		}
		r = zr
	}
	limited := &io.LimitedReader{R: r, N: analytics.MaxReplayChunkJSON + 1}
	dec := stdjson.NewDecoder(&squeezeSpace{r: limited})
	bad := func(err error) *Rejection {
		if limited.N <= 0 {
			return snapshotTooLarge()
		}
		if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) {
			return reject(RejectInvalidSnapshot, "$snapshot_data is corrupt or cut short gzip.")
		}
		return reject(RejectInvalidSnapshot, "$snapshot_data must be a JSON array of rrweb events, each with a type and a timestamp.")
	}
	if tok, err := dec.Token(); err != nil || tok != stdjson.Delim('[') {
		return bad(err)
	}
	n := 0
	for dec.More() {
		var ev rrwebEvent
		if err := dec.Decode(&ev); err != nil {
			return bad(err)
		}
		if ev.Timestamp <= 0 || ev.Timestamp > maxRRWebTimestamp {
			return bad(nil)
		}
		t := time.UnixMilli(ev.Timestamp).UTC()
		if n == 0 || t.Before(c.FirstTS) {
			c.FirstTS = t
		}
		if t.After(c.LastTS) {
			c.LastTS = t
		}
		n++
		switch ev.Type {
		case rrwebMeta:
			c.Pages++
		case rrwebIncremental:
			if ev.Data.Source != nil && *ev.Data.Source == rrwebMouseInteraction && ev.Data.Type != nil && *ev.Data.Type == rrwebClick {
				c.Clicks++
			}
		case rrwebCustom:
			if ev.Data.Tag == analytics.ExceptionEvent {
				c.Errors++
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad(err)
	}
	if n == 0 {
		return reject(RejectInvalidSnapshot, "$snapshot_data holds no rrweb event.")
	}
	// The rest of the stream: a gzip checksum is checked at its end.
	if _, err := io.Copy(io.Discard, limited); err != nil {
		return bad(err)
	}
	if limited.N <= 0 {
		return snapshotTooLarge()
	}
	return nil
}

// squeezeSpace reads JSON from r with every run of whitespace outside
// strings cut to its first byte. encoding/json's Decoder, looking for the
// next token, scans the whitespace it holds from the start again after
// each read, and a gzip stream gives it about 32 KB a read: a chunk of
// 32 MiB of spaces, a request of 32 KB, cost 21 s of CPU. One byte of it
// still keeps two tokens apart, so the JSON means what it meant; strings
// pass as they are, escaped quotes included.
type squeezeSpace struct {
	r                       io.Reader
	inString, escaped, last bool // last: the byte passed last was whitespace
}

func (s *squeezeSpace) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		w := 0
		for _, c := range p[:n] {
			switch {
			case s.inString:
				switch {
				case s.escaped:
					s.escaped = false
				case c == '\\':
					s.escaped = true
				case c == '"':
					s.inString = false
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				if s.last {
					continue
				}
				s.last = true
				p[w] = c
				w++
				continue
			case c == '"':
				s.inString = true
			}
			s.last = false
			p[w] = c
			w++
		}
		// A read that was all whitespace already passed on reads again,
		// rather than answer 0 bytes and no error.
		if w > 0 || err != nil || n == 0 {
			return w, err
		}
	}
}
