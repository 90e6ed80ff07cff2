package importer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// mixpanelExport writes a raw export as Mixpanel's GET /api/2.0/export
// returns it, with every property its web SDK and autocapture send and
// the odd cases of real exports; want holds the events it must map to,
// in order.
func mixpanelExport(t *testing.T) (file string, want []Event) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var b strings.Builder

	// A page view of autocapture, every property the JavaScript SDK
	// sends, UTM tags, nested and non-ASCII properties.
	b.WriteString(vendorJSONLine(t, map[string]any{"event": "$mp_web_page_view", "properties": map[string]any{
		"time": at.Unix(), "distinct_id": "user-1", "$insert_id": "ins-0001",
		"$current_url":      "https://shop.example.com/p/1?utm_source=news&utm_medium=email&utm_campaign=winter",
		"$referrer":         "https://www.google.com/",
		"$referring_domain": "www.google.com",
		"$browser":          "Chrome", "$browser_version": 120, "$os": "Mac OS X", "$device_id": "dev-1", "$user_id": "user-1",
		"$screen_height": 1080, "$screen_width": 1920, "mp_lib": "web", "$lib_version": "2.60.0",
		"utm_source": "news", "utm_medium": "email", "utm_campaign": "winter",
		"$mp_autocapture": true, "mp_processing_time_ms": 1767323046123,
		"cart":  map[string]any{"items": []any{map[string]any{"sku": "A1", "qty": 2}}, "total": 19.5},
		"città": "Zürich ☕",
	}}))
	want = append(want, Event{SourceID: "ins-0001", Name: "$pageview", DistinctID: "user-1", Timestamp: at,
		URL:      "https://shop.example.com/p/1?utm_source=news&utm_medium=email&utm_campaign=winter",
		Referrer: "https://www.google.com/",
		Properties: map[string]any{
			"$referring_domain": "www.google.com", "$browser": "Chrome", "$browser_version": json.Number("120"),
			"$os": "Mac OS X", "$device_id": "dev-1", "$user_id": "user-1",
			"$screen_height": json.Number("1080"), "$screen_width": json.Number("1920"), "mp_lib": "web", "$lib_version": "2.60.0",
			"utm_source": "news", "utm_medium": "email", "utm_campaign": "winter",
			"$mp_autocapture": true, "mp_processing_time_ms": json.Number("1767323046123"),
			"cart":  map[string]any{"items": []any{map[string]any{"sku": "A1", "qty": json.Number("2")}}, "total": json.Number("19.5")},
			"città": "Zürich ☕",
		}})

	// time in milliseconds (time_in_ms=true), a numeric distinct id of
	// an old SDK, no $insert_id: the id is derived.
	signup := map[string]any{"event": "Signed Up", "properties": map[string]any{
		"time": at.UnixMilli() + 678, "distinct_id": 12345, "plan": "pro"}}
	b.WriteString(vendorJSONLine(t, signup))
	want = append(want, Event{Name: "Signed Up", DistinctID: "12345", Timestamp: at.Add(678 * time.Millisecond),
		SourceID:   derivedSourceID("Signed Up", "12345", "1767323045678", `{"distinct_id":12345,"plan":"pro","time":1767323045678}`),
		Properties: map[string]any{"plan": "pro"}})

	// Autocapture's click and submit, identify, and names Strata
	// reserves: kept under plain names. Fractional seconds.
	for _, c := range []struct{ from, to string }{
		{"$mp_click", "$click"}, {"$mp_submit", "$form_submit"}, {"$identify", "$identify"},
		{"$mp_scroll", "mp_scroll"}, {"message_sent", "imported_message_sent"},
	} {
		props := map[string]any{"time": json.Number("1767323045.25"), "distinct_id": "user-1", "$insert_id": c.from}
		wantProps := map[string]any(nil)
		if c.from == "$identify" {
			props["$anon_distinct_id"] = "dev-1"
			wantProps = map[string]any{"$anon_distinct_id": "dev-1"}
		}
		b.WriteString(vendorJSONLine(t, map[string]any{"event": c.from, "properties": props}))
		want = append(want, Event{SourceID: c.from, Name: c.to, DistinctID: "user-1", Timestamp: at.Add(250 * time.Millisecond), Properties: wantProps})
	}

	// No distinct_id, only $device_id (simplified identity merge);
	// "$direct" as the referrer; a line ending \r\n; a blank line.
	b.WriteString(`{"event":"Viewed Pricing","properties":{"time":1767323045,"$device_id":"dev-2","$insert_id":"ins-2","$referrer":"$direct"}}` + "\r\n\n")
	want = append(want, Event{SourceID: "ins-2", Name: "Viewed Pricing", DistinctID: "dev-2", Timestamp: at,
		Properties: map[string]any{"$referrer": "$direct"}})

	// Records that cannot be mapped, one per reason.
	b.WriteString(`{"event":"No User","properties":{"time":1767323045}}` + "\n")                                  // missing_distinct_id
	b.WriteString(`{"properties":{"time":1767323045,"distinct_id":"u"}}` + "\n")                                  // missing_event_name
	b.WriteString(`{"event":"$$","properties":{"time":1767323045,"distinct_id":"u"}}` + "\n")                     // missing_event_name
	b.WriteString(`{"event":"Bad Time","properties":{"time":"yesterday","distinct_id":"u"}}` + "\n")              // bad_timestamp
	b.WriteString(`{"event":"Before 1970","properties":{"time":-5,"distinct_id":"u"}}` + "\n")                    // bad_timestamp
	b.WriteString(`{"event":"No Time","properties":{"distinct_id":"u"}}` + "\n")                                  // bad_timestamp
	b.WriteString(`{"event":"Cut short","properties":{"time":17673` + "\n")                                       // bad_json
	b.WriteString(`[{"event":"x"}]` + "\n")                                                                       // bad_json
	b.WriteString(`{"event":"Two"} {"event":"values"}` + "\n")                                                    // bad_json
	b.WriteString(`{"event":"Bad Props","properties":"none"}` + "\n")                                             // bad_json
	b.WriteString("{\"event\":\"Latin-1 caf\xe9\",\"properties\":{\"time\":1767323045,\"distinct_id\":\"u\"}}\n") // invalid_utf8

	// The last line without a line end.
	b.WriteString(`{"event":"Last","properties":{"time":1767323045,"distinct_id":"u","$insert_id":"last"}}`)
	want = append(want, Event{SourceID: "last", Name: "Last", DistinctID: "u", Timestamp: at})
	return b.String(), want
}

