package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"strata/internal/testdisk"
)

// rrwebChunk is a chunk's data as the SDK sends it uncompressed ("json"):
// a page load and a custom event padded with pad random letters, so that
// its size is what the test needs and nothing compresses it.
func rrwebChunk(rnd *rand.Rand, ms int64, pad int) []byte {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	p := make([]byte, pad)
	for i := range p {
		p[i] = letters[rnd.IntN(len(letters))]
	}
	return fmt.Appendf(nil, `[{"type":4,"data":{"href":"https://shop.example/"},"timestamp":%d},`+
		`{"type":5,"data":{"tag":"pad","payload":{"p":"%s"}},"timestamp":%d}]`, ms, p, ms+1000)
}

// chunkEvent is a $snapshot event carrying data as a "json" chunk.
func chunkEvent(user, session, window string, index int, data []byte) map[string]any {
	return map[string]any{"event_name": "$snapshot", "distinct_id": user, "properties": map[string]any{
		"$session_id": session, "$window_id": window, "$chunk_index": index, "$snapshot_encoding": "json",
		"$snapshot_data": base64.StdEncoding.EncodeToString(data)}}
}

// replayPage is GET /api/v1/replays/{id} as the test reads it.
type replayPage struct {
	Session struct {
		Chunks int   `json:"chunks"`
		Bytes  int64 `json:"bytes"`
	} `json:"session"`
	Chunks []struct {
		WindowID string `json:"windowId"`
		Index    int    `json:"index"`
		Encoding string `json:"encoding"`
		Data     []byte `json:"data"`
	} `json:"chunks"`
	Next *string `json:"next"`
}

// readSession reads every page of a session and returns its chunks' data
// by "window.index", and how many pages it took.
func readSession(t testing.TB, s *server, token, session string) (map[string][]byte, int) {
	t.Helper()
	out := map[string][]byte{}
	path := "/api/v1/replays/" + session
	for pages := 1; ; pages++ {
		r := do(t, "GET", s.URL+path, nil, map[string]string{"Authorization": "Bearer " + token})
		var p replayPage
		if r.Status != 200 || json.Unmarshal(r.Body, &p) != nil {
			t.Fatalf("GET %s: %d %.300s", path, r.Status, r.Body)
		}
		for _, c := range p.Chunks {
			out[fmt.Sprintf("%s.%d", c.WindowID, c.Index)] = c.Data
		}
		if p.Next == nil {
			return out, pages
		}
		path = "/api/v1/replays/" + session + "?cursor=" + url.QueryEscape(*p.Next)
	}
}

// sessionBytes is the session's bytes as the list says.
func sessionBytes(t *testing.T, s *server, token, session string) int64 {
	t.Helper()
	r := do(t, "GET", s.URL+"/api/v1/replays/"+session, nil, map[string]string{"Authorization": "Bearer " + token})
	var p replayPage
	if r.Status != 200 || json.Unmarshal(r.Body, &p) != nil {
		t.Fatalf("GET session %s: %d %.300s", session, r.Status, r.Body)
	}
	return p.Session.Bytes
}

