// Package e2e drives the real strata binary over HTTP and the real CLI, and
// checks what landed in the real DuckDB file. Nothing here imports the
// server's packages except the store, to read the file after a stop.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	goflag "flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/duckdb"
)

// binary is the strata executable built once for the whole package.
var binary string

func TestMain(m *testing.M) {
	if share := os.Getenv("STRATA_E2E_SHARD"); share != "" {
		// Only the share's tests (shard_test.go), unless -run names some.
		goflag.Parse()
		if goflag.Lookup("test.run").Value.String() == "" {
			pattern, err := shardPattern(share, ".")
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			goflag.Set("test.run", pattern)
		}
	}
	dir, err := os.MkdirTemp("", "strata-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "strata")
	build := exec.Command("go", "build", "-o", binary, "./cmd/strata")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building strata:", err)
		os.Exit(1)
	}
	code := m.Run()
	fmt.Fprintln(os.Stderr, &contractStats)
	chtest.StopAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is one running `strata serve` process on a loopback port.
type server struct {
	t       *testing.T
	dataDir string
	cmd     *exec.Cmd
	URL     string
	// BootstrapKey is the live key logged on the first start of an empty
	// data directory, or "" on later starts.
	BootstrapKey string
	ProductID    int64
	// SetupToken and SetupURL are the first-run setup token and the
	// address carrying it, logged at every start while the dashboard has
	// no owner, or "" once it has.
	SetupToken string
	SetupURL   string
	// meta is the PostgreSQL URL the server keeps metadata in, "" when
	// embedded; management commands for it must name it too.
	meta string

	mu     sync.Mutex
	logs   bytes.Buffer
	exited chan struct{}
}

// startServer starts strata on dataDir and waits until it listens. The test
// stops it (by its own PID) when it ends, if the test did not already.
func startServer(t *testing.T, dataDir string, args ...string) *server {
	t.Helper()
	return startBinary(t, binary, dataDir, args...)
}

// startBinary is startServer with another build of strata: bin (the
// previous release, in e2e/upgrade_test.go).
func startBinary(t *testing.T, bin, dataDir string, args ...string) *server {
	t.Helper()
	s := &server{t: t, dataDir: dataDir, exited: make(chan struct{})}
	for i, a := range args {
		if a == "--meta" && i+1 < len(args) {
			s.meta = args[i+1]
		}
	}
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir, "--log-format", "json"}, args...)
	s.cmd = exec.Command(bin, all...)
	// The free-space floor is lowered so that the suite does not depend on
	// how full the machine's disk is (a CI machine may have little room);
	// e2e/disk_test.go tests the floor on a disk of its own.
	s.cmd.Env = append(os.Environ(), "STRATA_ADDR=", "STRATA_DATA=", "STRATA_MIN_FREE_DISK=8MB")
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting strata: %v", err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			s.mu.Lock()
			s.logs.Write(line)
			s.logs.WriteByte('\n')
			s.mu.Unlock()
			var rec struct {
				Msg        string `json:"msg"`
				Addr       string `json:"addr"`
				APIKey     string `json:"api_key"`
				Product    int64  `json:"product"`
				SetupToken string `json:"setup_token"`
				URL        string `json:"url"`
			}
			if json.Unmarshal(line, &rec) != nil {
				continue
			}
			if rec.APIKey != "" {
				s.mu.Lock()
				s.BootstrapKey, s.ProductID = rec.APIKey, rec.Product
				s.mu.Unlock()
			}
			if rec.SetupToken != "" {
				s.mu.Lock()
				s.SetupToken, s.SetupURL = rec.SetupToken, rec.URL
				s.mu.Unlock()
			}
			if rec.Msg == "listening" {
				ready <- rec.Addr
			}
		}
		s.cmd.Wait()
		close(s.exited)
	}()
	select {
	case addr := <-ready:
		s.URL = "http://" + addr
		strataServers.Store(addr, t)
		t.Cleanup(func() { strataServers.Delete(addr) })
	case <-s.exited:
		t.Fatalf("strata exited before listening:\n%s", s.Logs())
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("strata did not start within 60s:\n%s", s.Logs())
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// manage returns the arguments of a management command for s's metadata.
func (s *server) manage(args ...string) []string {
	if s.meta != "" {
		args = append(args, "--meta", s.meta)
	}
	return args
}

// Logs returns what the server wrote to stderr so far.
func (s *server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Stop sends SIGTERM and waits for a clean exit.
func (s *server) Stop() {
	s.t.Helper()
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if code := s.cmd.ProcessState.ExitCode(); code != 0 {
			s.t.Errorf("strata exited with code %d after SIGTERM:\n%s", code, s.Logs())
		}
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		s.t.Fatalf("strata did not stop within 60s of SIGTERM")
	}
}

// memory reads one of the kernel's memory figures of the server process
// (VmRSS, VmHWM … of /proc/PID/status), in bytes.
func (s *server) memory(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("reading the server's memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("%s line %q", field, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/PID/status", field)
	return 0
}

// Kill ends the server with SIGKILL, as a crash would.
func (s *server) Kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// cli runs a strata management command and returns its stdout, failing the
// test when it exits non-zero.
func cli(t *testing.T, dataDir string, args ...string) string {
	t.Helper()
	out, errOut, code := cliResult(dataDir, args...)
	if code != 0 {
		t.Fatalf("strata %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// cliResult runs a strata management command and returns its output and
// exit code.
func cliResult(dataDir string, args ...string) (stdout, stderr string, code int) {
	cmd := exec.Command(binary, append(args, "--data", dataDir)...)
	cmd.Env = append(os.Environ(), "STRATA_DATA=")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		return "", err.Error(), -1
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// response is a decoded HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %q", r.Status, r.Body)
	}
	return m
}

// ErrorCode returns error.code of an error body.
func (r response) ErrorCode(t *testing.T) string {
	t.Helper()
	e, _ := r.JSON(t)["error"].(map[string]any)
	code, _ := e["code"].(string)
	if msg, _ := e["message"].(string); code != "" && msg == "" {
		t.Errorf("error %s has no message", code)
	}
	return code
}

// httpClient checks every answer from a server of the suite against
// api/openapi.yaml (e2e/openapi_test.go).
var httpClient = &http.Client{Timeout: 30 * time.Second, Transport: contractTransport{http.DefaultTransport}}

// do sends one request; a response that does not match api/openapi.yaml
// fails t.
func do(t testing.TB, method, url string, body []byte, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(withTest(req, t))
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// ingestAnswer is what /e answers a batch it took in part or whole: how
// many events it accepted, and each rejected one's index and reason.
type ingestAnswer struct {
	Accepted int `json:"accepted"`
	Rejected []struct {
		Index   int    `json:"index"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"rejected"`
}

// postEvents sends a batch to /e with the key in the X-API-Key header.
func postEvents(t testing.TB, s *server, key string, events ...map[string]any) response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"batch": events})
	return do(t, "POST", s.URL+"/e", body, map[string]string{"X-API-Key": key, "Content-Type": "application/json"})
}

// openStore opens the data directory's database after the server stopped,
// so a test can check exactly what was stored.
func openStore(t *testing.T, dataDir string) *sql.DB {
	t.Helper()
	st, err := duckdb.Open(context.Background(), dataDir, duckdb.Options{})
	if err != nil {
		t.Fatalf("opening store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st.DB()
}

// count runs a COUNT(*) query.
func count(t *testing.T, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// tryPost posts a batch and reports the status, or ok=false when the server
// could not be reached (it was killed).
func tryPost(s *server, key string, events []map[string]any) (status int, ok bool) {
	body, _ := json.Marshal(map[string]any{"batch": events})
	req, _ := http.NewRequest("POST", s.URL+"/e", bytes.NewReader(body))
	req.Header.Set("X-API-Key", key)
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, true
}

// todaySteps returns the time now and a step of at most max such that n
// steps before now still fall on now's date (UTC), first waiting out the
// first second and the last ten seconds of a day: a test that stamps events
// a few steps ago and reads them back as today's keeps them on one day,
// whenever it runs.
func todaySteps(n int, max time.Duration) (now time.Time, step time.Duration) {
	now = time.Now().UTC()
	if left := now.Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now); left < 10*time.Second {
		time.Sleep(left + time.Second)
		now = time.Now().UTC()
	}
	if since := now.Sub(now.Truncate(24 * time.Hour)); since < time.Second {
		time.Sleep(time.Second - since)
		now = time.Now().UTC()
	}
	return now, min(max, now.Sub(now.Truncate(24*time.Hour))/time.Duration(n+1))
}
