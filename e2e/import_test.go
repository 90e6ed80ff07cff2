package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeLines writes records as JSON lines into a new file of the test.
func writeLines(t *testing.T, name string, recs []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// importedPageviews is the product's $pageview trend over October 2026,
// summed.
func importedPageviews(t *testing.T, s *server, tn tenant) int64 {
	t.Helper()
	var ta trendAnswer
	ask(t, s, tn.Token, "/api/v1/query/trend", map[string]any{"series": []map[string]any{{"event": "$pageview"}},
		"dateFrom": "2026-10-01", "dateTo": "2026-10-31"}, &ta)
	var sum int64
	for _, p := range ta.Series[0].Data {
		sum += p.Value
	}
	return sum
}

// TestImport imports a PostHog export paced through the running server's
// admin socket, again (nothing stored twice), refuses --fast while the
// server runs, imports a Mixpanel export --fast into the stopped data
// directory, and an export through the API; a dry run writes nothing.
// The trends answer what the files hold.
func TestImport(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	tn := newTenant(t, s, "Imported")

	var posthog []map[string]any
	for i := 0; i < 1200; i++ {
		posthog = append(posthog, map[string]any{"uuid": fmt.Sprintf("ph-%d", i), "event": "$pageview", "distinct_id": fmt.Sprintf("u%d", i%40),
			"timestamp":  time.Date(2026, 10, 1+i%30, 12, i%60, 0, 0, time.UTC).Format(time.RFC3339),
			"properties": map[string]any{"$current_url": "https://ex.com/", "$session_id": fmt.Sprintf("s%d", i%90)}})
	}
	posthog = append(posthog, map[string]any{"event": "$pageview", "timestamp": "2026-10-02T00:00:00Z"}) // no user
	phFile := writeLines(t, "posthog.jsonl", posthog)

	out := cli(t, dir, "import", "--from", "posthog", "--product", tn.ProductFlag, "--pause", "20ms", phFile)
	if !strings.Contains(out, "imported 1200 events from posthog") || !strings.Contains(out, "not mapped: missing_distinct_id 1") {
		t.Errorf("paced import:\n%s", out)
	}
	if got := importedPageviews(t, s, tn); got != 1200 {
		t.Errorf("after the import the trend counts %d page views, want 1200", got)
	}
	// Run again: the checkpoint knows the file; and without it (a copy
	// elsewhere), the server leaves out what it holds.
	if out := cli(t, dir, "import", "--from", "posthog", "--product", tn.ProductFlag, phFile); !strings.Contains(out, "already imported whole") {
		t.Errorf("second import:\n%s", out)
	}
	copied := filepath.Join(t.TempDir(), "copy.jsonl")
	exported, _ := os.ReadFile(phFile)
	os.WriteFile(copied, append(exported, '\n'), 0o600)
	if out := cli(t, dir, "import", "--from", "posthog", "--product", tn.ProductFlag, "--pause", "0s", copied); !strings.Contains(out, "already stored (left out): 1200") {
		t.Errorf("import of a copy:\n%s", out)
	}
	if got := importedPageviews(t, s, tn); got != 1200 {
		t.Errorf("after importing twice the trend counts %d page views, want 1200", got)
	}

	var mixpanel []map[string]any
	for i := 0; i < 300; i++ {
		mixpanel = append(mixpanel, map[string]any{"event": "$mp_web_page_view", "properties": map[string]any{
			"time": time.Date(2026, 10, 15, 8, 0, i, 0, time.UTC).Unix(), "distinct_id": fmt.Sprintf("m%d", i%9),
			"$insert_id": fmt.Sprintf("mp-%d", i), "$current_url": "https://ex.com/docs"}})
	}
	mpFile := writeLines(t, "mixpanel.jsonl", mixpanel)
	_, errOut, code := cliResult(dir, "import", "--from", "mixpanel", "--product", tn.ProductFlag, "--fast", mpFile)
	if code != 1 || !strings.Contains(errOut, "--fast writes only into a stopped data directory") {
		t.Errorf("--fast while the server runs: exit %d: %s", code, errOut)
	}
	if out := cli(t, dir, "import", "--from", "mixpanel", "--product", tn.ProductFlag, "--dry-run", mpFile); !strings.Contains(out, "would import") ||
		!strings.Contains(out, "event $pageview: 300") {
		t.Errorf("dry run:\n%s", out)
	}
	if got := importedPageviews(t, s, tn); got != 1200 {
		t.Errorf("after a dry run the trend counts %d page views, want 1200", got)
	}

	s.Stop()
	if out := cli(t, dir, "import", "--from", "mixpanel", "--product", tn.ProductFlag, "--fast", mpFile); !strings.Contains(out, "imported 300 events from mixpanel") {
		t.Errorf("--fast import:\n%s", out)
	}
	s = startServer(t, dir, "--import-max-bytes", "64KB")
	if got := importedPageviews(t, s, tn); got != 1500 {
		t.Errorf("after the --fast import the trend counts %d page views, want 1500", got)
	}

	// Through the API: an admin uploads an export; the same again stores
	// nothing; an unknown source and an export over --import-max-bytes
	// are refused, and nothing of the upload stays on the disk.
	b := setupOwner(t, s)
	var viaAPI []map[string]any
	for i := 0; i < 100; i++ {
		viaAPI = append(viaAPI, map[string]any{"uuid": fmt.Sprintf("api-%d", i), "event": "$pageview", "distinct_id": "api-user",
			"timestamp": time.Date(2026, 10, 20, 9, 0, i, 0, time.UTC).Format(time.RFC3339)})
	}
	body, _ := os.ReadFile(writeLines(t, "api.jsonl", viaAPI))
	upload := func(query string, body []byte) response {
		return do(t, "POST", s.URL+"/api/v1/products/"+tn.ProductFlag+"/imports?"+query, body,
			map[string]string{"Origin": s.URL, "Cookie": b.cookie, "Content-Type": "application/octet-stream"})
	}
	if r := upload("source=posthog&pause=0s", body); r.Status != 200 || r.JSON(t)["imported"] != 100.0 {
		t.Errorf("import through the API: %d %s", r.Status, r.Body)
	}
	if r := upload("source=posthog&batch=30", body); r.Status != 200 || r.JSON(t)["duplicates"] != 100.0 || r.JSON(t)["imported"] != 0.0 {
		t.Errorf("the same export again: %d %s", r.Status, r.Body)
	}
	if got := importedPageviews(t, s, tn); got != 1600 {
		t.Errorf("after the API's imports the trend counts %d page views, want 1600", got)
	}
	if r := upload("source=segment", body); r.Status != 400 || r.ErrorCode(t) != "invalid_request" {
		t.Errorf("an unknown source: %d %s", r.Status, r.Body)
	}
	big, _ := os.ReadFile(phFile)
	if r := upload("source=posthog", big); r.Status != 413 || r.ErrorCode(t) != "body_too_large" {
		t.Errorf("an export over --import-max-bytes: %d %s", r.Status, r.Body[:min(len(r.Body), 300)])
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "imports", "uploads")); len(left) != 0 {
		t.Errorf("uploads left on the disk: %v", left)
	}
	// A product that does not exist is refused before anything is read.
	if _, errOut, code := cliResult(dir, "import", "--from", "posthog", "--product", "999", phFile); code == 0 {
		t.Errorf("import into product 999 succeeded: %s", errOut)
	}
}
