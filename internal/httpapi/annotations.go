package httpapi

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"strata/internal/analytics"
	"strata/internal/annotations"
	"strata/internal/jsontext"
)

// The annotation API: chart markers kept per workspace. What is decided
// here is the transport's: who the caller is (createdBy, the workspace),
// what a write costs them (the write limit), the wire forms (JSON, the
// date's text, the query parameters, the CSV export and its escaping);
// the operations and their rules are annotations.Service's. Both are
// explained in docs/annotations.md.

// ProductStore finds a product, so that a credential, which belongs to one
// product, can be resolved to the workspace annotations belong to.
type ProductStore interface {
	Product(ctx context.Context, id int64) (analytics.Product, error)
}

var errAnnotationNotFound = annotations.ErrNotFound

// annotationCaller is who an annotation request acts for: a workspace, the
// description of the credential recorded as createdBy, and the write
// budgets the credential is charged to.
type annotationCaller struct {
	workspaceID int64
	createdBy   string
	// bucket is the credential's own budget: its id, tagged with its kind
	// so that a key, a token and a user of the same id do not share one.
	bucket int64
	// shared is set for API credentials (keys, tokens), whose writes the
	// workspace's budget also counts; a dashboard session's do not.
	shared bool
}

// annotationCaller authenticates an annotation request and resolves the
// credential's product to its workspace.
func (s *Server) annotationCaller(r *http.Request) (annotationCaller, error) {
	p, err := s.principal(r)
	if err != nil {
		return annotationCaller{}, err
	}
	prod, err := s.Products.Product(r.Context(), p.ProductID)
	if err != nil {
		return annotationCaller{}, fmt.Errorf("finding the workspace of product %d: %w", p.ProductID, err)
	}
	// A dashboard session's writes are the person's, outside the
	// workspace's shared budget.
	return annotationCaller{workspaceID: prod.WorkspaceID, createdBy: p.Describe(), bucket: p.Bucket(), shared: p.UserID == 0}, nil
}

// allowAnnotationWrite takes one write from the caller's budgets, or
// answers 429 with the wait until the next one. Every write is charged to
// its credential's own bucket, so that one credential cannot spend
// another's writes; an API credential's is also charged to the
// workspace's bucket, the per-workspace limit (docs/annotations.md, "Rate
// limit"), which bounds what
// all of a workspace's keys and tokens write together. A dashboard
// session's is not: a leaked key or token can then spend the workspace's
// budget, but never block its owner in the dashboard.
func (s *Server) allowAnnotationWrite(c annotationCaller) error {
	limit := s.AnnotationRateLimit
	if ok, wait := s.AnnotationCredentialLimiter.Allow(c.bucket, limit); !ok {
		return rateLimited(wait, "Too many annotation changes with this credential (at most %d a minute)", limit)
	}
	if !c.shared {
		return nil
	}
	if ok, wait := s.AnnotationLimiter.Allow(c.workspaceID, limit); !ok {
		return rateLimited(wait, "Too many annotation changes by this workspace's keys and tokens (at most %d a minute)", limit)
	}
	return nil
}

// annotationWrite authenticates a write that carries a body, takes it from
// the workspace's budget and reads the body, in that order (a refused
// request costs little).
func (s *Server) annotationWrite(w http.ResponseWriter, r *http.Request) (annotationCaller, []byte, error) {
	c, err := s.annotationCaller(r)
	if err != nil {
		return c, nil, err
	}
	if err := s.allowAnnotationWrite(c); err != nil {
		return c, nil, err
	}
	body, err := readQueryBody(w, r)
	return c, body, err
}

// annotationRequest is the body of POST /annotations. Pointers tell a field
// that was left out from an empty one.
type annotationRequest struct {
	Label       *string `json:"label"`
	Date        *string `json:"date"`
	Color       *string `json:"color"`
	Scope       *string `json:"scope"`
	Description *string `json:"description"`
	QueryID     *int64  `json:"queryId"`
}

// parseAnnotation reads a create body into an annotation: the JSON and the
// date's text form, whose faults are reported before the rules'
// (annotations.Service.Create).
func parseAnnotation(body []byte) (analytics.Annotation, error) {
	var req annotationRequest
	var a analytics.Annotation
	if err := jsontext.Decode(body, &req); err != nil {
		return a, err
	}
	if req.Date != nil && *req.Date != "" {
		d, err := time.Parse(time.RFC3339Nano, *req.Date)
		if err != nil {
			return a, analytics.InvalidField("date", "must be an RFC 3339 date-time such as 2026-11-23T10:00:00Z, not %q", *req.Date)
		}
		a.Date = d.UTC().Truncate(time.Microsecond)
	}
	a.Label = deref(req.Label)
	a.Color = deref(req.Color)
	a.Scope = analytics.AnnotationScope(deref(req.Scope))
	a.QueryID = req.QueryID
	a.Description = deref(req.Description)
	return a, nil
}

// deref is *p, or "" for a field left out.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// handleCreateAnnotation is POST /api/v1/annotations.
func (s *Server) handleCreateAnnotation(w http.ResponseWriter, r *http.Request) error {
	c, body, err := s.annotationWrite(w, r)
	if err != nil {
		return err
	}
	a, err := parseAnnotation(body)
	if err != nil {
		return err
	}
	a.WorkspaceID, a.CreatedBy = c.workspaceID, c.createdBy
	if err := s.AnnotationOps.Create(r.Context(), &a); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

// annotationFilter reads the query parameters that select annotations:
// queryId, from and to.
func annotationFilter(r *http.Request, workspaceID int64) (analytics.AnnotationFilter, error) {
	q := r.URL.Query()
	f := analytics.AnnotationFilter{WorkspaceID: workspaceID}
	if v := q.Get("queryId"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return f, analytics.InvalidField("queryId", "must be a saved query's id, a positive integer, not %q", v)
		}
		f.QueryID = id
	}
	var err error
	if f.From, err = parseBound(q.Get("from"), "from", false); err != nil {
		return f, err
	}
	if f.To, err = parseBound(q.Get("to"), "to", true); err != nil {
		return f, err
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		return f, analytics.InvalidField("to", "must not be before from")
	}
	return f, nil
}

