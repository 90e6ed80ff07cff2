package httpapi

import (
	"context"
	"net/http"

	"strata/internal/analytics"
)

// handlePaths is POST /api/v1/query/paths: the most common paths after a
// start node, before an end node, or from the first node of a visit
// (docs/queries.md, "Paths"). It is read and budgeted as the trend
// endpoint is: the credential's query budget, then an admission slot.
func (s *Server) handlePaths(w http.ResponseWriter, r *http.Request) error {
	return s.serveBody(w, r, func(ctx context.Context, sc analytics.EventRange, body []byte) (any, error) {
		if _, ok := sharePrincipal(r); ok {
			return nil, errNotShared
		}
		return s.Queries.Paths(ctx, sc, body)
	})
}

// handlePathUsers is POST /api/v1/query/paths/users: a page of the users
// who reached one node of the paths the same request body describes.
func (s *Server) handlePathUsers(w http.ResponseWriter, r *http.Request) error {
	return s.serveBody(w, r, func(ctx context.Context, sc analytics.EventRange, body []byte) (any, error) {
		if _, ok := sharePrincipal(r); ok {
			return nil, errNotShared
		}
		return s.Queries.PathUsers(ctx, sc, body)
	})
}
