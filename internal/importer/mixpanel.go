package importer

import (
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"
)

// Mixpanel reads Mixpanel's raw event export (GET /api/2.0/export): JSON
// lines, one event a line, {"event": name, "properties": {"time": …,
// "distinct_id": …, "$insert_id": …, …}}. docs/import.md gives the
// mapping field by field and the vendor pages it follows.
type Mixpanel struct {
	// ProjectZone is the time zone of a Mixpanel project created before
	// 1 January 2023: its export writes "time" as seconds since the epoch
	// of the project's wall clock rather than of UTC, so the wall time
	// is read in this zone. Nil reads "time" as UTC, which is right for
	// every project created since.
	ProjectZone *time.Location
}

var _ Source = Mixpanel{}

// Name is "mixpanel".
func (Mixpanel) Name() string { return "mixpanel" }

// mixpanelNames are Mixpanel's own event names that Strata has its own
// names for (autocapture's page view, click and form submit, and the
// identify that binds an anonymous id to a user, which carries
// $anon_distinct_id as Strata's does). Mixpanel's other $ names are kept
// under plain names (strataEventName).
var mixpanelNames = map[string]string{
	"$mp_web_page_view": "$pageview",
	"$mp_click":         "$click",
	"$mp_submit":        "$form_submit",
	"$identify":         "$identify",
}

// mixpanelMillisFrom is where "time" stops being seconds and starts being
// milliseconds (an export with time_in_ms=true, an import file): 1e11
// seconds is the year 5138, while 1e11 ms is March 1973, before Mixpanel
// existed.
const mixpanelMillisFrom = 1e11

// Read maps every line of a raw export.
func (m Mixpanel) Read(f io.ReaderAt, size int64, emit func(Event, error) error) error {
	return readVendorLines(f, size, emit, m.mapLine)
}

// mapLine maps one line of the export.
func (m Mixpanel) mapLine(line []byte, n int) (Event, *MappingError) {
	rec, merr := decodeVendorObject(line, n)
	if merr != nil {
		return Event{}, merr
	}
	rawName, _ := rec["event"].(string)
	if rawName == "" {
		return Event{}, vendorErr(vendorMissingEventName, "line %d has no \"event\"", n)
	}
	name, ok := strataEventName(rawName, mixpanelNames)
	if !ok {
		return Event{}, vendorErr(vendorMissingEventName, "line %d: the event name %q has nothing but $", n, rawName)
	}
	props, _ := rec["properties"].(map[string]any)
	if props == nil {
		if _, present := rec["properties"]; present {
			return Event{}, vendorErr(vendorBadJSON, "line %d: \"properties\" is not an object", n)
		}
		props = map[string]any{}
	}

	// The distinct id; under Mixpanel's simplified identity merge an
	// event may carry only $user_id or $device_id.
	var distinct, distinctKey string
	for _, k := range []string{"distinct_id", "$user_id", "$device_id"} {
		if s, ok := vendorString(props[k]); ok {
			distinct, distinctKey = s, k
			break
		}
	}
	if distinct == "" {
		return Event{}, vendorErr(vendorMissingDistinctID, "line %d (%s) has no distinct_id, $user_id or $device_id", n, rawName)
	}
	ts, ok := m.time(props["time"])
	if !ok || !vendorTimeOK(ts) {
		return Event{}, vendorErr(vendorBadTimestamp, "line %d (%s): \"time\" is %s, not seconds or milliseconds since 1970", n, rawName, vendorCanonicalJSON(props["time"]))
	}

	ev := Event{Name: name, DistinctID: distinct, Timestamp: ts}
	if id, ok := vendorString(props["$insert_id"]); ok {
		ev.SourceID = id
		delete(props, "$insert_id")
	} else {
		// Without $insert_id, the fields Mixpanel itself deduplicates
		// on (event, distinct_id, time) and the rest of the record.
		ev.SourceID = derivedSourceID(rawName, distinct, vendorCanonicalJSON(props["time"]), vendorCanonicalJSON(props))
	}
	if s, ok := props["$current_url"].(string); ok {
		ev.URL = s
		delete(props, "$current_url")
	}
	// "$direct" is Mixpanel's value for "no referrer"; it stays a
	// property, as Mixpanel shows it.
	if s, ok := props["$referrer"].(string); ok && s != "$direct" {
		ev.Referrer = s
		delete(props, "$referrer")
	}
	delete(props, "time")
	delete(props, distinctKey)
	if len(props) > 0 {
		ev.Properties = props
	}
	return ev, nil
}

// time reads "time": whole or fractional seconds, or milliseconds from
// mixpanelMillisFrom on, in UTC or the project's zone.
func (m Mixpanel) time(v any) (time.Time, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	var t time.Time
	if i, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		if i >= mixpanelMillisFrom || i <= -mixpanelMillisFrom {
			t = time.UnixMilli(i)
		} else {
			t = time.Unix(i, 0)
		}
	} else {
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) >= 1e15 {
			return time.Time{}, false
		}
		if math.Abs(f) >= mixpanelMillisFrom {
			f /= 1000
		}
		sec, frac := math.Modf(f)
		t = time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3)
	}
	t = t.UTC()
	if m.ProjectZone != nil {
		t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), m.ProjectZone).UTC()
	}
	return t, true
}
