package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

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

// handleImport is POST /api/v1/products/{id}/imports?source=NAME: an
// export file as the body, imported into the product as `strata import`
// imports it into a running server (docs/import.md, "Through the API"):
// paced (batch, pause), each event through the pipeline and the writer,
// the events already stored left out. The body is written to a file under
// the data directory first (a source may need to seek, and the request
// must not hold the file in memory), at most ImportMaxBytes, one import
// at a time on a node; the answer is the report, once the import ends.
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request) error {
	pr, err := s.productOf(r)
	if err != nil {
		return err
	}
	if err := checkOrigin(r); err != nil {
		return err
	}
	q := r.URL.Query()
	src, ok := importer.SourceNamed(q.Get("source"))
	if !ok {
		return analytics.Errorf(analytics.KindInvalid, "invalid_request", "source must be posthog, mixpanel, amplitude, umami or ga4.")
	}
	opt := importer.Options{Source: src, Batch: 500, Pause: 500 * time.Millisecond}
	if v := q.Get("batch"); v != "" {
		if opt.Batch, err = strconv.Atoi(v); err != nil || opt.Batch < 1 || opt.Batch > maxImportBatch {
			return analytics.Errorf(analytics.KindInvalid, "invalid_request", "batch must be 1 to %d events.", maxImportBatch)
		}
	}
	if v := q.Get("pause"); v != "" {
		if opt.Pause, err = time.ParseDuration(v); err != nil || opt.Pause < 0 || opt.Pause > 10*time.Second {
			return analytics.Errorf(analytics.KindInvalid, "invalid_request", "pause must be a duration from 0s to 10s, such as 500ms.")
		}
	}
	env := analytics.EnvLive
	if q.Get("env") == string(analytics.EnvTest) {
		env = analytics.EnvTest
	}
	if !s.importing.CompareAndSwap(false, true) {
		return analytics.Errorf(analytics.KindConflict, "import_running", "Another import is running on this server; try again when it has ended.")
	}
	defer s.importing.Store(false)

	file, err := s.spoolImport(w, r)
	if err != nil {
		return err
	}
	defer os.Remove(file)
	sink := importer.Local{Target: s.Imports, Product: pr.product.ID, Env: env}
	rep, err := importer.Run(r.Context(), sink, opt, file)
	if err != nil {
		return err
	}
	s.Log.Info("import through the API", "product", pr.product.ID, "source", src.Name(), "imported", rep.Imported,
		"duplicates", rep.Duplicates, "by", pr.actor)
	writeJSON(w, http.StatusOK, importAnswer{Result: rep.Result, Source: rep.Source, Names: rep.Names, Seconds: rep.Elapsed.Seconds()})
	return nil
}

// importAnswer is the report of an import through the API.
type importAnswer struct {
	importer.Result
	Source  string         `json:"source"`
	Names   map[string]int `json:"names"`
	Seconds float64        `json:"seconds"`
}

// spoolImport writes the request's body to a new file under ImportDir
// and returns its path; a body over ImportMaxBytes is refused, and the
// file removed.
func (s *Server) spoolImport(w http.ResponseWriter, r *http.Request) (string, error) {
	if err := os.MkdirAll(s.ImportDir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(s.ImportDir, "upload-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, http.MaxBytesReader(w, r.Body, s.ImportMaxBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return "", analytics.Errorf(analytics.KindTooLarge, "body_too_large",
				"An export uploaded through the API is at most %d MB; import a larger one with strata import on the server.", s.ImportMaxBytes>>20)
		}
		return "", fmt.Errorf("receiving the export: %w", err)
	}
	return f.Name(), nil
}
