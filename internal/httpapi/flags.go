package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/experiment"
)

// The flag API: /api/v1/flags, for a query token or a dashboard session of
// the flag's product (never an API key, never CORS-open). The rules on a
// flag's fields are analytics.Flag.Validate's; docs/flags.md explains them.

var errFlagNotFound = analytics.ErrFlagNotFound

// flagRequest is the body of POST /flags and PUT /flags/{id}. Pointers
// tell a field that was left out from an empty one; what a field left out
// means is experiment.Flags's.
type flagRequest struct {
	Key         *string                 `json:"key"`
	Name        *string                 `json:"name"`
	Description *string                 `json:"description"`
	Enabled     *bool                   `json:"enabled"`
	Rollout     *float64                `json:"rollout"`
	Variants    []analytics.FlagVariant `json:"variants"`
	// Conditions: null or left out keeps a flag's conditions (none for a
	// new flag); [] removes them.
	Conditions []analytics.FlagCondition `json:"conditions"`
}

// flagID reads the {id} of a flag path; anything but a positive integer
// names no flag.
func flagID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, errFlagNotFound
	}
	return id, nil
}

// flagTarget authenticates a request on a /flags/{id} path and reads the
// flag, of the credential's product.
func (s *Server) flagTarget(r *http.Request) (auth.Principal, analytics.Flag, error) {
	p, err := s.principal(r)
	if err != nil {
		return p, analytics.Flag{}, err
	}
	id, err := flagID(r)
	if err != nil {
		return p, analytics.Flag{}, err
	}
	f, err := s.FlagOps.Get(r.Context(), p.ProductID, id)
	return p, f, err
}

// handleCreateFlag is POST /api/v1/flags.
func (s *Server) handleCreateFlag(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	var req flagRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	f, err := s.FlagOps.Create(r.Context(), p.Describe(), p.ProductID, experiment.FlagFields(req))
	if err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID)
	writeJSON(w, http.StatusCreated, f)
	return nil
}

// handleListFlags is GET /api/v1/flags.
func (s *Server) handleListFlags(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Flag, error) { return s.FlagOps.List(ctx, p.ProductID) })
	if err != nil {
		return err
	}
	writeItems(w, list)
	return nil
}

// handleGetFlag is GET /api/v1/flags/{id}.
func (s *Server) handleGetFlag(w http.ResponseWriter, r *http.Request) error {
	_, f, err := s.flagTarget(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, f)
	return nil
}

// handleUpdateFlag is PUT /api/v1/flags/{id}: the fields sent replace the
// flag's; those left out keep their values.
func (s *Server) handleUpdateFlag(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id, err := flagID(r)
	if err != nil {
		return err
	}
	var req flagRequest
	if err := readJSON(w, r, &req); err != nil {
		// A flag the product does not have is answered 404 before its
		// body is judged, whatever the body.
		if _, err := s.FlagOps.Get(r.Context(), p.ProductID, id); err != nil {
			return err
		}
		return err
	}
	f, err := s.FlagOps.Update(r.Context(), p.Describe(), p.ProductID, id, experiment.FlagFields(req))
	if err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID)
	writeJSON(w, http.StatusOK, f)
	return nil
}

// handleDeleteFlag is DELETE /api/v1/flags/{id}.
func (s *Server) handleDeleteFlag(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id, err := flagID(r)
	if err != nil {
		return err
	}
	if err := s.FlagOps.Delete(r.Context(), p.Describe(), p.ProductID, id); err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleFlagChanges is GET /api/v1/flags/{id}/changes: the flag's audit
// trail, newest first; it outlives the flag.
func (s *Server) handleFlagChanges(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	id, err := flagID(r)
	if err != nil {
		return err
	}
	changes, err := readMeta(s, r, func(ctx context.Context) ([]analytics.FlagChange, error) {
		return s.FlagOps.Changes(ctx, p.ProductID, id)
	})
	if err != nil {
		return err
	}
	writeItems(w, changes)
	return nil
}
