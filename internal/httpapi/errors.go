package httpapi

import (
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"strata/internal/analytics"
)

// statusOf is the one place an error kind becomes an HTTP status.
func statusOf(k analytics.Kind) int {
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
	status := statusOf(e.Kind)
	if status >= 500 && log != nil {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "code", e.Code, "err", e.Err)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	writeJSON(w, status, errorBody(e))
}

// writeJSON answers with a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	setJSONHeaders(w.Header())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Header values shared by every response that sends them; net/http only
// reads them. Assigning them saves the slice Header.Set allocates, which
// counts at tens of thousands of single-event requests a second.
var (
	jsonContentType = []string{"application/json; charset=utf-8"}
	noSniff         = []string{"nosniff"}
)

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
				log.Debug("request canceled by the client", "method", r.Method, "path", r.URL.Path)
				return
			}
			writeError(w, log, r, err)
		}
	})
}

var (
	errNotFound = analytics.Errorf(analytics.KindNotFound, "not_found", "There is nothing at this path.")
)

// methodNotAllowed answers a known path called with the wrong method.
func methodNotAllowed(allow string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Allow", allow)
		writeJSON(w, http.StatusMethodNotAllowed, errorBody(analytics.Errorf(0, "method_not_allowed",
			"The method %s is not allowed here; use %s.", r.Method, allow)))
		return nil
	}
}
