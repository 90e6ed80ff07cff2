package importer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// ga4Param builds one entry of event_params or user_properties.
func ga4P(key, typ string, v any) map[string]any {
	val := map[string]any{"string_value": nil, "int_value": nil, "float_value": nil, "double_value": nil}
	val[typ] = v
	return map[string]any{"key": key, "value": val}
}

// ga4Row is one row of events_YYYYMMDD with every column of the BigQuery
// export schema, as a web stream fills them for a page view and as
// BigQuery writes JSON (INTEGER columns as strings); over replaces or
// (with nil) removes columns.
func ga4Row(over map[string]any) map[string]any {
	r := map[string]any{
		"event_date": "20260102", "event_timestamp": "1767323045678901", "event_name": "page_view",
		"event_params": []any{
			ga4P("page_location", "string_value", "https://shop.example.com/p/1?utm_source=news"),
			ga4P("page_referrer", "string_value", "https://www.google.com/"),
			ga4P("ga_session_id", "int_value", "1767323000"),
			ga4P("ga_session_number", "int_value", "3"),
			ga4P("engagement_time_msec", "int_value", 1520),
			ga4P("page_title", "string_value", "Café ☕ – Angebote"),
			ga4P("value", "double_value", 19.5),
			ga4P("ratio", "float_value", "0.25"),
			ga4P("empty", "string_value", nil),
		},
		"event_previous_timestamp": nil, "event_value_in_usd": nil, "event_bundle_sequence_id": "7",
		"event_server_timestamp_offset": "1234", "user_id": nil, "user_pseudo_id": "1197596843.1767322000",
		"privacy_info": map[string]any{"analytics_storage": "Yes", "ads_storage": "No", "uses_transient_token": "No"},
		"user_properties": []any{map[string]any{"key": "plan", "value": map[string]any{
			"string_value": "pro", "int_value": nil, "float_value": nil, "double_value": nil, "set_timestamp_micros": "1767322000000000"}}},
		"user_first_touch_timestamp": "1767322000000000", "user_ltv": map[string]any{"revenue": 12.5, "currency": "EUR"},
		"device": map[string]any{"category": "desktop", "mobile_brand_name": "Apple", "mobile_model_name": "Safari",
			"operating_system": "Macintosh", "operating_system_version": "Macintosh Intel 10.15", "language": "de-ch",
			"is_limited_ad_tracking": "No", "time_zone_offset_seconds": nil,
			"web_info": map[string]any{"browser": "Safari", "browser_version": "17.2", "hostname": "shop.example.com"}},
		"geo": map[string]any{"continent": "Europe", "sub_continent": "Western Europe", "country": "Switzerland",
			"region": "Zurich", "city": "Zürich", "metro": "(not set)"},
		"app_info": nil, "traffic_source": map[string]any{"name": "winter", "medium": "email", "source": "news"},
		"stream_id": "4178203315", "platform": "WEB", "event_dimensions": nil, "ecommerce": nil, "items": []any{},
		"collected_traffic_source": map[string]any{"manual_source": "news", "manual_medium": "email", "gclid": nil},
		"is_active_user":           true, "batch_event_index": "0", "batch_page_id": "1767323040000", "batch_ordering_id": "2",
		"session_traffic_source_last_click": map[string]any{"manual_campaign": map[string]any{"source": "news"}},
		"publisher":                         nil,
	}
	return overrideFields(r, over)
}

