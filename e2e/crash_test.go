package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestCrashLosesNothingAcknowledged kills the server with SIGKILL while
// several clients are sending, restarts it, and proves that every event that
// was answered 202 is stored: with the spool (the default) and with direct
// DuckDB commits.
func TestCrashLosesNothingAcknowledged(t *testing.T) {
	for _, spool := range []string{"true", "false"} {
		t.Run("spool="+spool, func(t *testing.T) { stopUnderLoad(t, "--spool="+spool, (*server).Kill) })
	}
}

// TestShutdownLosesNothingAcknowledged does the same with SIGTERM: the
// server stops taking requests, answers those in flight once their events
// are committed, and exits cleanly (Stop fails the test otherwise).
func TestShutdownLosesNothingAcknowledged(t *testing.T) {
	stopUnderLoad(t, "--spool=true", (*server).Stop)
}

func stopUnderLoad(t *testing.T, mode string, stopServer func(*server)) {
	dir := t.TempDir()
	s := startServer(t, dir, "--rate-limit", "1000000", mode)
	key := s.BootstrapKey

	var (
		mu    sync.Mutex
		acked = map[string]bool{}
		sent  atomic.Int64
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				batch := make([]map[string]any, 100)
				ids := make([]string, len(batch))
				for i := range batch {
					ids[i] = uuid.NewString()
					batch[i] = ev("crash_test", "u", "uuid", ids[i])
				}
				sent.Add(int64(len(batch)))
				r, ok := tryPost(s, key, batch)
				if !ok {
					return // the server is gone
				}
				if r == 202 {
					mu.Lock()
					for _, id := range ids {
						acked[id] = true
					}
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	stopServer(s)
	stop.Store(true)
	wg.Wait()
	if len(acked) < 1000 {
		t.Fatalf("only %d events acknowledged before the server stopped; the test needs load", len(acked))
	}

	s = startServer(t, dir)
	replayed := strings.Contains(s.Logs(), "replayed spool segment")
	s.Stop()
	db := openStore(t, dir)
	rows, err := db.Query(`SELECT CAST(uuid AS VARCHAR) FROM events WHERE event = 'crash_test'`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		stored[id] = true
	}
	rows.Close()
	missing := 0
	for id := range acked {
		if !stored[id] {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged events are missing after the server stopped", missing, len(acked))
	}
	t.Logf("sent %d, acknowledged %d, stored %d, spool replayed at restart: %v", sent.Load(), len(acked), len(stored), replayed)
}

// TestCrashKeepsReplayChunks kills the server with SIGKILL while clients
// send replay chunks (a batch of three, of three sessions, each request),
// restarts it, and reads every session back: every chunk that was answered
// 202 is there, byte for byte.
func TestCrashKeepsReplayChunks(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--rate-limit", "1000000")
	key := s.BootstrapKey
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "1"))
	var (
		mu    sync.Mutex
		acked = map[string]map[string][32]byte{} // session → window.index → data
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; !stop.Load(); i++ {
				var batch []map[string]any
				sums := map[string][32]byte{}
				for j := 0; j < 3; j++ {
					data := rrwebChunk(rnd, time.Now().UnixMilli(), 5000+rnd.IntN(30000))
					session := fmt.Sprintf("c%d-%d", w, (i*3+j)%10)
					batch = append(batch, chunkEvent("u", session, fmt.Sprintf("win%d", j), i, data))
					sums[session+"/"+fmt.Sprintf("win%d.%d", j, i)] = chunkSum(data)
				}
				status, ok := tryPost(s, key, batch)
				if !ok {
					return
				}
				if status == 202 {
					mu.Lock()
					for k, sum := range sums {
						session, chunk, _ := strings.Cut(k, "/")
						if acked[session] == nil {
							acked[session] = map[string][32]byte{}
						}
						acked[session][chunk] = sum
					}
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	s.Kill()
	stop.Store(true)
	wg.Wait()
	n := 0
	for _, chunks := range acked {
		n += len(chunks)
	}
	if n < 100 {
		t.Fatalf("only %d chunks acknowledged before the kill; the test needs load", n)
	}
	s = startServer(t, dir)
	missing := 0
	for session, chunks := range acked {
		got, _ := readSession(t, s, tok, session)
		for k, sum := range chunks {
			if chunkSum(got[k]) != sum {
				missing++
			}
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged chunks are missing or altered after the kill", missing, n)
	}
	t.Logf("%d acknowledged chunks of %d sessions all read back after the kill", n, len(acked))
}
