package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"strata/internal/analytics"
	"strata/internal/cohorts"
)

// Cohorts (docs/queries.md, "Cohorts"): a product's saved sets of persons,
// for signed-in users only (members write, viewers read; never an API key
// or a query token). The operations are internal/cohorts'.

// handleListCohorts is GET /api/v1/products/{id}/cohorts.
func (s *Server) handleListCohorts(w http.ResponseWriter, r *http.Request) error {
	p, err := s.settingsProduct(r)
	if err != nil {
		return err
	}
	items, err := s.Cohorts.List(r.Context(), p.ID)
	if err != nil {
		return err
	}
	writeItems(w, items)
	return nil
}

// handleCreateCohort is POST /api/v1/products/{id}/cohorts.
func (s *Server) handleCreateCohort(w http.ResponseWriter, r *http.Request) error {
	sp, err := s.productOf(r)
	if err != nil {
		return err
	}
	var in cohorts.Input
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	c, err := s.Cohorts.Create(r.Context(), sp.product.ID, in, sp.actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, c)
	return nil
}

// cohortOf reads the product and the {cohortId} of a request.
func (s *Server) cohortOf(r *http.Request) (analytics.Product, int64, error) {
	p, err := s.settingsProduct(r)
	if err != nil {
		return p, 0, err
	}
	id, err := pathID(r, "cohortId")
	if err != nil {
		return p, 0, cohorts.ErrNotFound
	}
	return p, id, nil
}

// handleGetCohort is GET /api/v1/products/{id}/cohorts/{cohortId}.
func (s *Server) handleGetCohort(w http.ResponseWriter, r *http.Request) error {
	p, id, err := s.cohortOf(r)
	if err != nil {
		return err
	}
	c, err := s.Cohorts.Get(r.Context(), p.ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// handleUpdateCohort is PUT /api/v1/products/{id}/cohorts/{cohortId}.
func (s *Server) handleUpdateCohort(w http.ResponseWriter, r *http.Request) error {
	p, id, err := s.cohortOf(r)
	if err != nil {
		return err
	}
	var in cohorts.Input
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	c, err := s.Cohorts.Update(r.Context(), p.ID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// handleDeleteCohort is DELETE /api/v1/products/{id}/cohorts/{cohortId}.
func (s *Server) handleDeleteCohort(w http.ResponseWriter, r *http.Request) error {
	p, id, err := s.cohortOf(r)
	if err != nil {
		return err
	}
	if err := s.Cohorts.Delete(r.Context(), p.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleComputeCohort is POST /api/v1/products/{id}/cohorts/{cohortId}/compute:
// 202 and the cohort, computing in the background.
func (s *Server) handleComputeCohort(w http.ResponseWriter, r *http.Request) error {
	p, id, err := s.cohortOf(r)
	if err != nil {
		return err
	}
	c, err := s.Cohorts.Compute(r.Context(), p.ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, c)
	return nil
}

// handleUploadCohort is PUT /api/v1/products/{id}/cohorts/{cohortId}/members:
// a CSV body of ids, streamed, at most MaxCohortUploadBytes.
func (s *Server) handleUploadCohort(w http.ResponseWriter, r *http.Request) error {
	p, id, err := s.cohortOf(r)
	if err != nil {
		return err
	}
	if r.ContentLength > analytics.MaxCohortUploadBytes {
		return uploadTooLarge()
	}
	body := http.MaxBytesReader(w, r.Body, analytics.MaxCohortUploadBytes)
	c, err := s.Cohorts.Upload(r.Context(), p.ID, id, body)
	var big *http.MaxBytesError
	if errors.As(err, &big) {
		return uploadTooLarge()
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func uploadTooLarge() error {
	return analytics.Errorf(analytics.KindTooLarge, "body_too_large",
		"The CSV is over %d MiB; split it, or upload the ids that matter.", analytics.MaxCohortUploadBytes>>20)
}

// handleCohortMembers is GET /api/v1/products/{id}/cohorts/{cohortId}/members:
// a page of the current members in id order, after the cursor.
func (s *Server) handleCohortMembers(w http.ResponseWriter, r *http.Request) error {
	p, id, err := s.cohortOf(r)
	if err != nil {
		return err
	}
	limit := analytics.MaxCohortMemberPage
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil {
			return analytics.InvalidField("limit", "must be 1 to %d", analytics.MaxCohortMemberPage)
		}
	}
	page, err := s.Cohorts.ListMembers(r.Context(), p.ID, id, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
