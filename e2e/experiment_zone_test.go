package e2e

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// TestExperimentResultsInZone runs an experiment of a product in Tokyo
// (UTC+9, whose days start at 15:00 UTC the day before) over HTTP: its
// start and end dates are Tokyo days, so an exposure just after local
// midnight counts and one just before does not, though UTC days would say
// the opposite of several, and the timeline's days are Tokyo days.
func TestExperimentResultsInZone(t *testing.T) {
	s := startServer(t, t.TempDir())
	b := setupOwner(t, s)
	r := b.do(t, "POST", "/api/v1/products", map[string]string{"name": "Tokyo"})
	if r.Status != 201 {
		t.Fatalf("create product: %d %s", r.Status, r.Body)
	}
	pid := strconv.FormatInt(int64(r.JSON(t)["id"].(float64)), 10)
	if r := b.do(t, "PATCH", "/api/v1/products/"+pid, map[string]string{"timeZone": "Asia/Tokyo"}); r.Status != 200 {
		t.Fatalf("set the zone: %d %s", r.Status, r.Body)
	}
	r = b.do(t, "POST", "/api/v1/products/"+pid+"/keys", map[string]string{"env": "live"})
	key, _ := r.JSON(t)["secret"].(string)

	// D is the Tokyo day three days back: every event below is past.
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	l := time.Now().In(tokyo).AddDate(0, 0, -3)
	d := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, tokyo) // Tokyo midnight of D
	next := d.AddDate(0, 0, 1).Format("2006-01-02")
	res := b.do(t, "POST", "/api/v1/experiments?product="+pid, map[string]any{"name": "Zoned",
		"startDate": d.Format("2006-01-02"), "endDate": next})
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var e experimentWire
	json.Unmarshal(res.Body, &e)
	base := "/api/v1/experiments/" + strconv.FormatInt(e.ID, 10)
	if r := b.do(t, "POST", base+"/start?product="+pid, nil); r.Status != 200 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}

	// Each user's one exposure, to control, at a time from D's Tokyo midnight.
	var events []map[string]any
	expose := func(user string, at time.Duration) {
		events = append(events, map[string]any{"event_name": "$exposure", "distinct_id": user, "timestamp": d.Add(at).UTC().Format(time.RFC3339),
			"properties": map[string]any{"flag": e.FlagKey, "experiment_id": e.ID, "variant": "control"}})
	}
	expose("before", -30*time.Minute)            // D-1 in Tokyo (and in UTC): out
	expose("d1", 30*time.Minute)                 // D in Tokyo, D-1 in UTC: in
	expose("d2", 8*time.Hour)                    // D in Tokyo, D-1 in UTC (23:00): in
	expose("d3", 20*time.Hour)                   // D in Tokyo and in UTC (11:00): in
	expose("n1", 29*time.Hour)                   // D+1 in Tokyo, D in UTC (20:00): in, on D+1
	expose("n2", 47*time.Hour)                   // D+1 in Tokyo (23:00), D+1 in UTC: in
	expose("after", 48*time.Hour+30*time.Minute) // D+2 in Tokyo, D+1 in UTC: out
	if r := postEvents(t, s, key, events...); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}

	var got results
	deadline := time.Now().Add(10 * time.Second)
	for {
		res = b.do(t, "GET", base+"/results?product="+pid, nil)
		if res.Status != 200 {
			t.Fatalf("results: %d %s", res.Status, res.Body)
		}
		got = results{}
		if err := json.Unmarshal(res.Body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Arms) > 0 && got.Arms[0].Exposed == 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(got.Arms) == 0 || got.Arms[0].Variant != "control" || got.Arms[0].Exposed != 5 {
		t.Fatalf("arms %+v; want control with the 5 users exposed on D and D+1 in Tokyo", got.Arms)
	}
	type point struct {
		Date    string
		Exposed int64
	}
	var timeline []point
	for _, p := range got.Timeline {
		if p.Variant == "control" {
			timeline = append(timeline, point{p.Date, p.Exposed})
		}
	}
	want := []point{{d.Format("2006-01-02"), 3}, {next, 5}}
	if len(timeline) != len(want) || timeline[0] != want[0] || timeline[1] != want[1] {
		t.Errorf("control's timeline %+v; want %+v (Tokyo days, cumulative)", timeline, want)
	}
}
