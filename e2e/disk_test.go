package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/testdisk"
)

// sentEvent is what a client sent for one event, to compare byte for byte
// with what was stored.
type sentEvent struct {
	Name, DistinctID, URL, Props string
}

// diskLoad is several clients sending 200-event batches with unique uuids
// and strings of many lengths, recording every event answered 202 and how
// every request was answered.
type diskLoad struct {
	t    *testing.T
	s    *server
	key  string
	stop atomic.Bool
	wg   sync.WaitGroup

	mu    sync.Mutex
	acked map[string]sentEvent
	codes map[string]int // "202", "503 storage_full", …
	seq   int
}

func startDiskLoad(t *testing.T, s *server, clients int) *diskLoad {
	return startDiskLoadKey(t, s, s.BootstrapKey, clients)
}

// startDiskLoadKey is startDiskLoad with the API key of a product.
func startDiskLoadKey(t *testing.T, s *server, key string, clients int) *diskLoad {
	l := &diskLoad{t: t, s: s, key: key, acked: map[string]sentEvent{}, codes: map[string]int{}}
	for w := 1; w <= clients; w++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for !l.stop.Load() {
				if !l.send(w) {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	return l
}

// send posts one batch and reports whether it was acknowledged.
func (l *diskLoad) send(worker int) bool {
	l.mu.Lock()
	l.seq++
	seq := l.seq
	l.mu.Unlock()
	batch := make([]map[string]any, 200)
	sent := make(map[string]sentEvent, len(batch))
	for i := range batch {
		id := uuid.NewString()
		e := sentEvent{
			Name:       fmt.Sprintf("full%d", worker),
			DistinctID: fmt.Sprintf("user-%d-%d-%s", seq, i, strings.Repeat("d", i%40)),
			URL:        fmt.Sprintf("https://example.test/page/%d/%d?q=%s", seq, i, strings.Repeat("u", i%30)),
			Props:      fmt.Sprintf(`{"seq":%d,"i":%d,"pad":"%s"}`, seq, i, strings.Repeat("p", 20+i%90)),
		}
		sent[id] = e
		batch[i] = map[string]any{"event_name": e.Name, "distinct_id": e.DistinctID, "url": e.URL,
			"uuid": id, "properties": json.RawMessage(e.Props)}
	}
	body, _ := json.Marshal(map[string]any{"batch": batch})
	req, _ := http.NewRequest("POST", l.s.URL+"/e", bytes.NewReader(body))
	req.Header.Set("X-API-Key", l.key)
	resp, err := httpClient.Do(req)
	if err != nil {
		l.count("error")
		return false
	}
	defer resp.Body.Close()
	var answer struct {
		Error struct{ Code string } `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&answer)
	l.count(strings.TrimSpace(fmt.Sprint(resp.StatusCode, " ", answer.Error.Code)))
	if resp.StatusCode != 202 {
		if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
			l.count("503 without Retry-After")
		}
		return false
	}
	l.mu.Lock()
	for id, e := range sent {
		l.acked[id] = e
	}
	l.mu.Unlock()
	return true
}

func (l *diskLoad) count(k string) {
	l.mu.Lock()
	l.codes[k]++
	l.mu.Unlock()
}

// seen returns how many requests were answered k so far.
func (l *diskLoad) seen(k string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.codes[k]
}

// halt stops the clients and returns what was acknowledged.
func (l *diskLoad) halt() map[string]sentEvent {
	l.stop.Store(true)
	l.wg.Wait()
	l.t.Logf("answers: %v; %d events acknowledged", l.codes, len(l.acked))
	return l.acked
}

// waitFor polls cond every 50 ms until it holds or the time is up.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readyCode is /readyz's status and error code.
func readyCode(t *testing.T, s *server) (int, string) {
	r := do(t, "GET", s.URL+"/readyz", nil, nil)
	if r.Status == 200 {
		return 200, ""
	}
	return r.Status, r.ErrorCode(t)
}

// TestFullDiskFloor fills the data directory's disk to the free-space
// floor under ingest: the server stops acknowledging (503 storage_full with
// Retry-After) and says so on /readyz, before anything fails to write; once
// space is freed it takes events again by itself, and every acknowledged
// event is stored exactly as sent.
func TestFullDiskFloor(t *testing.T) {
	mnt := testdisk.Mount(t, "size=64m,mode=0700")
	dir := filepath.Join(mnt, "data")
	// Something else on the disk, to be deleted later.
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 24<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--rate-limit", "10000000", "--min-free-disk", "16MB")
	load := startDiskLoad(t, s, 4)
	waitFor(t, 60*time.Second, "ingest refused with storage_full", func() bool { return load.seen("503 storage_full") > 0 })
	if code, reason := readyCode(t, s); code != 503 || reason != "storage_full" {
		t.Errorf("/readyz below the floor: %d %s; want 503 storage_full", code, reason)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "/readyz ready once space was freed", func() bool { code, _ := readyCode(t, s); return code == 200 })
	before := load.seen("202")
	waitFor(t, 10*time.Second, "ingest acknowledged again", func() bool { return load.seen("202") > before })
	acked := load.halt()
	if n := load.seen("error") + load.seen("503 without Retry-After") + load.seen("500 internal"); n > 0 {
		t.Errorf("%d requests failed without a 503 and Retry-After", n)
	}
	if n := load.seen("503 unavailable") + load.seen("503 storage_unavailable"); n > 0 {
		t.Errorf("%d requests met a failed write; the floor should have refused them first", n)
	}
	s.Stop()
	checkStored(t, dir, acked)
}

// TestFullDiskRecovers lets something else fill the disk past the floor
// while clients send, with events acknowledged but not yet in the
// database: ingest is refused, the spool's loaders wait (a database write
// on a nearly full disk is what must never happen), queries answer 503
// rather than 500 or waiting, and /readyz says why. Once the space is
// freed, the server takes events again by itself, the waiting events reach
// the database, a query sees them, and every acknowledged event is stored
// once, byte for byte.
func TestFullDiskRecovers(t *testing.T) {
	mnt := testdisk.Mount(t, "size=96m,mode=0700")
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--rate-limit", "10000000", "--min-free-disk", "32MB")
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "1"))
	query := func() response {
		return do(t, "GET", s.URL+"/api/v1/query/events", nil, map[string]string{"Authorization": "Bearer " + tok})
	}
	load := startDiskLoad(t, s, 4)
	waitFor(t, 30*time.Second, "ingest under way", func() bool { return load.seen("202") > 20 })

	// 24 MB left, under the 32 MB floor: room for what is in flight when
	// the floor is crossed (a commit group, a loader's batch).
	filler := testdisk.Fill(t, mnt, 24<<20)
	waitFor(t, 10*time.Second, "ingest refused with storage_full", func() bool { return load.seen("503 storage_full") > 0 })
	if code, reason := readyCode(t, s); code != 503 || reason != "storage_full" {
		t.Errorf("/readyz with the disk filled: %d %s; want 503 storage_full", code, reason)
	}
	if r := query(); r.Status != 200 && !(r.Status == 503 && r.ErrorCode(t) == "storage_full") {
		t.Errorf("a query with the disk filled: %d %s; want 200, or 503 storage_full while events wait", r.Status, r.Body)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "/readyz ready once space was freed", func() bool { code, _ := readyCode(t, s); return code == 200 })
	before := load.seen("202")
	waitFor(t, 10*time.Second, "ingest acknowledged again", func() bool { return load.seen("202") > before+5 })
	acked := load.halt()
	if r := query(); r.Status != 200 {
		t.Errorf("a query once space was freed: %d %s", r.Status, r.Body)
	}
	for _, k := range []string{"error", "503 without Retry-After", "500 internal", "503 unavailable", "503 storage_unavailable"} {
		if n := load.seen(k); n > 0 {
			t.Errorf("%d requests answered %q; a disk past the floor must be refused before any write fails", n, k)
		}
	}
	s.Stop()
	checkStored(t, dir, acked)
}

// checkStored compares every acknowledged event with the stored row of its
// uuid: none missing, none stored twice, none altered, and no stored row
// under an acknowledged uuid that differs from what was sent.
func checkStored(t *testing.T, dir string, acked map[string]sentEvent) {
	t.Helper()
	if len(acked) < 1000 {
		t.Fatalf("only %d events acknowledged; the test needs load", len(acked))
	}
	db := openStore(t, dir)
	rows, err := db.Query(`SELECT CAST(uuid AS VARCHAR), env, event, distinct_id, url, properties FROM events WHERE event LIKE 'full%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored := map[string]int{}
	bad := 0
	for rows.Next() {
		var id, env, name, did, url, props string
		if err := rows.Scan(&id, &env, &name, &did, &url, &props); err != nil {
			t.Fatal(err)
		}
		stored[id]++
		want, ok := acked[id]
		if !ok {
			continue // sent but not acknowledged: may or may not be stored
		}
		if got := (sentEvent{Name: name, DistinctID: did, URL: url, Props: props}); got != want || env != "live" {
			if bad++; bad <= 3 {
				t.Errorf("event %s stored altered:\n got env=%.40q %.300v\nwant %+v", id, env, got, want)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	missing, dup := 0, 0
	for id := range acked {
		switch stored[id] {
		case 0:
			missing++
		case 1:
		default:
			dup++
		}
	}
	if missing > 0 || dup > 0 || bad > 0 {
		t.Fatalf("of %d acknowledged events: %d missing, %d stored more than once, %d altered", len(acked), missing, dup, bad)
	}
	t.Logf("all %d acknowledged events stored once, exactly as sent", len(acked))
}

// removeAll deletes the files a filler made, in order.
func removeAll(t *testing.T, names []string) {
	t.Helper()
	for _, name := range names {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFullDiskInodeFloor exhausts the data directory's inodes from outside
// while clients of two products send, on a disk with bytes to spare: the
// server stops acknowledging events of every product (503 storage_full
// with Retry-After, naming inodes) and says so on /readyz before any write
// fails; once the files are deleted it takes events again by itself, and
// every acknowledged event is stored exactly as sent.
func TestFullDiskInodeFloor(t *testing.T) {
	// By the environment, which an older server ignores: it then never
	// refuses, which fails the test, rather than refusing the flag.
	t.Setenv("STRATA_MIN_FREE_INODES", "200")
	mnt := testdisk.Mount(t, "size=256m,nr_inodes=1000,mode=0700")
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--rate-limit", "10000000", "--min-free-disk", "16MB")
	var second struct{ ID int64 }
	if err := json.Unmarshal([]byte(cli(t, dir, "products", "create", "--name", "Second")), &second); err != nil || second.ID == 0 {
		t.Fatalf("creating a second product: %v", err)
	}
	key2 := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", fmt.Sprint(second.ID)))
	loads := []*diskLoad{startDiskLoadKey(t, s, s.BootstrapKey, 2), startDiskLoadKey(t, s, key2, 2)}
	for i, l := range loads {
		waitFor(t, 30*time.Second, fmt.Sprintf("product %d's ingest under way", i+1), func() bool { return l.seen("202") > 20 })
	}

	files := testdisk.FillInodes(t, mnt, 100)
	for i, l := range loads {
		waitFor(t, 10*time.Second, fmt.Sprintf("product %d's ingest refused with storage_full", i+1), func() bool { return l.seen("503 storage_full") > 0 })
	}
	r := do(t, "GET", s.URL+"/readyz", nil, nil)
	if r.Status != 503 || r.ErrorCode(t) != "storage_full" || !strings.Contains(string(r.Body), "inodes") {
		t.Errorf("/readyz with the inodes exhausted: %d %s; want 503 storage_full naming inodes", r.Status, r.Body)
	}
	if !strings.Contains(s.Logs(), "nearly out of inodes") {
		t.Error("the crossing of the inode floor is not logged")
	}

	removeAll(t, files)
	waitFor(t, 10*time.Second, "/readyz ready once files were deleted", func() bool { code, _ := readyCode(t, s); return code == 200 })
	acked := map[string]sentEvent{}
	for i, l := range loads {
		before := l.seen("202")
		waitFor(t, 10*time.Second, fmt.Sprintf("product %d's ingest acknowledged again", i+1), func() bool { return l.seen("202") > before })
		for id, e := range l.halt() {
			acked[id] = e
		}
		for _, k := range []string{"error", "503 without Retry-After", "500 internal", "503 unavailable", "503 storage_unavailable"} {
			if n := l.seen(k); n > 0 {
				t.Errorf("product %d: %d requests answered %q; the inode floor must refuse before any write fails", i+1, n, k)
			}
		}
	}
	s.Stop()
	checkStored(t, dir, acked)
}

// TestFullDiskStart kills the server while events wait in its spool, then
// exhausts the disk to its last block or its last inode and starts the
// server again, with the database's write-ahead log left by the kill and
// without one (the issue's "Cannot open file …/strata.duckdb.wal: No space
// left on device"). It must start: listen, answer /healthz, say
// storage_full on /readyz, serve a query of what is stored, the dashboard's
// page and a signed-in session, refuse sign-in and ingest with 503
// storage_full. Once space is freed it replays the spool and takes events
// without a restart, and every event acknowledged before the kill and
// after is stored once, byte for byte.
func TestFullDiskStart(t *testing.T) {
	for _, c := range []struct {
		name        string
		inodes, wal bool
	}{
		{"bytes with a WAL", false, true},
		{"bytes without a WAL", false, false},
		{"inodes with a WAL", true, true},
		{"inodes without a WAL", true, false},
	} {
		t.Run(c.name, func(t *testing.T) { fullDiskStart(t, c.inodes, c.wal) })
	}
}

func fullDiskStart(t *testing.T, inodes, wal bool) {
	t.Setenv("STRATA_MIN_FREE_INODES", "100")
	mnt := testdisk.Mount(t, "size=96m,nr_inodes=1000,mode=0700")
	dir := filepath.Join(mnt, "data")
	walPath := filepath.Join(dir, "strata.duckdb.wal")
	args := []string{"--rate-limit", "10000000", "--min-free-disk", "32MB"}
	s := startServer(t, dir, args...)
	key := s.BootstrapKey
	b := setupOwner(t, s)
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "1"))
	query := func(s *server) response {
		return do(t, "GET", s.URL+"/api/v1/query/events", nil, map[string]string{"Authorization": "Bearer " + tok})
	}
	// waiting reports whether acknowledged events wait in the spool: a
	// query, which waits for them to be loaded, answers storage_full.
	waiting := func() bool {
		r := query(s)
		return r.Status == 503 && r.ErrorCode(t) == "storage_full"
	}
	// crossFloor takes the disk below its floor from outside; the loaders
	// then leave what they have not taken in the spool. It leaves 24 MB,
	// room for what the server writes while the filler is written.
	crossFloor := func() []string {
		if inodes {
			return testdisk.FillInodes(t, mnt, 50)
		}
		return []string{testdisk.Fill(t, mnt, 24<<20)}
	}
	noWAL := func() bool { _, err := os.Stat(walPath); return errors.Is(err, fs.ErrNotExist) }

	load := startDiskLoadKey(t, s, key, 4)
	waitFor(t, 30*time.Second, "ingest under way", func() bool { return load.seen("202") > 20 })
	var acked map[string]sentEvent
	var fillers []string
	if wal {
		// Crossed under load, the floor leaves in the spool the batches
		// the loaders had not taken, and in the log what they loaded.
		for attempt := 1; ; attempt++ {
			fillers = crossFloor()
			waitFor(t, 10*time.Second, "ingest refused with storage_full", func() bool { return load.seen("503 storage_full") > 0 })
			if waiting() {
				break
			}
			if attempt == 5 {
				t.Fatal("5 times the loaders had loaded everything when the floor was crossed")
			}
			removeAll(t, fillers)
			before := load.seen("202")
			waitFor(t, 10*time.Second, "ingest acknowledged again", func() bool { return load.seen("202") > before })
		}
		acked = load.halt()
		if noWAL() {
			t.Fatal("no write-ahead log before the kill")
		}
	} else {
		// Once ingest is quiet the idle checkpoint folds the log into the
		// file and removes it. Then one batch, and the floor crossed
		// before the loaders' linger (250 ms) ends, so that it stays in
		// the spool.
		acked = load.halt()
		for attempt := 1; ; attempt++ {
			waitFor(t, 30*time.Second, "the idle checkpoint removing the write-ahead log", noWAL)
			one := startDiskLoadKey(t, s, key, 0)
			if !one.send(9) {
				t.Fatalf("a batch on a quiet server: %v", one.codes)
			}
			fillers = crossFloor()
			for id, e := range one.acked {
				acked[id] = e
			}
			if waiting() && noWAL() {
				break
			}
			if attempt == 5 {
				t.Fatal("5 times the batch was loaded before the floor was crossed")
			}
			removeAll(t, fillers)
		}
	}
	s.Kill()
	if inodes {
		fillers = append(fillers, testdisk.FillInodes(t, mnt, 0)...)
		if n := testdisk.FreeInodes(t, mnt); n != 0 {
			t.Fatalf("%d inodes still free", n)
		}
	} else {
		fillers = append(fillers, testdisk.Fill(t, mnt, 0))
		var st syscall.Statfs_t
		if err := syscall.Statfs(mnt, &st); err != nil || st.Bavail != 0 {
			t.Fatalf("%d blocks still free (%v)", st.Bavail, err)
		}
	}

	s = startServer(t, dir, args...)
	b.s = s
	if r := do(t, "GET", s.URL+"/healthz", nil, nil); r.Status != 200 {
		t.Errorf("/healthz on a full disk: %d %s", r.Status, r.Body)
	}
	if code, reason := readyCode(t, s); code != 503 || reason != "storage_full" {
		t.Errorf("/readyz on a full disk: %d %s; want 503 storage_full", code, reason)
	}
	if r := query(s); r.Status != 200 {
		t.Errorf("a query on a full disk: %d %s; want what is stored", r.Status, r.Body)
	}
	if r := do(t, "GET", s.URL+"/", nil, map[string]string{"Accept": "text/html"}); r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("the dashboard's page on a full disk: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	if r := b.do(t, "GET", "/api/v1/session", nil); r.Status != 200 {
		t.Errorf("a signed-in session on a full disk: %d %s", r.Status, r.Body)
	}
	trend := map[string]any{"series": []map[string]string{{"event": "full1", "math": "total"}}, "interval": "day"}
	if r := b.do(t, "POST", "/api/v1/query/trend?product=1", trend); r.Status != 200 {
		t.Errorf("a dashboard query on a full disk: %d %s", r.Status, r.Body)
	}
	anon := &browser{s: s}
	r := anon.do(t, "POST", "/api/v1/session", map[string]string{"email": "owner@example.com", "password": "correct horse battery"})
	if r.Status != 503 || r.ErrorCode(t) != "storage_full" {
		t.Errorf("sign-in on a full disk: %d %s; want 503 storage_full", r.Status, r.Body)
	}
	r = postEvents(t, s, key, ev("refused", "u"))
	if r.Status != 503 || r.ErrorCode(t) != "storage_full" || r.Header.Get("Retry-After") == "" {
		t.Errorf("ingest on a full disk: %d %s; want 503 storage_full with Retry-After", r.Status, r.Body)
	}
	if !strings.Contains(s.Logs(), "too full to replay the spool") {
		t.Error("the start did not say that the spool waits for room")
	}

	removeAll(t, fillers)
	// The replay of the acknowledged events (65,000 and more) takes seconds on a
	// loaded 2-core machine: the limits bound a hang, not the speed.
	waitFor(t, 30*time.Second, "/readyz ready once space was freed", func() bool { code, _ := readyCode(t, s); return code == 200 })
	waitFor(t, 30*time.Second, "the spool replayed once space was freed", func() bool {
		return strings.Contains(s.Logs(), "the spool left by an unclean stop is replayed")
	})
	load = startDiskLoadKey(t, s, key, 4)
	waitFor(t, 10*time.Second, "ingest acknowledged once space was freed", func() bool { return load.seen("202") > 20 })
	for id, e := range load.halt() {
		acked[id] = e
	}
	if n := len(load.codes) - 1; n > 0 || load.seen("202") == 0 {
		t.Errorf("once space was freed, requests were answered %v; want only 202", load.codes)
	}
	if r := query(s); r.Status != 200 {
		t.Errorf("a query once space was freed: %d %s", r.Status, r.Body)
	}
	// The management commands reach the server through its socket again.
	cli(t, dir, "tokens", "list", "--product", "1")
	s.Stop()
	checkStored(t, dir, acked)
}

// TestFullDiskFirstStart starts a server on a data directory whose
// database needs its migrations while the disk is below its floor: it
// refuses to start, saying why, rather than write or half-start.
func TestFullDiskFirstStart(t *testing.T) {
	mnt := testdisk.Mount(t, "size=32m,mode=0700")
	dir := filepath.Join(mnt, "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	testdisk.Fill(t, mnt, 8<<20)
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data", dir, "--min-free-disk", "16MB")
	cmd.Env = append(os.Environ(), "STRATA_ADDR=", "STRATA_DATA=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the server still runs 30 s after a start below the floor:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(stderr.String(), "migrations applied") ||
		!strings.Contains(stderr.String(), "no room") {
		t.Errorf("a start that needs migrations below the floor: exit %d:\n%s\nwant a refusal naming the migrations", code, stderr.String())
	}
}
