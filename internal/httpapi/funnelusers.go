package httpapi

import (
	"context"
	"net/http"

	"strata/internal/analytics"
)

// handleFunnelUsers is POST /api/v1/query/funnel/users: a page of the users
// who reached one step of the funnel the same request body describes, or
// dropped off after it (docs/queries.md, "Who converted, who dropped
// off"). It is read and budgeted as the funnel endpoint is: the
// credential's query budget, then an admission slot; a shared link's
// routes do not reach it.
func (s *Server) handleFunnelUsers(w http.ResponseWriter, r *http.Request) error {
	return s.serveBody(w, r, func(ctx context.Context, sc analytics.EventRange, body []byte) (any, error) {
		if _, ok := sharePrincipal(r); ok {
			return nil, errNotShared
		}
		return s.Queries.FunnelUsers(ctx, sc, body)
	})
}
