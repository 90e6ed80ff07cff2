package retention

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/store/duckdb"
)

// TestRound runs the job on a real DuckDB store with an injected clock:
// a product in Tokyo with 3 days of events and 1 of errors keeps today
// and the two local days before it, and its error occurrences of today
// only; a product with no periods keeps everything; one with only an
// errors period keeps its other events. Another node does nothing while
// the lease is held.
func TestRound(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, t.TempDir(), duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ws, _ := s.CreateWorkspace(ctx, "W")
	tokyo, _ := s.CreateProduct(ctx, ws.ID, "Tokyo")
	keep, _ := s.CreateProduct(ctx, ws.ID, "Keep")
	errs, _ := s.CreateProduct(ctx, ws.ID, "Errors")
	s.SetProductTimeZone(ctx, tokyo.ID, "Asia/Tokyo")
	s.SetProductRetention(ctx, tokyo.ID, analytics.DataRetention{EventsDays: 3, ErrorsDays: 1})
	s.SetProductRetention(ctx, errs.ID, analytics.DataRetention{ErrorsDays: 2})

	now := time.Date(2026, 3, 10, 2, 0, 0, 0, time.UTC) // 11:00 in Tokyo
	var events []analytics.Event
	for _, p := range []int64{tokyo.ID, keep.ID, errs.ID} {
		for at := now.AddDate(0, 0, -5); at.Before(now); at = at.Add(30 * time.Minute) {
			for _, name := range []string{analytics.PageviewEvent, analytics.ExceptionEvent} {
				events = append(events, analytics.Event{UUID: uuid.New(), ProductID: p, Env: analytics.EnvLive, Timestamp: at,
					ReceivedAt: at, Name: name, DistinctID: "u", Properties: []byte("{}")})
			}
		}
	}
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	job := &Job{Products: s, Events: s, Leases: s, Node: "a", Interval: time.Minute, Now: func() time.Time { return now }}
	n, err := job.Round(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := func(p int64, name string) time.Time {
		t.Helper()
		var at time.Time
		if err := s.DB().QueryRow(`SELECT min(ts) FROM events e JOIN event_names n ON n.eid = e.eid WHERE product_id = $1 AND n.name = $2`,
			p, name).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at.UTC()
	}
	start := now.AddDate(0, 0, -5)
	for _, c := range []struct {
		what    string
		product int64
		name    string
		want    time.Time
	}{
		{"Tokyo's pageviews", tokyo.ID, analytics.PageviewEvent, time.Date(2026, 3, 7, 15, 0, 0, 0, time.UTC)}, // midnight of 8 March in Tokyo
		{"Tokyo's errors", tokyo.ID, analytics.ExceptionEvent, time.Date(2026, 3, 9, 15, 0, 0, 0, time.UTC)},   // midnight of 10 March
		{"Keep's pageviews", keep.ID, analytics.PageviewEvent, start},
		{"Keep's errors", keep.ID, analytics.ExceptionEvent, start},
		{"Errors' pageviews", errs.ID, analytics.PageviewEvent, start},
		{"Errors' errors", errs.ID, analytics.ExceptionEvent, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)},
	} {
		if got := first(c.product, c.name); !got.Equal(c.want) {
			t.Errorf("%s start at %v; want %v", c.what, got, c.want)
		}
	}
	// Two events of each name an hour from 5 March 02:00: Tokyo's
	// pageviews up to 7 March 15:00 (61 hours), its errors up to 9 March
	// 15:00 (109 hours), the other product's errors up to 9 March (94).
	if want := int64(2 * (61 + 109 + 94)); n != want {
		t.Errorf("the round deleted %d events; want %d", n, want)
	}
	if n, err := job.Round(ctx); err != nil || n != 0 {
		t.Errorf("a second round deleted %d, %v; want nothing", n, err)
	}
	// Another node, with a clock a day later, does nothing while a holds
	// the lease.
	other := *job
	other.Node = "b"
	other.Now = func() time.Time { return now.Add(time.Second) }
	if err := s.SetProductRetention(ctx, keep.ID, analytics.DataRetention{EventsDays: 1}); err != nil {
		t.Fatal(err)
	}
	if n, err := other.Round(ctx); err != nil || n != 0 {
		t.Errorf("a node without the lease deleted %d, %v", n, err)
	}
	if n, err := job.Round(ctx); err != nil || n == 0 {
		t.Errorf("the holder's round after a new period deleted %d, %v", n, err)
	}
}
