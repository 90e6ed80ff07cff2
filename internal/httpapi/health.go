package httpapi

import (
	"net/http"
	"time"

	"strata/internal/analytics"
)

// handleVersion is GET /api/v1/version: the build that is running
// (internal/buildinfo), as `strata version` prints it. Like the probes it
// takes no credential, so that a deploy can check what runs; unlike the
// SDK's paths it sends no CORS headers, as no customer's page needs it.
func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, s.Build)
	return nil
}

// handleHealth answers while the process runs: a liveness probe.
func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// handleReady answers 200 only while the server takes traffic: storage is
// open and sound, the disk has room and the writer runs. Otherwise it
// answers 503 with the reason (unavailable while starting or stopping,
// storage_full, storage_unavailable), so that a balancer stops sending
// traffic and an operator sees why.
func (s *Server) handleReady(w http.ResponseWriter, _ *http.Request) error {
	if s.Ready == nil {
		return &analytics.Error{Kind: analytics.KindUnavailable, Code: "unavailable",
			Message: "The server is starting or shutting down.", RetryAfter: time.Second}
	}
	if err := s.Ready(); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}
