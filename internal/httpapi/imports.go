package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"strata/internal/admin"
	"strata/internal/analytics"
	"strata/internal/importer"
)

// maxImportBatch is the most events one batch through the admin socket
// carries (a paced import sends 500), and maxImportBody its bytes: each
// event is held to POST /e's limits, and the body is read whole.
const (
	maxImportBatch = 5000
	maxImportBody  = 64 << 20
)

// AdminImportRoutes adds POST /imports to the admin socket: a batch of
// `strata import` into the running server (docs/import.md). The products
// are checked: a batch for a product that does not exist is refused.
func AdminImportRoutes(mux *http.ServeMux, target *importer.Target, meta analytics.MetaStore, log *slog.Logger) {
	mux.Handle("POST /imports", wrap(log, func(w http.ResponseWriter, r *http.Request) error {
		var in admin.ImportRequest
		dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxImportBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return analytics.Errorf(analytics.KindInvalid, "invalid_request", "The import batch is not valid: %s.", err.Error())
		}
		if len(in.Batch) > maxImportBatch {
			return analytics.Errorf(analytics.KindInvalid, "batch_too_large", "An import batch through the admin socket holds at most %d events.", maxImportBatch)
		}
		if in.Env != analytics.EnvLive && in.Env != analytics.EnvTest {
			return analytics.Errorf(analytics.KindInvalid, "invalid_request", "env must be live or test.")
		}
		if _, err := meta.Product(r.Context(), in.ProductID); err != nil {
			return err
		}
		res, err := target.Import(r.Context(), in.ProductID, in.Env, in.Batch)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}))
}
