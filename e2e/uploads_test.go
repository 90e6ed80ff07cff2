package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLargeUploads sends the two uploads whose bodies may be far larger
// than the API's other bodies (1 MB) through the real binary: a cohort's
// CSV of 300,000 ids (3.9 MB) and an export to import of 1.9 MB. Each is
// streamed to its handler, which bounds it; without a session either is
// refused before its body is read.
func TestLargeUploads(t *testing.T) {
	s := startServer(t, t.TempDir())
	owner := setupOwner(t, s)
	a := newTenant(t, s, "Uploads")
	pa := "/api/v1/products/" + a.ProductFlag

	r := owner.do(t, "POST", pa+"/cohorts", map[string]any{"name": "Everyone we emailed", "kind": "static"})
	var c cohortJSON
	if err := json.Unmarshal(r.Body, &c); r.Status != 201 || err != nil {
		t.Fatalf("create cohort: %d %s", r.Status, r.Body)
	}
	var csv strings.Builder
	csv.WriteString("distinct_id\n")
	for i := range 300_000 {
		fmt.Fprintf(&csv, "user-%06d\n", i)
	}
	if csv.Len() < 3<<20 {
		t.Fatalf("the CSV is only %d bytes", csv.Len())
	}
	members := s.URL + pa + "/cohorts/" + strconv.FormatInt(c.ID, 10) + "/members"
	r = do(t, "PUT", members, []byte(csv.String()), map[string]string{"Origin": s.URL, "Content-Type": "text/csv"})
	if r.Status != 401 {
		t.Errorf("an upload without a session: %d %s", r.Status, r.Body)
	}
	r = do(t, "PUT", members, []byte(csv.String()), map[string]string{"Cookie": owner.cookie, "Origin": s.URL, "Content-Type": "text/csv"})
	if err := json.Unmarshal(r.Body, &c); r.Status != 200 || err != nil || c.Size != 300_000 {
		t.Fatalf("a 3.9 MB upload: %d %s", r.Status, r.Body[:min(len(r.Body), 300)])
	}

	var export strings.Builder
	for i := range 12_000 {
		line, _ := json.Marshal(map[string]any{"uuid": fmt.Sprintf("big-%d", i), "event": "$pageview", "distinct_id": fmt.Sprintf("u%d", i%500),
			"timestamp":  time.Date(2026, 10, 20, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339),
			"properties": map[string]any{"$current_url": "https://shop.example/products/" + strconv.Itoa(i%300)}})
		export.Write(line)
		export.WriteByte('\n')
	}
	if export.Len() < 1<<20 {
		t.Fatalf("the export is only %d bytes", export.Len())
	}
	r = do(t, "POST", s.URL+pa+"/imports?source=posthog&pause=0s", []byte(export.String()),
		map[string]string{"Origin": s.URL, "Cookie": owner.cookie, "Content-Type": "application/octet-stream"})
	if r.Status != 200 || r.JSON(t)["imported"] != 12_000.0 {
		t.Errorf("a %d-byte import: %d %s", export.Len(), r.Status, r.Body[:min(len(r.Body), 300)])
	}
	// Another body of a route read into memory is still held to 1 MB.
	big := `{"name":"` + strings.Repeat("x", 1<<20) + `"}`
	if r := do(t, "POST", s.URL+pa+"/cohorts", []byte(big), map[string]string{"Cookie": owner.cookie, "Origin": s.URL, "Content-Type": "application/json"}); r.Status != 413 {
		t.Errorf("a 1 MB cohort definition: %d", r.Status)
	}
}
