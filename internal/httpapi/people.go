package httpapi

import (
	"context"
	"errors"
	"net/http"

	"strata/internal/analytics"
	"strata/internal/persons"
)

// People (docs/queries.md, "People"): the person profiles kept from the
// stored events, read with a query token or a dashboard session (an API
// key is 403 key_not_allowed), from the credential's query budget and
// under the engine's admission.

// handleListPersons is GET /api/v1/persons: one page of the product's
// persons, latest seen first, searched, filtered and paged by its cursor.
func (s *Server) handleListPersons(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	pq, columns, err := persons.ParseList(sc.ProductID, persons.ListRequest{Search: q.Get("search"), Where: q.Get("where"),
		Columns: q.Get("columns"), Cursor: q.Get("cursor"), Limit: q.Get("limit")})
	if err != nil {
		return err
	}
	page, err := readMeta(s, r, func(ctx context.Context) (persons.Page, error) {
		return persons.List(ctx, s.People, s.PersonCounts, pq, columns)
	})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeJSON(w, http.StatusOK, page)
	return nil
}

var errPersonNotFound = analytics.Errorf(analytics.KindNotFound, "person_not_found", "This product has no person with this id.")

// handleGetPerson is GET /api/v1/persons/{distinctId}: one person's
// properties and first and last seen, 404 when the product has no
// profile of the id.
func (s *Server) handleGetPerson(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	p, err := readMeta(s, r, func(ctx context.Context) (analytics.Person, error) {
		return s.People.Person(ctx, sc.ProductID, r.PathValue("distinctId"))
	})
	if errors.Is(err, analytics.ErrNotFound) {
		return errPersonNotFound
	} else if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeJSON(w, http.StatusOK, p)
	return nil
}
