package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/store/duckdb"
)

// ackedEvent is an event /e acknowledged (202), and when.
type ackedEvent struct {
	id string
	at time.Time
}

// TestBackupUnderLoad backs up a running server through the CLI while a
// goroutine ingests and a query runs, restores the backup into a new
// directory and starts a second server there: every event acknowledged
// before the backup started is there by id, the trend, funnel and sessions
// queries of a range before the backup answer the same, and the keys,
// products, annotation, sourcemap and replay are there. A backup into a
// directory that is not empty, and a restore into one, are refused.
func TestBackupUnderLoad(t *testing.T) {
	dir, apiDir := t.TempDir(), t.TempDir()
	// The ingest loop sends as fast as it is answered: past the default
	// per-key budget it would be refused (429), which is not the backup's doing.
	s := startServer(t, dir, "--backup-dir", apiDir, "--rate-limit", "1000000")
	owner := setupOwner(t, s)
	a := newTenant(t, s, "Shop")

	// The range the queries compare: two days ago, before any backup.
	past := time.Now().UTC().Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(9 * time.Hour)
	seeded := shopEvents(20, past)
	if res := postEvents(t, s, a.Live, seeded...); res.Status != 202 {
		t.Fatalf("seeding: %d %s", res.Status, res.Body)
	}
	t0 := past.UnixMilli()
	if res := postEvents(t, s, a.Live, snapshotEvent("user-1", "sess-r", "win-r", 0, t0), snapshotEvent("user-1", "sess-r", "win-r", 1, t0+5000)); res.Status != 202 {
		t.Fatalf("replay: %d %s", res.Status, res.Body)
	}
	app := loadMinifiedApp(t)
	app.upload(t, s, a.Live)
	ann := createAnnotation(t, s, a.Token, newAnnotation("release 2.0", past))

	queries := []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/query/trend", map[string]any{"series": []map[string]any{{"event": "$pageview"}, {"event": "signup"}},
			"dateFrom": day(past), "dateTo": day(past), "interval": "hour"}},
		{"/api/v1/query/funnel", funnelRequest([]string{"$pageview", "signup", "purchase"}, past, past, 24)},
		{"/api/v1/query/sessions", map[string]any{"dateFrom": day(past), "dateTo": day(past), "interval": "day"}},
	}
	answers := func(s *server) []string {
		var out []string
		for _, q := range queries {
			var v any
			ask(t, s, a.Token, q.path, q.body, &v)
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		}
		return out
	}
	before := answers(s)
	if !strings.Contains(before[1], `"count":20`) {
		t.Fatalf("the funnel before the backup does not count the 20 users: %s", before[1])
	}

	// Ingest from a goroutine, one batch after another, noting each
	// acknowledged event and when its batch was acknowledged.
	var (
		mu      sync.Mutex
		acked   []ackedEvent
		refused = map[int]int{} // batches answered other than 202, by status
		stop    = make(chan struct{})
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			ids := make([]string, 50)
			batch := make([]map[string]any, len(ids))
			for i := range ids {
				ids[i] = uuid.NewString()
				batch[i] = ev("load", fmt.Sprintf("load-%d", n%40), "uuid", ids[i])
			}
			status, ok := tryPost(s, a.Live, batch)
			at := time.Now()
			if ok && status != 202 {
				mu.Lock()
				refused[status]++
				mu.Unlock()
			}
			if ok && status == 202 {
				mu.Lock()
				for _, id := range ids {
					acked = append(acked, ackedEvent{id, at})
				}
				mu.Unlock()
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)

	// A query running during the backup does not refuse it, nor is it
	// refused.
	queryDone := make(chan []string, 1)
	go func() { queryDone <- answers(s) }()
	backupDir := filepath.Join(t.TempDir(), "b1")
	started := time.Now()
	out, errOut, code := cliResult(dir, "backup", "--to", backupDir)
	if code != 0 {
		t.Fatalf("strata backup: exit %d: %s\n%s", code, errOut, s.Logs())
	}
	var m struct {
		SchemaVersion int       `json:"schemaVersion"`
		StartedAt     time.Time `json:"startedAt"`
		Files         []struct {
			Path   string `json:"path"`
			SHA256 string `json:"sha256"`
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("backup printed %q: %v", out, err)
	}
	if m.SchemaVersion < 30 || len(m.Files) < 2 || m.StartedAt.Before(started.Add(-time.Second)) {
		t.Errorf("manifest: %s", out)
	}
	t.Logf("the backup took %s through the CLI", time.Since(started).Round(time.Millisecond))
	if got := <-queryDone; strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Errorf("a query during the backup answered\n%v\nbefore it\n%v", got, before)
	}
	// One through the API, under ingest too: named, then the same name
	// again, a path for a name, and a credential that is not a session.
	if r := owner.do(t, "POST", "/api/v1/admin/backups", map[string]string{"name": "api-1"}); r.Status != 201 {
		t.Errorf("backup through the API: %d %s", r.Status, r.Body)
	} else if _, err := os.Stat(filepath.Join(apiDir, "api-1", "manifest.json")); err != nil {
		t.Errorf("the API's backup: %v", err)
	}
	if r := owner.do(t, "POST", "/api/v1/admin/backups", map[string]string{"name": "api-1"}); r.Status != 409 || r.ErrorCode(t) != "backup_target_not_empty" {
		t.Errorf("the same backup name again: %d %s", r.Status, r.Body)
	}
	if r := owner.do(t, "POST", "/api/v1/admin/backups", map[string]string{"name": "../escape"}); r.Status != 400 {
		t.Errorf("a path for a backup name: %d %s", r.Status, r.Body)
	}
	if r := do(t, "POST", s.URL+"/api/v1/admin/backups", []byte(`{}`), map[string]string{"Authorization": "Bearer " + a.Token,
		"Content-Type": "application/json", "Origin": s.URL}); r.Status != 401 && r.Status != 403 {
		t.Errorf("a backup with a query token: %d %s", r.Status, r.Body)
	}
	if entries, _ := os.ReadDir(apiDir); len(entries) != 1 {
		t.Errorf("the backup directory holds %d entries, want the one backup", len(entries))
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done

	// Refusals: the same target again, and a restore into a directory
	// that holds something.
	if _, errOut, code := cliResult(dir, "backup", "--to", backupDir); code == 0 || !strings.Contains(errOut, "is not empty") {
		t.Errorf("a backup into a non-empty directory: exit %d: %s", code, errOut)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o600)
	if _, errOut, code := cliResult(full, "restore", "--from", backupDir); code == 0 || !strings.Contains(errOut, "is not empty") {
		t.Errorf("a restore into a non-empty directory: exit %d: %s", code, errOut)
	}

	restored := filepath.Join(t.TempDir(), "data")
	cli(t, restored, "restore", "--from", backupDir)
	r := startServer(t, restored)

	// Every event acknowledged before the backup started, as its
	// manifest says (the server's clock, this machine's), is there.
	mu.Lock()
	var want []string
	for _, e := range acked {
		if e.at.Before(m.StartedAt) {
			want = append(want, e.id)
		}
	}
	total := len(acked)
	if len(refused) > 0 {
		t.Errorf("ingest batches refused while the backups ran, by status: %v", refused)
	}
	mu.Unlock()
	if len(want) == 0 {
		t.Fatalf("no event was acknowledged before the backup (%d after)", total)
	}
	r.Stop()
	st, err := duckdb.Open(context.Background(), restored, duckdb.Options{})
	if err != nil {
		t.Fatalf("opening the restored store: %v", err)
	}
	db := st.DB()
	have := map[string]bool{}
	rows, err := db.Query(`SELECT CAST(uuid AS VARCHAR) FROM events WHERE event = 'load'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		have[id] = true
	}
	rows.Close()
	missing := 0
	for _, id := range want {
		if !have[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of the %d events acknowledged before the backup are not in it", missing, len(want))
	}
	t.Logf("%d events acknowledged before the backup, %d in all; the backup holds %d", len(want), total, len(have))
	st.Close()

	r = startServer(t, restored)
	if got := answers(r); strings.Join(got, "\n") != strings.Join(before, "\n") {
		t.Errorf("the restored server answers\n%v\nthe original\n%v", got, before)
	}
	checkRestored(t, r, a, ann.ID, "sess-r")
	// The owner's session is in the backup too; the restored server,
	// started without --backup-dir, takes no backup through the API.
	again := &browser{s: r, cookie: owner.cookie}
	if res := again.do(t, "POST", "/api/v1/admin/backups", map[string]string{}); res.Status != 409 || res.ErrorCode(t) != "backup_dir_unset" {
		t.Errorf("a backup through the API without --backup-dir: %d %s", res.Status, res.Body)
	}
}

// shopEvents are users' visits on the day of past, each in a session of
// its own: $pageview, signup, $pageview, and purchase for every third
// user, a minute apart, with a plan property for breakdowns.
func shopEvents(users int, past time.Time) []map[string]any {
	var out []map[string]any
	for u := range users {
		user := fmt.Sprintf("user-%d", u)
		for i, name := range []string{"$pageview", "signup", "$pageview", "purchase"} {
			if name == "purchase" && u%3 != 0 {
				continue
			}
			at := past.Add(time.Duration(u)*7*time.Minute + time.Duration(i)*time.Minute)
			out = append(out, ev(name, user, "timestamp", at.Format(time.RFC3339Nano), "url", fmt.Sprintf("https://shop.example/p%d", i),
				"properties", map[string]any{"$session_id": user + "-s", "plan": []string{"free", "pro"}[u%2]}))
		}
	}
	return out
}

// checkRestored checks that the restored server r knows tenant a's keys
// and token, its annotation, its sourcemap and its replay.
func checkRestored(t *testing.T, r *server, a tenant, annID int64, session string) {
	t.Helper()
	if res := postEvents(t, r, a.Live, ev("after_restore", "u")); res.Status != 202 {
		t.Errorf("the live key after the restore: %d %s", res.Status, res.Body)
	}
	get := func(path string) response {
		return do(t, "GET", r.URL+path, nil, map[string]string{"Authorization": "Bearer " + a.Token})
	}
	if res := get("/api/v1/annotations"); res.Status != 200 || !bytes.Contains(res.Body, []byte(fmt.Sprintf(`"id":%d`, annID))) {
		t.Errorf("annotations after the restore: %d %s", res.Status, res.Body)
	}
	if res := get("/api/v1/sourcemaps"); res.Status != 200 || !bytes.Contains(res.Body, []byte(minifiedAppURL)) {
		t.Errorf("sourcemaps after the restore: %d %s", res.Status, res.Body)
	}
	if res := get("/api/v1/replays/" + session); res.Status != 200 || !bytes.Contains(res.Body, []byte(session)) {
		t.Errorf("the replay after the restore: %d %.300s", res.Status, res.Body)
	}
	out := cli(t, r.dataDir, "products", "list", "--json")
	if !strings.Contains(out, `"Shop"`) {
		t.Errorf("products after the restore: %s", out)
	}
}

// TestBackupOffline backs up a data directory no server holds: the
// command opens it itself, and the restored directory holds every event.
func TestBackupOffline(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	a := newTenant(t, s, "Shop")
	past := time.Now().UTC().Add(-48 * time.Hour).Truncate(24 * time.Hour).Add(9 * time.Hour)
	events := shopEvents(10, past)
	if res := postEvents(t, s, a.Live, events...); res.Status != 202 {
		t.Fatalf("ingest: %d %s", res.Status, res.Body)
	}
	s.Stop()

	backupDir := filepath.Join(t.TempDir(), "b")
	cli(t, dir, "backup", "--to", backupDir)
	restored := filepath.Join(t.TempDir(), "data")
	cli(t, restored, "restore", "--from", backupDir)
	st, err := duckdb.Open(context.Background(), restored, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := count(t, st.DB(), `SELECT count(*) FROM events WHERE product_id = ?`, a.ID); n != len(events) {
		t.Errorf("the restored directory holds %d of the %d events", n, len(events))
	}
}
