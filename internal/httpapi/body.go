package httpapi

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"strata/internal/analytics"
)

// Request bodies are read by the handlers, never by the HTTP server: the
// fasthttp server streams them (StreamRequestBody, app.go), and each
// handler first decides from the headers whether it wants the body at all
// (a key in X-API-Key, a Content-Length within its limit), then reads it
// into a buffer that grows only as bytes arrive, charging every growth to
// one server-wide budget (docs/security.md, "Request bodies"). So a client
// that declares a large body and sends it slowly, or not at all, holds
// what it sent and no more, and all such clients together hold at most
// the budget: past it the server answers 503 server_busy.

// maxAPIBody bounds the body of every path served through the net/http
// route table (queries, saved queries, annotations, the dashboard's calls).
// Their bodies are small JSON objects; ingest's larger limit is
// ingest.MaxBodyBytes.
const maxAPIBody = 1 << 20

// Buffer sizes of the body reader. A body starts in a buffer of
// initialBodyCap bytes (or its declared length, when smaller), and a buffer
// that grew past maxPooledBody is left to the garbage collector rather than
// kept in the pool, so that a few large batches do not pin their memory.
// Up to a megabyte is pooled: a 500-event batch is some 150–300 KB, and
// growing a fresh buffer to that size for every batch (half a megabyte of
// garbage a request) cost ingest about 7% of its batch throughput
// (docs/benchmarks.md, session 16).
const (
	initialBodyCap = 4 << 10
	maxPooledBody  = 1 << 20
)

// BodyBudget bounds the memory that request bodies being read or handled
// may hold, all together. It counts bytes of buffer capacity; a body
// reserves before it grows and gives everything back when its request is
// done.
type BodyBudget struct {
	limit int64
	log   *slog.Logger
	used  atomic.Int64
	// warned is when exhaustion was last logged, in Unix seconds, so that
	// a flood of refusals logs one line a minute.
	warned atomic.Int64
}

// NewBodyBudget returns a budget of limit bytes that logs to log when it
// runs out.
func NewBodyBudget(limit int64, log *slog.Logger) *BodyBudget {
	return &BodyBudget{limit: limit, log: log}
}

// take reserves n bytes, or reports false when that would pass the limit.
func (b *BodyBudget) take(n int) bool {
	for {
		used := b.used.Load()
		if used+int64(n) > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+int64(n)) {
			return true
		}
	}
}

// give returns n reserved bytes.
func (b *BodyBudget) give(n int) { b.used.Add(-int64(n)) }

// InUse is the number of bytes reserved now.
func (b *BodyBudget) InUse() int64 { return b.used.Load() }

// errServerBusy answers a request whose body the budget cannot hold now.
// The bodies holding it are either being handled, which takes
// milliseconds, or arriving slowly, which ends at the read timeout at the
// latest; a second is a fair first wait.
var errServerBusy = &analytics.Error{Kind: analytics.KindUnavailable, Code: "server_busy",
	Message:    "The server is holding as many request bodies as its memory allows; retry after the number of seconds in Retry-After.",
	RetryAfter: time.Second}

var (
	errBodyTimeout = analytics.Errorf(analytics.KindTimeout, "request_timeout",
		"The request was not received in time.")
	errBodyCutShort = analytics.Errorf(analytics.KindInvalid, "invalid_request",
		"body: the connection ended before the whole body arrived.")
	errBodyUnreadable = analytics.Errorf(analytics.KindInvalid, "invalid_request",
		"body: could not be read.")
)

// body is a request body read under a BodyBudget. Its bytes are valid until
// release.
type body struct {
	buf []byte
	// charged is what the budget lent this body: the capacity it has
	// grown to, which may be less than cap(buf) for a pooled buffer.
	charged int
	budget  *BodyBudget
}

var bodyPool = sync.Pool{New: func() any { return &body{buf: make([]byte, 0, initialBodyCap)} }}

// readBody reads r to its end into a pooled buffer charged to budget. The
// client's declared length (-1 when unknown, as for a chunked body) is a
// promise, not a size to allocate: a longer declared length than limit is
// refused at once with tooLarge, and otherwise the buffer starts small and
// doubles only when it is full and more is expected, each growth first
// reserved from the budget (errServerBusy when it cannot be). A body that
// passes limit is refused with tooLarge, one that ends before its declared
// length, or whose bytes stop arriving before the server's read deadline,
// with a 400 or 408. The caller must release the body it gets.
func readBody(r io.Reader, declared, limit int, budget *BodyBudget, tooLarge error) (*body, error) {
	if declared > limit {
		return nil, tooLarge
	}
	b := bodyPool.Get().(*body)
	b.budget, b.buf = budget, b.buf[:0]
	if declared == 0 || r == nil {
		return b, nil
	}
	want := min(initialBodyCap, limit+1)
	if declared > 0 {
		want = min(want, declared)
	}
	if err := b.grow(want); err != nil {
		b.release()
		return nil, err
	}
	for {
		if len(b.buf) == b.charged {
			// Full. A declared body needs no more than its length (the
			// stream ends there); an undeclared one may need one byte past
			// limit, which tells that it is too large.
			next := min(2*b.charged, limit+1)
			if declared > 0 {
				next = min(next, declared)
			}
			if next <= b.charged {
				if declared > 0 {
					break // every declared byte is in
				}
				b.release()
				return nil, tooLarge
			}
			if err := b.grow(next); err != nil {
				b.release()
				return nil, err
			}
		}
		n, err := r.Read(b.buf[len(b.buf):b.charged])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			b.release()
			return nil, readError(err)
		}
	}
	if len(b.buf) > limit {
		b.release()
		return nil, tooLarge
	}
	if declared > 0 && len(b.buf) < declared {
		b.release()
		return nil, errBodyCutShort
	}
	return b, nil
}

