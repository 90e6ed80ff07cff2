package importer

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// amplitudeRecord is one event with every field of the Export API's
// response schema, as a browser SDK's page view fills them; over
// replaces or (with nil) removes fields.
func amplitudeRecord(over map[string]any) map[string]any {
	r := map[string]any{
		"server_received_time": "2026-01-02 03:04:06.100000", "app": 123456, "device_carrier": nil,
		"$schema": 12, "city": "Zürich", "user_id": "user-1", "uuid": "0b4e2a8c-6a7e-11f0-9a3b-0242ac120002",
		"event_time": "2026-01-02 03:04:05.678000", "platform": "Web", "os_version": "120",
		"amplitude_id": 987654321012, "processed_time": "2026-01-02 03:04:07.000000",
		"user_creation_time": "2025-12-01 10:00:00.000000", "version_name": nil, "ip_address": "203.0.113.7",
		"paying": nil, "dma": nil, "group_properties": map[string]any{}, "user_properties": map[string]any{
			"initial_referrer": "https://www.google.com/", "utm_source": "news", "plan": "pro"},
		"client_upload_time": "2026-01-02 03:04:06.000000", "$insert_id": "ins-1", "event_type": "[Amplitude] Page Viewed",
		"library": "amplitude-ts/2.11.0", "amplitude_attribution_ids": nil, "device_type": "Mac", "device_manufacturer": nil,
		"start_version": nil, "location_lng": nil, "server_upload_time": "2026-01-02 03:04:06.200000", "event_id": 42,
		"location_lat": nil, "os_name": "Chrome", "amplitude_event_type": nil, "device_brand": nil,
		"groups": map[string]any{"company": []any{"acme"}}, "event_properties": map[string]any{
			"[Amplitude] Page Location": "https://shop.example.com/p/1?utm_source=news",
			"[Amplitude] Page URL":      "https://shop.example.com/p/1",
			"[Amplitude] Page Path":     "/p/1", "[Amplitude] Page Domain": "shop.example.com",
			"[Amplitude] Page Title":             "Café ☕ – Angebote",
			"[Amplitude] Previous Page Location": "https://www.google.com/",
			"cart":                               map[string]any{"items": []any{"A1", "B2"}, "total": 19.5},
		},
		"data": map[string]any{"path": "/2/httpapi"}, "device_id": "dev-1", "language": "de-CH", "device_model": "Mac OS",
		"country": "Switzerland", "region": "Zurich", "is_attribution_event": false, "adid": nil,
		"session_id": 1767323000000, "device_family": "Mac", "sample_rate": nil, "idfa": nil,
		"client_event_time": "2026-01-02 03:04:05.600000",
	}
	return overrideFields(r, over)
}

// amplitudeWantColumns are the record's columns as amplitudeRecord's
// page view keeps them among the properties: every field but those that
// became the event's own (event_type, user_id, event_time, uuid,
// event_properties, session_id), ip_address, and the null ones.
func amplitudeWantColumns() map[string]any {
	return map[string]any{
		"server_received_time": "2026-01-02 03:04:06.100000", "app": json.Number("123456"), "$schema": json.Number("12"),
		"city": "Zürich", "platform": "Web", "os_version": "120", "amplitude_id": json.Number("987654321012"),
		"processed_time": "2026-01-02 03:04:07.000000", "user_creation_time": "2025-12-01 10:00:00.000000",
		"group_properties": map[string]any{}, "user_properties": map[string]any{
			"initial_referrer": "https://www.google.com/", "utm_source": "news", "plan": "pro"},
		"client_upload_time": "2026-01-02 03:04:06.000000", "$insert_id": "ins-1", "library": "amplitude-ts/2.11.0",
		"device_type": "Mac", "server_upload_time": "2026-01-02 03:04:06.200000", "event_id": json.Number("42"),
		"os_name": "Chrome", "groups": map[string]any{"company": []any{"acme"}}, "data": map[string]any{"path": "/2/httpapi"},
		"device_id": "dev-1", "language": "de-CH", "device_model": "Mac OS", "country": "Switzerland", "region": "Zurich",
		"is_attribution_event": false, "device_family": "Mac", "client_event_time": "2026-01-02 03:04:05.600000",
	}
}

