package importer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkVendorSources measures each source's mapping alone, on a file
// of realistic records (the tests' generators, repeated with distinct
// ids), in events a second: the importer's --fast target is 100,000 a
// second for the whole import, so a source must map several times that.
func BenchmarkVendorSources(b *testing.B) {
	const n = 20000
	t := &testing.T{}
	files := map[string]struct {
		src  Source
		data []byte
	}{}

	var mp strings.Builder
	for i := 0; i < n; i++ {
		r := map[string]any{"event": "$mp_web_page_view", "properties": map[string]any{
			"time": 1767323045 + i, "distinct_id": fmt.Sprintf("user-%d", i%500), "$insert_id": fmt.Sprintf("ins-%d", i),
			"$current_url": "https://shop.example.com/p/1?utm_source=news", "$referrer": "https://www.google.com/",
			"$browser": "Chrome", "$browser_version": 120, "$os": "Mac OS X", "$device_id": "dev-1", "mp_lib": "web",
			"$screen_height": 1080, "$screen_width": 1920, "utm_source": "news", "cart": map[string]any{"total": 19.5}}}
		mp.WriteString(vendorJSONLine(t, r))
	}
	files["mixpanel"] = struct {
		src  Source
		data []byte
	}{Mixpanel{}, []byte(mp.String())}

	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, vendorJSONLine(t, amplitudeRecord(map[string]any{"uuid": fmt.Sprintf("u-%d", i)})))
	}
	files["amplitude"] = struct {
		src  Source
		data []byte
	}{Amplitude{}, amplitudeZip(t, amplitudeMember{name: "1/1_2026-01-02_3#0.json.gz", data: amplitudeGzip(t, lines...)})}

	var ga strings.Builder
	for i := 0; i < n; i++ {
		ga.WriteString(vendorJSONLine(t, ga4Row(map[string]any{"batch_event_index": fmt.Sprint(i)})))
	}
	files["ga4"] = struct {
		src  Source
		data []byte
	}{GA4{}, []byte(ga.String())}

	rows := make([]map[string]string, n)
	for i := range rows {
		rows[i] = map[string]string{"event_id": fmt.Sprintf("e-%d", i), "website_id": umamiWebsite, "session_id": umamiSession,
			"visit_id": umamiVisit, "created_at": "2026-01-02 03:04:05.678+00", "event_type": "1", "hostname": "shop.example.com",
			"url_path": "/p/1", "url_query": "utm_source=news", "utm_source": "news", "referrer_domain": "google.com",
			"page_title": "Café", "browser": "chrome", "os": "Mac OS", "device": "laptop", "country": "CH"}
	}
	files["umami"] = struct {
		src  Source
		data []byte
	}{Umami{}, umamiCSV(t, umamiColumns, rows...)}

	for _, name := range []string{"mixpanel", "amplitude", "umami", "ga4"} {
		f := files[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(f.data)))
			b.ReportAllocs()
			events := 0
			for b.Loop() {
				err := f.src.Read(bytes.NewReader(f.data), int64(len(f.data)), func(ev Event, err error) error {
					if err != nil {
						return err
					}
					events++
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
