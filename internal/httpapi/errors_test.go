package httpapi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCanceledRequestIsNotAServerError checks that a handler failing
// because its client went away logs no error, while the same failure with
// the client still there is a logged 500.
func TestCanceledRequestIsNotAServerError(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := wrap(log, func(http.ResponseWriter, *http.Request) error { return errors.New("query interrupted") })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/v1/query/funnel", nil).WithContext(ctx))
	if logs.Len() != 0 {
		t.Errorf("a canceled request logged: %s", logs.String())
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/query/funnel", nil))
	if rec.Code != 500 || !strings.Contains(logs.String(), "query interrupted") {
		t.Errorf("a failing request: %d, logs %q", rec.Code, logs.String())
	}
}
