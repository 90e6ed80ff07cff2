package httpapi

import (
	"net/http"
)

// handleUserEvents is GET /api/v1/users/{distinctId}/events: one user's
// latest events of the credential's product, newest first, paged by
// before (docs/queries.md, "A user's events"). It reads events, so it is
// a query like the others: a query token or a dashboard session (an API
// key is 403 key_not_allowed), the query budget, ?env=, and the engine's
// admission. The dashboard's person page links its events to their
// sessions' replays by sessionId.
func (s *Server) handleUserEvents(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.readScope(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	res, err := s.Queries.UserEvents(r.Context(), sc, r.PathValue("distinctId"), q.Get("before"), q.Get("limit"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeJSON(w, http.StatusOK, res)
	return nil
}
