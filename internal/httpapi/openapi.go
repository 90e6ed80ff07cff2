package httpapi

import (
	"net/http"

	"strata/api"
	"strata/internal/webasset"
)

// apiSpec is the HTTP contract, api/openapi.yaml, as this binary was built
// with it.
var apiSpec = webasset.New("openapi.yaml", api.OpenAPI)

// serveSpec serves the HTTP contract, GET /api/v1/openapi.yaml: to anyone,
// since the contract is public and holds nothing of this installation,
// with its ETag and a 304 when unchanged, gzipped when the client takes
// it. Its path stays the same across releases, so a cache must revalidate
// it on every use (no-cache). It is same-origin, like every path but the
// SDK's: the dashboard's API reference reads it from this origin, and a
// tool elsewhere fetches it without a browser (docs/dashboard.md).
func serveSpec(f *webasset.File) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		f.Serve(w, r, http.StatusOK)
	})
}
