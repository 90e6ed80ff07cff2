package e2e

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestDebugMemoryEndpoint checks that --debug-addr reports DuckDB's memory
// by tag next to the Go profiles, and that the public listener does not.
func TestDebugMemoryEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	debugAddr := l.Addr().String()
	l.Close()
	s := startServer(t, t.TempDir(), "--debug-addr", debugAddr)
	events := make([]map[string]any, 200)
	for i := range events {
		events[i] = map[string]any{"event_name": "signup", "distinct_id": "u", "properties": map[string]any{"i": i}}
	}
	if r := postEvents(t, s, s.BootstrapKey, events...); r.Status != 202 {
		t.Fatalf("posting: %d %s", r.Status, r.Body)
	}
	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		r := do(t, "GET", "http://"+debugAddr+"/debug/duckdb/memory", nil, nil)
		if r.Status != 200 {
			t.Fatalf("debug memory: %d %s", r.Status, r.Body)
		}
		if body = string(r.Body); strings.Contains(body, "IN_MEMORY_TABLE ") || strings.Contains(body, "BASE_TABLE ") {
			break
		}
	}
	if !strings.Contains(body, "IN_MEMORY_TABLE ") && !strings.Contains(body, "BASE_TABLE ") {
		t.Errorf("no table memory reported after an append:\n%s", body)
	}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if !strings.HasSuffix(line, " MB)") || !strings.Contains(line, " MB (temporary storage ") {
			t.Errorf("unexpected line %q", line)
		}
	}
	if r := do(t, "GET", s.URL+"/debug/duckdb/memory", nil, nil); r.Status != 404 {
		t.Errorf("public listener answered the debug path with %d", r.Status)
	}
}
