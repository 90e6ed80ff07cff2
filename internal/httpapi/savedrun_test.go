package httpapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"strata/internal/analytics"
)

// TestRunSavedOverPickedDates checks that POST /api/v1/queries/{id}/run
// runs a saved query over the dateFrom and dateTo of its URL, as the
// dashboard's top bar picks them, in place of the last 30 days (or the
// definition's own dates), for a funnel and a trend; that without them the
// definition runs as stored; and that bad dates are refused like the
// endpoint's own.
func TestRunSavedOverPickedDates(t *testing.T) {
	d := newDash(t)
	d.setup()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	yesterday := today.AddDate(0, 0, -1)
	// Two users did both steps yesterday; one more did them 10 days ago.
	var events []analytics.Event
	add := func(at time.Time, user string, uid uint64, name string) {
		events = append(events, analytics.Event{UUID: [16]byte{byte(len(events) + 1), 0x5a}, ProductID: 1, Env: analytics.EnvLive,
			Timestamp: at, ReceivedAt: at, Name: name, DistinctID: user, UserID: uid, Properties: []byte("{}")})
	}
	for i, at := range []time.Time{yesterday.Add(time.Hour), yesterday.Add(2 * time.Hour), today.AddDate(0, 0, -10).Add(time.Hour)} {
		add(at, fmt.Sprint("u", i), uint64(i+1), "signed_up")
		add(at.Add(time.Minute), fmt.Sprint("u", i), uint64(i+1), "paid")
	}
	if err := d.store.AppendEvents(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	save := func(kind string, def map[string]any) int64 {
		r := d.do("POST", "/api/v1/queries?product=1", map[string]any{"kind": kind, "name": kind, "definition": def}, nil)
		if r.status != 201 {
			t.Fatalf("saving a %s: %d %v", kind, r.status, r.body)
		}
		return int64(r.body["id"].(float64))
	}
	funnel := save("funnel", map[string]any{"steps": []string{"signed_up", "paid"}, "windowHours": 24})
	// A definition with dates of its own: picked dates replace both.
	trend := save("trend", map[string]any{"series": []map[string]any{{"event": "paid"}}, "interval": "day",
		"dateFrom": today.AddDate(0, 0, -20).Format(time.DateOnly), "dateTo": today.Format(time.DateOnly)})

	day := yesterday.Format(time.DateOnly)
	run := func(id int64, qs string) reply {
		return d.do("POST", fmt.Sprintf("/api/v1/queries/%d/run?product=1%s", id, qs), nil, nil)
	}
	first := func(r reply) float64 {
		steps, _ := r.body["steps"].([]any)
		if len(steps) == 0 {
			t.Fatalf("funnel answer without steps: %d %v", r.status, r.body)
		}
		return steps[0].(map[string]any)["count"].(float64)
	}
	if r := run(funnel, ""); r.status != 200 || first(r) != 3 {
		t.Errorf("saved funnel without dates: %d %v, want 3 users over the last 30 days", r.status, r.body)
	}
	if r := run(funnel, "&dateFrom="+day+"&dateTo="+day); r.status != 200 || first(r) != 2 {
		t.Errorf("saved funnel over yesterday: %d %v, want the 2 users of yesterday", r.status, r.body)
	}
	points := func(r reply) (n int, total float64) {
		series, _ := r.body["series"].([]any)
		if len(series) != 1 {
			t.Fatalf("trend answer: %d %v", r.status, r.body)
		}
		for _, p := range series[0].(map[string]any)["data"].([]any) {
			n++
			total += p.(map[string]any)["value"].(float64)
		}
		return n, total
	}
	if r := run(trend, ""); r.status != 200 {
		t.Errorf("saved trend: %d %v", r.status, r.body)
	} else if n, total := points(r); n != 21 || total != 3 {
		t.Errorf("saved trend over its own 21 days: %d buckets, %v events", n, total)
	}
	if r := run(trend, "&dateFrom="+day+"&dateTo="+day); r.status != 200 {
		t.Errorf("saved trend over yesterday: %d %v", r.status, r.body)
	} else if n, total := points(r); n != 1 || total != 2 {
		t.Errorf("saved trend over yesterday: %d buckets, %v events, want 1 and 2", n, total)
	}
	for _, qs := range []string{"&dateFrom=2026-13-01", "&dateFrom=" + day + "&dateTo=2020-01-01"} {
		if r := run(funnel, qs); r.status != 400 || r.code() != "invalid_request" {
			t.Errorf("%s: %d %v, want 400 invalid_request", qs, r.status, r.body)
		}
	}
}
