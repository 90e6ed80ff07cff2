// Package ingest turns a POST /e body into stored events. It is HTTP-agnostic:
// the handler reads the body and the credential, and this package runs the
// named steps (parse the envelope, validate each event, enrich it, correct
// its clock) and commits through the group-commit Writer. Every reason an
// event can be refused is a typed Rejection with a stable code.
package ingest

import (
	"bytes"
	stdjson "encoding/json"

	"errors"
	"fmt"
	json "github.com/goccy/go-json"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"strata/internal/analytics"
)

// The limits of one request (docs/ingest.md, "Steps"): 500 events and 5 MB
// (after decompression).
const (
	MaxBatchEvents = 500
	MaxBodyBytes   = 5 << 20
)

// Envelope is a parsed POST /e body. When the whole body decodes cleanly
// (the common case) the events are already decoded in events; otherwise
// they stay raw in Batch and each is decoded on its own, so that one bad
// event rejects only itself.
type Envelope struct {
	Batch  []json.RawMessage
	events []wireEvent
	SentAt time.Time // zero when absent
	APIKey string
}

// Len is the number of events in the batch.
func (e Envelope) Len() int {
	if e.events != nil {
		return len(e.events)
	}
	return len(e.Batch)
}

// typedEnvelope is the body decoded in one pass, for the fast path.
type typedEnvelope struct {
	Batch  *[]wireEvent `json:"batch"`
	SentAt *string      `json:"sent_at"`
	APIKey *string      `json:"api_key"`
}

// decodeFast decodes a well-formed body in one pass: the SDKs' own shape
// with scanEnvelope, else with goccy/go-json. It reports false for anything
// unusual (bad UTF-8, an unknown field, a wrong type, trailing data,
// malformed properties), and the caller then takes the exact, slower path
// that explains the problem per event. The fuzz target checks that
// whatever this accepts, encoding/json decodes to the same.
func decodeFast(body []byte) (typedEnvelope, bool) {
	var w typedEnvelope
	// goccy/go-json lets raw control characters through inside strings,
	// which JSON forbids; compact bodies (what the SDKs send) have none at
	// all, so any of them sends the body down the exact path. So does any
	// \uD… escape, which may be half of a surrogate pair: both decoders
	// would turn a lone one into U+FFFD, and only the exact path, which
	// keeps each event raw, can find it and reject that event alone. (Most
	// such escapes are whole pairs, emoji written as escapes; they take
	// the exact path too, and are accepted there.)
	for i, c := range body {
		if c < 0x20 {
			return w, false
		}
		if c == '\\' && i+2 < len(body) && body[i+1] == 'u' && (body[i+2] == 'd' || body[i+2] == 'D') {
			return w, false
		}
	}
	if !utf8.Valid(body) {
		return w, false
	}
	if w, ok := scanEnvelope(body); ok {
		return w, true
	}
	// goccy keeps raw values unchecked, and of a key given twice it keeps
	// the last value, so a malformed first one would pass unseen (the
	// fuzzer found `"properties":A"0","properties":"0"`): the body is
	// checked whole. Bodies of the SDKs' shape do not come this far.
	if !stdjson.Valid(body) {
		return w, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil || w.Batch == nil {
		return w, false
	}
	for _, c := range body[dec.InputOffset():] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return w, false
		}
	}
	return w, true
}

// wireEnvelope is the body's JSON shape. Pointers tell absent from null
// from present.
type wireEnvelope struct {
	Batch  *[]json.RawMessage `json:"batch"`
	SentAt *string            `json:"sent_at"`
	APIKey *string            `json:"api_key"`
}

