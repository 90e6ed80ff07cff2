package httpapi

import (
	"net/http"
	"strings"
)

// Pages serves the dashboard, a single-page app built into the binary
// (internal/dashboard).
type Pages interface {
	// ServePage answers a GET or HEAD request for a dashboard page or
	// asset and reports whether it did; when it did not, the path is not
	// the dashboard's and the caller answers 404.
	ServePage(w http.ResponseWriter, r *http.Request) bool
}

// handleFallback answers every path the route table does not name: the
// dashboard's pages and assets, or a JSON 404. Paths under /api stay JSON
// 404s whatever the dashboard would make of them, so that an API client
// never gets a page.
func (s *Server) handleFallback(w http.ResponseWriter, r *http.Request) error {
	p := r.URL.Path
	api := p == "/api" || strings.HasPrefix(p, "/api/")
	if s.Pages != nil && !api && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		if s.Pages.ServePage(w, r) {
			return nil
		}
	}
	return errNotFound
}
