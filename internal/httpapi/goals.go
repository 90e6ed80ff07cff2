package httpapi

import (
	"context"
	"net/http"

	"strata/internal/analytics"
	"strata/internal/goals"
	"strata/internal/sharing"
)

// Goals (docs/queries.md, "Goals"; docs/dashboard.md, "Goals"): a
// product's settings add, list and delete them, as its shared links; the
// Overview's Goals card reads their conversions through
// POST /api/v1/query/goals, a query like the others.

// handleListGoals is GET /api/v1/products/{id}/goals.
func (s *Server) handleListGoals(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	items, err := s.Goals.List(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeItems(w, items)
	return nil
}

// handleCreateGoal is POST /api/v1/products/{id}/goals.
func (s *Server) handleCreateGoal(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	var in struct {
		Kind  analytics.GoalKind `json:"kind"`
		Event string             `json:"event"`
		Path  string             `json:"path"`
	}
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	g, err := s.Goals.Create(r.Context(), p.ID, in.Kind, in.Event, in.Path)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, g)
	return nil
}

// handleDeleteGoal is DELETE /api/v1/products/{id}/goals/{goalId}.
func (s *Server) handleDeleteGoal(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "goalId")
	if err != nil {
		return goals.ErrNotFound
	}
	if err := s.Goals.Delete(r.Context(), p.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleGoalsQuery is POST /api/v1/query/goals: the conversions of the
// product's goals over a range, or one goal's by source, channel, country
// or device type. It is read and budgeted as the sessions endpoint is; a
// shared link may run it with the shared filters only.
func (s *Server) handleGoalsQuery(w http.ResponseWriter, r *http.Request) error {
	var check func(analytics.GoalsQuery) error
	if _, ok := sharePrincipal(r); ok {
		check = sharing.CheckGoals
	}
	return s.serveBody(w, r, func(ctx context.Context, sc analytics.EventRange, body []byte) (any, error) {
		return s.Goals.Report(ctx, sc, body, check)
	})
}
