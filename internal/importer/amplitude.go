package importer

import (
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
)

// Amplitude reads the archive of Amplitude's Export API (GET
// /api/2/export): a zip whose members are gzipped JSON lines, one event a
// line, each member an hour of one project. docs/import.md gives the
// mapping field by field and the vendor pages it follows.
type Amplitude struct {
	// KeepAutomatic keeps the session_start and session_end events the
	// SDKs send on their own, which are otherwise skipped (counted as
	// skipped_automatic_event): Strata computes visits itself, and in
	// its visit rules any event but $identify and $exposure makes a
	// visit not a bounce, so they would leave no bounces at all.
	KeepAutomatic bool
}

var _ Source = Amplitude{}

// Name is "amplitude".
func (Amplitude) Name() string { return "amplitude" }

// amplitudeNames are Amplitude's autocapture events that Strata has names
// for; Amplitude's other names are kept as they are.
var amplitudeNames = map[string]string{
	"[Amplitude] Page Viewed":     "$pageview",
	"[Amplitude] Element Clicked": "$click",
	"[Amplitude] Form Submitted":  "$form_submit",
}

// amplitudeAutomatic are the session events Amplitude's SDKs send by
// themselves (Amplitude.KeepAutomatic).
var amplitudeAutomatic = map[string]bool{
	"session_start": true, "session_end": true,
	"[Amplitude] Start Session": true, "[Amplitude] End Session": true,
}

// Amplitude's fields that become the event's own, or are left out.
const (
	amplitudePageLocation = "[Amplitude] Page Location" // the page's full URL (window.location.href)
	amplitudePageURL      = "[Amplitude] Page URL"      // the page's URL without its query
	amplitudePreviousPage = "[Amplitude] Previous Page Location"
)

// Read maps every line of every member of the archive, in the archive's
// order. Only an archive whose directory cannot be read stops it; a
// member that cannot be opened or unpacked is reported as
// corrupt_member (with the lines read before the fault mapped) and the
// next member is read.
func (a Amplitude) Read(f io.ReaderAt, size int64, emit func(Event, error) error) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return fmt.Errorf("reading the Amplitude export archive: %w", err)
	}
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() {
			continue
		}
		if err := a.readMember(zf, emit); err != nil {
			return err
		}
	}
	return nil
}

// readMember maps one member, streaming it: one gzip stream and one line
// in memory at a time.
func (a Amplitude) readMember(zf *zip.File, emit func(Event, error) error) error {
	var emitErr error
	sink := func(ev Event, err error) error {
		if e := emit(ev, err); e != nil {
			emitErr = e
			return e
		}
		return nil
	}
	rc, err := zf.Open()
	if err != nil {
		return emit(Event{}, vendorErr(vendorCorruptMember, "member %s: %v", zf.Name, err))
	}
	defer rc.Close()
	var r io.Reader = rc
	if strings.HasSuffix(strings.ToLower(zf.Name), ".gz") {
		gz, err := gzip.NewReader(rc)
		if err != nil {
			return emit(Event{}, vendorErr(vendorCorruptMember, "member %s: %v", zf.Name, err))
		}
		defer gz.Close()
		r = gz
	}
	lines := 0
	err = eachVendorLine(r, sink, func(line []byte, n int) error {
		lines = n
		ev, merr := a.mapLine(line, zf.Name, n)
		if merr != nil {
			return sink(Event{}, merr)
		}
		return sink(ev, nil)
	})
	if emitErr != nil {
		return emitErr
	}
	if err != nil {
		return emit(Event{}, vendorErr(vendorCorruptMember, "member %s, after line %d: %v", zf.Name, lines, err))
	}
	return nil
}

// mapLine maps one event of a member.
func (a Amplitude) mapLine(line []byte, member string, n int) (Event, *MappingError) {
	rec, merr := decodeVendorObject(line, n)
	if merr != nil {
		merr.Detail = member + ", " + merr.Detail
		return Event{}, merr
	}
	where := fmt.Sprintf("%s, line %d", member, n)
	rawName, _ := rec["event_type"].(string)
	if rawName == "" {
		return Event{}, vendorErr(vendorMissingEventName, "%s has no event_type", where)
	}
	if amplitudeAutomatic[rawName] && !a.KeepAutomatic {
		return Event{}, vendorErr(vendorSkippedAutomatic, "%s: %s", where, rawName)
	}
	name, ok := strataEventName(rawName, amplitudeNames)
	if !ok {
		return Event{}, vendorErr(vendorMissingEventName, "%s: the event_type %q has nothing but $", where, rawName)
	}

	// The distinct id: the user's id once known, else the device's.
	distinctKey := "user_id"
	distinct, ok := vendorString(rec["user_id"])
	if !ok {
		distinctKey = "device_id"
		if distinct, ok = vendorString(rec["device_id"]); !ok {
			return Event{}, vendorErr(vendorMissingDistinctID, "%s (%s) has neither user_id nor device_id", where, rawName)
		}
	}
	timeKey := "event_time"
	rawTime, _ := rec["event_time"].(string)
	if rawTime == "" {
		timeKey = "client_event_time"
		rawTime, _ = rec["client_event_time"].(string)
	}
	ts, ok := parseVendorTime(rawTime)
	if !ok {
		return Event{}, vendorErr(vendorBadTimestamp, "%s (%s): event_time %q is not a date and time", where, rawName, rawTime)
	}
	ev := Event{Name: name, DistinctID: distinct, Timestamp: ts}

	skip := map[string]bool{"event_type": true, distinctKey: true, timeKey: true, "event_properties": true,
		"session_id": true,
		// Strata never stores a client's address (docs/security.md).
		"ip_address": true,
	}
	// The source id: Amplitude's own uuid of the event, else the
	// sender's insert id, else one derived from what makes an event
	// unique on its device.
	for _, k := range []string{"uuid", "$insert_id", "insert_id"} {
		if s, ok := vendorString(rec[k]); ok {
			ev.SourceID = s
			skip[k] = true
			break
		}
	}
	if ev.SourceID == "" {
		ev.SourceID = derivedSourceID(vendorCanonicalJSON(rec["device_id"]), vendorCanonicalJSON(rec["user_id"]), rawTime,
			rawName, vendorCanonicalJSON(rec["session_id"]), vendorCanonicalJSON(rec["event_id"]))
	}

	props, _ := rec["event_properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		if v, present := rec["event_properties"]; present && v != nil {
			skip["event_properties"] = false // not an object: kept as a column
		}
	}
	for _, k := range []string{amplitudePageLocation, amplitudePageURL} {
		if s, ok := props[k].(string); ok && s != "" {
			ev.URL = s
			if k == amplitudePageLocation {
				delete(props, k) // the page URL without query stays: it is not the URL
			}
			break
		}
	}
	if s, ok := props[amplitudePreviousPage].(string); ok && s != "" {
		ev.Referrer = s
		delete(props, amplitudePreviousPage)
	}
	if s, ok := rec["user_agent"].(string); ok {
		ev.UserAgent = s
		skip["user_agent"] = true
	}
	// session_id is the session's start in milliseconds; -1 marks an
	// event outside any session (sent from a server).
	sid, sidOK := vendorString(rec["session_id"])
	if !sidOK && rec["session_id"] != nil {
		skip["session_id"] = false // not an id: kept as a column
	}
	for k, v := range rec {
		if !skip[k] {
			putVendorColumn(props, "amplitude_", k, v)
		}
	}
	if sidOK && sid != "-1" {
		props["$session_id"] = sid
	}
	if len(props) > 0 {
		ev.Properties = props
	}
	return ev, nil
}