// ParseEnvelope decodes and checks a request body. Its errors are
// *analytics.Error values with the codes the API documents.
func ParseEnvelope(body []byte) (Envelope, error) {
	var env Envelope
	if fast, ok := decodeFast(body); ok {
		env.events = *fast.Batch
		if env.events == nil {
			env.events = []wireEvent{}
		}
		return env.finish(fast.SentAt, fast.APIKey)
	}
	var w wireEnvelope
	// goccy/go-json does not check the bytes it keeps as RawMessage, so the
	// body is first checked whole by encoding/json's scanner: malformed JSON
	// anywhere is the request's error, never a half-read event.
	if !stdjson.Valid(body) {
		// Unmarshal, unlike a Decoder, also reports data after the value.
		return env, envelopeError(stdjson.Unmarshal(body, &wireEnvelope{}))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return env, envelopeError(stdlibError(body, &wireEnvelope{}, err))
	}
	if w.Batch == nil || *w.Batch == nil {
		return env, analytics.Errorf(analytics.KindInvalid, "invalid_envelope",
			`The body must be an object with a "batch" array of events.`)
	}
	env.Batch = *w.Batch
	return env.finish(w.SentAt, w.APIKey)
}

// finish applies the envelope rules common to both decoding paths.
func (env Envelope) finish(sentAt, apiKey *string) (Envelope, error) {
	if env.Len() == 0 {
		return env, analytics.Errorf(analytics.KindInvalid, "empty_batch", "The batch holds no events.")
	}
	if env.Len() > MaxBatchEvents {
		return env, analytics.Errorf(analytics.KindTooLarge, "batch_too_large",
			"The batch holds %d events; at most %d are allowed per request.", env.Len(), MaxBatchEvents)
	}
	if sentAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *sentAt)
		if err != nil {
			return env, analytics.Errorf(analytics.KindInvalid, "invalid_sent_at",
				"sent_at must be an RFC 3339 date-time such as 2026-11-23T10:00:00Z.")
		}
		env.SentAt = t
	}
	if apiKey != nil {
		env.APIKey = *apiKey
	}
	return env, nil
}

// stdlibDecode decodes body with encoding/json, refusing unknown fields.
func stdlibDecode(body []byte, v any) error {
	dec := stdjson.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// stdlibError explains why the fast decoder refused body by decoding it
// again with encoding/json. goccy/go-json decodes the hot path about 2.5
// times faster, but its errors are less precise; failures are rare, so
// they pay for a second, exact pass. Should encoding/json accept what the
// fast decoder refused, the fast decoder's error stands.
func stdlibError(body []byte, v any, fastErr error) error {
	if err := stdlibDecode(body, v); err != nil {
		return err
	}
	return fastErr
}

// envelopeError explains a decoding failure of the envelope.
func envelopeError(err error) error {
	var typeErr *stdjson.UnmarshalTypeError
	var syntaxErr *stdjson.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return analytics.Errorf(analytics.KindInvalid, "invalid_envelope",
				`The body must be a JSON object with a "batch" array of events.`)
		}
		return analytics.Errorf(analytics.KindInvalid, "invalid_envelope",
			"The envelope field %q must be %s.", typeErr.Field, wantType(typeErr.Field))
	case errors.As(err, &syntaxErr):
		return analytics.Errorf(analytics.KindInvalid, "invalid_json",
			"The body is not valid JSON (at byte %d): %s.", syntaxErr.Offset, syntaxErr.Error())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return analytics.Errorf(analytics.KindInvalid, "invalid_json", "The body is empty or cut short.")
	}
	if field, ok := unknownField(err); ok {
		return analytics.Errorf(analytics.KindInvalid, "unknown_field",
			"The envelope field %s is not known; allowed are batch, sent_at and api_key.", field)
	}
	return analytics.Errorf(analytics.KindInvalid, "invalid_json", "The body is not valid JSON: %s.", err.Error())
}

func wantType(field string) string {
	if field == "batch" {
		return "an array of event objects"
	}
	return "a string"
}

// unknownField recognises encoding/json's error for a field that
// DisallowUnknownFields refused. The package exports no type for it.
func unknownField(err error) (string, bool) {
	const prefix = "json: unknown field "
	msg := err.Error()
	if strings.HasPrefix(msg, prefix) {
		return msg[len(prefix):], true
	}
	return "", false
}

