package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata/internal/enrich/geo/geotest"
)

// geoClients are the public addresses the geography tests send as
// X-Forwarded-For, with the country the shipped DB-IP database gives each
// (internal/enrich/geo's tests hold the same). spoofed is written left of
// a real client, as a client would to choose its country.
const (
	geoUS   = "8.8.8.8"
	geoNL   = "193.0.14.129"
	spoofed = "77.88.8.8"
)

// postFrom sends a batch to /e with X-Forwarded-For set to xff (none when
// empty).
func postFrom(t *testing.T, s *server, key, xff string, events ...map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"batch": events})
	h := map[string]string{"X-API-Key": key, "Content-Type": "application/json"}
	if xff != "" {
		h["X-Forwarded-For"] = xff
	}
	if res := do(t, "POST", s.URL+"/e", body, h); res.Status != 202 {
		t.Fatalf("POST /e from %q: %d %s", xff, res.Status, res.Body)
	}
}

func pageviews(n int, width any) []map[string]any {
	var out []map[string]any
	for i := range n {
		props := map[string]any{}
		if width != nil {
			props["$viewport_width"] = width
		}
		out = append(out, map[string]any{"event_name": "$pageview", "distinct_id": "visitor-" + string(rune('a'+i)),
			"url": "https://shop.example/", "properties": props})
	}
	return out
}

// breakdown asks for today's $pageview trend broken down by property and
// returns each value's total ("" for the events without one).
func breakdown(t *testing.T, s *server, tn tenant, property string, filters []map[string]any) map[string]int64 {
	t.Helper()
	today := time.Now().UTC().Format("2006-01-02")
	var got trendAnswer
	ask(t, s, tn.Token, "/api/v1/query/trend", map[string]any{"dateFrom": today, "dateTo": today, "interval": "day",
		"series": []map[string]any{{"event": "$pageview", "math": "total"}}, "filters": filters,
		"breakdown": property, "breakdownLimit": 10}, &got)
	out := map[string]int64{}
	for _, se := range got.Series {
		key := ""
		if se.BreakdownValue != nil {
			key = *se.BreakdownValue
		}
		for _, p := range se.Data {
			out[key] += p.Value
		}
	}
	return out
}

// TestGeographyBehindATrustedProxy runs the binary with --trusted-proxies
// 127.0.0.1/32, as behind a reverse proxy on the same host: the right-most
// forwarded address that is not the proxy gives the country (a spoofed
// entry left of it changes nothing), a request without the header has
// none, trends break down and filter by country and screen class, and the
// client addresses appear in no column, no log line and no file of the
// data directory.
func TestGeographyBehindATrustedProxy(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--trusted-proxies", "127.0.0.1/32")
	tn := newTenant(t, s, "geo")

	postFrom(t, s, tn.Live, geoUS, pageviews(3, 390)...)                // US, mobile
	postFrom(t, s, tn.Live, spoofed+", "+geoNL, pageviews(2, 1280)...)  // NL, laptop
	postFrom(t, s, tn.Live, geoNL+", 127.0.0.1", pageviews(1, 1920)...) // NL, desktop; the proxy itself skipped
	postFrom(t, s, tn.Live, "", pageviews(1, nil)...)                   // no header: no country
	postFrom(t, s, tn.Live, "not-an-address", pageviews(1, "wide")...)  // unreadable: no country

	if got, want := breakdown(t, s, tn, "country", nil), map[string]int64{"US": 3, "NL": 3, "": 2}; !equalCounts(got, want) {
		t.Errorf("by country: %v, want %v", got, want)
	}
	if got, want := breakdown(t, s, tn, "screen_class", nil), map[string]int64{"mobile": 3, "laptop": 2, "desktop": 1, "": 2}; !equalCounts(got, want) {
		t.Errorf("by screen class: %v, want %v", got, want)
	}
	nl := []map[string]any{{"property": "country", "operator": "eq", "value": "NL"}}
	if got, want := breakdown(t, s, tn, "screen_class", nl), map[string]int64{"laptop": 2, "desktop": 1}; !equalCounts(got, want) {
		t.Errorf("NL by screen class: %v, want %v", got, want)
	}
	// The country database has no regions or cities.
	if got, want := breakdown(t, s, tn, "city", nil), map[string]int64{"": 8}; !equalCounts(got, want) {
		t.Errorf("by city: %v, want %v", got, want)
	}
	// The embedded DB-IP database asks for its credit where countries are
	// shown: the dashboard config tells the dashboard.
	if r := do(t, "GET", s.URL+"/api/v1/dashboard/config", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"geoAttribution":true`) {
		t.Errorf("dashboard config with the embedded database: %d %s", r.Status, r.Body)
	}
	logs := s.Logs()
	s.Stop()

	db := openStore(t, dir)
	if n := count(t, db, `SELECT count(*) FROM events WHERE country = 'RU'`); n != 0 {
		t.Errorf("%d events got the spoofed entry's country", n)
	}
	// No column of any event holds a client address.
	rows, err := db.Query(`SELECT * FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		n++
		for i, v := range vals {
			for _, addr := range []string{geoUS, geoNL, spoofed} {
				if v != nil && strings.Contains(toString(v), addr) {
					t.Errorf("column %s holds the client address %s: %v", cols[i], addr, v)
				}
			}
		}
	}
	rows.Close()
	if n != 8 {
		t.Errorf("%d events stored, want 8", n)
	}
	// Nor does a log line or a file of the data directory (the database,
	// its write-ahead log, the spool).
	for _, addr := range []string{geoUS, geoNL, spoofed} {
		if strings.Contains(logs, addr) {
			t.Errorf("the log holds the client address %s", addr)
		}
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSocket != 0 {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("reading %s: %v", path, err)
			return nil
		}
		for _, addr := range []string{geoUS, geoNL, spoofed} {
			if bytes.Contains(b, []byte(addr)) {
				t.Errorf("%s holds the client address %s", path, addr)
			}
		}
		return nil
	})
}

