package httpapi

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"strata/internal/analytics"
)

// AccessLog says which requests get a line in the log (docs/operations.md,
// "Logs").
type AccessLog struct {
	// On turns the access log on; its lines are logged at Level, so that
	// with debug they show only when the log level is debug too.
	On    bool
	Level slog.Level
	// Sample logs one in Sample of the answered (status below 400)
	// requests to the SDK paths served on fasthttp directly (POST /e, its
	// preflight, the active messages), which are most of a busy server's
	// requests; every other request, and every refusal or failure, is
	// logged. 0 or 1 logs them all.
	Sample int
}

// request is what the server knows of a request for its access line and
// for every line the request causes (RequestIDHandler). It is kept in the
// fasthttp request's user values, which net/http's request context reads
// through (fasthttpadaptor makes the fasthttp request the context).
type request struct {
	// id is the request's id, in idBuf: a request that does not log
	// allocates nothing for it.
	id    []byte
	idBuf [maxRequestIDLen]byte
	// route is the route table's pattern the request matched, "" when
	// none did.
	route string
	// product is the product of the request's credential once known, 0
	// before.
	product int64
	// partial is set by POST /e when some of its events were rejected.
	partial bool
}

// requestKey is the user value key of a request's *request.
type requestKey struct{}

// requestOf returns ctx's request, nil outside one.
func requestOf(ctx context.Context) *request {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// RequestID is the id of the request ctx belongs to, "" outside one.
func RequestID(ctx context.Context) string {
	if r := requestOf(ctx); r != nil {
		return string(r.id)
	}
	return ""
}

// setProduct records the product of a request's credential for its access
// line.
func setProduct(ctx context.Context, product int64) {
	if r := requestOf(ctx); r != nil {
		r.product = product
	}
}

// maxRequestIDLen bounds an X-Request-Id taken from a client.
const maxRequestIDLen = 128

// validRequestID reports whether a client's X-Request-Id may be used as
// is: 1 to 128 characters among letters, digits and - _ . : + / =, which
// covers UUIDs, the ids of proxies and load balancers (nginx's $request_id,
// AWS's Root=1-…) and keeps a log line free of quotes, spaces and control
// characters.
func validRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > maxRequestIDLen {
		return false
	}
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':' || c == '+' || c == '/' || c == '=':
		default:
			return false
		}
	}
	return true
}

// newRequestID writes 16 random bytes in hex to b, which has room for 32.
// The id needs to be unique, not secret: the runtime's generator, cheaper
// than crypto/rand, is enough.
func newRequestID(b []byte) []byte {
	const hex = "0123456789abcdef"
	b = b[:32]
	for i, v := 0, [2]uint64{rand.Uint64(), rand.Uint64()}; i < 32; i++ {
		b[i] = hex[(v[i/16]>>(4*(i%16)))&0xf]
	}
	return b
}

// requests recycles the records of the requests to the fast routes:
// ingest takes tens of thousands of requests a second, and a record holds
// its id's buffer. A record is back in the pool once its request is
// answered, when fasthttp recycles the request's context too, so that
// nothing may keep either.
var requests = sync.Pool{New: func() any { return new(request) }}

var hdrRequestID = []byte("X-Request-Id")

// observe wraps the server's handler: it gives each request its id, taken
// from a valid X-Request-Id or made, echoes it in the response, and once
// the request is answered counts it (metrics) and logs its access line.
func (s *Server) observe(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	var seq atomic.Uint64
	return func(ctx *fasthttp.RequestCtx) {
		req := requests.Get().(*request)
		*req = request{}
		if id := ctx.Request.Header.PeekBytes(hdrRequestID); validRequestID(id) {
			req.id = append(req.idBuf[:0], id...)
		} else {
			req.id = newRequestID(req.idBuf[:])
		}
		ctx.SetUserValue(requestKey{}, req)
		ctx.Response.Header.SetBytesKV(hdrRequestID, req.id)
		next(ctx)
		defer func() {
			// Only a fast route's record is recycled: a net/http handler
			// that streams its answer (an export) runs on after the
			// adaptor returned, and may still log with the record.
			if s.fastRoute(req.route) {
				ctx.RemoveUserValue(requestKey{})
				requests.Put(req)
			}
		}()

		status := ctx.Response.StatusCode()
		took := time.Since(ctx.Time())
		s.Metrics.HTTPRequest(req.route, status, took)
		if !s.Access.On {
			return
		}
		if s.Access.Sample > 1 && status < 400 && s.fastRoute(req.route) {
			// The first of every Sample is logged, so that a line shows
			// as soon as traffic starts.
			if (seq.Add(1)-1)%uint64(s.Access.Sample) != 0 {
				return
			}
		}
		if !s.Log.Enabled(ctx, s.Access.Level) {
			return
		}
		s.logAccess(ctx, req, status, took)
	}
}