// grow reserves capacity for n bytes from the budget and makes the buffer
// that large, copying what it holds when the buffer itself must grow.
func (b *body) grow(n int) error {
	if !b.budget.take(n - b.charged) {
		b.budget.exhausted()
		return errServerBusy
	}
	b.charged = n
	if n > cap(b.buf) {
		grown := make([]byte, len(b.buf), n)
		copy(grown, b.buf)
		b.buf = grown
	}
	return nil
}

// release gives the body's reservation back and its buffer to the pool.
func (b *body) release() {
	b.budget.give(b.charged)
	b.charged, b.budget = 0, nil
	if cap(b.buf) > maxPooledBody {
		b.buf = make([]byte, 0, initialBodyCap)
	}
	bodyPool.Put(b)
}

// exhausted notes a refusal for the log, at most once a minute: operators
// should learn that the budget is spent (an attack, or a budget too small
// for the traffic), without a line per refused request.
func (b *BodyBudget) exhausted() {
	now := time.Now().Unix()
	last := b.warned.Load()
	if now-last >= 60 && b.warned.CompareAndSwap(last, now) && b.log != nil {
		b.log.Warn("request bodies in flight hold the whole body memory budget; refusing new bodies with 503",
			"budget_bytes", b.limit)
	}
}

// readError turns a failed body read into the API's error: a read past
// the server's deadline is 408, anything else (a reset connection, broken
// chunked framing) 400. Either way fasthttp closes the connection, since
// the stream stopped at an unknown place.
func readError(err error) error {
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return errBodyTimeout
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errBodyCutShort
	}
	return errBodyUnreadable
}

// errAPIBodyTooLarge answers a body over maxAPIBody.
var errAPIBodyTooLarge = analytics.Errorf(analytics.KindTooLarge, "body_too_large",
	"The request body is over 1 MB (%d bytes); the API's bodies are small JSON objects.", maxAPIBody)

// serveAdapted serves a request through the net/http route table, h, by
// fasthttpadaptor; an upload streamed to its handler goes by
// serveStreamed instead (uploads.go). The adaptor hands the handler ctx.PostBody(), which on
// a streamed request would read the whole stream with no limit, so the
// body is read here first, under the budget and maxAPIBody
// (maxSourcemapBody for a sourcemap upload, maxGroupBody for a group's
// properties), and given to the request as its raw body. It is released
// once both this function and the handler have returned, whichever is
// last: a handler that flushes (the survey CSV export, a replay page) has
// the adaptor stream its response and return while the handler still
// runs, with the request, and so the body, still its own; given back then,
// the buffer could be another request's while this one reads it, and the
// budget would not count it.
func (s *Server) serveAdapted(ctx *fasthttp.RequestCtx, h http.Handler) {
	if streamedUpload(string(ctx.Method()), string(ctx.Path())) {
		s.serveStreamed(ctx, h)
		return
	}
	limit, tooLarge, public := maxAPIBody, errAPIBodyTooLarge, false
	if string(ctx.Path()) == sourcemapsPath && ctx.IsPost() {
		if err := s.admitUpload(ctx); err != nil {
			writeFastError(ctx, s.Log, err)
			return
		}
		limit, tooLarge = maxSourcemapBody, analytics.ErrSourcemapTooLarge
	} else if ctx.IsPost() && strings.HasPrefix(string(ctx.Path()), groupsPathPrefix) {
		limit, tooLarge, public = maxGroupBody, errGroupBodyTooLarge, true
	}
	b, err := readBody(ctx.RequestBodyStream(), ctx.Request.Header.ContentLength(), limit, s.Bodies, tooLarge)
	if err != nil {
		if public {
			// A page's SDK reads the refusal only with the CORS headers
			// its route would have sent.
			setFastCORS(&ctx.Response.Header)
		}
		writeFastError(ctx, s.Log, err)
		return
	}
	// Held by this function and, once it starts, by the handler; the
	// adaptor returns only after the handler started, if it ever does (it
	// waits for the handler's flush or its end).
	var holders atomic.Int32
	holders.Store(1)
	done := func() {
		if holders.Add(-1) == 0 {
			b.release()
		}
	}
	defer done()
	// Even an empty body is set raw: it takes the stream off the request,
	// so that nothing reads it again (fasthttp drains what is left).
	ctx.Request.SetBodyRaw(b.buf)
	fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		holders.Add(1)
		defer done()
		h.ServeHTTP(w, r)
	}))(ctx)
}
