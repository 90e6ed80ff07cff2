package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Request bodies against the real binary: clients that declare large
// bodies and hold them must not cost the server memory (docs/security.md,
// "Request bodies"), the body budget answers 503 when spent, and a body
// that stalls is cut off.

// rawConn opens a TCP connection to s and writes head (a request line and
// headers, without the blank line that ends them) and then body. The
// connection is closed when the test ends.
func rawConn(t *testing.T, s *server, head string, body []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(append([]byte(head+"\r\n\r\n"), body...)); err != nil {
		t.Fatalf("writing a request: %v", err)
	}
	return c
}

// rawHead is the start of a POST request for rawConn: path, a declared
// Content-Length and any further header lines.
func rawHead(path string, contentLength int, headers ...string) string {
	h := []string{"POST " + path + " HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
		"Content-Length: " + strconv.Itoa(contentLength)}
	return strings.Join(append(h, headers...), "\r\n")
}

// readRaw reads the answer to a request sent with rawConn, waiting at most
// wait for it.
func readRaw(t *testing.T, c net.Conn, wait time.Duration) response {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", wait, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// waitDelivered waits until everything written on c has been read by the
// server process: nothing is left in c's send queue, nor in the receive
// queue of the server's end, as the kernel reports them in /proc/net/tcp.
func waitDelivered(t *testing.T, c net.Conn) {
	t.Helper()
	local, remote := c.LocalAddr().(*net.TCPAddr), c.RemoteAddr().(*net.TCPAddr)
	hexAddr := func(a *net.TCPAddr) string {
		ip := a.IP.To4()
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
	}
	client, server := hexAddr(local)+" "+hexAddr(remote), hexAddr(remote)+" "+hexAddr(local)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		table, err := os.ReadFile("/proc/net/tcp")
		if err != nil {
			t.Fatal(err)
		}
		pending, seen := 0, 0
		for _, line := range strings.Split(string(table), "\n") {
			f := strings.Fields(line)
			if len(f) < 5 || (f[1]+" "+f[2] != client && f[1]+" "+f[2] != server) {
				continue
			}
			seen++
			tx, rx, _ := strings.Cut(f[4], ":")
			if f[1]+" "+f[2] == client {
				pending += hexInt(tx)
			} else {
				pending += hexInt(rx)
			}
		}
		if seen == 2 && pending == 0 {
			return
		}
	}
	t.Fatalf("the server did not read what %v sent within 10s", local)
}

func hexInt(s string) int {
	n, _ := strconv.ParseInt(s, 16, 64)
	return int(n)
}

// rssMB is the resident memory of the server process, in MB.
func rssMB(t *testing.T, s *server) int { return int(s.memory(t, "VmRSS") >> 20) }

