package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// Alert webhooks and the alerts sent (migration 0016, docs/errors.md,
// "Alerts").

var _ analytics.AlertStore = (*Store)(nil)

// noHour is the hour column of a new group's alert: a fixed value, so that
// the unique key (product, fingerprint, kind, hour) holds for it too.
var noHour = time.Unix(0, 0).UTC()

const webhookCols = `product_id, url, enabled, spike_factor, spike_min, secret, created_at, updated_at`

func scanWebhook(row Scanner) (analytics.AlertWebhook, error) {
	var w analytics.AlertWebhook
	var factor int64
	err := row.Scan(&w.ProductID, &w.URL, &w.Enabled, &factor, &w.SpikeMin, &w.Secret, &w.CreatedAt, &w.UpdatedAt)
	w.SpikeFactor = float64(factor) / 100
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	return w, err
}

// AlertWebhook returns a product's webhook.
func (s *Store) AlertWebhook(ctx context.Context, productID int64) (analytics.AlertWebhook, error) {
	return queryOne(ctx, s.conn(), fmt.Sprintf("alert webhook of product %d", productID), scanWebhook, `SELECT `+webhookCols+` FROM alert_webhooks WHERE product_id = $1`, productID)
}

// CreateAlertWebhook inserts w unless its product has a webhook: the
// insert does nothing on a conflict, so two creations racing cannot both
// win, and the one that lost is told.
func (s *Store) CreateAlertWebhook(ctx context.Context, w *analytics.AlertWebhook) error {
	w.CreatedAt = s.stamp()
	w.UpdatedAt = w.CreatedAt
	res, err := s.conn().ExecContext(ctx,
		`INSERT INTO alert_webhooks (`+webhookCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (product_id) DO NOTHING`,
		w.ProductID, w.URL, w.Enabled, int64(analytics.BasisPoints(w.SpikeFactor)), w.SpikeMin, w.Secret, w.CreatedAt, w.UpdatedAt)
	if err != nil {
		return fmt.Errorf("creating alert webhook: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("alert webhook of product %d: %w", w.ProductID, analytics.ErrDuplicate)
	}
	return nil
}

// UpdateAlertWebhook stores w's fields.
func (s *Store) UpdateAlertWebhook(ctx context.Context, w *analytics.AlertWebhook) error {
	w.UpdatedAt = s.stamp()
	res, err := s.conn().ExecContext(ctx,
		`UPDATE alert_webhooks SET url = $2, enabled = $3, spike_factor = $4, spike_min = $5, secret = $6, updated_at = $7 WHERE product_id = $1`,
		w.ProductID, w.URL, w.Enabled, int64(analytics.BasisPoints(w.SpikeFactor)), w.SpikeMin, w.Secret, w.UpdatedAt)
	return affected(res, err, fmt.Sprintf("alert webhook of product %d", w.ProductID))
}

// DeleteAlertWebhook deletes a product's webhook; its alerts stay.
func (s *Store) DeleteAlertWebhook(ctx context.Context, productID int64) error {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM alert_webhooks WHERE product_id = $1`, productID)
	return affected(res, err, fmt.Sprintf("alert webhook of product %d", productID))
}

// affected turns an UPDATE or DELETE that touched no row into ErrNotFound.
func affected(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, analytics.ErrNotFound)
	}
	return nil
}

// EnabledAlertWebhooks returns every product's enabled webhook, by product.
func (s *Store) EnabledAlertWebhooks(ctx context.Context) ([]analytics.AlertWebhook, error) {
	return QueryAll(ctx, s.conn(), "listing alert webhooks", scanWebhook,
		`SELECT `+webhookCols+` FROM alert_webhooks WHERE enabled ORDER BY product_id`)
}

// ClaimAlert inserts a pending alert unless the unique key (product,
// fingerprint, kind, hour) has one: one statement, so that of two nodes
// claiming the same alert exactly one gets a row back.
func (s *Store) ClaimAlert(ctx context.Context, a *analytics.Alert) (bool, error) {
	hour := noHour
	if a.Hour != nil {
		hour = a.Hour.UTC()
	}
	a.CreatedAt, a.Status, a.Attempts, a.LastError, a.DeliveredAt = s.stamp(), analytics.AlertPending, 0, "", nil
	err := s.conn().QueryRowContext(ctx,
		`INSERT INTO error_alerts (product_id, fingerprint, kind, hour, payload, status, attempts, last_error, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, 0, '', $7)
		 ON CONFLICT (product_id, fingerprint, kind, hour) DO NOTHING RETURNING id`,
		a.ProductID, a.Fingerprint, string(a.Kind), hour, string(a.Payload), a.Status, a.CreatedAt).Scan(&a.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claiming alert: %w", err)
	}
	return true, nil
}

// RecordAlertAttempt stores a claimed alert's delivery so far.
func (s *Store) RecordAlertAttempt(ctx context.Context, a *analytics.Alert) error {
	var delivered any
	if a.DeliveredAt != nil {
		delivered = a.DeliveredAt.UTC().Truncate(time.Microsecond)
	}
	res, err := s.conn().ExecContext(ctx,
		`UPDATE error_alerts SET status = $2, attempts = $3, delivered_at = $4, last_error = $5 WHERE id = $1`,
		a.ID, a.Status, a.Attempts, delivered, a.LastError)
	return affected(res, err, fmt.Sprintf("alert %d", a.ID))
}

// ListAlerts returns a product's latest alerts, newest first.
func (s *Store) ListAlerts(ctx context.Context, productID int64, limit int) ([]analytics.Alert, error) {
	return QueryAll(ctx, s.conn(), "listing alerts", func(row Scanner) (analytics.Alert, error) {
		var a analytics.Alert
		var kind, payload string
		var hour time.Time
		var delivered sql.NullTime
		err := row.Scan(&a.ID, &a.ProductID, &a.Fingerprint, &kind, &hour, &payload, &a.Status, &a.Attempts, &a.LastError, &a.CreatedAt, &delivered)
		a.Kind, a.Payload, a.CreatedAt = analytics.AlertKind(kind), []byte(payload), a.CreatedAt.UTC()
		if !hour.Equal(noHour) {
			h := hour.UTC()
			a.Hour = &h
		}
		if delivered.Valid {
			d := delivered.Time.UTC()
			a.DeliveredAt = &d
		}
		return a, err
	}, `SELECT id, product_id, fingerprint, kind, hour, payload, status, attempts, last_error, created_at, delivered_at
	    FROM error_alerts WHERE product_id = $1 ORDER BY id DESC LIMIT $2`, productID, limit)
}
