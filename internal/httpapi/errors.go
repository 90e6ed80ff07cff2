package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"strata/internal/analytics"
)

// statusOf is the one place an error kind becomes an HTTP status.
func statusOf(k analytics.ErrorKind) int {
	switch k {
	case analytics.KindInvalid:
		return http.StatusBadRequest
	case analytics.KindUnauthenticated:
		return http.StatusUnauthorized
	case analytics.KindForbidden:
		return http.StatusForbidden
	case analytics.KindNotFound:
		return http.StatusNotFound
	case analytics.KindConflict:
		return http.StatusConflict
	case analytics.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case analytics.KindRateLimited:
		return http.StatusTooManyRequests
	case analytics.KindUnavailable:
		return http.StatusServiceUnavailable
	case analytics.KindTimeout:
		return http.StatusRequestTimeout
	case analytics.KindMisdirected:
		return http.StatusMisdirectedRequest
	}
	return http.StatusInternalServerError
}

// errorBody is every error response: {"error": {"code", "message"}} plus any
// detail fields beside "error".
func errorBody(e *analytics.Error) map[string]any {
	body := map[string]any{"error": map[string]string{"code": e.Code, "message": e.Message}}
	for k, v := range e.Detail {
		body[k] = v
	}
	return body
}

// writeError answers with err's status and body. Server-side failures are
// logged here, once, with their cause; clients only see the safe message.
func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, err error) {
	e := analytics.AsError(err)
	logFailure(r.Context(), log, r.Method, e)
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfter(e))
	}
	status, body := errorJSON(e)
	setJSONHeaders(w.Header())
	w.WriteHeader(status)
	w.Write(body)
}

// writeFastError is writeError for the paths served on fasthttp directly.
func writeFastError(ctx *fasthttp.RequestCtx, log *slog.Logger, err error) {
	e := analytics.AsError(err)
	logFailure(ctx, log, string(ctx.Method()), e)
	if e.RetryAfter > 0 {
		ctx.Response.Header.Set("Retry-After", retryAfter(e))
	}
	status, body := errorJSON(e)
	writeFastJSON(ctx, status, body)
}

// logFailure logs a server-side failure (a 5xx) with its cause. A 5xx
// without a cause is a refusal the server chose (busy, stopping, not
// ready), which an operator should see but is not a fault: a warning. A 503
// server_busy from the body budget is neither: the budget logs its
// exhaustion itself, once a minute, rather than once per refused request;
// and a failure logged where it happened (Logged: a failed group commit,
// which fails every request of the group) is not logged per request.
//
// The line names the request's route, the pattern it matched, rather than
// its path, which may hold a secret (a shared link's); it is logged with
// the request's context, so that it carries the request's id, as the
// access line does (access.go).
func logFailure(ctx context.Context, log *slog.Logger, method string, e *analytics.Error) {
	status := statusOf(e.Kind)
	switch {
	case status < 500 || log == nil || e == errServerBusy || e.Logged:
	case e.Err == nil:
		log.WarnContext(ctx, "request refused", "method", method, "route", routeOf(ctx), "status", status, "code", e.Code)
	default:
		log.ErrorContext(ctx, "request failed", "method", method, "route", routeOf(ctx), "status", status, "code", e.Code, "err", e.Err)
	}
}

// routeOf is the route pattern ctx's request matched so far, "unmatched"
// when none did (yet: net/http's route table records it on return).
func routeOf(ctx context.Context) string {
	if req := requestOf(ctx); req != nil && req.route != "" {
		return req.route
	}
	return "unmatched"
}

// rateLimited is a 429 rate_limited: the message, with its arguments, says
// whose budget is spent, and the answer says when to retry (Retry-After,
// at least a second).
func rateLimited(wait time.Duration, format string, args ...any) error {
	return &analytics.Error{Kind: analytics.KindRateLimited, Code: "rate_limited",
		Message:    fmt.Sprintf(format, args...) + "; retry after the number of seconds in Retry-After.",
		RetryAfter: max(wait, time.Second)}
}

// retryAfter is an error's Retry-After header: whole seconds, rounded up.
func retryAfter(e *analytics.Error) string {
	return strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds())))
}

// errorJSON is an error's status and JSON body.
func errorJSON(err error) (int, []byte) {
	e := analytics.AsError(err)
	return statusOf(e.Kind), marshalLine(errorBody(e))
}

// marshalLine encodes v as json.Encoder does: one line, HTML characters
// escaped.
func marshalLine(v any) []byte {
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(v)
	return b.Bytes()
}

// writeJSON answers with a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	setJSONHeaders(w.Header())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeItems answers 200 with a list as {"items": [...]}: an empty list
// is [] rather than null, so that clients can read .items without a check.
func writeItems[T any](w http.ResponseWriter, items []T) {
	if items == nil {
		items = []T{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// writeFastJSON answers a fasthttp request with a JSON body.
func writeFastJSON(ctx *fasthttp.RequestCtx, status int, body []byte) {
	h := &ctx.Response.Header
	h.SetContentTypeBytes(valJSONContentType)
	h.SetBytesKV(hdrNoSniff, valNoSniff)
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
}

// Header values shared by every response that sends them; net/http only
// reads them. Assigning them saves the slice Header.Set allocates, which
// counts at tens of thousands of single-event requests a second.
var (
	jsonContentType = []string{"application/json; charset=utf-8"}
	noSniff         = []string{"nosniff"}
)

// The same for fasthttp, which copies the bytes it is given.
var (
	valJSONContentType = []byte("application/json; charset=utf-8")
	hdrNoSniff         = []byte("X-Content-Type-Options")
	valNoSniff         = []byte("nosniff")
	hdrAllowOrigin     = []byte("Access-Control-Allow-Origin")
	valAnyOrigin       = []byte("*")
	hdrExposeHeaders   = []byte("Access-Control-Expose-Headers")
	valExposed         = []byte("Retry-After")
)

// setFastCORS sets publicCORS's headers on a fasthttp response.
func setFastCORS(h *fasthttp.ResponseHeader) {
	h.SetBytesKV(hdrAllowOrigin, valAnyOrigin)
	h.SetBytesKV(hdrExposeHeaders, valExposed)
}

func setJSONHeaders(h http.Header) {
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = noSniff
}

// handlerFunc is a handler that returns its error instead of writing it, so
// the happy path reads straight down and errors are answered in one place.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// wrap adapts a handlerFunc to http.Handler.
func wrap(log *slog.Logger, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			// A client that went away (a browser leaving the page while
			// its query runs) is not a server error: there is no one to
			// answer and nothing to alert on.
			if r.Context().Err() != nil {
				log.DebugContext(r.Context(), "request canceled by the client", "method", r.Method, "route", r.Pattern)
				return
			}
			writeError(w, log, r, err)
		}
	})
}

var (
	errNotFound = analytics.Errorf(analytics.KindNotFound, "not_found", "There is nothing at this path.")
)