func ga4Export(t *testing.T) (file string, want []Event) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)
	var b strings.Builder

	// The page view, every column. Its nested columns of text are
	// expected as the row has them.
	row := ga4Row(nil)
	b.WriteString(vendorJSONLine(t, row))
	want = append(want, Event{Name: "$pageview", DistinctID: "1197596843.1767322000", Timestamp: at,
		SourceID: derivedSourceID("1197596843.1767322000", "1767323045678901", "page_view", "7", "0"),
		URL:      "https://shop.example.com/p/1?utm_source=news", Referrer: "https://www.google.com/",
		Properties: map[string]any{
			"$session_id": "1767323000", "ga_session_number": json.Number("3"), "engagement_time_msec": json.Number("1520"),
			"page_title": "Café ☕ – Angebote", "value": json.Number("19.5"), "ratio": json.Number("0.25"), "empty": nil,
			"event_date": "20260102", "event_bundle_sequence_id": "7", "event_server_timestamp_offset": "1234",
			"privacy_info":               row["privacy_info"],
			"user_properties":            map[string]any{"plan": "pro"},
			"user_first_touch_timestamp": "1767322000000000", "user_ltv": map[string]any{"revenue": json.Number("12.5"), "currency": "EUR"},
			"device":         row["device"],
			"geo":            row["geo"],
			"traffic_source": row["traffic_source"],
			"stream_id":      "4178203315", "platform": "WEB", "items": []any{},
			"collected_traffic_source": row["collected_traffic_source"],
			"is_active_user":           true, "batch_event_index": "0", "batch_page_id": "1767323040000", "batch_ordering_id": "2",
			"session_traffic_source_last_click": row["session_traffic_source_last_click"],
		}})

	// A signed-in user (user_id kept as distinct id, the pseudo id as a
	// property), event_timestamp as a number, a parameter named like a
	// column, another event at the same microsecond in the batch.
	slim := func(name string, index int, params ...any) map[string]any {
		return map[string]any{"event_name": name, "event_timestamp": json.Number("1767323045678901"),
			"user_id": "user-1", "user_pseudo_id": "1197596843.1767322000", "event_bundle_sequence_id": "8",
			"batch_event_index": index, "event_params": params}
	}
	b.WriteString(vendorJSONLine(t, slim("form_submit", 1, ga4P("platform", "string_value", "checkout"), ga4P("form_id", "string_value", "f1"))))
	b.WriteString(vendorJSONLine(t, slim("purchase", 2, ga4P("transaction_id", "string_value", "T-1"), ga4P("value", "double_value", "12.50"))))
	for i, name := range []string{"$form_submit", "purchase"} {
		props := map[string]any{"user_pseudo_id": "1197596843.1767322000", "event_bundle_sequence_id": "8",
			"batch_event_index": json.Number([]string{"1", "2"}[i])}
		if i == 0 {
			props["platform"], props["form_id"] = "checkout", "f1"
		} else {
			props["transaction_id"], props["value"] = "T-1", json.Number("12.50")
		}
		raw := []string{"form_submit", "purchase"}[i]
		want = append(want, Event{Name: name, DistinctID: "user-1", Timestamp: at, Properties: props,
			SourceID: derivedSourceID("1197596843.1767322000", "1767323045678901", raw, "8", []string{"1", "2"}[i])})
	}

	// GA4's automatic events, skipped; rows that cannot be mapped.
	for _, name := range []string{"session_start", "first_visit", "user_engagement"} {
		b.WriteString(vendorJSONLine(t, ga4Row(map[string]any{"event_name": name})))
	}
	b.WriteString(vendorJSONLine(t, ga4Row(map[string]any{"user_pseudo_id": nil})))               // missing_distinct_id
	b.WriteString(vendorJSONLine(t, ga4Row(map[string]any{"event_name": nil})))                   // missing_event_name
	b.WriteString(vendorJSONLine(t, ga4Row(map[string]any{"event_timestamp": nil})))              // bad_timestamp
	b.WriteString(vendorJSONLine(t, ga4Row(map[string]any{"event_timestamp": "-5"})))             // bad_timestamp: before 1970
	b.WriteString(vendorJSONLine(t, ga4Row(map[string]any{"event_timestamp": "1767323045.678"}))) // bad_timestamp
	b.WriteString("{\"event_name\": \"page_view\", \n")                                           // bad_json
	return b.String(), want
}

func TestGA4Export(t *testing.T) {
	file, want := ga4Export(t)
	wantReasons := map[string]int{"skipped_automatic_event": 3, "missing_distinct_id": 1, "missing_event_name": 1,
		"bad_timestamp": 3, "bad_json": 1}
	evs, _ := checkVendorExport(t, GA4{}, []byte(file), want, wantReasons, "line ")
	if evs[1].SourceID == evs[2].SourceID {
		t.Error("two events of one batch at the same microsecond derived the same id")
	}

	// Reading the file again derives the same ids: importing it twice
	// stores each event once.
	again, _ := readVendor(t, GA4{}, []byte(file))
	for i := range again {
		if again[i].SourceID != evs[i].SourceID {
			t.Errorf("event %d: id %q, then %q", i, evs[i].SourceID, again[i].SourceID)
		}
	}

	// KeepAutomatic keeps them under their own names.
	evs, merrs := readVendor(t, GA4{KeepAutomatic: true}, []byte(file))
	if len(evs) != len(want)+3 || evs[3].Name != "session_start" || evs[5].Name != "user_engagement" ||
		vendorReasons(merrs)["skipped_automatic_event"] != 0 {
		t.Errorf("KeepAutomatic: %d events, vendorReasons %v", len(evs), vendorReasons(merrs))
	}

	if evs, merrs := readVendor(t, GA4{}, nil); len(evs)+len(merrs) != 0 {
		t.Errorf("an empty file gave %d events, %d errors", len(evs), len(merrs))
	}
}

func FuzzGA4Line(f *testing.F) {
	f.Add([]byte(vendorJSONLine(&testing.T{}, ga4Row(nil))))
	f.Add([]byte(`{"event_name":"x","event_timestamp":1,"user_id":1,"event_params":[{"key":"k","value":{"int_value":"1e400"}}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, merr := GA4{}.mapLine(line, 1)
		if merr != nil {
			checkVendorWellFormed(t, ev, merr)
			return
		}
		checkVendorWellFormed(t, ev, nil)
	})
}
