package importer

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// postHogRecords are records as PostHog's batch export writes them, one of
// each shape the mapping treats differently, with the events they must
// become. Odd cases: a non-UTC offset, a timestamp without one, nested and
// non-ASCII properties, $direct, an $autocapture submit, a PostHog-only $
// name, $set, no uuid, the client address PostHog kept.
func postHogRecords() (recs []map[string]any, want []Event) {
	at := func(s string) time.Time { t, _ := time.Parse(time.RFC3339Nano, s); return t.UTC() }
	recs = []map[string]any{
		{"uuid": "0191f0c4-0000-7000-8000-000000000001", "event": "$pageview", "distinct_id": "anon-1", "team_id": 2,
			"timestamp": "2026-03-29T01:30:00.123456+02:00", "created_at": "2026-03-29T01:30:01Z", "elements_chain": "",
			"properties": map[string]any{"$current_url": "https://ex.com/pricing?utm_source=news", "$referrer": "$direct",
				"$browser": "Firefox", "$session_id": "s-1", "$ip": "203.0.113.9", "plan": map[string]any{"tier": "pro", "seats": 3}}},
		{"uuid": "0191f0c4-0000-7000-8000-000000000002", "event": "$autocapture", "distinct_id": "anon-1",
			"timestamp":  "2026-03-29 00:31:00",
			"properties": map[string]any{"$event_type": "submit", "$current_url": "https://ex.com/signup", "$referrer": "https://ex.com/pricing"}},
		{"uuid": "0191f0c4-0000-7000-8000-000000000003", "event": "$pageleave", "distinct_id": "Zoë 東京",
			"timestamp": "2026-03-29T00:32:00Z", "properties": map[string]any{"$raw_user_agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0"}},
		{"event": "signed up", "distinct_id": "user@ex.com", "timestamp": "2026-03-29T00:33:00-05:00",
			"properties": map[string]any{"$set": map[string]any{"email": "user@ex.com"}}},
	}
	want = []Event{
		{SourceID: "0191f0c4-0000-7000-8000-000000000001", Name: "$pageview", DistinctID: "anon-1", Timestamp: at("2026-03-28T23:30:00.123456Z"),
			URL:        "https://ex.com/pricing?utm_source=news",
			Properties: map[string]any{"$browser": "Firefox", "$session_id": "s-1", "plan": map[string]any{"tier": "pro", "seats": json.Number("3")}}},
		{SourceID: "0191f0c4-0000-7000-8000-000000000002", Name: "$form_submit", DistinctID: "anon-1", Timestamp: at("2026-03-29T00:31:00Z"),
			URL: "https://ex.com/signup", Referrer: "https://ex.com/pricing",
			Properties: map[string]any{"$event_type": "submit", "posthog_event": "$autocapture"}},
		{SourceID: "0191f0c4-0000-7000-8000-000000000003", Name: "pageleave", DistinctID: "Zoë 東京", Timestamp: at("2026-03-29T00:32:00Z"),
			UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0"},
		{Name: "signed up", DistinctID: "user@ex.com", Timestamp: at("2026-03-29T05:33:00Z"),
			Properties: map[string]any{"$set": map[string]any{"email": "user@ex.com"}}},
	}
	return recs, want
}

func TestPostHogJSONLines(t *testing.T) {
	recs, want := postHogRecords()
	var b strings.Builder
	b.WriteString("\ufeff")
	for _, r := range recs {
		b.WriteString(vendorJSONLine(t, r))
	}
	b.WriteString("\n")                                                         // a blank line is no record
	b.WriteString(`{"event": "x", "timestamp": "2026-03-29T00:00:00Z"}` + "\n") // no user
	b.WriteString(`{"event": "$pageview", "distinct_id": "a", "timestamp": "yesterday"}` + "\n")
	b.WriteString(`{"distinct_id": "a", "timestamp": "2026-03-29T00:00:00Z"}` + "\n")
	b.WriteString(`{"event": "y", "distinct_id": "a", "timestamp": "2026-03-29T00:00:00Z", "properties": [1]}` + "\n")
	b.WriteString("{not json\n")
	evs, _ := readVendor(t, PostHog{}, []byte(b.String()))
	// The record without a uuid derives one; it is the same on every read.
	if len(evs) == len(want) {
		want[3].SourceID = evs[3].SourceID
		if len(want[3].SourceID) != 32 {
			t.Errorf("derived source id %q", want[3].SourceID)
		}
		again, _ := readVendor(t, PostHog{}, []byte(b.String()))
		if again[3].SourceID != evs[3].SourceID {
			t.Error("the derived source id differs between two reads")
		}
	}
	checkVendorExport(t, PostHog{}, []byte(b.String()), want, map[string]int{
		vendorMissingDistinctID: 1, vendorBadTimestamp: 1, vendorMissingEventName: 1, vendorBadJSON: 2,
	}, "line ")
}

func TestPostHogCSV(t *testing.T) {
	recs, want := postHogRecords()
	var b strings.Builder
	w := csv.NewWriter(&b)
	// The first three records with one JSON properties column, as the
	// events export writes them; the last with flattened columns.
	w.Write([]string{"uuid", "event", "distinct_id", "timestamp", "properties", "properties.$current_url", "properties.plan"})
	for _, r := range recs[:3] {
		props, _ := json.Marshal(r["properties"])
		uuid, _ := r["uuid"].(string)
		w.Write([]string{uuid, r["event"].(string), r["distinct_id"].(string), r["timestamp"].(string), string(props), "", ""})
	}
	w.Write([]string{"", "signed up", "user@ex.com", "2026-03-29T00:33:00-05:00", "", "https://ex.com/", "free"})
	w.Write([]string{"", "bad", "u", "2026-03-29T00:33:00Z", "[1, 2]", "", ""})
	w.Flush()
	want[3].URL = "https://ex.com/"
	want[3].Properties = map[string]any{"plan": "free"}
	evs, _ := readVendor(t, PostHog{}, []byte(b.String()))
	if len(evs) == len(want) {
		want[3].SourceID = evs[3].SourceID
	}
	checkVendorExport(t, PostHog{}, []byte(b.String()), want, map[string]int{vendorBadJSON: 1}, "line 6")
}

func TestPostHogEmpty(t *testing.T) {
	for _, data := range []string{"", "\n\n", "uuid,event,distinct_id,timestamp\n"} {
		evs, merrs := readVendor(t, PostHog{}, []byte(data))
		if len(evs) != 0 || len(merrs) != 0 {
			t.Errorf("%q: %d events, %d errors", data, len(evs), len(merrs))
		}
	}
}
