package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// readVendor runs src over data as the importer does and returns the events
// and the mapping errors in file order, failing the test on any other
// error.
func readVendor(t *testing.T, src Source, data []byte) ([]Event, []*MappingError) {
	t.Helper()
	evs, merrs, err := readVendorErr(src, data)
	if err != nil {
		t.Fatalf("%s: Read: %v", src.Name(), err)
	}
	return evs, merrs
}

func readVendorErr(src Source, data []byte) ([]Event, []*MappingError, error) {
	var evs []Event
	var merrs []*MappingError
	err := src.Read(bytes.NewReader(data), int64(len(data)), func(ev Event, err error) error {
		if err != nil {
			var merr *MappingError
			if !errors.As(err, &merr) {
				return err
			}
			merrs = append(merrs, merr)
			return nil
		}
		evs = append(evs, ev)
		return nil
	})
	return evs, merrs, err
}

// vendorReasons counts mapping errors by reason.
func vendorReasons(merrs []*MappingError) map[string]int {
	out := map[string]int{}
	for _, m := range merrs {
		out[m.Reason]++
	}
	return out
}

// vendorJSONLine encodes one record as a line of JSON.
func vendorJSONLine(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// checkVendorExport reads data with src and checks the events against want,
// field by field and in order, the mapping errors' counts by reason
// against wantReasons, and that every error's detail contains where (the
// line, or the member).
func checkVendorExport(t *testing.T, src Source, data []byte, want []Event, wantReasons map[string]int, where string) ([]Event, []*MappingError) {
	t.Helper()
	evs, merrs := readVendor(t, src, data)
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d (errors %v)", len(evs), len(want), vendorReasons(merrs))
	}
	for i := range want {
		checkVendorEvent(t, want[i].Name, evs[i], want[i])
	}
	got := vendorReasons(merrs)
	if len(got) != len(wantReasons) {
		t.Errorf("reasons %v, want %v", got, wantReasons)
	}
	for r, n := range wantReasons {
		if got[r] != n {
			t.Errorf("%d %s, want %d (all: %v)", got[r], r, n, got)
		}
	}
	for _, m := range merrs {
		if !strings.Contains(m.Detail, where) {
			t.Errorf("detail %q does not say where (%q)", m.Detail, where)
		}
	}
	return evs, merrs
}

// overrideFields sets the fields of over in r, and removes those over maps to
// nil.
func overrideFields(r, over map[string]any) map[string]any {
	for k, v := range over {
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
	}
	return r
}

// checkVendorEvent compares an event with the expected one field by field, so
// that a failure names the field.
func checkVendorEvent(t *testing.T, label string, got, want Event) {
	t.Helper()
	if got.SourceID != want.SourceID {
		t.Errorf("%s: SourceID = %q, want %q", label, got.SourceID, want.SourceID)
	}
	if got.Name != want.Name {
		t.Errorf("%s: Name = %q, want %q", label, got.Name, want.Name)
	}
	if got.DistinctID != want.DistinctID {
		t.Errorf("%s: DistinctID = %q, want %q", label, got.DistinctID, want.DistinctID)
	}
	if !got.Timestamp.Equal(want.Timestamp) || got.Timestamp.Location() != time.UTC {
		t.Errorf("%s: Timestamp = %v, want %v (UTC)", label, got.Timestamp, want.Timestamp)
	}
	if got.UserAgent != want.UserAgent {
		t.Errorf("%s: UserAgent = %q, want %q", label, got.UserAgent, want.UserAgent)
	}
	if got.URL != want.URL {
		t.Errorf("%s: URL = %q, want %q", label, got.URL, want.URL)
	}
	if got.Referrer != want.Referrer {
		t.Errorf("%s: Referrer = %q, want %q", label, got.Referrer, want.Referrer)
	}
	for k, w := range want.Properties {
		g, ok := got.Properties[k]
		if !ok {
			t.Errorf("%s: property %q missing", label, k)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: property %q = %#v, want %#v", label, k, g, w)
		}
	}
	for k, g := range got.Properties {
		if _, ok := want.Properties[k]; !ok {
			t.Errorf("%s: unexpected property %q = %#v", label, k, g)
		}
	}
	if (got.Properties == nil) != (want.Properties == nil) {
		t.Errorf("%s: Properties nil = %v, want %v", label, got.Properties == nil, want.Properties == nil)
	}
}