// parseBound reads from or to: an RFC 3339 date-time, or a UTC day
// YYYY-MM-DD that includes the whole day (from its first microsecond for
// from, to its last for to). Empty means unbounded.
func parseBound(v, field string, end bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return t, analytics.InvalidField(field, "must be an RFC 3339 date-time or a YYYY-MM-DD day, not %q", v)
	}
	if end {
		t = t.AddDate(0, 0, 1).Add(-time.Microsecond)
	}
	return t, nil
}

// positiveParam reads an optional integer query parameter in [1, max].
func positiveParam(r *http.Request, name string, def, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, analytics.InvalidField(name, "must be an integer from 1 to %d, not %q", max, v)
	}
	return n, nil
}

// handleListAnnotations is GET /api/v1/annotations.
func (s *Server) handleListAnnotations(w http.ResponseWriter, r *http.Request) error {
	c, err := s.annotationCaller(r)
	if err != nil {
		return err
	}
	page, err := positiveParam(r, "page", 1, annotations.MaxPage)
	if err != nil {
		return err
	}
	size, err := positiveParam(r, "pageSize", annotations.DefaultPageSize, annotations.MaxPageSize)
	if err != nil {
		return err
	}
	f, err := annotationFilter(r, c.workspaceID)
	if err != nil {
		return err
	}
	if _, shared := sharePrincipal(r); shared && f.QueryID != 0 {
		// A shared link shows the Overview's annotations, not those
		// of the workspace's saved queries.
		return errNotShared
	}
	list, err := readMeta(s, r, func(ctx context.Context) (annotations.Page, error) {
		return s.AnnotationOps.List(ctx, f, page, size)
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// handleDeleteAnnotation is DELETE /api/v1/annotations/{id}
// (annotations.Service.Delete).
func (s *Server) handleDeleteAnnotation(w http.ResponseWriter, r *http.Request) error {
	c, err := s.annotationCaller(r)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return errAnnotationNotFound
	}
	if err := s.allowAnnotationWrite(c); err != nil {
		return err
	}
	if err := s.AnnotationOps.Delete(r.Context(), c.workspaceID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleBulkDeleteAnnotations is POST /api/v1/annotations/bulk-delete
// (annotations.Service.DeleteMany).
func (s *Server) handleBulkDeleteAnnotations(w http.ResponseWriter, r *http.Request) error {
	c, body, err := s.annotationWrite(w, r)
	if err != nil {
		return err
	}
	var req struct {
		IDs []int64 `json:"ids"`
	}
	if err := jsontext.Decode(body, &req); err != nil {
		return err
	}
	n, err := s.AnnotationOps.DeleteMany(r.Context(), c.workspaceID, req.IDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
	return nil
}

// csvColumns is the export's header row (docs/annotations.md, "CSV export").
var csvColumns = []string{"date", "label", "description", "color", "scope", "created_by", "created_at"}

// csvCell defuses a cell that a spreadsheet would run as a formula: one
// that begins with =, +, - or @, or with a tab or carriage return (which
// some spreadsheets strip before looking), gets a leading single quote, as
// OWASP's CSV injection guidance recommends. The quote shows in the cell;
// that is the price of never executing one.
func csvCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// csvRow is one annotation as the export writes it.
func csvRow(a analytics.Annotation) []string {
	row := []string{
		a.Date.UTC().Format(time.RFC3339Nano), a.Label, a.Description, a.Color, string(a.Scope),
		a.CreatedBy, a.CreatedAt.UTC().Format(time.RFC3339Nano),
	}
	for i, v := range row {
		row[i] = csvCell(v)
	}
	return row
}

// startedWriter records whether anything reached the client, after which
// an error can no longer become an error response.
type startedWriter struct {
	http.ResponseWriter
	started bool
}

func (w *startedWriter) Write(p []byte) (int, error) {
	w.started = true
	return w.ResponseWriter.Write(p)
}

// handleExportAnnotations is GET /api/v1/annotations/export.csv: every
// annotation the same filter as the list selects, newest first, streamed
// as RFC 4180 CSV (CRLF line ends, quoting by encoding/csv) in UTF-8.
func (s *Server) handleExportAnnotations(w http.ResponseWriter, r *http.Request) error {
	c, err := s.annotationCaller(r)
	if err != nil {
		return err
	}
	f, err := annotationFilter(r, c.workspaceID)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="strata-annotations-%s.csv"`, s.Now().UTC().Format(time.DateOnly)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	sw := &startedWriter{ResponseWriter: w}
	out := csv.NewWriter(sw)
	out.UseCRLF = true
	out.Write(csvColumns)
	err = s.Queries.ReadMeta(r.Context(), func(ctx context.Context) error {
		return s.AnnotationOps.Each(ctx, f, func(a analytics.Annotation) error {
			return out.Write(csvRow(a))
		})
	})
	if err == nil {
		out.Flush()
		err = out.Error()
	}
	if err != nil && sw.started {
		// The 200 and part of the file are gone; end the connection so
		// that the client sees a failed download, not a short file. A
		// client that went away is not worth a log line.
		if r.Context().Err() == nil && s.Log != nil {
			s.Log.ErrorContext(r.Context(), "annotation export failed mid-response", "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	if err != nil {
		for _, k := range []string{"Content-Disposition", "Cache-Control"} {
			h.Del(k)
		}
	}
	return err
}
