package sdkgo

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"strata/internal/flags"
)

// serveConfig answers GET /api/v1/config with list, encoded as the
// server's handler encodes its flags, and accepts POST /e.
func serveConfig(t *testing.T, list []flags.Flag) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"flags": list})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/config" {
			w.Write(body)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func findFlag(list []flags.Flag, key string) *flags.Flag {
	for i := range list {
		if list[i].Key == key {
			return &list[i]
		}
	}
	return nil
}