// TestReplaySessionCap fills sessions up to --replay-max-session-bytes on
// the real binary: the chunk that would pass the cap is rejected per event
// (replay_session_full) while the rest of its batch is stored, a batch of
// that chunk alone is all_events_rejected, a retry of a stored chunk is
// still acknowledged, another session is not held back, and eight clients
// sending to one session at once never take it past the cap.
func TestReplaySessionCap(t *testing.T) {
	dir := t.TempDir()
	const limit = 256 << 10
	s := startServer(t, dir, "--rate-limit", "1000000", "--replay-max-session-bytes", "256KB")
	a := newTenant(t, s, "Shop")
	rnd := rand.New(rand.NewPCG(1, 2))
	const pad = 60_000 // a chunk of about 60 KB: four fit in 256 KiB, not five
	chunks := make([][]byte, 6)
	for i := range chunks {
		chunks[i] = rrwebChunk(rnd, time.Now().UnixMilli()+int64(i)*5000, pad)
	}
	for i := 0; i < 4; i++ {
		if r := postEvents(t, s, a.Live, chunkEvent("ann", "capped", "w", i, chunks[i])); r.Status != 202 || !strings.Contains(string(r.Body), `"rejected":[]`) {
			t.Fatalf("chunk %d under the cap: %d %s", i, r.Status, r.Body)
		}
	}
	// A page view, the fifth chunk, and another session's chunk.
	r := postEvents(t, s, a.Live,
		map[string]any{"event_name": "$pageview", "distinct_id": "ann", "properties": map[string]any{"$session_id": "capped"}},
		chunkEvent("ann", "capped", "w", 4, chunks[4]),
		chunkEvent("bob", "other", "w", 0, chunks[5]))
	var answer ingestAnswer
	json.Unmarshal(r.Body, &answer)
	if r.Status != 202 || answer.Accepted != 2 || len(answer.Rejected) != 1 || answer.Rejected[0].Index != 1 ||
		answer.Rejected[0].Code != "replay_session_full" || !strings.Contains(answer.Rejected[0].Message, "--replay-max-session-bytes") {
		t.Fatalf("a batch with a chunk past the cap: %d %s", r.Status, r.Body)
	}
	// The chunk alone: every event of the batch rejected.
	r = postEvents(t, s, a.Live, chunkEvent("ann", "capped", "w", 5, chunks[4]))
	if r.Status != 400 || r.ErrorCode(t) != "all_events_rejected" || !strings.Contains(string(r.Body), `"code":"replay_session_full"`) {
		t.Errorf("a batch of a chunk past the cap alone: %d %s", r.Status, r.Body)
	}
	// A retry of a stored chunk is acknowledged.
	if r := postEvents(t, s, a.Live, chunkEvent("ann", "capped", "w", 3, chunks[3])); r.Status != 202 || !strings.Contains(string(r.Body), `"accepted":1`) {
		t.Errorf("a retry into a full session: %d %s", r.Status, r.Body)
	}
	got, _ := readSession(t, s, a.Token, "capped")
	b := sessionBytes(t, s, a.Token, "capped")
	if len(got) != 4 || b > limit || b+int64(len(chunks[4]))+512 <= limit {
		t.Errorf("the capped session holds %d chunks, %d bytes; want 4 chunks, within %d and with no room for a fifth", len(got), b, limit)
	}
	for i := 0; i < 4; i++ {
		if !bytes.Equal(got[fmt.Sprintf("w.%d", i)], chunks[i]) {
			t.Errorf("chunk %d is not stored as sent", i)
		}
	}
	if other, _ := readSession(t, s, a.Token, "other"); len(other) != 1 {
		t.Errorf("another session has %d chunks, want 1", len(other))
	}

	// Eight clients at once, eight chunks each, into one session.
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				r := postEvents(t, s, a.Live, chunkEvent("cy", "busy", fmt.Sprintf("w%d", w), i, chunks[i%len(chunks)]))
				mu.Lock()
				codes[fmt.Sprint(r.Status, " ", strings.Contains(string(r.Body), "replay_session_full"))]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	stored, _ := readSession(t, s, a.Token, "busy")
	b = sessionBytes(t, s, a.Token, "busy")
	if b > limit || codes["202 false"] != len(stored) || codes["400 true"] != 64-len(stored) || len(stored) < 4 {
		t.Errorf("eight clients at once: answers %v, %d chunks stored, %d bytes; want at most %d bytes and every chunk stored or refused as full", codes, len(stored), b, limit)
	}
	t.Logf("eight clients at once: answers %v, %d chunks stored, %d of %d bytes", codes, len(stored), b, limit)
}

