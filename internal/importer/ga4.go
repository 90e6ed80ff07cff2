package importer

import (
	"encoding/json"
	"io"
	"strconv"
	"time"
)

// GA4 reads Google Analytics 4's BigQuery export (the events_YYYYMMDD
// tables) exported as JSON lines, one event a row, as BigQuery's extract
// to NEWLINE_DELIMITED_JSON or `bq query --format=json` writes them: an
// INTEGER column may be written as a JSON string ("1767323045678901")
// or a number, and both are read. docs/import.md gives the mapping field
// by field and the schema it follows.
type GA4 struct {
	// KeepAutomatic keeps session_start, first_visit and
	// user_engagement, the events GA4 collects on its own to mark
	// sessions, first visits and time in the foreground, which are
	// otherwise skipped (counted as skipped_automatic_event): Strata
	// computes visits and first visits itself, and in its visit rules
	// any event but $identify and $exposure makes a visit not a bounce,
	// so they would leave no bounces at all.
	KeepAutomatic bool
}

var _ Source = GA4{}

// Name is "ga4".
func (GA4) Name() string { return "ga4" }

// ga4Names are GA4's events that Strata has names for: the page view,
// and enhanced measurement's form submit. GA4's "click" is enhanced
// measurement's outbound link click, not every click as Strata's $click
// is, and keeps its name like GA4's other events.
var ga4Names = map[string]string{
	"page_view":   "$pageview",
	"form_submit": "$form_submit",
}

var ga4Automatic = map[string]bool{"session_start": true, "first_visit": true, "user_engagement": true}

// The event parameters that become the event's own fields.
const (
	ga4PageLocation = "page_location"
	ga4PageReferrer = "page_referrer"
	ga4SessionID    = "ga_session_id"
)

// Read maps every line of the export.
func (g GA4) Read(f io.ReaderAt, size int64, emit func(Event, error) error) error {
	return readVendorLines(f, size, emit, g.mapLine)
}

// mapLine maps one row of the export.
func (g GA4) mapLine(line []byte, n int) (Event, *MappingError) {
	rec, merr := decodeVendorObject(line, n)
	if merr != nil {
		return Event{}, merr
	}
	rawName, _ := rec["event_name"].(string)
	if rawName == "" {
		return Event{}, vendorErr(vendorMissingEventName, "line %d has no event_name", n)
	}
	if ga4Automatic[rawName] && !g.KeepAutomatic {
		return Event{}, vendorErr(vendorSkippedAutomatic, "line %d: %s", n, rawName)
	}
	name, ok := strataEventName(rawName, ga4Names)
	if !ok {
		return Event{}, vendorErr(vendorMissingEventName, "line %d: the event_name %q has nothing but $", n, rawName)
	}
	// The distinct id: the user id the site set, else GA's own id of
	// the browser or app instance (the _ga cookie's client id).
	distinctKey := "user_id"
	distinct, ok := vendorString(rec["user_id"])
	if !ok {
		distinctKey = "user_pseudo_id"
		if distinct, ok = vendorString(rec["user_pseudo_id"]); !ok {
			return Event{}, vendorErr(vendorMissingDistinctID, "line %d (%s) has neither user_id nor user_pseudo_id", n, rawName)
		}
	}
	// event_timestamp: microseconds since 1970, UTC.
	rawTS, _ := vendorString(rec["event_timestamp"])
	micros, err := strconv.ParseInt(rawTS, 10, 64)
	ts := time.UnixMicro(micros).UTC()
	if err != nil || !vendorTimeOK(ts) {
		return Event{}, vendorErr(vendorBadTimestamp, "line %d (%s): event_timestamp %s is not microseconds since 1970", n, rawName, vendorCanonicalJSON(rec["event_timestamp"]))
	}
	ev := Event{Name: name, DistinctID: distinct, Timestamp: ts}

	// No event id: the fields that tell one event of a browser from
	// another (the batch and the event's place in it, when present).
	pseudo, _ := vendorString(rec["user_pseudo_id"])
	bundle, _ := vendorString(rec["event_bundle_sequence_id"])
	index, _ := vendorString(rec["batch_event_index"])
	ev.SourceID = derivedSourceID(pseudo, rawTS, rawName, bundle, index)

	props := map[string]any{}
	params, _ := rec["event_params"].([]any)
	for _, p := range params {
		if k, v, ok := ga4Param(p); ok {
			props[k] = v
		}
	}
	if s, ok := props[ga4PageLocation].(string); ok {
		ev.URL = s
		delete(props, ga4PageLocation)
	}
	if s, ok := props[ga4PageReferrer].(string); ok {
		ev.Referrer = s
		delete(props, ga4PageReferrer)
	}
	if sid, ok := vendorString(props[ga4SessionID]); ok {
		props["$session_id"] = sid
		delete(props, ga4SessionID)
	}
	skip := map[string]bool{"event_name": true, "event_timestamp": true, distinctKey: true}
	if _, ok := rec["event_params"].([]any); ok || rec["event_params"] == nil {
		skip["event_params"] = true
	}
	for k, v := range rec {
		if skip[k] {
			continue
		}
		if k == "user_properties" {
			v = ga4UserProperties(v)
		}
		putVendorColumn(props, "ga4_", k, v)
	}
	if len(props) > 0 {
		ev.Properties = props
	}
	return ev, nil
}

// ga4Param reads one entry of event_params, {"key": …, "value":
// {"string_value": …, "int_value": …, "float_value": …, "double_value":
// …}}: its key, and the one value set (nil when none is). An entry of
// another shape is reported false and left out.
func ga4Param(p any) (string, any, bool) {
	m, ok := p.(map[string]any)
	if !ok {
		return "", nil, false
	}
	key, _ := m["key"].(string)
	if key == "" {
		return "", nil, false
	}
	val, _ := m["value"].(map[string]any)
	return key, ga4Value(val), true
}

// ga4Value is the typed value of a parameter: text stays text, and an
// int_value written as a string (BigQuery writes INTEGER so in JSON) is
// a number again.
func ga4Value(val map[string]any) any {
	if s, ok := val["string_value"].(string); ok {
		return s
	}
	for _, k := range []string{"int_value", "double_value", "float_value"} {
		switch v := val[k].(type) {
		case nil:
			continue
		case string:
			if isVendorNumber(v) {
				return json.Number(v)
			}
			return v
		default:
			return v
		}
	}
	return nil
}

// ga4UserProperties turns the user_properties array ({key, value:
// {string_value, int_value, …, set_timestamp_micros}}) into an object
// of keys to values, as event_params are read; anything else is kept as
// it was.
func ga4UserProperties(v any) any {
	arr, ok := v.([]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(arr))
	for _, p := range arr {
		k, val, ok := ga4Param(p)
		if !ok {
			return v
		}
		out[k] = val
	}
	return out
}
