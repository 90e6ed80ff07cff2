package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// PostHog reads PostHog's event exports (docs/import.md, "PostHog"): JSON
// lines, one event object a line as the batch exports and the events API
// write them ({"uuid", "event", "distinct_id", "timestamp", "properties",
// …}), or CSV with a header as the activity view's export writes it, where
// the properties are one JSON column ("properties") or one column each
// ("properties.$current_url"). The format is told by the file's first
// byte: "{" is JSON lines.
type PostHog struct{}

var _ Source = PostHog{}

// Name is "posthog".
func (PostHog) Name() string { return "posthog" }

// posthogNames are PostHog's own event names that Strata has its own names
// for. $autocapture is mapped by its $event_type (posthogAutocapture);
// PostHog's other $ names ($pageleave, $screen, $web_vitals, …) are kept
// under plain names (strataEventName).
var posthogNames = map[string]string{
	"$pageview":  "$pageview",
	"$identify":  "$identify",
	"$exception": "$exception",
}

// posthogAutocapture names an $autocapture event by what was captured:
// a submit is Strata's $form_submit, anything else (click, change) $click.
func posthogAutocapture(props map[string]any) string {
	if t, _ := props["$event_type"].(string); t == "submit" {
		return "$form_submit"
	}
	return "$click"
}

// Read maps every record of a JSON-lines or CSV export.
func (p PostHog) Read(f io.ReaderAt, size int64, emit func(Event, error) error) error {
	head := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading the PostHog export: %w", err)
	}
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\ufeff")), " \t\r\n")
	if len(head) > 0 && head[0] == '{' {
		return readVendorLines(f, size, emit, func(line []byte, n int) (Event, *MappingError) {
			rec, merr := decodeVendorObject(line, n)
			if merr != nil {
				return Event{}, merr
			}
			return mapPostHog(rec, fmt.Sprintf("line %d", n))
		})
	}
	return readPostHogCSV(f, size, emit)
}

// readPostHogCSV maps a CSV export: each row becomes the record a JSON
// line would hold, its properties from the "properties" column (JSON) and
// the "properties.NAME" columns (text).
func readPostHogCSV(f io.ReaderAt, size int64, emit func(Event, error) error) error {
	var names []string
	header := func(h []string) error { names = h; return nil }
	return readVendorCSV(f, size, "PostHog", emit, header, func(row []string, line int) (Event, *MappingError) {
		return postHogRow(names, row, fmt.Sprintf("line %d", line))
	})
}

// postHogRow turns a CSV row into a record and maps it.
func postHogRow(names, row []string, where string) (Event, *MappingError) {
	rec := map[string]any{}
	props := map[string]any{}
	for i, v := range row {
		if i >= len(names) || v == "" {
			continue
		}
		switch name := names[i]; {
		case name == "properties":
			obj, merr := decodeVendorObject([]byte(v), 0)
			if merr != nil {
				return Event{}, vendorErr(vendorBadJSON, "%s: the properties column is not a JSON object", where)
			}
			for k, x := range obj {
				props[k] = x
			}
		case strings.HasPrefix(name, "properties."):
			props[strings.TrimPrefix(name, "properties.")] = v
		default:
			rec[name] = v
		}
	}
	rec["properties"] = props
	return mapPostHog(rec, where)
}

// mapPostHog maps one record.
func mapPostHog(rec map[string]any, where string) (Event, *MappingError) {
	rawName, _ := vendorString(rec["event"])
	if rawName == "" {
		return Event{}, vendorErr(vendorMissingEventName, "%s has no \"event\"", where)
	}
	props, _ := rec["properties"].(map[string]any)
	if props == nil {
		if v, present := rec["properties"]; present && v != nil {
			return Event{}, vendorErr(vendorBadJSON, "%s: \"properties\" is not an object", where)
		}
		props = map[string]any{}
	}
	name := posthogNames[rawName]
	switch {
	case name != "":
	case rawName == "$autocapture":
		name = posthogAutocapture(props)
	default:
		var ok bool
		if name, ok = strataEventName(rawName, nil); !ok {
			return Event{}, vendorErr(vendorMissingEventName, "%s: the event name %q has nothing but $", where, rawName)
		}
	}
	distinct, _ := vendorString(rec["distinct_id"])
	if distinct == "" {
		distinct, _ = vendorString(props["distinct_id"])
	}
	if distinct == "" {
		return Event{}, vendorErr(vendorMissingDistinctID, "%s (%s) has no distinct_id", where, rawName)
	}
	stamp, _ := vendorString(rec["timestamp"])
	ts, ok := parseVendorTime(stamp)
	if !ok {
		return Event{}, vendorErr(vendorBadTimestamp, "%s (%s): \"timestamp\" is %q, not a date and time", where, rawName, stamp)
	}
	ev := Event{Name: name, DistinctID: distinct, Timestamp: ts}
	if id, ok := vendorString(rec["uuid"]); ok && id != "" {
		ev.SourceID = id
	} else {
		ev.SourceID = derivedSourceID(rawName, distinct, stamp, vendorCanonicalJSON(props))
	}
	if s, ok := props["$current_url"].(string); ok {
		ev.URL = s
		delete(props, "$current_url")
	}
	// "$direct" is PostHog's value for "no referrer".
	if s, ok := props["$referrer"].(string); ok {
		if s != "$direct" {
			ev.Referrer = s
		}
		delete(props, "$referrer")
	}
	if s, ok := props["$raw_user_agent"].(string); ok {
		ev.UserAgent = s
		delete(props, "$raw_user_agent")
	}
	// The client address PostHog may have kept is never stored
	// (docs/privacy.md).
	delete(props, "$ip")
	delete(props, "distinct_id")
	if rawName == "$autocapture" {
		props["posthog_event"] = rawName
	}
	// PostHog's person updates ride on the event; they stay properties
	// until person profiles read them.
	for _, k := range []string{"$set", "$set_once"} {
		if v, ok := rec[k]; ok && v != nil && v != "" {
			putVendorColumn(props, "posthog_", k, v)
		}
	}
	if len(props) > 0 {
		ev.Properties = props
	}
	return ev, nil
}