// TestReplayReadMemory stores a session near the default cap (50 chunks of
// a million bytes), restarts the server, and reads it four times at once,
// every page: every chunk comes back byte for byte, and the server's
// resident memory grows by less than replayReadBound however large the
// session, because a read is a page of at most 4 MiB of chunk data,
// streamed (docs/replay.md, "API").
func TestReplayReadMemory(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--rate-limit", "1000000")
	rnd := rand.New(rand.NewPCG(3, 4))
	const n, size = 50, 1_000_000
	sent := map[string][]byte{}
	var batch []map[string]any
	for i := 0; i < n; i++ {
		data := rrwebChunk(rnd, time.Now().UnixMilli()+int64(i)*5000, size-150)
		for len(data) < size {
			data = rrwebChunk(rnd, time.Now().UnixMilli()+int64(i)*5000, size-150+size-len(data))
		}
		sent[fmt.Sprintf("w.%d", i)] = data
		batch = append(batch, chunkEvent("big", "big", "w", i, data))
		if len(batch) == 3 || i == n-1 {
			if r := postEvents(t, s, s.BootstrapKey, batch...); r.Status != 202 || !strings.Contains(string(r.Body), `"rejected":[]`) {
				t.Fatalf("storing chunks up to %d: %d %.300s", i, r.Status, r.Body)
			}
			batch = nil
		}
	}
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "1"))
	s.Stop()

	s = startServer(t, dir)
	if got, _ := readSession(t, s, tok, "big"); len(got) != n { // a first read: pools and caches
		t.Fatalf("the first read: %d chunks", len(got))
	}
	before := s.memory(t, "VmRSS")
	// Reset the peak, so that VmHWM is the peak of the reads below.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.cmd.Process.Pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak resident memory: %v", err)
	}
	var wg sync.WaitGroup
	results := make([]map[string][]byte, 4)
	pages := make([]int, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], pages[i] = readSession(t, s, tok, "big")
		}()
	}
	wg.Wait()
	growth := s.memory(t, "VmHWM") - before
	t.Logf("4 reads of a %d-chunk, %d MB session (%d pages each): resident memory %d MB, peak +%d MB",
		n, n*size/1_000_000, pages[0], before>>20, growth>>20)
	for i, got := range results {
		if len(got) != n {
			t.Errorf("read %d: %d chunks, want %d", i, len(got), n)
		}
		for k, want := range sent {
			if !bytes.Equal(got[k], want) {
				t.Errorf("read %d: chunk %s is not as sent", i, k)
				break
			}
		}
	}
	if growth > replayReadBound {
		t.Errorf("four reads of a %d MB session raised the server's resident memory by %d MB, over %d MB", n*size/1_000_000, growth>>20, replayReadBound>>20)
	}
}

// replayReadBound is what four reads of a session at once may add to the
// server's resident memory: four pages of 4 MiB, their reading and
// encoding buffers, and the collector's headroom.
const replayReadBound = 96 << 20

// TestReplayInodes records 3,000 sessions on a data directory whose disk
// has 1,500 inodes (a small tmpfs), as many small sites would: every chunk
// is acknowledged, the sessions take a handful of files, and events of
// another product are taken and stored as before. The inode floor is
// lowered to fit such a disk (its default, 10,000, is more than it has).
func TestReplayInodes(t *testing.T) {
	mnt := testdisk.Mount(t, "size=256m,nr_inodes=1500,mode=0700")
	dir := filepath.Join(mnt, "data")
	s := startServer(t, dir, "--rate-limit", "1000000", "--min-free-inodes", "100")
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "1"))
	blog := newTenant(t, s, "Blog")
	free := func() uint64 {
		var st syscall.Statfs_t
		syscall.Statfs(mnt, &st)
		return st.Ffree
	}
	before := free()
	rnd := rand.New(rand.NewPCG(5, 6))
	ms := time.Now().UnixMilli()
	first := rrwebChunk(rnd, ms, 200)
	for b := 0; b < 30; b++ {
		var batch []map[string]any
		for i := 0; i < 100; i++ {
			data := first
			if b > 0 || i > 0 {
				data = rrwebChunk(rnd, ms+int64(b*100+i), 200)
			}
			batch = append(batch, chunkEvent(fmt.Sprintf("u%d", i), fmt.Sprintf("s-%d-%d", b, i), "w", 0, data))
		}
		if r := postEvents(t, s, s.BootstrapKey, batch...); r.Status != 202 || !strings.Contains(string(r.Body), `"accepted":100,"rejected":[]`) {
			t.Fatalf("batch %d of 100 sessions: %d %.300s", b, r.Status, r.Body)
		}
	}
	used := int64(before) - int64(free())
	t.Logf("3,000 sessions took %d inodes", used)
	if used > 10 {
		t.Errorf("3,000 sessions took %d inodes", used)
	}
	// Another product's events, in the same full disk's terms.
	for b := 0; b < 20; b++ {
		var batch []map[string]any
		for i := 0; i < 50; i++ {
			batch = append(batch, map[string]any{"event_name": "read", "distinct_id": fmt.Sprintf("r%d", i)})
		}
		if r := postEvents(t, s, blog.Live, batch...); r.Status != 202 {
			t.Fatalf("another product's batch %d: %d %s", b, r.Status, r.Body)
		}
	}
	if got, _ := readSession(t, s, tok, "s-0-0"); !bytes.Equal(got["w.0"], first) {
		t.Errorf("the first session does not read as sent")
	}
	r := do(t, "GET", s.URL+"/api/v1/replays?limit=1000", nil, map[string]string{"Authorization": "Bearer " + tok})
	if items, _ := r.JSON(t)["items"].([]any); len(items) != 1000 {
		t.Errorf("the list: %d sessions, want 1,000 (its limit)", len(items))
	}
	s.Stop()
	db := openStore(t, dir)
	if n := count(t, db, `SELECT count(*) FROM events WHERE event = 'read' AND product_id = ?`, blog.ID); n != 1000 {
		t.Errorf("%d of another product's 1,000 events stored", n)
	}
}

