package httpapi

import (
	"net/http"
	"time"

	"strata/internal/analytics"
)

// handleHealth answers while the process runs: a liveness probe.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// handleReady answers 200 only while storage is open and the writer runs,
// so that a balancer stops sending traffic before shutdown drains.
func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) error {
	if s.Ready == nil || !s.Ready() {
		return &analytics.Error{Kind: analytics.KindUnavailable, Code: "unavailable",
			Message: "The server is starting or shutting down.", RetryAfter: time.Second}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}
