package httpapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"

	"strata/internal/analytics"
)

// Sourcemap uploads: POST /api/v1/sourcemaps takes a release's map of one
// minified file from a deploy script (the product's API key, as for an
// annotation, or a query token); listing and deleting take a query token
// or the dashboard (docs/errors.md, "Sourcemaps").

// maxSourcemapBody bounds the body of an upload: the map and the minified
// file at their limits, and the form's other fields and framing.
const maxSourcemapBody = 2*analytics.MaxSourcemapBytes + 64<<10

// sourcemapUploadRole is the least role of a session that uploads a
// sourcemap, which the route table declares and admitUpload checks before
// the body is read.
const sourcemapUploadRole = analytics.RoleMember

// sourcemapsPath is the upload's path, which serveAdapted reads under
// maxSourcemapBody instead of maxAPIBody.
const sourcemapsPath = "/api/v1/sourcemaps"

var errNotMultipart = analytics.InvalidField("body", "must be multipart/form-data with the fields release, url and file (and optionally minified)")

// admitUpload authenticates a sourcemap upload and takes it from its
// credential's budgets, from serveAdapted, before the body (up to 20 MB)
// is read: a refused upload costs its headers. Every upload is charged to
// its credential's own bucket of SourcemapRateLimit a minute on this node
// (a key, a token or a dashboard user), and an API key's also to the
// key's ingest bucket, shared across nodes, so that a key limited to 5
// requests a minute uploads at most 5 (docs/errors.md, "Limits of an
// upload"). Over either, 429 rate_limited with Retry-After.
func (s *Server) admitUpload(ctx *fasthttp.RequestCtx) error {
	// principal reads a net/http request; this one has the headers and
	// the address, and no body.
	// It carries the marks of the upload's route: keys may call it, and
	// a session needs sourcemapUploadRole.
	rc := context.WithValue(context.WithValue(context.Background(), keyRoute{}, true), roleRoute{}, sourcemapUploadRole)
	r, err := http.NewRequestWithContext(rc, http.MethodPost, string(ctx.RequestURI()), nil)
	if err != nil {
		return errNotMultipart
	}
	for k, v := range ctx.Request.Header.All() {
		r.Header.Add(string(k), string(v))
	}
	r.Host = string(ctx.Host())
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	if s.SourcemapLimiter != nil {
		if ok, wait := s.SourcemapLimiter.Allow(p.Bucket(), s.SourcemapRateLimit); !ok {
			return rateLimited(wait, "Too many sourcemap uploads with this credential (at most %d a minute)", s.SourcemapRateLimit)
		}
	}
	if p.KeyID != 0 {
		return s.allowKey(p.KeyID, p.KeyRateLimit)
	}
	return nil
}

// handleUploadSourcemap is POST /api/v1/sourcemaps. serveAdapted has
// authenticated it and charged its budgets (admitUpload) before reading
// the body; Upload checks and stores it.
func (s *Server) handleUploadSourcemap(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return errNotMultipart
	}
	fields := map[string][]byte{}
	limits := map[string]int64{"release": 4 << 10, "url": 16 << 10, "file": analytics.MaxSourcemapBytes, "minified": analytics.MaxSourcemapBytes}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return errNotMultipart
		}
		name := part.FormName()
		limit, known := limits[name]
		if !known {
			return analytics.InvalidField(name, "is not a field of an upload (release, url, file, minified)")
		}
		if _, dup := fields[name]; dup {
			return analytics.InvalidField(name, "is sent twice")
		}
		b, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return errNotMultipart
		}
		if int64(len(b)) > limit {
			if name == "file" || name == "minified" {
				return analytics.ErrSourcemapTooLarge
			}
			return analytics.InvalidField(name, "is too long")
		}
		fields[name] = b
	}
	release, url := strings.TrimSpace(string(fields["release"])), strings.TrimSpace(string(fields["url"]))
	sm := analytics.Sourcemap{ProductID: p.ProductID, Release: release, URL: url}
	if err := s.Pipeline.Exceptions.Upload(r.Context(), &sm, fields["file"], fields["minified"]); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, sm)
	return nil
}

// handleListSourcemaps is GET /api/v1/sourcemaps[?release=].
func (s *Server) handleListSourcemaps(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Sourcemap, error) {
		return s.Sourcemaps.ListSourcemaps(ctx, p.ProductID, r.URL.Query().Get("release"))
	})
	if err != nil {
		return err
	}
	writeItems(w, list)
	return nil
}

// handleDeleteSourcemaps is DELETE /api/v1/sourcemaps?release=: every
// upload of one release.
func (s *Server) handleDeleteSourcemaps(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	release := r.URL.Query().Get("release")
	if release == "" {
		return analytics.InvalidField("release", "is required: the release whose sourcemaps to delete")
	}
	gone, err := s.Sourcemaps.ListSourcemaps(r.Context(), p.ProductID, release)
	if err != nil {
		return err
	}
	n, err := s.Sourcemaps.DeleteSourcemaps(r.Context(), p.ProductID, release)
	if err != nil {
		return err
	}
	for _, sm := range gone {
		s.sourcemapChanged(p.ProductID, release, sm.URL)
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": n})
	return nil
}

// sourcemapChanged drops this node's parsed copy of a release's map, so
// that an upload or a delete takes effect here at once (other nodes read
// it again within minutes: errtrack.NewProcessor).
func (s *Server) sourcemapChanged(productID int64, release, url string) {
	if s.Pipeline != nil && s.Pipeline.Exceptions != nil {
		s.Pipeline.Exceptions.Uploaded(productID, release, url)
	}
}
