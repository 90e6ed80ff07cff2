// Package httpapi is Strata's HTTP surface: one route table, one file per
// resource, and errors turned into statuses in one place (errors.go).
// Handlers return errors; the wrap adapter writes them.
package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/ingest"
	"strata/internal/query"
	"strata/internal/ratelimit"
)

// Server holds what the handlers need. Every field is set by the app
// package; none is read from a global.
type Server struct {
	Keys             *auth.Keyring
	Limiter          *ratelimit.Limiter
	DefaultRateLimit int
	Pipeline         *ingest.Pipeline
	Writer           *ingest.Writer
	Queries          *query.Engine
	Saved            analytics.SavedQueryStore
	// Ready reports whether storage is open and the writer runs.
	Ready func() bool
	Now   func() time.Time
	Log   *slog.Logger
}

// Handler returns the route table. CORS headers are sent on the public SDK
// paths only (/e and the SDK script); every other path is same-origin.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	h := func(f handlerFunc) http.Handler { return wrap(s.Log, f) }

	mux.Handle("POST /e", publicCORS(h(s.handleIngest)))
	mux.Handle("OPTIONS /e", publicCORS(http.HandlerFunc(preflight)))
	mux.Handle("/e", publicCORS(h(methodNotAllowed("POST, OPTIONS"))))

	mux.Handle("POST /api/v1/query/funnel", h(s.queryHandler(analytics.KindFunnel)))
	mux.Handle("POST /api/v1/query/trend", h(s.queryHandler(analytics.KindTrend)))
	mux.Handle("POST /api/v1/query/retention", h(s.queryHandler(analytics.KindRetention)))
	mux.Handle("GET /api/v1/query/bots", h(s.handleBots))
	mux.Handle("GET /api/v1/queries", h(s.handleListSaved))
	mux.Handle("POST /api/v1/queries", h(s.handleCreateSaved))
	mux.Handle("GET /api/v1/queries/{id}", h(s.handleGetSaved))
	mux.Handle("PUT /api/v1/queries/{id}", h(s.handleUpdateSaved))
	mux.Handle("DELETE /api/v1/queries/{id}", h(s.handleDeleteSaved))
	mux.Handle("POST /api/v1/queries/{id}/run", h(s.handleRunSaved))

	mux.Handle("GET /sdk/v1/sdk.min.js", serveSDK(sdkScript))
	mux.Handle("GET /sdk/v1/sdk.min.js.map", serveSDK(sdkMap))

	mux.Handle("GET /healthz", h(s.handleHealth))
	mux.Handle("GET /readyz", h(s.handleReady))

	mux.Handle("/", h(func(http.ResponseWriter, *http.Request) error { return errNotFound }))
	return mux
}

// publicCORS opens a path to every origin: the SDK runs on customers'
// sites, and access is gated by the API key, not by origin.
func publicCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "Retry-After")
		next.ServeHTTP(w, r)
	})
}

// preflight answers a CORS preflight and lets the browser cache it for a
// day, so that each SDK request is not preceded by an OPTIONS.
func preflight(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Content-Encoding, X-API-Key")
	w.Header().Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}