// medianIngest sends n single-event batches one after the other and
// returns the median time to their 202. (A median, not a maximum: the
// machine is shared, and one slow request says nothing.)
func medianIngest(t *testing.T, s *server, key string, n int) time.Duration {
	t.Helper()
	var took []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		if r := postEvents(t, s, key, ev("while_attacked", "u")); r.Status != 202 {
			t.Fatalf("ingest while held: %d %s", r.Status, r.Body)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[len(took)/2]
}

// holdConns opens n connections that each send head and one body byte and
// then hold, as the attack in docs/security.md does.
func holdConns(t *testing.T, s *server, n int, head string) {
	t.Helper()
	for i := 0; i < n; i++ {
		rawConn(t, s, head, []byte("{"))
	}
}

// TestHeldBodiesCostNoMemory is the memory attack without a valid key:
// 300 connections declare a 5,000,000-byte body to /e with a bogus key,
// send one byte and hold. The server must neither allocate the declared
// lengths (it used to: 139 MB to 2.5 GB) nor slow down ingest.
func TestHeldBodiesCostNoMemory(t *testing.T) {
	s := startServer(t, t.TempDir())
	postEvents(t, s, s.BootstrapKey, ev("warm_up", "u"))
	before := rssMB(t, s)
	holdConns(t, s, 300, rawHead("/e", 5_000_000, "X-API-Key: bogus"))
	checkHeldBodies(t, s, 300, before)
}

// checkHeldBodies checks, once the server has taken in n held bodies, that
// ingest still answers fast (the median of ten requests under 100 ms) and
// that the server's memory stays under 300 MB.
func checkHeldBodies(t *testing.T, s *server, n, before int) {
	t.Helper()
	time.Sleep(time.Second) // let the server take them all in
	med := medianIngest(t, s, s.BootstrapKey, 10)
	if med > 100*time.Millisecond {
		t.Errorf("median ingest while %d bodies are held: %v, want under 100ms", n, med)
	}
	rss := rssMB(t, s)
	t.Logf("%d held bodies: RSS %d MB (%d MB before), median ingest %v", n, rss, before, med)
	if rss > 300 {
		t.Errorf("server RSS %d MB with %d held bodies (%d MB before); want under 300 MB", rss, n, before)
	}
}

// TestHeldBodiesWithoutCredentials is the same attack where no key is in
// the headers (ingest then expects it in the body, so the body must be
// read) and on the query API, which reads bodies for net/http handlers:
// the memory they hold stays bounded.
func TestHeldBodiesWithoutCredentials(t *testing.T) {
	s := startServer(t, t.TempDir())
	postEvents(t, s, s.BootstrapKey, ev("warm_up", "u"))
	before := rssMB(t, s)
	holdConns(t, s, 300, rawHead("/e", 5_000_000))
	holdConns(t, s, 100, rawHead("/api/v1/query/funnel", 5_000_000))
	holdConns(t, s, 100, rawHead("/api/v1/query/funnel", 1_000_000))
	checkHeldBodies(t, s, 500, before)
}

// TestBodyBudget spends a small --max-body-memory with bodies that arrive
// and stall: each holder sends 600 KB of a declared 4 MB body, so its
// buffer has doubled to 1 MB, and two of them hold the whole 2 MB budget.
// Every request with a body is then refused with 503 server_busy and
// Retry-After, on /e and on the query API alike, while requests without a
// body are served; once the holders go away, their memory is returned and
// requests succeed again.
func TestBodyBudget(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--max-body-memory", "2MB")
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", strconv.FormatInt(s.ProductID, 10)))
	funnel := []byte(`{"steps":["a","b"]}`)
	bearer := map[string]string{"Authorization": "Bearer " + token}
	if r := postEvents(t, s, s.BootstrapKey, ev("before", "u")); r.Status != 202 {
		t.Fatalf("ingest before: %d %s", r.Status, r.Body)
	}

	var holders []net.Conn
	for range 2 {
		holders = append(holders, rawConn(t, s, rawHead("/e", 4_000_000, "X-API-Key: "+s.BootstrapKey),
			bytes.Repeat([]byte(" "), 600<<10)))
	}
	// Probing before the server has read the holders' bytes could take
	// the budget a holder needs to grow, so wait until the kernel holds
	// nothing unread for either: their buffers have grown by then.
	for _, c := range holders {
		waitDelivered(t, c)
	}
	busy := postEvents(t, s, s.BootstrapKey, ev("probe", "u"))
	if busy.Status != 503 || busy.ErrorCode(t) != "server_busy" {
		t.Fatalf("ingest with the budget held: %d %s; want 503 server_busy", busy.Status, busy.Body)
	}
	if ra, err := strconv.Atoi(busy.Header.Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", busy.Header.Get("Retry-After"))
	}
	if busy.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("the 503 of /e lacks the CORS headers the SDK needs to read it")
	}
	r := do(t, "POST", s.URL+"/api/v1/query/funnel", funnel, bearer)
	if r.Status != 503 || r.ErrorCode(t) != "server_busy" || r.Header.Get("Retry-After") == "" {
		t.Errorf("query with the budget held: %d %s %q", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if r := do(t, "GET", s.URL+"/api/v1/query/bots", nil, bearer); r.Status != 200 {
		t.Errorf("a request without a body with the budget held: %d %s", r.Status, r.Body)
	}

	for _, c := range holders {
		c.Close()
	}
	var again response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		again = postEvents(t, s, s.BootstrapKey, ev("after", "u"))
		if again.Status != 503 || time.Now().After(deadline) {
			break
		}
	}
	if again.Status != 202 {
		t.Fatalf("ingest after the holders left: %d %s", again.Status, again.Body)
	}
	if r := do(t, "POST", s.URL+"/api/v1/query/funnel", funnel, bearer); r.Status != 200 {
		t.Errorf("query after the holders left: %d %s", r.Status, r.Body)
	}
}

// TestStalledBody checks the time bound on a request's arrival
// (--read-timeout, 1 s here): a body that stops arriving, before its first
// byte or in its middle, on /e or on the query API, is answered 408
// request_timeout and its connection closed, within seconds.
func TestStalledBody(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--read-timeout", "1s")
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", strconv.FormatInt(s.ProductID, 10)))
	for _, c := range []struct {
		name string
		head string
		sent int
	}{
		{"ingest, nothing of the body", rawHead("/e", 100, "X-API-Key: "+s.BootstrapKey), 0},
		{"ingest, part of the body", rawHead("/e", 100, "X-API-Key: "+s.BootstrapKey), 10},
		{"ingest, part of a large body", rawHead("/e", 100_000, "X-API-Key: "+s.BootstrapKey), 20_000},
		{"query, part of the body", rawHead("/api/v1/query/funnel", 100, "Authorization: Bearer "+token), 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			conn := rawConn(t, s, c.head, bytes.Repeat([]byte(" "), c.sent))
			r := readRaw(t, conn, 10*time.Second)
			if r.Status != 408 || r.ErrorCode(t) != "request_timeout" {
				t.Errorf("%d %s; want 408 request_timeout", r.Status, r.Body)
			}
			if took := time.Since(start); took < 900*time.Millisecond || took > 5*time.Second {
				t.Errorf("answered after %v; want about the 1s read timeout", took)
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := conn.Read(make([]byte, 1)); err == nil || n > 0 {
				t.Errorf("the connection stayed open after the timeout (read %d, %v)", n, err)
			}
		})
	}
	if r := postEvents(t, s, s.BootstrapKey, ev("after_stalls", "u")); r.Status != 202 {
		t.Errorf("ingest after the stalls: %d %s", r.Status, r.Body)
	}
}

// TestBodyLimitsPerPath checks that each path's 413 names its own limit:
// 5 MB on /e, 1 MB on the API (which used to answer "send smaller
// batches"), and that a declared length over the limit is refused at once,
// without waiting for the body.
func TestBodyLimitsPerPath(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", strconv.FormatInt(s.ProductID, 10)))
	message := func(r response) string {
		m, _ := r.JSON(t)["error"].(map[string]any)["message"].(string)
		return m
	}

	big := append([]byte(`{"steps":["a","b"],"x":"`), bytes.Repeat([]byte("a"), 2<<20)...)
	r := do(t, "POST", s.URL+"/api/v1/query/funnel", append(big, `"}`...), map[string]string{"Authorization": "Bearer " + token})
	if r.Status != 413 || r.ErrorCode(t) != "body_too_large" || !strings.Contains(message(r), "1 MB") || strings.Contains(message(r), "batch") {
		t.Errorf("2 MB query body: %d %s; want 413 body_too_large naming 1 MB", r.Status, r.Body)
	}
	r = do(t, "POST", s.URL+"/e", append(bytes.Repeat([]byte(" "), 6<<20), `{"batch":[]}`...), map[string]string{"X-API-Key": s.BootstrapKey})
	if r.Status != 413 || r.ErrorCode(t) != "payload_too_large" || !strings.Contains(message(r), "5 MB") {
		t.Errorf("6 MB ingest body: %d %s; want 413 payload_too_large naming 5 MB", r.Status, r.Body)
	}

	for _, c := range []struct {
		path, header string
		declared     int
		code         string
	}{
		{"/api/v1/query/funnel", "Authorization: Bearer " + token, 2_000_000, "body_too_large"},
		{"/api/v1/annotations", "Authorization: Bearer " + token, 2_000_000, "body_too_large"},
		{"/e", "X-API-Key: " + s.BootstrapKey, 6_000_000, "payload_too_large"},
	} {
		start := time.Now()
		conn := rawConn(t, s, rawHead(c.path, c.declared, c.header), []byte("{"))
		r := readRaw(t, conn, 5*time.Second)
		if r.Status != 413 || r.ErrorCode(t) != c.code {
			t.Errorf("%s declaring %d bytes: %d %s; want 413 %s", c.path, c.declared, r.Status, r.Body, c.code)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: the 413 took %v; it must not wait for the body", c.path, took)
		}
	}
}
