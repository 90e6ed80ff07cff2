package httpapi

import (
	"fmt"
	"net/http"

	"strata/internal/analytics"
)

// retentionAnswer is the body of GET and PUT /products/{id}/retention: the
// product's periods, and the server-wide replay period that is their
// default and ceiling, so that the dashboard can say what 0 means.
type retentionAnswer struct {
	analytics.DataRetention
	ReplayDefaultDays int `json:"replayDefaultDays"`
}

// retentionRequest is the body of PUT /products/{id}/retention: every
// period, each in days, 0 for the default. A missing field is 0.
type retentionRequest struct {
	EventsDays  *int `json:"eventsDays"`
	ErrorsDays  *int `json:"errorsDays"`
	ReplaysDays *int `json:"replaysDays"`
}

// handleGetRetention is GET /api/v1/products/{id}/retention.
func (s *Server) handleGetRetention(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.retentionOf(p))
	return nil
}

// handleSetRetention is PUT /api/v1/products/{id}/retention: the
// product's periods, all at once. The retention job applies them at its
// next round (docs/privacy.md, "Retention").
func (s *Server) handleSetRetention(w http.ResponseWriter, r *http.Request) error {
	pr, err := s.productOf(r)
	if err != nil {
		return err
	}
	p := pr.product
	var in retentionRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	if in.EventsDays == nil && in.ErrorsDays == nil && in.ReplaysDays == nil {
		return analytics.Errorf(analytics.KindInvalid, "invalid_request", "Send eventsDays, errorsDays and replaysDays, in days (0 for the default).")
	}
	days := func(v *int) int {
		if v == nil {
			return 0
		}
		return *v
	}
	set := analytics.DataRetention{EventsDays: days(in.EventsDays), ErrorsDays: days(in.ErrorsDays), ReplaysDays: days(in.ReplaysDays)}
	p, err = s.Admin.SetProductRetention(r.Context(), p.ID, set)
	if err != nil {
		return err
	}
	// A period is a deletion that has not happened yet: the audit log
	// records who set it (docs/privacy.md, "The audit log").
	s.Privacy.Audit(r.Context(), p.ID, pr.actor, fmt.Sprintf("retention set: events %d, errors %d, replays %d days (0: the default)",
		set.EventsDays, set.ErrorsDays, set.ReplaysDays))
	writeJSON(w, http.StatusOK, s.retentionOf(p))
	return nil
}

// retentionOf is p's retention answer.
func (s *Server) retentionOf(p analytics.Product) retentionAnswer {
	return retentionAnswer{DataRetention: p.Retention, ReplayDefaultDays: int(s.ReplayRetention.Hours() / 24)}
}
