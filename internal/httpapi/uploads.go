package httpapi

import (
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"
)

// streamedUpload reports whether a request is one of the uploads whose
// handlers read the body as a stream under limits of their own, far above
// maxAPIBody: a cohort's CSV of ids (analytics.MaxCohortUploadBytes) and an
// export to import (--import-max-bytes). serveAdapted reads every other
// body into memory first.
func streamedUpload(method, path string) bool {
	parts := strings.Split(strings.TrimPrefix(path, "/api/v1/products/"), "/")
	if !strings.HasPrefix(path, "/api/v1/products/") || parts[0] == "" {
		return false
	}
	switch {
	case method == http.MethodPut && len(parts) == 4 && parts[1] == "cohorts" && parts[2] != "" && parts[3] == "members":
		return true
	case method == http.MethodPost && len(parts) == 2 && parts[1] == "imports":
		return true
	}
	return false
}

// serveStreamed serves an upload (streamedUpload) through the net/http
// route table h with the request's body as the connection's stream:
// fasthttpadaptor would read it whole into memory first (its
// ConvertRequest takes ctx.PostBody()). The route's own middleware
// authenticates before the handler reads a byte, and the handler bounds
// what it reads. The answers of these routes are small JSON documents,
// buffered here.
func (s *Server) serveStreamed(ctx *fasthttp.RequestCtx, h http.Handler) {
	uri := string(ctx.RequestURI())
	r, err := http.NewRequestWithContext(ctx, string(ctx.Method()), uri, ctx.RequestBodyStream())
	if err != nil {
		writeFastError(ctx, s.Log, errBodyUnreadable)
		return
	}
	r.RequestURI, r.Host, r.RemoteAddr = uri, string(ctx.Host()), ctx.RemoteAddr().String()
	r.ContentLength = int64(ctx.Request.Header.ContentLength())
	if r.ContentLength < 0 {
		r.ContentLength = -1
	}
	for k, v := range ctx.Request.Header.All() {
		r.Header.Add(string(k), string(v))
	}
	w := &bufferedWriter{header: http.Header{}}
	h.ServeHTTP(w, r)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	for k, vs := range w.header {
		for _, v := range vs {
			ctx.Response.Header.Add(k, v)
		}
	}
	ctx.SetStatusCode(w.status)
	ctx.Response.SetBodyRaw(w.body)
	ctx.Response.Header.SetContentLength(len(w.body))
}

// bufferedWriter is the http.ResponseWriter of serveStreamed.
type bufferedWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *bufferedWriter) Header() http.Header { return w.header }

func (w *bufferedWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *bufferedWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, b...)
	return len(b), nil
}