// TestForwardedForIgnoredWithoutTrustedProxies sends the same header to a
// server with no trusted proxies: it is ignored, and the events get the
// peer's location, none for the loopback address.
func TestForwardedForIgnoredWithoutTrustedProxies(t *testing.T) {
	s := startServer(t, t.TempDir())
	defer s.Stop()
	tn := newTenant(t, s, "geo")
	postFrom(t, s, tn.Live, geoUS, pageviews(2, 390)...)
	if got, want := breakdown(t, s, tn, "country", nil), map[string]int64{"": 2}; !equalCounts(got, want) {
		t.Errorf("by country: %v, want %v", got, want)
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestGeoIPCityDatabase starts the binary with --geoip-db on a database in
// GeoLite2-City's layout, written here with MaxMind's writer: the events
// get the region and city as well, and trends break down by them.
func TestGeoIPCityDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "GeoLite2-City.mmdb")
	geotest.WriteCity(t, path,
		geotest.Network{CIDR: "81.2.69.0/24", Country: "DE", Region: "Bavaria", City: "Munich"},
		geotest.Network{CIDR: "81.2.70.0/24", Country: "DE", Region: "Berlin", City: "Berlin"})

	s := startServer(t, t.TempDir(), "--geoip-db", path, "--trusted-proxies", "127.0.0.1/32")
	defer s.Stop()
	tn := newTenant(t, s, "geo")
	postFrom(t, s, tn.Live, "81.2.69.142", pageviews(2, 390)...)
	postFrom(t, s, tn.Live, "81.2.70.9", pageviews(1, 390)...)
	postFrom(t, s, tn.Live, geoUS, pageviews(1, 390)...) // not in this database
	if got, want := breakdown(t, s, tn, "city", nil), map[string]int64{"Munich": 2, "Berlin": 1, "": 1}; !equalCounts(got, want) {
		t.Errorf("by city: %v, want %v", got, want)
	}
	de := []map[string]any{{"property": "country", "operator": "eq", "value": "DE"}}
	if got, want := breakdown(t, s, tn, "region", de), map[string]int64{"Bavaria": 2, "Berlin": 1}; !equalCounts(got, want) {
		t.Errorf("DE by region: %v, want %v", got, want)
	}
	if !strings.Contains(s.Logs(), "GeoLite2-City") {
		t.Errorf("the log does not say which database is used:\n%s", s.Logs())
	}
	// The operator's own database asks for no credit on the dashboard.
	if r := do(t, "GET", s.URL+"/api/v1/dashboard/config", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"geoAttribution":false`) {
		t.Errorf("dashboard config with --geoip-db: %d %s", r.Status, r.Body)
	}
}
