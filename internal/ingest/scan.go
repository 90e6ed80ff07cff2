package ingest

import (
	"bytes"
	stdjson "encoding/json"
	"unsafe"
)

// scanEnvelope decodes the shape the SDKs send, and only that, without a
// general JSON decoder: an object of batch (an array of event objects),
// sent_at and api_key, each at most once, with the fields of wireEvent
// spelled exactly, each at most once, every field but properties a string
// without escapes or null. Anything else (an escape in a string, a key in
// another case, a duplicate key, a number where a string belongs) reports
// false and the body takes the general path, which decodes it or explains
// why not. The caller has checked that the body is UTF-8 without control
// characters. FuzzProcess holds what it decodes equal to encoding/json's.
//
// Why: decoding was an eighth of the server's CPU under single-event
// requests, and each event cost about fifteen allocations (a string and a
// pointer per field, a stream buffer per body). Here an event costs two:
// one copy of its object's bytes, which its strings and properties view,
// and the seven string headers its pointers point to. A view keeps at most
// its own event's bytes alive, as a decoded properties value did.
func scanEnvelope(body []byte) (env typedEnvelope, ok bool) {
	s := scanner{b: body}
	ok = s.object(envelopeFields[:], func(k int) bool {
		if k == 0 {
			events, ok := s.batch()
			env.Batch = &events
			return ok
		}
		start, end, ok := s.optionalString()
		if ok && start >= 0 {
			owned := string(body[start:end]) // the body's buffer is reused after the request
			if k == 1 {
				env.SentAt = &owned
			} else {
				env.APIKey = &owned
			}
		}
		return ok
	})
	s.space()
	return env, ok && s.i == len(body) && env.Batch != nil
}

// The envelope's fields, as scanEnvelope spells them.
var envelopeFields = [...]string{"batch", "sent_at", "api_key"}

// scanner reads a JSON body from position i.
type scanner struct {
	b []byte
	i int
}

// space skips JSON whitespace.
func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// skip consumes c, after whitespace, if it is next.
func (s *scanner) skip(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// object reads an object whose keys are among names, each at most once
// and spelled exactly, calling read with the key's index to read its value.
func (s *scanner) object(names []string, read func(k int) bool) bool {
	if !s.skip('{') {
		return false
	}
	if s.skip('}') {
		return true
	}
	var seen uint32
	for {
		ks, ke, ok := s.plainString()
		if !ok || !s.skip(':') {
			return false
		}
		k := -1
		for j, name := range names {
			if string(s.b[ks:ke]) == name {
				k = j
				break
			}
		}
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		if !read(k) {
			return false
		}
		if !s.skip(',') {
			return s.skip('}')
		}
	}
}

// plainString reads a string without escapes and returns where its text
// starts and ends.
func (s *scanner) plainString() (start, end int, ok bool) {
	if !s.skip('"') {
		return 0, 0, false
	}
	n := bytes.IndexByte(s.b[s.i:], '"')
	if n < 0 || bytes.IndexByte(s.b[s.i:s.i+n], '\\') >= 0 {
		return 0, 0, false
	}
	start, end = s.i, s.i+n
	s.i = end + 1
	return start, end, true
}

// optionalString reads a plain string, returning where its text starts
// and ends, or null, returning -1, -1.
func (s *scanner) optionalString() (start, end int, ok bool) {
	s.space()
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return -1, -1, true
	}
	return s.plainString()
}

// value skips any JSON value and returns where it starts and ends. It
// finds the end of a valid value; whether the value is valid is checked
// by the caller.
func (s *scanner) value() (start, end int, ok bool) {
	s.space()
	start = s.i
	depth := 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			for s.i < len(s.b) && s.b[s.i] != '"' {
				if s.b[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			if s.i >= len(s.b) {
				return 0, 0, false
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return start, s.i, s.i > start
			}
			depth--
		case c == ',' && depth == 0:
			return start, s.i, s.i > start
		}
		s.i++
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return start, s.i, true
		}
	}
	return start, s.i, depth == 0 && s.i > start
}

// The fields of an event, as scanEnvelope spells them, in wireEvent's order.
var eventFields = [...]string{"event_name", "distinct_id", "timestamp", "uuid", "user_agent", "url", "referrer", "properties"}

// batch reads the batch's array of events.
func (s *scanner) batch() ([]wireEvent, bool) {
	if !s.skip('[') {
		return nil, false
	}
	events := make([]wireEvent, 0, 1)
	if s.skip(']') {
		return events, true
	}
	for {
		w, ok := s.event()
		if !ok {
			return nil, false
		}
		events = append(events, w)
		if s.skip(',') {
			continue
		}
		return events, s.skip(']')
	}
}

// event reads one event object. Its strings and properties are views of
// one copy of the object's bytes.
func (s *scanner) event() (wireEvent, bool) {
	var w wireEvent
	s.space()
	objStart := s.i
	// Where each field's text starts and ends in the body; -1: absent or
	// null.
	var at [len(eventFields)][2]int
	for k := range at {
		at[k] = [2]int{-1, -1}
	}
	const props = len(eventFields) - 1
	ok := s.object(eventFields[:], func(k int) bool {
		var start, end int
		var ok bool
		if k == props {
			start, end, ok = s.value()
			ok = ok && stdjson.Valid(s.b[start:end])
		} else {
			start, end, ok = s.optionalString()
		}
		at[k] = [2]int{start, end}
		return ok
	})
	if !ok {
		return w, false
	}
	own := bytes.Clone(s.b[objStart:s.i])
	view := func(k int) []byte {
		start, end := at[k][0]-objStart, at[k][1]-objStart
		return own[start:end:end]
	}
	strs := new([props]string)
	for k, dst := range [...]**string{&w.EventName, &w.DistinctID, &w.Timestamp, &w.UUID, &w.UserAgent, &w.URL, &w.Referrer} {
		if at[k][0] >= 0 {
			b := view(k)
			strs[k] = unsafe.String(unsafe.SliceData(b), len(b))
			*dst = &strs[k]
		}
	}
	if at[props][0] >= 0 {
		w.Properties = view(props)
	}
	return w, true
}