func TestMixpanelExport(t *testing.T) {
	file, want := mixpanelExport(t)
	wantReasons := map[string]int{"missing_distinct_id": 1, "missing_event_name": 2, "bad_timestamp": 3, "bad_json": 4, "invalid_utf8": 1}
	evs, _ := checkVendorExport(t, Mixpanel{}, []byte(file), want, wantReasons, "line ")

	// The derived id does not depend on the order of the keys.
	again := `{"properties":{"plan":"pro","time":1767323045678,"distinct_id":12345},"event":"Signed Up"}`
	evs2, _ := readVendor(t, Mixpanel{}, []byte(again))
	if len(evs2) != 1 || evs2[0].SourceID != evs[1].SourceID {
		t.Errorf("the same record with its keys reordered derived %v, want %q", evs2, evs[1].SourceID)
	}
}

// A project created before 2023 exports its wall-clock time: read in
// the project's zone, 03:04:05 in Los Angeles in January is 11:04:05
// UTC.
func TestMixpanelProjectZone(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	line := `{"event":"e","properties":{"time":1767323045,"distinct_id":"u","$insert_id":"i"}}`
	evs, _ := readVendor(t, Mixpanel{ProjectZone: la}, []byte(line))
	want := time.Date(2026, 1, 2, 11, 4, 5, 0, time.UTC)
	if len(evs) != 1 || !evs[0].Timestamp.Equal(want) || evs[0].Timestamp.Location() != time.UTC {
		t.Fatalf("got %v, want %v", evs, want)
	}
}

func TestMixpanelEmptyAndLongLines(t *testing.T) {
	if evs, merrs := readVendor(t, Mixpanel{}, nil); len(evs)+len(merrs) != 0 {
		t.Errorf("an empty file gave %v %v", evs, merrs)
	}
	long := `{"event":"big","properties":{"time":1767323045,"distinct_id":"u","blob":"` + strings.Repeat("x", maxVendorLine) + "\"}}\n"
	next := `{"event":"after","properties":{"time":1767323045,"distinct_id":"u"}}` + "\n"
	evs, merrs := readVendor(t, Mixpanel{}, []byte(next+long+next))
	if len(evs) != 2 || evs[0].Name != "after" || evs[1].Name != "after" {
		t.Errorf("%d events around a long line, want the 2 after", len(evs))
	}
	if len(merrs) != 1 || merrs[0].Reason != "line_too_long" || !strings.Contains(merrs[0].Detail, "line 2") {
		t.Errorf("mapping errors %v, want one line_too_long on line 2", merrs)
	}
}

// Read stops at emit's first error and returns it.
func TestMixpanelStopsOnEmitError(t *testing.T) {
	file, _ := mixpanelExport(t)
	calls := 0
	stop := vendorTestErr("stop")
	err := Mixpanel{}.Read(strings.NewReader(file), int64(len(file)), func(Event, error) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 3 {
		t.Fatalf("Read returned %v after %d calls, want stop after 3", err, calls)
	}
}

type vendorTestErr string

func (e vendorTestErr) Error() string { return string(e) }

func FuzzMixpanelLine(f *testing.F) {
	file, _ := mixpanelExport(&testing.T{})
	for _, l := range strings.Split(file, "\n") {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, merr := Mixpanel{}.mapLine(line, 1)
		if merr != nil {
			checkVendorWellFormed(t, ev, merr)
			return
		}
		checkVendorWellFormed(t, ev, nil)
	})
}
