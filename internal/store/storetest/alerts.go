package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"strata/internal/analytics"
)

// testAlerts checks alert storage: a webhook round-trips (its secret and
// spike rule too), a second creation is ErrDuplicate, updates and deletes
// of a missing one are ErrNotFound, only enabled webhooks are listed; an
// alert is claimed once per product, fingerprint, kind and hour, even by
// claims racing on many connections; attempts are recorded; lists are
// newest first; and every method is scoped to its product.
func testAlerts(ctx context.Context, t *testing.T, s Meta) {
	ps := products(ctx, t, s, "A", "B", "C")
	a, b, c := ps[0], ps[1], ps[2]

	if _, err := s.AlertWebhook(ctx, a.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("webhook before any: %v", err)
	}
	w := analytics.AlertWebhook{ProductID: a.ID, URL: "http://127.0.0.1:9/hook?t=ü", Enabled: true, SpikeFactor: 2.5, SpikeMin: 10,
		Secret: "st_whsec_abc"}
	if err := s.CreateAlertWebhook(ctx, &w); err != nil || w.CreatedAt.IsZero() || !w.UpdatedAt.Equal(w.CreatedAt) {
		t.Fatalf("create: %+v %v", w, err)
	}
	again := w
	again.Secret = "st_whsec_other"
	if err := s.CreateAlertWebhook(ctx, &again); !errors.Is(err, analytics.ErrDuplicate) {
		t.Errorf("second create: %v, want ErrDuplicate", err)
	}
	got, err := s.AlertWebhook(ctx, a.ID)
	if err != nil || got.URL != w.URL || got.Secret != "st_whsec_abc" || got.SpikeFactor != 2.5 || got.SpikeMin != 10 ||
		!got.Enabled || !got.CreatedAt.Equal(w.CreatedAt) {
		t.Errorf("read back: %+v %v", got, err)
	}
	w.Enabled, w.SpikeFactor, w.Secret = false, 1000, "st_whsec_rotated"
	if err := s.UpdateAlertWebhook(ctx, &w); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.AlertWebhook(ctx, a.ID); got.Enabled || got.SpikeFactor != 1000 || got.Secret != "st_whsec_rotated" {
		t.Errorf("after update: %+v", got)
	}
	missing := analytics.AlertWebhook{ProductID: c.ID, URL: "https://x.example/h", SpikeFactor: 5, SpikeMin: 1, Secret: "s"}
	if err := s.UpdateAlertWebhook(ctx, &missing); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("update of a missing webhook: %v", err)
	}
	wb := analytics.AlertWebhook{ProductID: b.ID, URL: "https://hooks.example.com/b", Enabled: true, SpikeFactor: 5, SpikeMin: 10, Secret: "s-b"}
	if err := s.CreateAlertWebhook(ctx, &wb); err != nil {
		t.Fatal(err)
	}
	if list, err := s.EnabledAlertWebhooks(ctx); err != nil || len(list) != 1 || list[0].ProductID != b.ID || list[0].Secret != "s-b" {
		t.Errorf("enabled webhooks: %+v %v", list, err)
	}
	if err := s.DeleteAlertWebhook(ctx, c.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("delete of a missing webhook: %v", err)
	}
	if err := s.DeleteAlertWebhook(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AlertWebhook(ctx, b.ID); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}

	hour := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	claim := func(p int64, fp string, kind analytics.AlertKind, h *time.Time) (analytics.Alert, bool) {
		t.Helper()
		al := analytics.Alert{ProductID: p, Fingerprint: fp, Kind: kind, Hour: h, Payload: []byte(`{"kind":"` + string(kind) + `"}`)}
		ok, err := s.ClaimAlert(ctx, &al)
		if err != nil {
			t.Fatal(err)
		}
		return al, ok
	}
	first, ok := claim(a.ID, "fp1", analytics.AlertNew, nil)
	if !ok || first.ID == 0 || first.Status != analytics.AlertPending {
		t.Fatalf("first claim: %+v %v", first, ok)
	}
	if _, ok := claim(a.ID, "fp1", analytics.AlertNew, nil); ok {
		t.Error("a group was claimed twice as new")
	}
	if _, ok := claim(b.ID, "fp1", analytics.AlertNew, nil); !ok {
		t.Error("another product's group was taken for this one's")
	}
	spike, ok := claim(a.ID, "fp1", analytics.AlertSpike, &hour)
	if !ok {
		t.Error("a spike of a group alerted as new was not claimed")
	}
	if _, ok := claim(a.ID, "fp1", analytics.AlertSpike, &hour); ok {
		t.Error("a spike hour was claimed twice")
	}
	next := hour.Add(time.Hour)
	if _, ok := claim(a.ID, "fp1", analytics.AlertSpike, &next); !ok {
		t.Error("the next hour's spike was not claimed")
	}
	// Claims racing on many connections: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			al := analytics.Alert{ProductID: a.ID, Fingerprint: "race", Kind: analytics.AlertNew, Payload: []byte(`{}`)}
			ok, err := s.ClaimAlert(ctx, &al)
			if err != nil {
				// A serialization failure of the loser is a lost race
				// too, not a second alert.
				return
			}
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Errorf("%d of 8 racing claims won, want 1", won)
	}

	delivered := time.Date(2026, 11, 24, 11, 0, 1, 500, time.UTC)
	spike.Status, spike.Attempts, spike.DeliveredAt, spike.LastError = analytics.AlertDelivered, 2, &delivered, "HTTP 500"
	if err := s.RecordAlertAttempt(ctx, &spike); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListAlerts(ctx, a.ID, 10)
	if err != nil || len(list) != 4 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list[0].Fingerprint != "race" || list[3].ID != first.ID || list[3].Hour != nil || list[3].Kind != analytics.AlertNew {
		t.Errorf("not newest first, or the new alert's hour: %+v", list)
	}
	got2 := list[2]
	if got2.ID != spike.ID || got2.Hour == nil || !got2.Hour.Equal(hour) || got2.Status != analytics.AlertDelivered || got2.Attempts != 2 ||
		got2.DeliveredAt == nil || !got2.DeliveredAt.Equal(delivered.Truncate(time.Microsecond)) || got2.LastError != "HTTP 500" ||
		string(got2.Payload) != `{"kind":"spike"}` {
		t.Errorf("the recorded spike: %+v", got2)
	}
	if short, _ := s.ListAlerts(ctx, a.ID, 1); len(short) != 1 {
		t.Errorf("limit 1: %d alerts", len(short))
	}
	if other, _ := s.ListAlerts(ctx, c.ID, 10); len(other) != 0 {
		t.Errorf("product C sees alerts: %+v", other)
	}
	missingAlert := analytics.Alert{ID: 999999, Status: analytics.AlertFailed}
	if err := s.RecordAlertAttempt(ctx, &missingAlert); !errors.Is(err, analytics.ErrNotFound) {
		t.Errorf("recording a missing alert: %v", err)
	}
}
