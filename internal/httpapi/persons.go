package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"

	"strata/internal/admin"
	"strata/internal/analytics"
	"strata/internal/persons"
	"strata/internal/privacy"
)

// Persons (docs/privacy.md): deleting persons everywhere, exporting one,
// and the product's audit log of both. Admin-only (routes.go); the
// credential is a dashboard session, named in the audit log.

// maxDeletionBody holds analytics.MaxPersonDeletionIDs ids of the longest
// length, quoted, with room to spare.
const maxDeletionBody = 256 << 10

// handleRequestDeletion is POST /api/v1/products/{id}/persons/deletions:
// a job that deletes every trace of the ids, answered 202 at once.
func (s *Server) handleRequestDeletion(w http.ResponseWriter, r *http.Request) error {
	pr, err := s.productOf(r)
	if err != nil {
		return err
	}
	var in struct {
		DistinctIDs []string `json:"distinctIds"`
	}
	if err := decodeBody(w, r, maxDeletionBody, &in); err != nil {
		return err
	}
	d, err := s.Privacy.RequestDeletion(r.Context(), pr.product.ID, pr.actor, in.DistinctIDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, d)
	return nil
}

// handleGetDeletion is GET /api/v1/products/{id}/persons/deletions/{job}.
func (s *Server) handleGetDeletion(w http.ResponseWriter, r *http.Request) error {
	pr, err := s.productOf(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "job")
	if err != nil {
		return analytics.Errorf(analytics.KindNotFound, "deletion_not_found", "There is no such deletion job in this product.")
	}
	d, err := s.Privacy.Deletion(r.Context(), pr.product.ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// handleExportPerson is GET /api/v1/products/{id}/persons/export?distinctId=:
// one JSON document, streamed (privacy.Service.Export, streamExport). The id is a query
// parameter, not a path segment: /persons/{distinctId}/export would clash
// with /persons/deletions/{job} in the route table (a person named
// "deletions"), and an id may hold any character.
func (s *Server) handleExportPerson(w http.ResponseWriter, r *http.Request) error {
	pr, err := s.productOf(r)
	if err != nil {
		return err
	}
	// The export reads like a query (a scan of the product's events for
	// the person's), so it holds a query slot, taken before the answer
	// starts so that a busy server can still say 503 server_busy.
	var admit func(context.Context) (func(), error)
	if s.Queries != nil && s.Queries.Admission != nil {
		admit = s.Queries.Admission.Acquire
	}
	return streamExport(w, r, s.Privacy, s.Log, admit, pr.product.ID, pr.actor)
}

// streamExport answers an export of the request's distinctId. Once the
// first byte is out a failure can only cut the document short, which a
// client sees as invalid JSON; it is logged.
// admit, when set, holds a query slot for the export's length.
func streamExport(w http.ResponseWriter, r *http.Request, p *privacy.Service, log *slog.Logger,
	admit func(context.Context) (func(), error), productID int64, actor string) error {
	id := r.URL.Query().Get("distinctId")
	if err := privacy.CheckExportID(id); err != nil {
		return err
	}
	if admit != nil {
		release, err := admit(r.Context())
		if err != nil {
			return err
		}
		defer release()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="person-export.json"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := p.Export(r.Context(), productID, actor, id, w); err != nil {
		log.Error("exporting a person", "product", productID, "err", err)
	}
	return nil
}

// handleAuditLog is GET /api/v1/products/{id}/audit-log?before=&limit=:
// a page of the product's audit log, newest first; next is the before of
// the following page, 0 after the last.
func (s *Server) handleAuditLog(w http.ResponseWriter, r *http.Request) error {
	pr, err := s.productOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	before, limit := int64(0), analytics.AuditPageSize
	if v := q.Get("before"); v != "" {
		if before, err = strconv.ParseInt(v, 10, 64); err != nil || before < 1 {
			return analytics.InvalidField("before", "must be a positive integer: the next value of the previous page")
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > analytics.AuditPageSize {
			return analytics.InvalidField("limit", "must be 1 to %d", analytics.AuditPageSize)
		}
	}
	items, err := s.Privacy.AuditLog(r.Context(), pr.product.ID, before, limit)
	if err != nil {
		return err
	}
	next := int64(0)
	if len(items) == limit {
		next = items[len(items)-1].ID
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "next": next})
	return nil
}

// AdminPrivacyRoutes adds the privacy operations to the admin socket's
// routes (AdminHandler), for the CLI. The socket admits the server's
// owner alone; the audit log names it "admin-socket".
func AdminPrivacyRoutes(mux *http.ServeMux, p *privacy.Service, log *slog.Logger) {
	AdminPersonRoutes(mux, p, nil, log)
}

// PersonRebuild is the operation behind POST /persons/rebuild of the admin
// socket: a product's profiles written from its events (persons.Rebuild).
type PersonRebuild func(ctx context.Context, productID int64) (persons.RebuildReport, error)

// AdminPersonRoutes adds the privacy operations and, when rebuild is not
// nil, the rebuild of profiles to the admin socket's routes.
func AdminPersonRoutes(mux *http.ServeMux, p *privacy.Service, rebuild PersonRebuild, log *slog.Logger) {
	h := func(f handlerFunc) http.Handler { return wrap(log, f) }
	const actor = "admin-socket"
	product := func(r *http.Request) (int64, error) {
		id, err := strconv.ParseInt(r.URL.Query().Get("product"), 10, 64)
		if err != nil || id < 1 {
			return 0, analytics.InvalidField("product", "must be a product id")
		}
		return id, nil
	}
	mux.Handle("POST /persons/deletions", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.DeletionRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		d, err := p.RequestDeletion(r.Context(), in.ProductID, actor, in.DistinctIDs)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, d)
		return nil
	}))
	mux.Handle("GET /persons/deletions", h(func(w http.ResponseWriter, r *http.Request) error {
		pid, err := product(r)
		if err != nil {
			return err
		}
		job, err := strconv.ParseInt(r.URL.Query().Get("job"), 10, 64)
		if err != nil {
			return analytics.InvalidField("job", "must be a job id")
		}
		d, err := p.Deletion(r.Context(), pid, job)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, d)
		return nil
	}))
	mux.Handle("GET /persons/export", h(func(w http.ResponseWriter, r *http.Request) error {
		pid, err := product(r)
		if err != nil {
			return err
		}
		return streamExport(w, r, p, log, nil, pid, actor)
	}))
	if rebuild == nil {
		return
	}
	mux.Handle("POST /persons/rebuild", h(func(w http.ResponseWriter, r *http.Request) error {
		var in admin.RebuildRequest
		if err := decodeJSON(r, &in); err != nil {
			return err
		}
		if in.ProductID < 1 {
			return analytics.InvalidField("productId", "must be a product id")
		}
		report, err := rebuild(r.Context(), in.ProductID)
		if err != nil {
			return err
		}
		log.Info("person profiles rebuilt", "product", in.ProductID, "persons", report.Persons, "trait_events", report.TraitEvents, "seconds", report.Seconds)
		writeJSON(w, http.StatusOK, report)
		return nil
	}))
}
