package httpapi

import (
	"context"
	"testing"
	"time"

	"strata/internal/analytics"
)

// TestEventNames checks GET /api/v1/query/events over HTTP: the session
// reads its product's names, most frequent first, and the query string is
// validated.
func TestEventNames(t *testing.T) {
	d := newDash(t)
	if r := d.do("GET", "/api/v1/query/events?product=1", nil, nil); r.status != 401 {
		t.Errorf("without a session: %d %v", r.status, r.body)
	}
	d.setup()
	now := time.Now().UTC()
	var events []analytics.Event
	for i, name := range []string{"signed_up", "page_viewed", "page_viewed"} {
		events = append(events, analytics.Event{UUID: [16]byte{byte(i + 1), 0x77}, ProductID: 1, Env: analytics.EnvLive,
			Timestamp: now.Add(-time.Minute), ReceivedAt: now, Name: name, DistinctID: "u", UserID: 1, Properties: []byte("{}")})
	}
	if err := d.store.AppendEvents(context.Background(), events); err != nil {
		t.Fatal(err)
	}
	r := d.do("GET", "/api/v1/query/events?product=1", nil, nil)
	if r.status != 200 || toJSON(r.body) != `{"events":[{"count":2,"name":"page_viewed"},{"count":1,"name":"signed_up"}],"productHasEvents":true}` {
		t.Errorf("events: %d %s", r.status, toJSON(r.body))
	}
	if r := d.do("GET", "/api/v1/query/events?product=1&limit=1", nil, nil); r.status != 200 || toJSON(r.body) != `{"events":[{"count":2,"name":"page_viewed"}],"productHasEvents":true}` {
		t.Errorf("limit=1: %d %s", r.status, toJSON(r.body))
	}
	if r := d.do("GET", "/api/v1/query/events?product=1&env=test", nil, nil); r.status != 200 || toJSON(r.body) != `{"events":[],"productHasEvents":false}` {
		t.Errorf("env=test: %d %s", r.status, toJSON(r.body))
	}
	// A range without events of a product that has some says so, so that
	// the dashboard does not show it how to install the SDK.
	if r := d.do("GET", "/api/v1/query/events?product=1&dateFrom=2020-01-01&dateTo=2020-01-31", nil, nil); r.status != 200 ||
		toJSON(r.body) != `{"events":[],"productHasEvents":true}` {
		t.Errorf("an empty range: %d %s", r.status, toJSON(r.body))
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=05", "dateFrom=2026-13-01"} {
		if r := d.do("GET", "/api/v1/query/events?product=1&"+q, nil, nil); r.status != 400 || r.code() != "invalid_request" {
			t.Errorf("%s: %d %v", q, r.status, r.body)
		}
	}
}
