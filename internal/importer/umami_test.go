package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// umamiColumns are website_event's columns in Umami's current schema
// (prisma/schema.prisma, model WebsiteEvent), then the session's columns
// that Umami Cloud's export joins to each row.
var umamiColumns = []string{
	"event_id", "website_id", "session_id", "visit_id", "created_at", "url_path", "url_query",
	"utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term",
	"referrer_path", "referrer_query", "referrer_domain", "page_title",
	"gclid", "fbclid", "msclkid", "ttclid", "li_fat_id", "twclid",
	"event_type", "event_name", "tag", "hostname", "lcp", "inp", "cls", "fcp", "ttfb",
	"browser", "os", "device", "screen", "language", "country", "region", "city", "distinct_id",
}

// umamiCSV writes rows (column → value; absent columns are empty, as
// PostgreSQL writes NULL) under header.
func umamiCSV(t *testing.T, header []string, rows ...map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(header); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		rec := make([]string, len(header))
		for i, h := range header {
			rec[i] = r[h]
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return buf.Bytes()
}

const (
	umamiWebsite = "5a0a6d41-2c4b-4d59-a5b4-0b8c2e4c2f10"
	umamiSession = "8f14e45f-ceea-467a-9b1f-2c1f7b2a6d3e"
	umamiVisit   = "c9f0f895-fb98-4b9a-8e4d-1d5c5b3a2e1f"
)

func umamiExport(t *testing.T) (file []byte, want []Event) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC)
	session := map[string]any{"website_id": umamiWebsite, "browser": "chrome", "os": "Mac OS", "device": "laptop",
		"screen": "1920x1080", "language": "de-CH", "country": "CH", "region": "CH-ZH", "city": "Zürich"}
	row := func(over map[string]string) map[string]string {
		r := map[string]string{"website_id": umamiWebsite, "session_id": umamiSession, "visit_id": umamiVisit,
			"created_at": "2026-01-02 03:04:05.678+00", "browser": "chrome", "os": "Mac OS", "device": "laptop",
			"screen": "1920x1080", "language": "de-CH", "country": "CH", "region": "CH-ZH", "city": "Zürich"}
		for k, v := range over {
			r[k] = v
		}
		return r
	}
	withSession := func(m map[string]any) map[string]any {
		for k, v := range session {
			m[k] = v
		}
		m["$session_id"] = umamiVisit
		return m
	}
	var rows []map[string]string

	// A page view from Google with UTM tags and a click id; a title with
	// a comma, quotes and non-ASCII.
	rows = append(rows, row(map[string]string{"event_id": "e-1", "event_type": "1", "hostname": "shop.example.com",
		"url_path": "/p/1", "url_query": "utm_source=news&utm_medium=email&gclid=abc",
		"utm_source": "news", "utm_medium": "email", "gclid": "abc",
		"referrer_domain": "google.com", "referrer_path": "/search", "referrer_query": "q=caf%C3%A9",
		"page_title": `Café "Zum Löwen", Angebote ☕`}))
	want = append(want, Event{SourceID: "e-1", Name: "$pageview", DistinctID: umamiSession, Timestamp: at,
		URL:      "https://shop.example.com/p/1?utm_source=news&utm_medium=email&gclid=abc",
		Referrer: "https://google.com/search?q=caf%C3%A9",
		Properties: withSession(map[string]any{"utm_source": "news", "utm_medium": "email", "gclid": "abc",
			"page_title": `Café "Zum Löwen", Angebote ☕`})})

	// A custom event with a tag, created at +05:30, of a user named by
	// umami.identify: the distinct id, the session kept as a property.
	rows = append(rows, row(map[string]string{"event_id": "e-2", "event_type": "2", "event_name": "signup",
		"tag": "variant-b", "hostname": "shop.example.com", "url_path": "/signup",
		"created_at": "2026-01-02 08:34:05.678+05:30", "distinct_id": "user-1"}))
	want = append(want, Event{SourceID: "e-2", Name: "signup", DistinctID: "user-1", Timestamp: at,
		URL:        "https://shop.example.com/signup",
		Properties: withSession(map[string]any{"tag": "variant-b", "session_id": umamiSession})})

	// Web Vitals (numbers), as MySQL writes time (no offset: UTC) and
	// NULL (\N).
	rows = append(rows, row(map[string]string{"event_id": "e-3", "event_type": "5", "url_path": "/p/1",
		"hostname": "shop.example.com", "created_at": "2026-01-02 03:04:05.678", "lcp": "1834.5", "inp": "72.0",
		"cls": "0.0213", "fcp": "802.1", "ttfb": "NaN", "page_title": `\N`}))
	want = append(want, Event{SourceID: "e-3", Name: "web_vitals", DistinctID: umamiSession, Timestamp: at,
		URL: "https://shop.example.com/p/1",
		Properties: withSession(map[string]any{"lcp": json.Number("1834.5"), "inp": json.Number("72.0"),
			"cls": json.Number("0.0213"), "fcp": json.Number("802.1"), "ttfb": "NaN"})})

	// A short link's visit, RFC 3339 time; a custom event whose name
	// Strata reserves; no event_id: derived.
	rows = append(rows, row(map[string]string{"event_id": "e-4", "event_type": "3", "url_path": "/go",
		"created_at": "2026-01-02T03:04:05.678Z"}))
	want = append(want, Event{SourceID: "e-4", Name: "link_visit", DistinctID: umamiSession, Timestamp: at,
		URL: "/go", Properties: withSession(map[string]any{})})
	rows = append(rows, row(map[string]string{"event_type": "2", "event_name": "$pageview", "url_path": "/x"}))
	want = append(want, Event{Name: "pageview", DistinctID: umamiSession, Timestamp: at, URL: "/x",
		SourceID:   derivedSourceID(umamiWebsite, umamiSession, "2026-01-02 03:04:05.678+00", "2", "$pageview", "/x", ""),
		Properties: withSession(map[string]any{})})

	// Rows that cannot be mapped.
	rows = append(rows,
		row(map[string]string{"event_id": "bad-1", "event_type": "2", "url_path": "/"}),                      // missing_event_name
		row(map[string]string{"event_id": "bad-2", "event_type": "9", "url_path": "/"}),                      // unknown_event_type
		row(map[string]string{"event_id": "bad-3", "event_type": "1", "url_path": "/", "session_id": ""}),    // missing_distinct_id
		row(map[string]string{"event_id": "bad-4", "event_type": "1", "url_path": "/", "created_at": "now"}), // bad_timestamp
	)
	file = umamiCSV(t, umamiColumns, rows...)
	// A row of the wrong width, one with a bare quote, one not UTF-8,
	// then a good one after them.
	file = append(file, "e-x,only,three\n"...)
	file = append(file, "e-y,a\"b,c\n"...)
	file = append(file, strings.Replace(string(umamiCSV(t, umamiColumns, row(map[string]string{
		"event_id": "bad-5", "event_type": "1", "url_path": "/caf\xe9"}))), strings.Join(umamiColumns, ",")+"\n", "", 1)...)
	file = append(file, strings.Replace(string(umamiCSV(t, umamiColumns, row(map[string]string{
		"event_id": "e-last", "event_type": "1", "url_path": "/last"}))), strings.Join(umamiColumns, ",")+"\n", "", 1)...)
	want = append(want, Event{SourceID: "e-last", Name: "$pageview", DistinctID: umamiSession, Timestamp: at,
		URL: "/last", Properties: withSession(map[string]any{})})
	return file, want
}