// checkVendorWellFormed is what every mapped event must satisfy, whatever the
// input: the fuzz tests hold every source to it.
func checkVendorWellFormed(t *testing.T, ev Event, err error) {
	t.Helper()
	if err != nil {
		var merr *MappingError
		if !errors.As(err, &merr) || merr.Reason == "" {
			t.Fatalf("error %v is not a MappingError with a reason", err)
		}
		return
	}
	if ev.Name == "" || ev.DistinctID == "" || ev.SourceID == "" || ev.Timestamp.IsZero() {
		t.Fatalf("incomplete event %+v", ev)
	}
	if ev.Name[0] == '$' && !map[string]bool{"$pageview": true, "$click": true, "$form_submit": true, "$identify": true}[ev.Name] {
		t.Fatalf("reserved name %q", ev.Name)
	}
	if _, err := json.Marshal(ev.Properties); err != nil {
		t.Fatalf("properties do not encode: %v", err)
	}
}

func TestStrataEventName(t *testing.T) {
	table := map[string]string{"$mp_click": "$click"}
	for in, want := range map[string]string{
		"$mp_click":       "$click",
		"$mp_scroll":      "mp_scroll",
		"$$double":        "double",
		"message_sent":    "imported_message_sent",
		"$message_x":      "imported_message_x",
		"Signed Up":       "Signed Up",
		"Añadir al carro": "Añadir al carro",
	} {
		if got, ok := strataEventName(in, table); !ok || got != want {
			t.Errorf("strataEventName(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := strataEventName("$$", table); ok {
		t.Error(`strataEventName("$$") kept a name`)
	}
}

func TestParseVendorTime(t *testing.T) {
	want := time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC)
	for _, s := range []string{
		"2026-01-02 03:04:05.678000",
		"2026-01-02 03:04:05.678+00",
		"2026-01-02 05:04:05.678+02",
		"2026-01-02 08:34:05.678+05:30",
		"2026-01-01 22:04:05.678-05:00",
		"2026-01-02T03:04:05.678Z",
		"2026-01-02T04:04:05.678+0100",
		" 2026-01-02T03:04:05.678 ",
	} {
		got, ok := parseVendorTime(s)
		if !ok || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("parseVendorTime(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "yesterday", "2026-13-02 03:04:05", "1969-12-31 23:59:59", "02/01/2026 03:04"} {
		if got, ok := parseVendorTime(s); ok {
			t.Errorf("parseVendorTime(%q) = %v, want refused", s, got)
		}
	}
}

// A lone surrogate escape would be decoded to U+FFFD, altering the
// data: the record is refused as invalid_utf8, as ingest refuses it.
// Whole pairs (emoji written as escapes) are the character.
func TestDecodeVendorObjectSurrogates(t *testing.T) {
	for line, want := range map[string]string{
		`{"k":"\ud83d\ude00"}`:       "😀",
		`{"k":"\\ud800"}`:            `\ud800`,
		`{"k":"a\\\ud83d\ude00"}`:    `a\😀`,
		`{"k":"\u00e9\uD83D\uDE00"}`: "é😀",
	} {
		obj, merr := decodeVendorObject([]byte(line), 1)
		if merr != nil || obj["k"] != want {
			t.Errorf("%s: got %q, %v; want %q", line, obj["k"], merr, want)
		}
	}
	for _, line := range []string{`{"k":"\ud800"}`, `{"k":"\udc00\ud800"}`, `{"k":"x\uDBFF"}`, `{"k":"\ud800\u0041"}`, `{"\udfff":1}`} {
		if _, merr := decodeVendorObject([]byte(line), 7); merr == nil || merr.Reason != "invalid_utf8" || !strings.Contains(merr.Detail, "line 7") {
			t.Errorf("%s: %v, want invalid_utf8 on line 7", line, merr)
		}
	}
	for _, line := range []string{`{"k":"a` + "\x01" + `"}`, `{"k":1,}`, `{"k":1}{}`, `"k"`, `{"k":1} x`} {
		if _, merr := decodeVendorObject([]byte(line), 1); merr == nil || merr.Reason != "bad_json" {
			t.Errorf("%q: %v, want bad_json", line, merr)
		}
	}
}
