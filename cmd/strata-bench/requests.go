package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// The per-request ingest benchmark of issue 25: POST /e with one event per
// request, a distinct distinct_id each, under wrk at 8, 64 and 256
// connections; requests of 10 events; and the server's CPU time per
// single-event request against a bare fasthttp handler's, which reads the
// same request and answers 202 with the same body, run as its own process
// (this binary with -bare-addr) so that its CPU time is measured the same
// way.

// requestsScript sends events events per request, each with a uuid of its
// own, and each request with a distinct_id of its own (a random prefix per
// run and counters), as a page of a new visitor would.
const requestsScript = `
local hdr = {["Content-Type"] = "application/json", ["X-API-Key"] = "%s"}
local events = %d
local ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
math.randomseed(os.time() + %d)
local prefix = string.format("%%08x-%%04x-4%%03x-8%%03x-", math.random(0, 0x7fffffff), math.random(0, 0xffff), math.random(0, 0xfff), math.random(0, 0xfff))
local n = 0
local r = 0
request = function()
  local parts = {}
  r = r + 1
  local user = string.format("u%%s%%012x", prefix, r)
  for i = 1, events do
    n = n + 1
    parts[i] = '{"uuid":"' .. prefix .. string.format("%%012x", n) .. '","event_name":"$pageview","distinct_id":"' .. user ..
      '","url":"https://shop.example.com/pricing","user_agent":"' .. ua .. '","properties":{"plan":"pro"}}'
  end
  return wrk.format("POST", "/e", hdr, '{"batch":[' .. table.concat(parts, ",") .. ']}')
end
`

// serveBare is the bare handler's process: it reads each request's body
// and answers 202 with ingest's answer for one accepted event.
func serveBare(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("listening", ln.Addr())
	answer := []byte("{\"accepted\":1,\"rejected\":[]}\n")
	return fasthttp.Serve(ln, func(ctx *fasthttp.RequestCtx) {
		_ = ctx.PostBody()
		ctx.SetContentType("application/json")
		ctx.SetStatusCode(fasthttp.StatusAccepted)
		ctx.SetBody(answer)
	})
}

// bareServer starts this binary as the bare handler on loopback.
func bareServer() (*server, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-bare-addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var line [128]byte
	n, _ := out.Read(line[:])
	addr, ok := strings.CutPrefix(strings.TrimSpace(string(line[:n])), "listening ")
	if !ok {
		cmd.Process.Kill()
		return nil, fmt.Errorf("the bare handler did not start: %q", line[:n])
	}
	return &server{cmd: cmd, url: "http://" + addr, key: "none", done: make(chan struct{})}, nil
}

// wrkRequests loads srv with wrk (events per request, conns connections,
// d) and returns requests/s, p99 in ms, and the server's CPU time per
// request in µs.
func wrkRequests(srv *server, events, conns int, d time.Duration, dir string) (rps, p99, cpuPerReq float64, err error) {
	script := filepath.Join(dir, fmt.Sprintf("requests-%d.lua", events))
	if err := os.WriteFile(script, fmt.Appendf(nil, requestsScript, srv.key, events, conns), 0o600); err != nil {
		return 0, 0, 0, err
	}
	before, _, err := cpuTimes(srv)
	if err != nil {
		return 0, 0, 0, err
	}
	rps, p99, err = runWrk(conns, d, "-s", script, srv.url+"/e")
	if err != nil {
		return 0, 0, 0, err
	}
	after, _, err := cpuTimes(srv)
	if err != nil {
		return 0, 0, 0, err
	}
	reqs := rps * d.Seconds()
	return rps, p99, float64((after - before).Microseconds()) / reqs, nil
}

// runRequestsBench measures a fresh server per configuration, the bare
// handler beside it.
func runRequestsBench(bin string, d time.Duration, keep bool) error {
	dir, cleanup, err := benchDataDir("strata-rbench-", keep)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Printf("# Per-request ingest benchmark (wrk, %v a run, one event a request unless said)\n\n", d)
	fmt.Printf("| load | target | requests/s | events/s | p99 | server CPU a request |\n|---|---|---|---|---|---|\n")
	var strataCPU, bareCPU float64
	for i, c := range []struct {
		events, conns int
		target        string
	}{{1, 64, "≥ 25,000 requests/s, p99 ≤ 20 ms"}, {1, 256, "≥ 25,000 requests/s"}, {1, 8, "≥ 25,000 requests/s"}, {10, 64, "≥ 150,000 events/s"}} {
		srv, err := startServer(bin, filepath.Join(dir, fmt.Sprint("data", i)))
		if err != nil {
			return err
		}
		rps, p99, cpu, err := wrkRequests(srv, c.events, c.conns, d, dir)
		srv.stop()
		if err != nil {
			return err
		}
		if c.events == 1 && c.conns == 64 {
			strataCPU = cpu
		}
		fmt.Printf("| %d event(s) a request, wrk -c%d | %s | %.0f | %.0f | %.1f ms | %.1f µs |\n", c.events, c.conns, c.target, rps, rps*float64(c.events), p99, cpu)
	}
	bare, err := bareServer()
	if err != nil {
		return err
	}
	rps, p99, cpu, err := wrkRequests(bare, 1, 64, d, dir)
	bare.cmd.Process.Kill()
	bare.cmd.Wait()
	if err != nil {
		return err
	}
	bareCPU = cpu
	fmt.Printf("| a bare fasthttp handler answering 202, wrk -c64 | | %.0f | | %.1f ms | %.1f µs |\n", rps, p99, cpu)
	fmt.Printf("\nserver CPU a single-event request against the bare handler's: %.2f× (target ≤ 2×)\n", strataCPU/bareCPU)
	return nil
}