func TestUmamiExport(t *testing.T) {
	file, want := umamiExport(t)
	wantReasons := map[string]int{"missing_event_name": 1, "unknown_event_type": 1, "missing_distinct_id": 1,
		"bad_timestamp": 1, "bad_row": 2, "invalid_utf8": 1}
	checkVendorExport(t, Umami{}, file, want, wantReasons, "line ")
}

// An older Umami (before 2.12: no hostname, no UTM columns, no Web
// Vitals), columns in another order, with a byte order mark, and a
// column this source does not know: kept.
func TestUmamiOlderColumns(t *testing.T) {
	header := []string{"\ufeffevent_id", "created_at", "website_id", "session_id", "url_path", "url_query",
		"referrer_path", "referrer_query", "referrer_domain", "page_title", "event_type", "event_name", "custom_col"}
	file := umamiCSV(t, header, map[string]string{"\ufeffevent_id": "e-1", "created_at": "2024-03-01 12:00:00+01",
		"website_id": umamiWebsite, "session_id": umamiSession, "url_path": "/blog/", "url_query": "ref=hn",
		"referrer_domain": "news.ycombinator.com", "referrer_path": "/item", "page_title": "Blog",
		"event_type": "1", "custom_col": "kept"})
	evs, merrs := readVendor(t, Umami{}, file)
	if len(merrs) != 0 || len(evs) != 1 {
		t.Fatalf("%d events, errors %v", len(evs), vendorReasons(merrs))
	}
	checkVendorEvent(t, "old", evs[0], Event{SourceID: "e-1", Name: "$pageview", DistinctID: umamiSession,
		Timestamp: time.Date(2024, 3, 1, 11, 0, 0, 0, time.UTC), URL: "/blog/?ref=hn",
		Referrer:   "https://news.ycombinator.com/item",
		Properties: map[string]any{"website_id": umamiWebsite, "page_title": "Blog", "custom_col": "kept"}})
}

func TestUmamiUnreadable(t *testing.T) {
	if evs, merrs := readVendor(t, Umami{}, nil); len(evs)+len(merrs) != 0 {
		t.Errorf("an empty file gave %d events, %d errors", len(evs), len(merrs))
	}
	if evs, merrs := readVendor(t, Umami{}, umamiCSV(t, umamiColumns)); len(evs)+len(merrs) != 0 {
		t.Errorf("a header alone gave %d events, %d errors", len(evs), len(merrs))
	}
	// A header without created_at is not website_event.
	_, _, err := readVendorErr(Umami{}, []byte("session_id,event_type,url_path\ns,1,/\n"))
	if err == nil || !strings.Contains(err.Error(), "created_at") {
		t.Errorf("Read returned %v, want an error naming created_at", err)
	}
	// An unclosed quote would make the rest of the file one field: it
	// stops at the bound rather than reading the file into memory.
	file := umamiCSV(t, umamiColumns, map[string]string{"event_id": "e-1", "session_id": "s", "event_type": "1",
		"url_path": "/", "created_at": "2026-01-02 03:04:05"})
	file = append(file, "e-2,\""...)
	file = append(file, bytes.Repeat([]byte("x,y\n"), maxVendorLine/4+1000)...)
	evs, _, err := readVendorErr(Umami{}, file)
	if err == nil || !strings.Contains(err.Error(), "unclosed quote") || len(evs) != 1 {
		t.Errorf("Read returned %d events and %v, want 1 and an error about an unclosed quote", len(evs), err)
	}
}

func FuzzUmamiRead(f *testing.F) {
	file, _ := umamiExport(&testing.T{})
	f.Add(file)
	f.Add([]byte("created_at,session_id,event_type,url_path\n2026-01-02,s,1,/\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Umami{}.Read(bytes.NewReader(data), int64(len(data)), func(ev Event, err error) error {
			checkVendorWellFormed(t, ev, err)
			return nil
		})
	})
}
