package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/experiment"
)

// The flag API: /api/v1/flags, for a query token or a dashboard session of
// the flag's product (never an API key, never CORS-open). The rules on a
// flag's fields are analytics.Flag.Validate's; docs/flags.md explains them.

var (
	errFlagNotFound = analytics.ErrFlagNotFound
	errFlagKeyTaken = analytics.ErrFlagKeyTaken
)

// flagRequest is the body of POST /flags and PUT /flags/{id}. Pointers
// tell a field that was left out from an empty one.
type flagRequest struct {
	Key         *string                 `json:"key"`
	Name        *string                 `json:"name"`
	Description *string                 `json:"description"`
	Enabled     *bool                   `json:"enabled"`
	Rollout     *float64                `json:"rollout"`
	Variants    []analytics.FlagVariant `json:"variants"`
}

// apply sets f's fields from the request. On a new flag a field left out
// takes its default: the key is made from the name, a flag starts disabled
// with a rollout of 100 %, and without arms. On an existing one a field
// left out keeps its value, and the key may be repeated but not changed.
func (req *flagRequest) apply(f *analytics.Flag) error {
	if req.Key != nil {
		if f.ID != 0 && *req.Key != f.Key {
			return analytics.InvalidField("key", "cannot change once the flag exists (it is %q): code and recorded exposures name the flag by it", f.Key)
		}
		f.Key = *req.Key
	}
	if req.Name != nil {
		f.Name = *req.Name
	}
	if f.ID == 0 && req.Key == nil {
		f.Key = analytics.Slug(f.Name)
	}
	if req.Description != nil {
		f.Description = *req.Description
	}
	if req.Enabled != nil {
		f.Enabled = *req.Enabled
	}
	if req.Rollout != nil {
		f.Rollout = *req.Rollout
	} else if f.ID == 0 {
		f.Rollout = 100
	}
	if req.Variants != nil {
		f.Variants = req.Variants
	}
	if f.Variants == nil {
		f.Variants = []analytics.FlagVariant{} // [] on the wire, never null
	}
	return f.Validate()
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
	f, err := s.Flags.Flag(r.Context(), p.ProductID, id)
	return p, f, flagStoreError(err)
}

// flagStoreError translates the store's misses into the API's answers.
func flagStoreError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, analytics.ErrNotFound):
		return errFlagNotFound
	case errors.Is(err, analytics.ErrDuplicate):
		return errFlagKeyTaken
	}
	return err
}

// readFlag decodes a flag body onto f and validates the result.
func readFlag(w http.ResponseWriter, r *http.Request, f *analytics.Flag) error {
	var req flagRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	return req.apply(f)
}

// handleCreateFlag is POST /api/v1/flags.
func (s *Server) handleCreateFlag(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	f := analytics.Flag{ProductID: p.ProductID}
	if err := readFlag(w, r, &f); err != nil {
		return err
	}
	if err := s.Flags.CreateFlag(r.Context(), &f, p.Describe()); err != nil {
		return flagStoreError(err)
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
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Flag, error) { return s.Flags.ListFlags(ctx, p.ProductID) })
	if err != nil {
		return err
	}
	if list == nil {
		list = []analytics.Flag{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": list})
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
	p, f, err := s.flagTarget(r)
	if err != nil {
		return err
	}
	arms := f.Variants // readFlag replaces the slice, never edits it
	if err := readFlag(w, r, &f); err != nil {
		return err
	}
	if !analytics.SameSplit(arms, f.Variants) {
		if err := s.refuseWhileRunning(r, p.ProductID, f.ID, "changing its arms or weights"); err != nil {
			return err
		}
	}
	if err := s.Flags.UpdateFlag(r.Context(), &f, p.Describe()); err != nil {
		return flagStoreError(err)
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
	if err := s.refuseWhileRunning(r, p.ProductID, id, "deleting the flag"); err != nil {
		return err
	}
	if err := s.Flags.DeleteFlag(r.Context(), p.ProductID, id, p.Describe()); err != nil {
		return flagStoreError(err)
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
		return s.Flags.FlagChanges(ctx, p.ProductID, id)
	})
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return errFlagNotFound // a flag that never existed in this product has no trail
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": changes})
	return nil
}

// refuseWhileRunning answers 409 experiment_running when the flag's arms
// are under a running experiment: changing them would mix users of two
// splits in one result (docs/flags.md, "Experiments").
func (s *Server) refuseWhileRunning(r *http.Request, productID, flagID int64, what string) error {
	running, err := experiment.FlagUnderTest(r.Context(), s.Experiments, productID, flagID)
	if err != nil || !running {
		return err
	}
	return analytics.Errorf(analytics.KindConflict, "experiment_running",
		"The flag's experiment is running: pause it (or apply a winner) before %s.", what)
}
