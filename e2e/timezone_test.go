package e2e

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestProductTimeZone sets a product's zone through the settings API of
// the real binary and checks that a trend's day and hour buckets and a
// range's bounds follow it: Berlin's 25-hour day, 2026-10-25, whose
// repeated hour 02:00 is one bucket.
func TestProductTimeZone(t *testing.T) {
	s := startServer(t, t.TempDir())
	b := setupOwner(t, s)
	r := b.do(t, "POST", "/api/v1/products", map[string]string{"name": "Zoned"})
	if r.Status != 201 || r.JSON(t)["timeZone"] != "UTC" {
		t.Fatalf("create product: %d %s", r.Status, r.Body)
	}
	pid := jsonNumber(int64(r.JSON(t)["id"].(float64)))
	product := "/api/v1/products/" + pid
	r = b.do(t, "POST", product+"/keys", map[string]string{"env": "live"})
	key, _ := r.JSON(t)["secret"].(string)
	var events []map[string]any
	for _, ts := range []string{"2026-10-24T21:59:59Z", "2026-10-24T22:00:00Z", "2026-10-25T00:30:00Z",
		"2026-10-25T01:30:00Z", "2026-10-25T22:59:59Z", "2026-10-25T23:00:00Z"} {
		events = append(events, map[string]any{"event_name": "tz", "distinct_id": "u1", "timestamp": ts})
	}
	if r := postEvents(t, s, key, events...); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}

	// trend returns the dates and values of a one-line trend.
	trend := func(interval, from, to string) (dates []string, values []int64) {
		t.Helper()
		var got trendAnswer
		r := b.do(t, "POST", "/api/v1/query/trend?product="+pid, map[string]any{
			"series": []map[string]string{{"event": "tz"}}, "interval": interval, "dateFrom": from, "dateTo": to})
		if r.Status != 200 {
			t.Fatalf("trend: %d %s", r.Status, r.Body)
		}
		if err := json.Unmarshal(r.Body, &got); err != nil || len(got.Series) != 1 {
			t.Fatalf("trend answer %s: %v", r.Body, err)
		}
		for _, p := range got.Series[0].Data {
			dates, values = append(dates, p.Date), append(values, p.Value)
		}
		return dates, values
	}
	// The events are stored once the batch commits.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, v := trend("day", "2026-10-24", "2026-10-26"); reflect.DeepEqual(v, []int64{2, 4, 0}) {
			break // UTC days
		} else if time.Now().After(deadline) {
			t.Fatalf("UTC days: %v; want [2 4 0]", v)
		}
		time.Sleep(50 * time.Millisecond)
	}

	if r := b.do(t, "PATCH", product, map[string]string{"timeZone": "Mars/Olympus"}); r.Status != 400 || r.ErrorCode(t) != "invalid_time_zone" {
		t.Errorf("an unknown zone: %d %s", r.Status, r.Body)
	}
	if r := b.do(t, "PATCH", product, map[string]string{"timeZone": "Europe/Berlin"}); r.Status != 200 ||
		r.JSON(t)["timeZone"] != "Europe/Berlin" || r.JSON(t)["name"] != "Zoned" {
		t.Fatalf("set the zone: %d %s", r.Status, r.Body)
	}
	if r := b.do(t, "GET", product, nil); r.JSON(t)["timeZone"] != "Europe/Berlin" {
		t.Errorf("GET after PATCH: %s", r.Body)
	}
	zones := map[string]any{}
	for _, p := range b.do(t, "GET", "/api/v1/products", nil).JSON(t)["items"].([]any) {
		zones[p.(map[string]any)["name"].(string)] = p.(map[string]any)["timeZone"]
	}
	if zones["Zoned"] != "Europe/Berlin" || zones["Default"] != "UTC" {
		t.Errorf("products list: %v", zones)
	}

	// Local days: the 25th runs from 22:00 UTC on the 24th to 23:00 UTC.
	if d, v := trend("day", "2026-10-24", "2026-10-26"); !reflect.DeepEqual(d, []string{"2026-10-24", "2026-10-25", "2026-10-26"}) ||
		!reflect.DeepEqual(v, []int64{1, 4, 1}) {
		t.Errorf("Berlin days: %v %v; want [1 4 1]", d, v)
	}
	if _, v := trend("day", "2026-10-25", "2026-10-25"); !reflect.DeepEqual(v, []int64{4}) {
		t.Errorf("the range of 2026-10-25 in Berlin holds %v; want [4]", v)
	}
	d, v := trend("hour", "2026-10-25", "2026-10-25")
	if len(d) != 24 || d[0] != "2026-10-25T00:00:00+02:00" || d[2] != "2026-10-25T02:00:00+02:00" || v[2] != 2 ||
		d[3] != "2026-10-25T03:00:00+01:00" || d[23] != "2026-10-25T23:00:00+01:00" || v[0] != 1 || v[23] != 1 {
		t.Errorf("Berlin hours of 2026-10-25: %v %v", d, v)
	}
}