// amplitudeGzip gzips records as JSON lines.
func amplitudeGzip(t *testing.T, lines ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	for _, l := range lines {
		if _, err := gz.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type amplitudeMember struct {
	name string
	data []byte
}

// amplitudeZip writes members into a zip as the Export API does
// (<project>/<project>_<date>_<hour>#<part>.json.gz).
func amplitudeZip(t *testing.T, members ...amplitudeMember) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		if strings.HasSuffix(m.name, "/") {
			if _, err := zw.Create(m.name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// amplitudeExport writes an archive of three hourly members (one of
// them corrupt) and a directory entry; want holds the events it must
// map to, in order.
func amplitudeExport(t *testing.T) (archive []byte, want []Event) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC)

	var hour3 []string
	// The page view, every field.
	hour3 = append(hour3, vendorJSONLine(t, amplitudeRecord(nil)))
	props := amplitudeWantColumns()
	props["[Amplitude] Page URL"] = "https://shop.example.com/p/1"
	props["[Amplitude] Page Path"] = "/p/1"
	props["[Amplitude] Page Domain"] = "shop.example.com"
	props["[Amplitude] Page Title"] = "Café ☕ – Angebote"
	props["cart"] = map[string]any{"items": []any{"A1", "B2"}, "total": json.Number("19.5")}
	props["$session_id"] = "1767323000000"
	want = append(want, Event{SourceID: "0b4e2a8c-6a7e-11f0-9a3b-0242ac120002", Name: "$pageview", DistinctID: "user-1",
		Timestamp: at, URL: "https://shop.example.com/p/1?utm_source=news", Referrer: "https://www.google.com/", Properties: props})

	// An anonymous user (user_id null): the device id; an event of a
	// server outside any session (session_id -1); an offset of +02:00;
	// no uuid: $insert_id; a property named like a column.
	hour3 = append(hour3, vendorJSONLine(t, map[string]any{
		"event_type": "Añadir al carrito", "user_id": nil, "device_id": "dev-2", "session_id": -1,
		"event_time": "2026-01-02 05:04:05.678+02:00", "$insert_id": "ins-2",
		"event_properties": map[string]any{"country": "ES", "sku": "A1"}, "country": "Spain",
	}))
	want = append(want, Event{SourceID: "ins-2", Name: "Añadir al carrito", DistinctID: "dev-2", Timestamp: at,
		Properties: map[string]any{"country": "ES", "sku": "A1", "amplitude_country": "Spain"}})

	// Neither uuid nor insert id: derived. Element Clicked is $click,
	// a $ name of Amplitude's ($identify) a plain one.
	hour3 = append(hour3, vendorJSONLine(t, map[string]any{
		"event_type": "[Amplitude] Element Clicked", "user_id": "user-1", "device_id": "dev-1",
		"event_time": "2026-01-02T03:04:05.678Z", "session_id": 1767323000000, "event_id": 43,
	}))
	want = append(want, Event{Name: "$click", DistinctID: "user-1", Timestamp: at,
		SourceID:   derivedSourceID(`"dev-1"`, `"user-1"`, "2026-01-02T03:04:05.678Z", "[Amplitude] Element Clicked", "1767323000000", "43"),
		Properties: map[string]any{"device_id": "dev-1", "event_id": json.Number("43"), "$session_id": "1767323000000"}})
	hour3 = append(hour3, vendorJSONLine(t, map[string]any{
		"event_type": "$identify", "user_id": "user-1", "uuid": "u-identify", "event_time": "2026-01-02 03:04:05.678",
		"user_properties": map[string]any{"$set": map[string]any{"plan": "pro"}},
	}))
	want = append(want, Event{SourceID: "u-identify", Name: "identify", DistinctID: "user-1", Timestamp: at,
		Properties: map[string]any{"user_properties": map[string]any{"$set": map[string]any{"plan": "pro"}}}})

	// Records that cannot be mapped.
	hour3 = append(hour3,
		vendorJSONLine(t, map[string]any{"event_type": "session_start", "user_id": "u", "event_time": "2026-01-02 03:04:05"}), // skipped_automatic_event
		vendorJSONLine(t, map[string]any{"event_type": "x", "event_time": "2026-01-02 03:04:05"}),                             // missing_distinct_id
		vendorJSONLine(t, map[string]any{"user_id": "u", "event_time": "2026-01-02 03:04:05"}),                                // missing_event_name
		vendorJSONLine(t, map[string]any{"event_type": "x", "user_id": "u", "event_time": "02/01/2026"}),                      // bad_timestamp
		"{\"event_type\": \"cut\n", // bad_json
	)

	// The next hour: a corrupt member (a gzip header, then garbage), an
	// empty member, and a good one after them.
	corrupt := amplitudeGzip(t, vendorJSONLine(t, amplitudeRecord(map[string]any{"uuid": "lost"})))
	corrupt = append(corrupt[:20:20], bytes.Repeat([]byte{0xff}, 40)...)
	hour5 := vendorJSONLine(t, map[string]any{"event_type": "Checkout", "device_id": "dev-3", "uuid": "u-5",
		"event_time": "2026-01-02 03:04:05.678", "event_properties": map[string]any{"total": 12.5}})
	want = append(want, Event{SourceID: "u-5", Name: "Checkout", DistinctID: "dev-3", Timestamp: at,
		Properties: map[string]any{"total": json.Number("12.5")}})

	archive = amplitudeZip(t,
		amplitudeMember{name: "123456/"},
		amplitudeMember{name: "123456/123456_2026-01-02_3#0.json.gz", data: amplitudeGzip(t, hour3...)},
		amplitudeMember{name: "123456/123456_2026-01-02_4#0.json.gz", data: corrupt},
		amplitudeMember{name: "123456/123456_2026-01-02_4#1.json.gz", data: amplitudeGzip(t)},
		amplitudeMember{name: "123456/123456_2026-01-02_5#0.json.gz", data: amplitudeGzip(t, hour5)},
	)
	return archive, want
}

func TestAmplitudeExport(t *testing.T) {
	archive, want := amplitudeExport(t)
	wantReasons := map[string]int{"skipped_automatic_event": 1, "missing_distinct_id": 1, "missing_event_name": 1,
		"bad_timestamp": 1, "bad_json": 1, "corrupt_member": 1}
	evs, merrs := checkVendorExport(t, Amplitude{}, archive, want, wantReasons, "123456/123456_2026-01-02_")
	for _, ev := range evs {
		if _, ok := ev.Properties["ip_address"]; ok {
			t.Errorf("%s kept the client's address", ev.Name)
		}
	}

	// KeepAutomatic keeps session_start under its name.
	evs, merrs = readVendor(t, Amplitude{KeepAutomatic: true}, archive)
	if len(evs) != len(want)+1 || evs[4].Name != "session_start" || vendorReasons(merrs)["skipped_automatic_event"] != 0 {
		t.Errorf("KeepAutomatic: %d events (the fifth %q), vendorReasons %v", len(evs), evs[4].Name, vendorReasons(merrs))
	}
}

// Only an archive that cannot be read stops Read, with an error.
func TestAmplitudeUnreadableArchive(t *testing.T) {
	for name, data := range map[string][]byte{
		"not a zip": []byte("{\"event_type\":\"x\"}\n"),
		"empty":     nil,
		"truncated": func() []byte { a, _ := amplitudeExport(t); return a[:len(a)-30] }(),
	} {
		if _, _, err := readVendorErr(Amplitude{}, data); err == nil || !strings.Contains(err.Error(), "Amplitude export archive") {
			t.Errorf("%s: Read returned %v, want an error naming the archive", name, err)
		}
	}
	// An archive without members is no error and no event.
	evs, merrs := readVendor(t, Amplitude{}, amplitudeZip(t))
	if len(evs)+len(merrs) != 0 {
		t.Errorf("an empty archive gave %d events, %d errors", len(evs), len(merrs))
	}
}

func FuzzAmplitudeLine(f *testing.F) {
	f.Add([]byte(vendorJSONLine(&testing.T{}, amplitudeRecord(nil))))
	f.Add([]byte(`{"event_type":"$identify","device_id":"d","event_time":"2026-01-02 03:04:05+01:00","session_id":"-1"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, merr := Amplitude{}.mapLine(line, "m", 1)
		if merr != nil {
			checkVendorWellFormed(t, ev, merr)
			return
		}
		checkVendorWellFormed(t, ev, nil)
	})
}