// TestReplayOldLayout starts the server on a data directory whose replays
// are in the layout before segments (a directory per session, a file per
// chunk): the session plays as it was recorded, byte for byte, and its
// directory has moved into the product's segment.
func TestReplayOldLayout(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "1"))
	s.Stop()
	t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	sent := map[string][]byte{}
	for i := 0; i < 3; i++ {
		ev := snapshotEvent("old-user", "old-sess", "old-win", i, t0.Add(time.Duration(i)*5*time.Second).UnixMilli())
		data, _ := base64.StdEncoding.DecodeString(ev["properties"].(map[string]any)["$snapshot_data"].(string))
		sent[fmt.Sprintf("old-win.%d", i)] = data
		h, _ := json.Marshal(map[string]any{"session": "old-sess", "window": "old-win", "index": i, "distinct_id": "old-user",
			"first": t0.Add(time.Duration(i) * 5 * time.Second), "last": t0.Add(time.Duration(i)*5*time.Second + 4*time.Second),
			"encoding": "gzip-json", "pages": 1, "clicks": 1, "errors": 1, "bytes": len(data), "received": t0.Add(time.Minute)})
		sdir := filepath.Join(dir, "replay", "1", "old-sess")
		os.MkdirAll(sdir, 0o700)
		if err := os.WriteFile(filepath.Join(sdir, fmt.Sprintf("old-win.%010d.chunk", i)), append(append(h, '\n'), data...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s = startServer(t, dir)
	got, _ := readSession(t, s, tok, "old-sess")
	for k, want := range sent {
		if !bytes.Equal(got[k], want) {
			t.Errorf("chunk %s does not read as written", k)
		}
	}
	if len(got) != 3 {
		t.Errorf("%d chunks, want 3", len(got))
	}
	if _, err := os.Stat(filepath.Join(dir, "replay", "1", "old-sess")); !os.IsNotExist(err) {
		t.Errorf("the session's directory is still there: %v", err)
	}
	if segs, _ := filepath.Glob(filepath.Join(dir, "replay", "1", "*.seg")); len(segs) != 1 {
		t.Errorf("segments %v, want one", segs)
	}
	if !strings.Contains(s.Logs(), "moved replay sessions from their directories into segments") {
		t.Errorf("the move is not logged")
	}
}

// chunkSum names a chunk's data in the crash test's records.
func chunkSum(b []byte) [32]byte { return sha256.Sum256(b) }

// TestReplayCapAcrossNodes runs the session cap on two nodes that share a
// PostgreSQL metadata store (where their replays are): eight clients send
// chunks of one session, half to each node, at once, and the session never
// passes the cap; each node then reads it whole, in pages, byte for byte.
func TestReplayCapAcrossNodes(t *testing.T) {
	a, b := startNodes(t, "--rate-limit", "1000000", "--replay-max-session-bytes", "256KB")
	tok := strings.TrimSpace(cli(t, a.dataDir, a.manage("tokens", "create", "--product", fmt.Sprint(a.ProductID))...))
	rnd := rand.New(rand.NewPCG(7, 8))
	chunks := make([][]byte, 8)
	for i := range chunks {
		chunks[i] = rrwebChunk(rnd, time.Now().UnixMilli()+int64(i)*5000, 60_000)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := map[string][]byte{}
	codes := map[string]int{}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			node := []*server{a, b}[w%2]
			for i := 0; i < 8; i++ {
				r := postEvents(t, node, a.BootstrapKey, chunkEvent("cy", "busy", fmt.Sprintf("w%d", w), i, chunks[i]))
				mu.Lock()
				codes[fmt.Sprint(r.Status, " ", strings.Contains(string(r.Body), "replay_session_full"))]++
				if r.Status == 202 {
					sent[fmt.Sprintf("w%d.%d", w, i)] = chunks[i]
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("answers %v", codes)
	for _, s := range []*server{a, b} {
		got, pages := readSession(t, s, tok, "busy")
		if stored := sessionBytes(t, s, tok, "busy"); stored > 256<<10 || len(got) != len(sent) || len(got) < 4 || codes["202 false"] != len(sent) || codes["400 true"] != 64-len(sent) {
			t.Errorf("%s: %d chunks in %d pages, %d bytes; %d acknowledged, answers %v; want every chunk stored or refused as full, within 256 KB", s.URL, len(got), pages, stored, len(sent), codes)
		}
		for k, want := range sent {
			if !bytes.Equal(got[k], want) {
				t.Errorf("%s: chunk %s does not read as sent", s.URL, k)
			}
		}
	}
}

// TestReplayMaxSessions floods a product with sessions of one tiny chunk
// each, a hundred times its --replay-max-sessions of 500, on the real
// binary: once the product keeps 500 sessions, the chunks of new sessions
// are refused per event (replay_quota_full) while the rest of their batch
// is stored; the sessions kept still take chunks; another product records
// as before; and the server's resident memory does not grow with the
// sessions attempted: the 45,000 after the first 5,000 add less than
// replayFloodBound (the build before the cap kept every one of them in
// its index, and grew by tens of MB). Restarted with a retention round
// every second, the product is brought a tenth under its cap and records
// new sessions again.
func TestReplayMaxSessions(t *testing.T) {
	dir := t.TempDir()
	const max = 500
	s := startServer(t, dir, "--rate-limit", "1000000", "--replay-max-sessions", fmt.Sprint(max))
	shop, blog := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	data := rrwebChunk(rand.New(rand.NewPCG(9, 10)), time.Now().UnixMilli(), 40)
	// id names session n (its user, its window): as long as ids may be,
	// as a flood would send them.
	id := func(kind string, n int) string { return fmt.Sprintf("%s-%0*d", kind, 63-len(kind), n) }
	// send posts sessions [from, to) of key's product, one chunk each, in
	// batches of 500, and counts the chunks stored and refused as the
	// product's.
	send := func(key string, from, to int) (stored, quota int) {
		t.Helper()
		for b := from; b < to; b += 500 {
			var batch []map[string]any
			for n := b; n < min(b+500, to); n++ {
				batch = append(batch, chunkEvent(id("user", n), id("session", n), id("window", n), 0, data))
			}
			r := postEvents(t, s, key, batch...)
			var answer ingestAnswer
			json.Unmarshal(r.Body, &answer)
			refused := strings.Count(string(r.Body), `"code":"replay_quota_full"`)
			if (r.Status != 202 && r.Status != 400) || answer.Accepted+refused != len(batch) {
				t.Fatalf("sessions %d to %d: %d %.300s", b, b+len(batch), r.Status, r.Body)
			}
			stored += answer.Accepted
			quota += refused
		}
		return stored, quota
	}
	if stored, quota := send(shop.Live, 0, max); stored != max || quota != 0 {
		t.Fatalf("%d sessions under the cap: %d stored, %d refused", max, stored, quota)
	}
	// A page view, a new session's chunk, a kept session's next chunk.
	r := postEvents(t, s, shop.Live,
		map[string]any{"event_name": "$pageview", "distinct_id": "ann"},
		chunkEvent("ann", "one-too-many", "w", 0, data),
		chunkEvent(id("user", 7), id("session", 7), id("window", 7), 1, data))
	var answer ingestAnswer
	json.Unmarshal(r.Body, &answer)
	if r.Status != 202 || answer.Accepted != 2 || len(answer.Rejected) != 1 || answer.Rejected[0].Index != 1 ||
		answer.Rejected[0].Code != "replay_quota_full" || !strings.Contains(answer.Rejected[0].Message, "--replay-max-sessions") {
		t.Errorf("a batch with a session past the cap: %d %s", r.Status, r.Body)
	}
	r = postEvents(t, s, shop.Live, chunkEvent("ann", "one-too-many", "w", 0, data))
	if r.Status != 400 || r.ErrorCode(t) != "all_events_rejected" || !strings.Contains(string(r.Body), `"code":"replay_quota_full"`) {
		t.Errorf("a new session's chunk alone: %d %s", r.Status, r.Body)
	}

	// The flood: the first 5,000 sessions past the cap, then 45,000 more.
	if stored, quota := send(shop.Live, max, 5_000); stored != 0 || quota != 5_000-max {
		t.Errorf("sessions to 5,000: %d stored, %d refused; want every one refused", stored, quota)
	}
	at5k := s.memory(t, "VmRSS")
	if stored, quota := send(shop.Live, 5_000, 50_000); stored != 0 || quota != 45_000 {
		t.Errorf("sessions to 50,000: %d stored, %d refused; want every one refused", stored, quota)
	}
	at50k := s.memory(t, "VmRSS")
	t.Logf("resident memory after 5,000 sessions attempted %d MB, after 50,000 %d MB: %+d KB for 45,000 more",
		at5k>>20, at50k>>20, (at50k-at5k)>>10)
	if at50k-at5k > replayFloodBound {
		t.Errorf("45,000 more sessions attempted raised the server's resident memory by %d MB, over %d MB", (at50k-at5k)>>20, replayFloodBound>>20)
	}

	// The sessions kept take chunks; another product starts sessions.
	var next []map[string]any
	for n := 0; n < 100; n++ {
		next = append(next, chunkEvent(id("user", n), id("session", n), id("window", n), 2, data))
	}
	if r := postEvents(t, s, shop.Live, next...); r.Status != 202 || !strings.Contains(string(r.Body), `"accepted":100,"rejected":[]`) {
		t.Errorf("chunks of kept sessions after the flood: %d %.300s", r.Status, r.Body)
	}
	if stored, quota := send(blog.Live, 0, 200); stored != 200 || quota != 0 {
		t.Errorf("another product's 200 sessions: %d stored, %d refused", stored, quota)
	}
	list := func(tenant tenant) int {
		r := do(t, "GET", s.URL+"/api/v1/replays?limit=1000", nil, map[string]string{"Authorization": "Bearer " + tenant.Token})
		items, ok := r.JSON(t)["items"].([]any)
		if r.Status != 200 || !ok {
			t.Fatalf("the list: %d %.300s", r.Status, r.Body)
		}
		return len(items)
	}
	if n := list(shop); n != max {
		t.Errorf("the product keeps %d sessions, want %d", n, max)
	}
	if n := list(blog); n != 200 {
		t.Errorf("another product keeps %d sessions, want 200", n)
	}
	if got, _ := readSession(t, s, shop.Token, id("session", 7)); len(got) != 3 || !bytes.Equal(got[id("window", 7)+".1"], data) {
		t.Errorf("a kept session holds %d chunks, want 3 as sent", len(got))
	}

	// A retention round brings the product a tenth under its cap, oldest
	// first, and new sessions are recorded again.
	s.Stop()
	s = startServer(t, dir, "--replay-max-sessions", fmt.Sprint(max), "--replay-interval", "1s")
	deadline := time.Now().Add(30 * time.Second)
	for list(shop) > max-max/10 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if n := list(shop); n != max-max/10 {
		t.Fatalf("after a retention round the product keeps %d sessions, want %d", n, max-max/10)
	}
	if r := postEvents(t, s, shop.Live, chunkEvent("ann", "after-the-round", "w", 0, data)); r.Status != 202 || !strings.Contains(string(r.Body), `"rejected":[]`) {
		t.Errorf("a new session after the round: %d %s", r.Status, r.Body)
	}
	if n := list(blog); n != 200 {
		t.Errorf("another product keeps %d sessions after the round, want 200", n)
	}
}

// replayFloodBound is what 45,000 sessions refused as the product's may
// add to the server's resident memory: nothing of theirs is kept, so it
// is the collector's headroom over the garbage of the requests alone.
const replayFloodBound = 16 << 20

// TestReplayPageStreamed reads a page of 300 small chunks over a raw
// connection, to see how the server frames it: the response is streamed
// (chunked), holds every chunk as sent, and comes in frames of the
// handler's buffer, not a frame (a flush through the adaptor's pipe, and
// a write to the connection) per replay chunk, which defeated the buffer.
func TestReplayPageStreamed(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--rate-limit", "1000000")
	a := newTenant(t, s, "Shop")
	rnd := rand.New(rand.NewPCG(5, 6))
	const n = 300
	sent := map[string][]byte{}
	var batch []map[string]any
	for i := 0; i < n; i++ {
		data := rrwebChunk(rnd, time.Now().UnixMilli()+int64(i)*5000, 100)
		sent[fmt.Sprintf("w.%d", i)] = data
		batch = append(batch, chunkEvent("u", "small", "w", i, data))
		if len(batch) == 100 {
			if r := postEvents(t, s, a.Live, batch...); r.Status != 202 || !strings.Contains(string(r.Body), `"rejected":[]`) {
				t.Fatalf("storing chunks up to %d: %d %.300s", i, r.Status, r.Body)
			}
			batch = nil
		}
	}
	host := strings.TrimPrefix(s.URL, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET /api/v1/replays/small HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", host, a.Token)
	r := bufio.NewReader(conn)
	var head []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the response's head: %v (%q)", err, head)
		}
		if line = strings.TrimRight(line, "\r\n"); line == "" {
			break
		}
		head = append(head, line)
	}
	if len(head) == 0 || !strings.HasPrefix(head[0], "HTTP/1.1 200") || !slices.ContainsFunc(head, func(h string) bool {
		return strings.EqualFold(h, "Transfer-Encoding: chunked")
	}) {
		t.Fatalf("the response's head: %q; want 200, chunked", head)
	}
	var body []byte
	frames := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading frame %d: %v", frames+1, err)
		}
		size, err := strconv.ParseInt(strings.TrimRight(line, "\r\n"), 16, 64)
		if err != nil {
			t.Fatalf("frame %d: size line %q", frames+1, line)
		}
		if size == 0 {
			break
		}
		frame := make([]byte, size+2)
		if _, err := io.ReadFull(r, frame); err != nil || string(frame[size:]) != "\r\n" {
			t.Fatalf("frame %d of %d bytes: %v", frames+1, size, err)
		}
		body = append(body, frame[:size]...)
		frames++
	}
	var p replayPage
	if err := json.Unmarshal(body, &p); err != nil || len(p.Chunks) != n || p.Next != nil {
		t.Fatalf("the page: %d chunks, next %v, %v", len(p.Chunks), p.Next, err)
	}
	for _, c := range p.Chunks {
		if k := fmt.Sprintf("%s.%d", c.WindowID, c.Index); !bytes.Equal(c.Data, sent[k]) {
			t.Errorf("chunk %s is not as sent", k)
		}
	}
	t.Logf("a page of %d chunks, %d bytes, came in %d frames", n, len(body), frames)
	if frames > n/4 {
		t.Errorf("a page of %d chunks (%d bytes) came in %d frames: about one a chunk, not one a buffer", n, len(body), frames)
	}
}
