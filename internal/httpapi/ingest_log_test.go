package httpapi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/analytics"
)

// stalledDisk stands in for a failing disk, which a test cannot make a real
// store do on demand: every commit fails, and the first waits for release so
// that the requests sent meanwhile queue up and commit as one group.
type stalledDisk struct {
	nopEvents
	release chan struct{}
	mu      sync.Mutex
	commits []int // events per commit
}

func (d *stalledDisk) AppendEvents(_ context.Context, ev []analytics.Event) error {
	d.mu.Lock()
	first := len(d.commits) == 0
	d.commits = append(d.commits, len(ev))
	d.mu.Unlock()
	if first {
		<-d.release
	}
	return errors.New("write /data/strata.duckdb.wal: no space left on device")
}

// lockedBuffer is a log destination the server's goroutines share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestFailedCommitLoggedOnce sends requests that commit together and fail
// together, and checks that the failure is logged once per commit, with
// its cause, and not again for each request, while every request still
// gets its 503.
func TestFailedCommitLoggedOnce(t *testing.T) {
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	disk := &stalledDisk{release: make(chan struct{})}
	key, ln := serveIngest(t, disk, log)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) { return ln.Dial() },
	}}
	send := func() int {
		req, _ := http.NewRequest("POST", "http://strata/e", strings.NewReader(`{"batch":[{"event_name":"a","distinct_id":"u"}]}`))
		req.Header.Set("X-API-Key", key)
		res, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}

	const requests = 4
	statuses := make(chan int, requests)
	go func() { statuses <- send() }() // its commit stalls
	for deadline := time.Now().Add(5 * time.Second); ; {
		disk.mu.Lock()
		stalled := len(disk.commits) == 1
		disk.mu.Unlock()
		if stalled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first commit never reached the store")
		}
		time.Sleep(time.Millisecond)
	}
	for range requests - 1 {
		go func() { statuses <- send() }()
	}
	time.Sleep(300 * time.Millisecond) // the other three queue behind the stalled commit
	close(disk.release)
	for range requests {
		if status := <-statuses; status != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 503", status)
		}
	}

	disk.mu.Lock()
	commits := append([]int(nil), disk.commits...)
	disk.mu.Unlock()
	if len(commits) != 2 {
		t.Fatalf("commits %v: the three queued requests did not commit as one group", commits)
	}
	out := logs.String()
	if n := strings.Count(out, "committing events failed"); n != len(commits) {
		t.Errorf("%d commit failures logged for %d failed commits:\n%s", n, len(commits), out)
	}
	if !strings.Contains(out, "requests=3") || !strings.Contains(out, "no space left on device") {
		t.Errorf("the group's failure is not logged with its size and cause:\n%s", out)
	}
	if n := strings.Count(out, "request failed"); n != 0 {
		t.Errorf("the failure was logged again for %d requests:\n%s", n, out)
	}
}
