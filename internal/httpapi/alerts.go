package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"strata/internal/alerts"
	"strata/internal/analytics"
)

// The alert API: /api/v1/alerts, for a query token or a dashboard session
// of the product (never an API key, never CORS-open). A product has at
// most one webhook; the job in internal/alerts sends to it
// (docs/errors.md, "Alerts").

var errAlertWebhookNotFound = analytics.Errorf(analytics.KindNotFound, "alert_webhook_not_found",
	"This product has no alert webhook; create one with PUT /api/v1/alerts/webhook.")

// Limits of GET /api/v1/alerts.
const (
	defaultAlertsLimit = 50
	maxAlertsLimit     = 200
)

// webhookRequest is the body of PUT /api/v1/alerts/webhook. Pointers tell
// a field that was left out from an empty one.
type webhookRequest struct {
	URL          *string  `json:"url"`
	Enabled      *bool    `json:"enabled"`
	SpikeFactor  *float64 `json:"spikeFactor"`
	SpikeMin     *int64   `json:"spikeMinCount"`
	RotateSecret bool     `json:"rotateSecret"`
}

// webhookAnswer is a webhook as the API shows it: with its secret only
// when it was just made.
type webhookAnswer struct {
	analytics.AlertWebhook
	Secret string `json:"secret,omitempty"`
}

func showWebhook(w analytics.AlertWebhook, withSecret bool) webhookAnswer {
	w.SecretPrefix = alerts.ShownSecret(w.Secret)
	a := webhookAnswer{AlertWebhook: w}
	if withSecret {
		a.Secret = w.Secret
	}
	return a
}

// handleGetAlertWebhook is GET /api/v1/alerts/webhook.
func (s *Server) handleGetAlertWebhook(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	hook, err := s.Alerts.AlertWebhook(r.Context(), p.ProductID)
	if errors.Is(err, analytics.ErrNotFound) {
		return errAlertWebhookNotFound
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, showWebhook(hook, false))
	return nil
}

// handlePutAlertWebhook is PUT /api/v1/alerts/webhook: it creates the
// product's webhook (201, with the new secret) or updates it (200; with a
// new secret when rotateSecret is true). A field left out keeps its value,
// or on creation its default: enabled, spike factor 5, minimum 10.
func (s *Server) handlePutAlertWebhook(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	var req webhookRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	ctx := r.Context()
	for range 2 { // a creation that lost a race is made an update
		hook, err := s.Alerts.AlertWebhook(ctx, p.ProductID)
		create := errors.Is(err, analytics.ErrNotFound)
		if err != nil && !create {
			return err
		}
		if create {
			hook = analytics.AlertWebhook{ProductID: p.ProductID, Enabled: true, SpikeFactor: analytics.DefaultSpikeFactor,
				SpikeMin: analytics.DefaultSpikeMin, Secret: alerts.NewSecret()}
		}
		if req.URL != nil {
			hook.URL = *req.URL
		}
		if req.Enabled != nil {
			hook.Enabled = *req.Enabled
		}
		if req.SpikeFactor != nil {
			hook.SpikeFactor = *req.SpikeFactor
		}
		if req.SpikeMin != nil {
			hook.SpikeMin = *req.SpikeMin
		}
		if err := hook.Validate(s.AlertSender.Policy()); err != nil {
			return err
		}
		if req.RotateSecret && !create {
			hook.Secret = alerts.NewSecret()
		}
		if create {
			err = s.Alerts.CreateAlertWebhook(ctx, &hook)
			if errors.Is(err, analytics.ErrDuplicate) {
				continue
			}
		} else {
			err = s.Alerts.UpdateAlertWebhook(ctx, &hook)
			if errors.Is(err, analytics.ErrNotFound) {
				continue // deleted meanwhile: create it
			}
		}
		if err != nil {
			return err
		}
		status := http.StatusOK
		if create {
			status = http.StatusCreated
		}
		writeJSON(w, status, showWebhook(hook, create || req.RotateSecret))
		return nil
	}
	return analytics.Errorf(analytics.KindConflict, "alert_webhook_conflict",
		"The webhook was changed by another request at the same time; send the request again.")
}

// handleDeleteAlertWebhook is DELETE /api/v1/alerts/webhook.
func (s *Server) handleDeleteAlertWebhook(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	err = s.Alerts.DeleteAlertWebhook(r.Context(), p.ProductID)
	if errors.Is(err, analytics.ErrNotFound) {
		return errAlertWebhookNotFound
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleTestAlertWebhook is POST /api/v1/alerts/webhook/test: one signed
// delivery of kind "test" to the webhook (enabled or not), made while the
// request waits, and what the receiver answered: its status, or why there
// was none. It is charged to the credential's query budget, so that it
// cannot be made into a flood.
func (s *Server) handleTestAlertWebhook(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	if err := s.allowQuery(p); err != nil {
		return err
	}
	hook, err := s.Alerts.AlertWebhook(r.Context(), p.ProductID)
	if errors.Is(err, analytics.ErrNotFound) {
		return errAlertWebhookNotFound
	}
	if err != nil {
		return err
	}
	res := s.AlertSender.SendTest(r.Context(), hook, s.PublicURL)
	writeJSON(w, http.StatusOK, map[string]any{"delivered": res.Delivered, "status": res.Status, "error": res.Error,
		"tookMs": res.Took.Milliseconds()})
	return nil
}

// handleListAlerts is GET /api/v1/alerts: the product's latest alerts,
// newest first, with how each delivery went.
func (s *Server) handleListAlerts(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	limit := defaultAlertsLimit
	if raw := r.URL.Query().Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > maxAlertsLimit {
			return analytics.InvalidField("limit", "must be a whole number from 1 to %d, not %q", maxAlertsLimit, raw)
		}
		limit = n
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Alert, error) {
		return s.Alerts.ListAlerts(ctx, p.ProductID, limit)
	})
	if err != nil {
		return err
	}
	writeItems(w, list)
	return nil
}