// fastRoute reports whether route is one of the SDK paths served on
// fasthttp directly, whose answered requests the access log samples.
func (s *Server) fastRoute(route string) bool {
	switch route {
	case "POST /e", "OPTIONS /e", "GET /api/v1/messages/active", "OPTIONS /api/v1/messages/active":
		return true
	}
	return false
}

// logAccess writes a request's access line. The request id is added by
// the log's handler (RequestIDHandler), as on every line the request
// causes. What the line leaves out is as deliberate as what it has: no
// raw path (a shared link's secret is in it), no query string (a beacon's
// api_key), no header (keys, tokens, cookies) and no client address
// (docs/operations.md, "Logs").
func (s *Server) logAccess(ctx *fasthttp.RequestCtx, req *request, status int, took time.Duration) {
	route := req.route
	if route == "" {
		route = "unmatched"
	}
	// A streamed answer (an export) is still being written: its length
	// is the declared one, if any. Body would read the stream to its end.
	var out int64
	if ctx.Response.IsBodyStream() {
		out = int64(ctx.Response.Header.ContentLength())
	} else {
		out = int64(len(ctx.Response.Body()))
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("method", string(ctx.Method())),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(took.Microseconds())/1000),
		slog.Int("bytes_in", max(ctx.Request.Header.ContentLength(), 0)),
		slog.Int64("bytes_out", max(out, 0)))
	if req.product != 0 {
		attrs = append(attrs, slog.Int64("product", req.product))
	}
	if s.Access.Sample > 1 && status < 400 && s.fastRoute(req.route) {
		attrs = append(attrs, slog.Int("sample", s.Access.Sample))
	}
	s.Log.LogAttrs(ctx, s.Access.Level, "request", attrs...)
}

// recordRoute notes the pattern of the route table a request matches, for
// the access line, the metrics and the handlers' log lines. It is noted
// before the handler runs: a handler that streams its answer runs on after
// the adaptor returned and the access line was logged, and must not write
// the record then.
func recordRoute(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if req := requestOf(r.Context()); req != nil {
			_, req.route = mux.Handler(r)
		}
		mux.ServeHTTP(w, r)
	})
}

// RequestIDHandler wraps a log handler so that every line logged with a
// request's context (slog's *Context methods, LogAttrs) carries the
// request's id, as its access line does.
func RequestIDHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// metricsPath is where the public listener serves the metrics when a
// metrics token is set (MetricsToken).
const metricsPath = "/metrics"

// serveMetrics answers GET /metrics on the public listener: only with the
// metrics token as a bearer credential, compared in constant time, else
// 401 (docs/security.md, "Metrics").
func (s *Server) serveMetrics(ctx *fasthttp.RequestCtx) {
	req := requestOf(ctx)
	req.route = "GET " + metricsPath
	if !ctx.IsGet() {
		ctx.Response.Header.Set("Allow", "GET")
		writeFastJSON(ctx, fasthttp.StatusMethodNotAllowed, marshalLine(errorBody(analytics.Errorf(0, "method_not_allowed",
			"The method %s is not allowed here; use GET.", ctx.Method()))))
		return
	}
	const prefix = "Bearer "
	got := ctx.Request.Header.Peek("Authorization")
	if len(got) <= len(prefix) || string(got[:len(prefix)]) != prefix ||
		subtle.ConstantTimeCompare(got[len(prefix):], []byte(s.MetricsToken)) != 1 {
		writeFastError(ctx, s.Log, errMetricsToken)
		return
	}
	fasthttpadaptor.NewFastHTTPHandler(s.Metrics.Handler())(ctx)
}

var errMetricsToken = analytics.Errorf(analytics.KindUnauthenticated, "invalid_metrics_token",
	"GET /metrics takes the server's metrics token (--metrics-token) as Authorization: Bearer <token>.")
