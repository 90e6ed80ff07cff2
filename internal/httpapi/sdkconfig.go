package httpapi

import (
	"net/http"

	"strata/internal/flags"
)

// sdkConfig is the body of GET /api/v1/config, what the browser SDK reads
// to evaluate flags and experiments (docs/flags.md, "The configuration").
type sdkConfig struct {
	Flags           []flags.Flag `json:"flags"`
	MessagesEnabled bool         `json:"messagesEnabled"`
	ErrorTracking   bool         `json:"errorTracking"`
	Replay          bool         `json:"replay"`
}

// handleSDKConfig answers the SDK's configuration request for the product
// of the API key in the query (or X-API-Key). Flags are defined per product
// in the dashboard; a product without flags gets an empty list, and the SDK
// then answers "control" for every flag, as the contract says for a flag
// that does not exist. A test key is refused from a page that is not local,
// as in ingest. Browsers may cache the answer for a minute.
func (s *Server) handleSDKConfig(w http.ResponseWriter, r *http.Request) error {
	// The key comes from the header, else the query, in ingest's order.
	plain := r.Header.Get("X-API-Key")
	if plain == "" {
		plain = r.URL.Query().Get("api_key")
	}
	key, err := s.Keys.Authenticate(r.Context(), plain)
	if err != nil {
		return err
	}
	if err := testKeyOrigin(key.Env, []byte(r.Header.Get("Origin"))); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "max-age=60")
	writeJSON(w, http.StatusOK, sdkConfig{Flags: []flags.Flag{}})
	return nil
}
