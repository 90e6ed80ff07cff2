package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gzipped compresses b as the SDK's CompressionStream does.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// snapshotEvent is a $snapshot event as the SDK sends it: chunk index of
// window in session, with rrweb events starting at ms.
func snapshotEvent(user, session, window string, index int, ms int64) map[string]any {
	rr := fmt.Sprintf(`[{"type":4,"data":{"href":"https://shop.example/"},"timestamp":%d},`+
		`{"type":3,"data":{"source":2,"type":2,"id":1},"timestamp":%d},`+
		`{"type":5,"data":{"tag":"$exception","payload":{}},"timestamp":%d}]`, ms, ms+1000, ms+4000)
	return map[string]any{"event_name": "$snapshot", "distinct_id": user, "properties": map[string]any{
		"$session_id": session, "$window_id": window, "$chunk_index": index, "$snapshot_encoding": "gzip-json",
		"$snapshot_data": base64.StdEncoding.EncodeToString(gzipped([]byte(rr)))}}
}

// TestReplay drives session replay's server side on the real binary:
// $snapshot events in a batch with ordinary events go to the replay files,
// not the events table, and 202 counts them; a chunk over 1 MiB is
// rejected per event; the list, the chunks and both deletes, for a token
// or a session only, each product seeing its own sessions only.
func TestReplay(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixMilli()

	res := postEvents(t, s, a.Live,
		map[string]any{"event_name": "$pageview", "distinct_id": "ann", "properties": map[string]any{"$session_id": "sess-1"}},
		snapshotEvent("ann", "sess-1", "win-1", 0, t0),
		snapshotEvent("ann", "sess-1", "win-1", 1, t0+5000),
		snapshotEvent("bob", "sess-2", "win-2", 0, t0+3600_000),
		map[string]any{"event_name": "$snapshot", "distinct_id": "ann", "properties": map[string]any{
			"$session_id": "sess-1", "$window_id": "win-1", "$chunk_index": 2, "$snapshot_encoding": "gzip-json",
			"$snapshot_data": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 1<<20+1))}},
	)
	if res.Status != 202 || !strings.Contains(string(res.Body), `"accepted":4`) || !strings.Contains(string(res.Body), `"index":4,"code":"snapshot_too_large"`) {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	// The same session id in another product is another session.
	if res := postEvents(t, s, b.Live, snapshotEvent("eve", "sess-1", "win-9", 0, t0)); res.Status != 202 {
		t.Fatalf("ingest b: %d %s", res.Status, res.Body)
	}
	// Only $snapshot events: a batch of chunks alone is answered the same.
	if res := postEvents(t, s, a.Live, snapshotEvent("ann", "sess-1", "win-1", 1, t0+5000)); res.Status != 202 {
		t.Fatalf("a retried chunk: %d %s", res.Status, res.Body)
	}

	get := func(tok, path string) response {
		return do(t, "GET", s.URL+path, nil, map[string]string{"Authorization": "Bearer " + tok})
	}
	list := get(a.Token, "/api/v1/replays")
	items, _ := list.JSON(t)["items"].([]any)
	if list.Status != 200 || len(items) != 2 {
		t.Fatalf("list: %d %s", list.Status, list.Body)
	}
	first := items[1].(map[string]any)
	if first["sessionId"] != "sess-1" || first["distinctId"] != "ann" || first["pages"] != 2.0 || first["clicks"] != 2.0 ||
		first["errors"] != 2.0 || first["durationMs"] != 9000.0 || first["chunks"] != 2.0 {
		t.Errorf("sess-1: %v", first)
	}
	for path, want := range map[string]int{
		"/api/v1/replays?distinct_id=bob":                             1,
		"/api/v1/replays?distinct_id=eve":                             0,
		"/api/v1/replays?dateFrom=2026-05-01&dateTo=2026-05-01":       2,
		"/api/v1/replays?dateFrom=2026-05-02":                         0,
		"/api/v1/replays?dateFrom=2026-05-01T10:30:00Z":               1,
		"/api/v1/replays?limit=1":                                     1,
		"/api/v1/replays?distinct_id=ann&dateTo=2026-04-30":           0,
		"/api/v1/replays?distinct_id=ann&dateTo=2026-05-01T10:00:01Z": 1,
	} {
		r := get(a.Token, path)
		if got, _ := r.JSON(t)["items"].([]any); r.Status != 200 || len(got) != want {
			t.Errorf("%s: %d %s, want %d sessions", path, r.Status, r.Body, want)
		}
	}
	if r := get(a.Token, "/api/v1/replays?dateFrom=May"); r.Status != 400 || r.ErrorCode(t) != "invalid_request" {
		t.Errorf("a bad date: %d %s", r.Status, r.Body)
	}

	one := get(a.Token, "/api/v1/replays/sess-1")
	chunks, _ := one.JSON(t)["chunks"].([]any)
	if one.Status != 200 || len(chunks) != 2 || one.Header.Get("Cache-Control") != "private, no-store" {
		t.Fatalf("get: %d %s", one.Status, one.Body)
	}
	c0 := chunks[0].(map[string]any)
	raw, _ := base64.StdEncoding.DecodeString(c0["data"].(string))
	if c0["windowId"] != "win-1" || c0["index"] != 0.0 || c0["encoding"] != "gzip-json" || !bytes.Equal(raw[:2], []byte{0x1f, 0x8b}) {
		t.Errorf("chunk 0: %v", c0)
	}
	// Tenant isolation and credentials.
	for _, c := range []struct {
		name, method, path, cred string
		status                   int
		code                     string
	}{
		{"b reads a's session", "GET", "/api/v1/replays/sess-2", b.Token, 404, "replay_not_found"},
		{"b deletes a's session", "DELETE", "/api/v1/replays/sess-2", b.Token, 404, "replay_not_found"},
		{"an API key reads", "GET", "/api/v1/replays", a.Live, 403, "key_not_allowed"},
		{"an API key deletes", "DELETE", "/api/v1/replays?distinct_id=ann", a.Live, 403, "key_not_allowed"},
		{"no credential", "GET", "/api/v1/replays", "", 401, "missing_credentials"},
		{"an id that is no id", "GET", "/api/v1/replays/a.b", a.Token, 404, "replay_not_found"},
		{"deleting without a user", "DELETE", "/api/v1/replays", a.Token, 400, "invalid_request"},
	} {
		h := map[string]string{}
		if c.cred != "" {
			h["Authorization"] = "Bearer " + c.cred
		}
		r := do(t, c.method, s.URL+c.path, nil, h)
		if r.Status != c.status || r.ErrorCode(t) != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
	if r := get(b.Token, "/api/v1/replays"); !strings.Contains(string(r.Body), `"distinctId":"eve"`) || strings.Contains(string(r.Body), "ann") {
		t.Errorf("b's list: %s", r.Body)
	}

	// The files: a segment per product, none per session.
	files, _ := filepath.Glob(filepath.Join(dir, "replay", fmt.Sprint(a.ID), "*"))
	if len(files) != 1 || filepath.Base(files[0]) != "00000001.seg" {
		t.Errorf("product a's replay files: %v, want one segment", files)
	}
	if one.JSON(t)["next"] != nil {
		t.Errorf("a session of one page has a next page: %s", one.Body)
	}

	// Deletes: one session, then every session of a user.
	if r := do(t, "DELETE", s.URL+"/api/v1/replays/sess-2", nil, map[string]string{"Authorization": "Bearer " + a.Token}); r.Status != 204 {
		t.Errorf("delete: %d %s", r.Status, r.Body)
	}
	r := do(t, "DELETE", s.URL+"/api/v1/replays?distinct_id=ann", nil, map[string]string{"Authorization": "Bearer " + a.Token})
	if r.Status != 200 || r.JSON(t)["deleted"] != 1.0 {
		t.Errorf("delete ann's: %d %s", r.Status, r.Body)
	}
	if _, err := os.Stat(filepath.Join(dir, "replay", fmt.Sprint(a.ID), "sess-1")); !os.IsNotExist(err) {
		t.Errorf("sess-1's directory is still there: %v", err)
	}
	if r := get(b.Token, "/api/v1/replays/sess-1"); r.Status != 200 {
		t.Errorf("deleting a's sess-1 touched b's: %d", r.Status)
	}

	// No $snapshot reached the events table; the page view did.
	s.Stop()
	db := openStore(t, dir)
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = '$snapshot'`); n != 0 {
		t.Errorf("%d $snapshot events in the events table", n)
	}
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = '$pageview' AND product_id = ?`, a.ID); n != 1 {
		t.Errorf("%d page views stored, want 1", n)
	}
}
