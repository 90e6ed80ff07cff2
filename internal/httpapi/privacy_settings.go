package httpapi

import (
	"fmt"
	"net/http"

	"strata/internal/analytics"
)

// privacySettingsRequest is the body of PUT /products/{id}/privacy: both
// settings, a missing one off.
type privacySettingsRequest struct {
	Cookieless            *bool `json:"cookieless"`
	RespectPrivacySignals *bool `json:"respectPrivacySignals"`
}

// handleGetPrivacySettings is GET /api/v1/products/{id}/privacy.
func (s *Server) handleGetPrivacySettings(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p.Privacy)
	return nil
}

// handleSetPrivacySettings is PUT /api/v1/products/{id}/privacy: what the
// product asks of its browser SDKs, both settings at once. The SDKs learn
// it from their configuration (GET /api/v1/config), which this node
// serves changed at once and the others within configTTL.
func (s *Server) handleSetPrivacySettings(w http.ResponseWriter, r *http.Request) error {
	pr, err := s.productOf(r)
	if err != nil {
		return err
	}
	var in privacySettingsRequest
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	if in.Cookieless == nil && in.RespectPrivacySignals == nil {
		return analytics.Errorf(analytics.KindInvalid, "invalid_request", "Send cookieless and respectPrivacySignals, each true or false.")
	}
	set := analytics.PrivacySettings{Cookieless: in.Cookieless != nil && *in.Cookieless,
		RespectPrivacySignals: in.RespectPrivacySignals != nil && *in.RespectPrivacySignals}
	p, err := s.Admin.SetProductPrivacy(r.Context(), pr.product.ID, set)
	if err != nil {
		return err
	}
	s.FlagsChanged(p.ID)
	// What a product's visitors are asked to keep, and whether their
	// signals are honoured, is a privacy decision: the audit log records
	// who made it (docs/privacy.md, "The audit log").
	s.Privacy.Audit(r.Context(), p.ID, pr.actor, fmt.Sprintf("privacy set: cookieless %s, privacy signals %s",
		onOff(set.Cookieless), onOff(set.RespectPrivacySignals)))
	writeJSON(w, http.StatusOK, p.Privacy)
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