// Rejection says why one event of a batch was not stored.
type Rejection struct {
	Index   int          `json:"index"`
	Code    RejectReason `json:"code"`
	Message string       `json:"message"`
}

// RejectReason is the stable code of a Rejection, for programs; the message
// beside it is for people. Each event gets the reason of the first rule it
// breaks. The codes are part of the API (RejectionCode in api/openapi.yaml,
// whose list a test holds equal to RejectReasons).
type RejectReason string

// The reasons an event is rejected.
const (
	RejectInvalidEvent       RejectReason = "invalid_event"          // not a JSON object, or unreadable
	RejectMissingEventName   RejectReason = "missing_event_name"     // event_name absent or null
	RejectInvalidEventName   RejectReason = "invalid_event_name"     // event_name empty or too long
	RejectReservedEventName  RejectReason = "reserved_event_name"    // a $ or message_ name clients may not send
	RejectMissingDistinctID  RejectReason = "missing_distinct_id"    // distinct_id absent or null
	RejectInvalidDistinctID  RejectReason = "invalid_distinct_id"    // distinct_id empty or too long
	RejectInvalidTimestamp   RejectReason = "invalid_timestamp"      // timestamp not RFC 3339
	RejectInvalidUUID        RejectReason = "invalid_uuid"           // uuid not a UUID
	RejectInvalidFieldType   RejectReason = "invalid_field_type"     // a field of the wrong JSON type
	RejectFieldTooLong       RejectReason = "field_too_long"         // user_agent, url or referrer too long
	RejectInvalidProperties  RejectReason = "invalid_properties"     // properties not a JSON object
	RejectPropertiesTooLarge RejectReason = "properties_too_large"   // properties over 64 KiB
	RejectPropertiesTooDeep  RejectReason = "properties_too_deep"    // properties nested too deep
	RejectReservedProperty   RejectReason = "reserved_property"      // a property only Strata sets
	RejectUnknownField       RejectReason = "unknown_field"          // a field the contract does not list
	RejectInvalidUTF8        RejectReason = "invalid_utf8"           // bytes or escapes that are not Unicode text
	RejectInvalidCharacter   RejectReason = "invalid_character"      // NUL in a string, key or value
	RejectInvalidGroups      RejectReason = "invalid_groups"         // $groups not an object of group types to keys
	RejectInvalidSnapshot    RejectReason = "invalid_snapshot"       // a $snapshot without its replay properties, or unreadable data
	RejectSnapshotTooLarge   RejectReason = "snapshot_too_large"     // a $snapshot chunk over 1 MiB, or 32 MiB decompressed
	RejectReplaySessionFull  RejectReason = "replay_session_full"    // a $snapshot chunk past its session's cap (the replay store decides)
	RejectReplayQuotaFull    RejectReason = "replay_quota_full"      // a $snapshot chunk that would start a session beyond its product's cap (the replay store decides)
	RejectCookieless         RejectReason = "cookieless_unavailable" // distinct_id $cookieless, and the server could not derive the visitor
)

// RejectReasons lists every RejectReason, in the order of the API's table.
var RejectReasons = []RejectReason{
	RejectInvalidEvent, RejectMissingEventName, RejectInvalidEventName, RejectReservedEventName,
	RejectMissingDistinctID, RejectInvalidDistinctID, RejectInvalidTimestamp, RejectInvalidUUID,
	RejectInvalidFieldType, RejectFieldTooLong, RejectInvalidProperties, RejectPropertiesTooLarge,
	RejectPropertiesTooDeep, RejectReservedProperty, RejectUnknownField, RejectInvalidUTF8,
	RejectInvalidCharacter, RejectInvalidGroups, RejectInvalidSnapshot, RejectSnapshotTooLarge,
	RejectReplaySessionFull, RejectReplayQuotaFull, RejectCookieless,
}

func reject(reason RejectReason, format string, args ...any) *Rejection {
	return &Rejection{Code: reason, Message: fmt.Sprintf(format, args...)}
}
