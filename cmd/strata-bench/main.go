// Command strata-bench measures ingest against a real strata server on
// loopback: sustained events/s with 500-event batches, latency at half that
// rate, single-event requests per second, the server's peak RSS, and, in the
// same run, the raw DuckDB appender ceiling on this machine. `make bench`
// runs it; figures go to docs/benchmarks.md.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/config"
	"strata/internal/ingest"
	"strata/internal/store/duckdb"
)

func main() {
	var (
		bin        = flag.String("strata", "bin/strata", "path to the strata binary")
		duration   = flag.Duration("duration", 20*time.Second, "length of each load phase")
		conns      = flag.Int("conns", 8, "concurrent connections for batch load")
		single     = flag.Int("single-conns", 256, "concurrent connections for single-event load (many independent browsers)")
		srvArgs    = flag.String("server-args", "", "extra flags for strata serve, space-separated")
		batch      = flag.Int("batch", 500, "events per batch request")
		ceilingN   = flag.Int("ceiling-events", 2_000_000, "events for the raw appender ceiling")
		target     = flag.String("url", "", "load an already running server at this URL (with -key) and only that; for profiling")
		key        = flag.String("key", "", "API key for -url")
		suite      = flag.String("suite", "all", "which benchmarks to run: ingest, requests, queries, flags, messages, middleware, errors, all, or heavy or forget (not part of all)")
		fData      = flag.String("forget-data", "", "the forget suite's embedded data directory of events, which it deletes persons from: give it a copy")
		fEvents    = flag.Int("forget-clickhouse-events", 10_000_000, "events the forget suite generates in ClickHouse; 0 skips ClickHouse")
		qEvents    = flag.String("query-events", "10000000,50000000", "events for the query benchmark, a comma-separated list of sizes each run in turn")
		qUsers     = flag.String("query-users", "", "users for each size of -query-events, comma-separated; empty: one per 20 events")
		qOld       = flag.String("strata-old", "", "the previous build's strata binary: the queries suite times it on the same data, side by side")
		qData      = flag.String("query-data", "", "keep the queries suite's data directories under this directory (one per size, named by its event count) and query them again on later runs of the same day instead of loading")
		qPlain     = flag.Bool("query-plain", true, "also time the hand-written SQL funnel in process (the queries suite)")
		qDays      = flag.Int("query-days", 30, "days the query benchmark's events span")
		qRuns      = flag.Int("query-runs", 7, "timed runs of each query (the median is reported)")
		qKeep      = flag.Bool("query-keep", false, "keep the query benchmark's data directory for inspection")
		qCH        = flag.Bool("query-clickhouse", true, "also run the query benchmark on a local clickhouse-server, when installed")
		hEvents    = flag.Int("heavy-events", 1_000_000, "events for the heavy-query benchmark")
		hUsers     = flag.Int("heavy-users", 50_000, "users for the heavy-query benchmark")
		hConc      = flag.Int("heavy-concurrency", 50, "queries sent at once in each burst of the heavy-query benchmark")
		hRounds    = flag.Int("heavy-rounds", 1, "bursts of each heavy query")
		hIngest    = flag.Int("heavy-ingest", 0, "connections posting 500-event batches during each burst of the heavy-query benchmark (0: none)")
		fPart      = flag.String("flags-part", "all", "which part of the flags benchmark to run: config, results or all")
		bareAddr   = flag.String("bare-addr", "", "serve the bare fasthttp handler of the requests benchmark on this address, and nothing else (used by that benchmark)")
		hData      = flag.String("heavy-data", "", "query this data directory, loaded by an earlier heavy run with -query-keep, instead of loading a new one")
		hPart      = flag.String("heavy-part", "all", "which part of the heavy suite to run: bursts (concurrent heavy queries), queries (the query benchmark at -heavy-query-events, loaded in process) or all")
		hqEvents   = flag.Int("heavy-query-events", 100_000_000, "events for the heavy suite's query benchmark")
		hqUsers    = flag.Int("heavy-query-users", 5_000_000, "users for the heavy suite's query benchmark")
		cookieless = flag.Bool("cookieless", false, "send every ingest event with distinct_id $cookieless, as the browser SDK in cookieless mode does, so that the server derives each visitor (docs/benchmarks.md, \"Cookieless mode at ingest\")")
		xff        = flag.String("forwarded-for", "", "comma-separated addresses the Go client's /e requests carry as X-Forwarded-For, one per request in turn; with -server-args \"--trusted-proxies 127.0.0.1/32\" each batch is located by a public address, as behind a proxy (docs/benchmarks.md, \"Geography at ingest\")")
		qOverview  = flag.Bool("query-overview-only", false, "time only the whole Overview (every request of the page at once, for two ranges), not the list of queries")
		qLoad      = flag.String("query-load", "http", "how the queries suite loads its events: http (through POST /e, timed) or direct (in process, through the ingest pipeline, minutes for 100 M events; ClickHouse, if run, then loaded in process too and timed on the whole Overview alone)")
	)
	flag.Parse()
	if *xff != "" {
		forwardedFor = strings.Split(*xff, ",")
	}
	cookielessIDs = *cookieless
	serverArgs = strings.Fields(*srvArgs)
	sizes, userCounts, err := querySizes(*qEvents, *qUsers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-bench:", err)
		os.Exit(2)
	}
	// The flags and errors suites load the first size only.
	firstEvents, firstUsers := sizes[0], userCounts[0]
	if *bareAddr != "" {
		if err := serveBare(*bareAddr); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *target != "" {
		tmpl := newTemplate(*batch)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}
		report("batch load, closed loop", closedLoop(client, &server{url: *target, key: *key}, tmpl, *conns, *duration), *batch)
		return
	}
	if *suite == "ingest" || *suite == "all" {
		if err := run(*bin, *duration, *conns, *single, *batch, *ceilingN); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *qLoad != "http" && *qLoad != "direct" {
		fmt.Fprintf(os.Stderr, "strata-bench: -query-load %q: want http or direct\n", *qLoad)
		os.Exit(2)
	}
	qb := queryBench{bin: *bin, oldBin: *qOld, days: *qDays, runs: *qRuns, keep: *qKeep,
		clickHouse: *qCH, plain: *qPlain, direct: *qLoad == "direct", overviewOnly: *qOverview}
	if *suite == "heavy" && (*hPart == "bursts" || *hPart == "all") {
		if err := runHeavyBench(*bin, *hEvents, *hUsers, *hConc, *hRounds, *hIngest, *qKeep, *hData); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "heavy" && (*hPart == "queries" || *hPart == "all") {
		// 100 M events through POST /e take the better part of an hour on
		// two cores: the heavy suite loads them in process.
		heavy := qb
		heavy.direct, heavy.clickHouse = true, false
		if err := runQuerySizes(heavy, *qData, []int{*hqEvents}, []int{*hqUsers}); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "forget" {
		if err := runForgetBench(*fData, *fEvents); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "flags" || *suite == "all" {
		if err := runFlagsBench(*bin, *fPart, firstEvents, firstUsers, *qRuns, *qKeep); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "messages" || *suite == "all" {
		if err := runMessagesBench(*bin, *qKeep); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "requests" || *suite == "all" {
		if err := runRequestsBench(*bin, 20*time.Second, *qKeep); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "middleware" || *suite == "all" {
		if err := runMiddlewareBench(*bin, *qKeep); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "errors" || *suite == "all" {
		if err := runErrorsBench(*bin, firstEvents, firstUsers, *qRuns, 10*time.Second, *qKeep); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
	if *suite == "queries" || *suite == "all" {
		if err := runQuerySizes(qb, *qData, sizes, userCounts); err != nil {
			fmt.Fprintln(os.Stderr, "strata-bench:", err)
			os.Exit(1)
		}
	}
}

// mode is one server configuration measured by the benchmark.
type mode struct {
	name string
	args []string
}

// figures are one mode's results.
type figures struct {
	fullEPS, halfP50, halfP99, singleRPS float64
	wrkRPS, wrkP99                       float64
	srvCPU, genCPU                       float64 // CPU µs per event in the batch phase
	rssMB                                int64
}

func run(bin string, duration time.Duration, conns, singleConns, batch, ceilingN int) error {
	dir, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	fmt.Printf("# Strata ingest benchmark\n\nmachine: %d CPUs, %s/%s, %s; phases of %s; load generator on the same machine\n",
		runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format(time.RFC3339), duration)

	modes := []mode{
		{"spool (default)", nil},
		// A DuckDB commit has a fixed cost of about a millisecond, which a
		// 2 ms linger amortises (docs/ingest.md).
		{"direct DuckDB commit (--spool=false --commit-linger 2ms)", []string{"--spool=false", "--commit-linger", "2ms"}},
	}
	results := make([]figures, len(modes))
	for i, m := range modes {
		fmt.Printf("\n## %s\n\n", m.name)
		f, err := measure(bin, filepath.Join(dir, fmt.Sprint(i)), m.args, duration, conns, singleConns, batch)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		results[i] = f
	}

	ceiling, err := appenderCeiling(filepath.Join(dir, "ceiling"), ceilingN, batch)
	if err != nil {
		return err
	}
	fmt.Printf("\n| measure | target |")
	for _, m := range modes {
		fmt.Printf(" %s |", m.name)
	}
	fmt.Printf("\n|---|---|%s\n", strings.Repeat("---|", len(modes)))
	row := func(name, target string, cell func(f figures) string) {
		fmt.Printf("| %s | %s |", name, target)
		for _, f := range results {
			fmt.Printf(" %s |", cell(f))
		}
		fmt.Println()
	}
	row(fmt.Sprintf("sustained ingest, %d-event batches", batch), "≥ 100,000 events/s", func(f figures) string { return fmt.Sprintf("%.0f events/s", f.fullEPS) })
	row("p50 / p99 at half that rate", "p99 ≤ 100 ms", func(f figures) string { return fmt.Sprintf("%.1f / %.1f ms", f.halfP50, f.halfP99) })
	row("single-event requests, Go client", "≥ 20,000 requests/s", func(f figures) string { return fmt.Sprintf("%.0f requests/s", f.singleRPS) })
	row("single-event requests, wrk (p99)", "≥ 20,000 requests/s", func(f figures) string {
		return fmt.Sprintf("%.0f requests/s (%.1f ms)", f.wrkRPS, f.wrkP99)
	})
	row("CPU per event in the batch phase: server + load generator", "", func(f figures) string {
		return fmt.Sprintf("%.1f + %.1f µs", f.srvCPU, f.genCPU)
	})
	row("server peak RSS (VmHWM)", "≤ 500 MB", func(f figures) string { return fmt.Sprintf("%d MB", f.rssMB) })
	row("sustained ingest / raw appender ceiling", "", func(f figures) string { return fmt.Sprintf("%.2f", f.fullEPS/ceiling) })
	fmt.Printf("\nraw DuckDB appender ceiling (same store code, no HTTP): %.0f events/s\n", ceiling)
	return nil
}

// measure starts a server with args and runs the three load phases on it.
func measure(bin, dataDir string, args []string, duration time.Duration, conns, singleConns, batch int) (figures, error) {
	var f figures
	srv, err := startServer(bin, dataDir, args...)
	if err != nil {
		return f, err
	}
	defer srv.stop()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, MaxConnsPerHost: 512}, Timeout: 30 * time.Second}
	tmpl := newTemplate(batch)
	single := newTemplate(1)

	// Warm up: the first requests pay for cold caches; they are not measured.
	closedLoop(client, srv, tmpl, conns, 2*time.Second)

	srvCPU0, genCPU0, err := cpuTimes(srv)
	if err != nil {
		return f, err
	}
	full := closedLoop(client, srv, tmpl, conns, duration)
	f.fullEPS = float64(full.events) / full.elapsed.Seconds()
	report("batch load, closed loop", full, batch)
	srvCPU1, genCPU1, err := cpuTimes(srv)
	if err != nil {
		return f, err
	}
	f.srvCPU = float64((srvCPU1 - srvCPU0).Microseconds()) / float64(full.events)
	f.genCPU = float64((genCPU1 - genCPU0).Microseconds()) / float64(full.events)
	fmt.Printf("CPU per event: server %.2f µs, load generator %.2f µs\n", f.srvCPU, f.genCPU)

	half := openLoop(client, srv, tmpl, f.fullEPS/2/float64(batch), duration)
	report(fmt.Sprintf("batch load at half that rate (%.0f events/s)", f.fullEPS/2), half, batch)
	f.halfP50, f.halfP99 = msf(half.p(50)), msf(half.p(99))

	one := closedLoop(client, srv, single, singleConns, duration)
	report("single-event requests, closed loop", one, 1)
	f.singleRPS = float64(one.requests) / one.elapsed.Seconds()

	// The Go client costs about as much CPU per request as the server, and
	// both share the machine; wrk, a C load generator, leaves the server
	// more of it, so it measures the server rather than the client.
	if _, err := exec.LookPath("wrk"); err == nil {
		rps, p99, err := wrkSingle(srv, singleConns, duration)
		if err != nil {
			return f, err
		}
		f.wrkRPS, f.wrkP99 = rps, p99
		fmt.Printf("single-event requests, wrk, %d connections: %.0f requests/s, p99 %.1f ms\n", singleConns, rps, p99)
	} else {
		fmt.Println("wrk not found (scripts/install-bench-tools.sh installs it): wrk phase skipped")
	}

	rss, err := srv.peakRSS()
	if err != nil {
		return f, err
	}
	f.rssMB = rss >> 20
	if n := full.failures + half.failures + one.failures; n > 0 {
		return f, fmt.Errorf("%d requests failed", n)
	}
	return f, nil
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// wrkScript sends one $pageview per request, each with a fresh uuid (a
// random prefix per run and a counter), as the browser SDK would.
const wrkScript = `
local hdr = {["Content-Type"] = "application/json", ["X-API-Key"] = "%s"}
local pre = '{"batch":[{"uuid":"'
local post = '","event_name":"$pageview","distinct_id":"user_42","url":"https://shop.example.com/pricing","user_agent":"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36","properties":{"plan":"pro"}}]}'
math.randomseed(os.time())
local prefix = string.format("%%08x-%%04x-4%%03x-8%%03x-", math.random(0, 0x7fffffff), math.random(0, 0xffff), math.random(0, 0xfff), math.random(0, 0xfff))
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/e", hdr, pre .. prefix .. string.format("%%012x", n) .. post)
end
`

// wrkSingle runs wrk against /e and returns requests/s and p99 in ms. Any
// answer other than 202 fails the benchmark.
func wrkSingle(srv *server, conns int, d time.Duration) (float64, float64, error) {
	script, err := os.CreateTemp("", "strata-wrk-*.lua")
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(script.Name())
	fmt.Fprintf(script, wrkScript, srv.key)
	script.Close()
	return runWrk(conns, d, "-s", script.Name(), srv.url+"/e")
}

// runWrk runs wrk with one thread and conns connections for d, with args
// after the options, and returns requests/s and the p99 in ms. Any answer
// other than a 2xx, or a socket error, fails the benchmark.
func runWrk(conns int, d time.Duration, args ...string) (float64, float64, error) {
	out, err := exec.Command("wrk", append([]string{"-t1", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", int(d.Seconds())),
		"--latency"}, args...)...).CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("wrk: %w: %s", err, out)
	}
	var rps, p99 float64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "Requests/sec:":
			rps, _ = strconv.ParseFloat(f[1], 64)
		case len(f) == 2 && f[0] == "99%":
			p99 = parseWrkDuration(f[1])
		case strings.Contains(line, "Non-2xx"), strings.Contains(line, "Socket errors"):
			return 0, 0, fmt.Errorf("wrk saw failed requests: %s", strings.TrimSpace(line))
		}
	}
	if rps == 0 {
		return 0, 0, fmt.Errorf("could not read wrk's output: %s", out)
	}
	return rps, p99, nil
}

// parseWrkDuration reads wrk's latency such as 812.00us, 29.33ms or 1.20s
// into milliseconds.
func parseWrkDuration(s string) float64 {
	for _, u := range []struct {
		suffix string
		ms     float64
	}{{"us", 0.001}, {"ms", 1}, {"s", 1000}, {"m", 60000}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n * u.ms
		}
	}
	return 0
}

// result is what one load phase measured.
type result struct {
	requests, events, failures int64
	elapsed                    time.Duration
	latencies                  []time.Duration
}

func (r *result) p(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	slices.Sort(r.latencies)
	i := int(float64(len(r.latencies)-1) * q / 100)
	return r.latencies[i]
}

func report(name string, r result, batch int) {
	fmt.Printf("%s: %d requests (%d failed), %.0f requests/s, %.0f events/s, p50 %s, p99 %s, max %s\n",
		name, r.requests, r.failures, float64(r.requests)/r.elapsed.Seconds(),
		float64(r.requests*int64(batch))/r.elapsed.Seconds(), ms(r.p(50)), ms(r.p(99)), ms(r.p(100)))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// closedLoop keeps conns requests in flight for d.
func closedLoop(client *http.Client, srv *server, tmpl *template, conns int, d time.Duration) result {
	var mu sync.Mutex
	var res result
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local result
			for time.Now().Before(deadline) {
				t0 := time.Now()
				ok := post(client, srv, tmpl.body())
				local.latencies = append(local.latencies, time.Since(t0))
				local.requests++
				if !ok {
					local.failures++
				}
			}
			mu.Lock()
			res.requests += local.requests
			res.failures += local.failures
			res.latencies = append(res.latencies, local.latencies...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.events = (res.requests - res.failures) * int64(tmpl.n)
	return res
}

// openLoop sends requests at a fixed rate regardless of how fast answers
// come, and measures each from its scheduled send time, so that a slow
// server cannot hide its queueing (no coordinated omission).
func openLoop(client *http.Client, srv *server, tmpl *template, perSecond float64, d time.Duration) result {
	interval := time.Duration(float64(time.Second) / perSecond)
	var res result
	var mu sync.Mutex
	var wg sync.WaitGroup
	var inflight atomic.Int64
	start := time.Now()
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(start) >= d {
			break
		}
		time.Sleep(time.Until(at))
		body := tmpl.body()
		wg.Add(1)
		inflight.Add(1)
		go func() {
			defer wg.Done()
			defer inflight.Add(-1)
			ok := post(client, srv, body)
			lat := time.Since(at)
			mu.Lock()
			res.requests++
			if !ok {
				res.failures++
			}
			res.latencies = append(res.latencies, lat)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.events = (res.requests - res.failures) * int64(tmpl.n)
	return res
}

// forwardedFor are the X-Forwarded-For addresses of -forwarded-for, and
// forwardedNext the count of requests that took one.
var (
	forwardedFor  []string
	forwardedNext atomic.Uint64
)

func post(client *http.Client, srv *server, body []byte) bool {
	req, _ := http.NewRequest("POST", srv.url+"/e", bytes.NewReader(body))
	req.Header.Set("X-API-Key", srv.key)
	req.Header.Set("Content-Type", "application/json")
	if n := uint64(len(forwardedFor)); n > 0 {
		req.Header.Set("X-Forwarded-For", forwardedFor[(forwardedNext.Add(1)-1)%n])
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusAccepted
}

// template is a batch body with fixed-width slots for uuids, so that each
// request carries fresh uuids (as SDKs send them) for the cost of a copy.
type template struct {
	n     int
	raw   []byte
	slots []int // offsets of the 36-character uuid slots
}

var pages = []string{"/", "/pricing", "/docs/getting-started", "/blog/launch", "/signup", "/app/dashboard"}
var names = []string{"$pageview", "$pageview", "$pageview", "$click", "signup_started", "checkout_completed", "$form_submit"}
var agents = []string{
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
}

const uuidSlot = "00000000-0000-0000-0000-000000000000"

// cookielessIDs is -cookieless: the ingest events ask the server to
// derive their visitors.
var cookielessIDs bool

func newTemplate(n int) *template {
	t := &template{n: n}
	var b bytes.Buffer
	b.WriteString(`{"sent_at":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","batch":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		ev := map[string]any{
			"event_name":  names[i%len(names)],
			"distinct_id": "user_" + strconv.Itoa(i*7919%50000),
			"timestamp":   time.Now().UTC().Add(-time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano),
			"url":         "https://shop.example.com" + pages[i%len(pages)] + "?utm_source=newsletter",
			"referrer":    "https://www.google.com/",
			"user_agent":  agents[i%len(agents)],
			"properties":  map[string]any{"plan": "pro", "price": 49.5, "items": i % 5, "ab": map[string]any{"variant": "b"}},
		}
		if cookielessIDs {
			ev["distinct_id"] = "$cookieless"
		}
		js, _ := json.Marshal(ev)
		// The uuid goes first so that its slot is easy to find.
		b.WriteString(`{"uuid":"`)
		t.slots = append(t.slots, b.Len())
		b.WriteString(uuidSlot + `",`)
		b.Write(js[1:])
	}
	b.WriteString("]}")
	t.raw = b.Bytes()
	return t
}

func (t *template) body() []byte {
	out := slices.Clone(t.raw)
	var rnd [16]byte
	for _, off := range t.slots {
		rand.Read(rnd[:])
		rnd[6] = rnd[6]&0x0f | 0x40
		rnd[8] = rnd[8]&0x3f | 0x80
		dst := out[off : off+36]
		hex.Encode(dst[0:8], rnd[0:4])
		hex.Encode(dst[9:13], rnd[4:6])
		hex.Encode(dst[14:18], rnd[6:8])
		hex.Encode(dst[19:23], rnd[8:10])
		hex.Encode(dst[24:36], rnd[10:16])
	}
	return out
}

// appenderCeiling measures how fast events reach DuckDB through the same
// store code with no HTTP, JSON or enrichment in the way: the upper bound
// for ingest on this machine.
func appenderCeiling(dir string, n, group int) (float64, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	st, err := duckdb.Open(context.Background(), dir, duckdb.Options{MemoryLimit: config.Default().DuckDBMemoryLimit})
	if err != nil {
		return 0, err
	}
	defer st.Close()
	now := time.Now().UTC()
	// Commit groups as large as the server's groups are under load: a few
	// batches per commit.
	group *= 10
	events := make([]analytics.Event, group)
	for i := range events {
		did := "user_" + strconv.Itoa(i*7919%50000)
		events[i] = analytics.Event{
			ProductID: 1, Env: analytics.EnvLive, Timestamp: now, ReceivedAt: now,
			Name: names[i%len(names)], DistinctID: did, UserID: ingest.UserID(did),
			URL: "https://shop.example.com" + pages[i%len(pages)], Path: pages[i%len(pages)],
			Referrer: "https://www.google.com/", UserAgent: agents[i%len(agents)],
			Browser: "Chrome", OS: "Windows", DeviceType: "desktop",
			Properties: []byte(`{"plan":"pro","price":49.5,"items":3,"ab":{"variant":"b"}}`),
		}
	}
	start := time.Now()
	for done := 0; done < n; done += group {
		for i := range events {
			events[i].UUID = uuid.New()
		}
		if err := st.AppendEvents(context.Background(), events); err != nil {
			return 0, err
		}
	}
	eps := float64(n) / time.Since(start).Seconds()
	fmt.Printf("raw appender: %d events in groups of %d: %.0f events/s\n", n, group, eps)
	return eps, nil
}

// server is the strata process under test.
type server struct {
	cmd *exec.Cmd
	url string
	key string
	// setupToken is the first-run setup token the server logged, which
	// makes the dashboard owner (dashboardSession).
	setupToken string
	done       chan struct{}
	// checkpoints receives a value each time the server logs an idle
	// checkpoint.
	checkpoints chan struct{}
	// visits is closed when the server logs that it kept the visits of
	// the settled past (internal/store/duckdb/visits.go) for the first
	// time; a build without them never closes it.
	visits     chan struct{}
	visitsOnce sync.Once
}

// awaitVisits waits until the server has kept its visits, for at most
// two minutes: a build that keeps none is timed as it is.
func (s *server) awaitVisits() {
	start := time.Now()
	select {
	case <-s.visits:
		fmt.Printf("visits kept %s after asked\n", time.Since(start).Round(time.Millisecond))
	case <-time.After(2 * time.Minute):
		fmt.Println("(no visits kept within 2 minutes)")
	}
}

// serverArgs are the flags of -server-args. Every suite's servers get them
// (startServer), after the suite's own, so that they win: the queries
// suite can then be run with another --duckdb-memory, say.
var serverArgs []string

// serveArgs is the command line of a benchmark's server: the benchmark's
// fixed flags, the suite's extra ones, then -server-args.
func serveArgs(dataDir string, extra []string) []string {
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dataDir,
		"--log-format", "json", "--rate-limit", "100000000", "--log-level", "info"}
	args = append(args, extra...)
	return append(args, serverArgs...)
}

// startServer starts bin serving dataDir with serveArgs and waits until it
// listens. It prints the settings the server reports at start that decide
// what the benchmarks measure (DuckDB's pool), so that a run shows what
// -server-args changed.
func startServer(bin, dataDir string, extraArgs ...string) (*server, error) {
	cmd := exec.Command(bin, serveArgs(dataDir, extraArgs)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &server{cmd: cmd, done: make(chan struct{}), checkpoints: make(chan struct{}, 16), visits: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				// Not a log line: a panic's trace or a fatal error,
				// which must not be lost when the server dies.
				fmt.Fprintln(os.Stderr, "server:", sc.Text())
				continue
			}
			if k, ok := m["api_key"].(string); ok {
				s.key = k
			}
			if t, ok := m["setup_token"].(string); ok {
				s.setupToken = t
			}
			if m["msg"] == "idle checkpoint" {
				select {
				case s.checkpoints <- struct{}{}:
				default:
				}
			}
			if m["msg"] == "visits kept" {
				s.visitsOnce.Do(func() { close(s.visits) })
			}
			if m["msg"] == "duckdb buffer pool" {
				fmt.Printf("server %s: duckdb buffer pool %v (%v)\n", filepath.Base(bin), m["memory"], m["from"])
			}
			if m["msg"] == "listening" {
				s.url = "http://" + m["addr"].(string)
				close(ready)
			}
			if lvl, _ := m["level"].(string); lvl == "ERROR" || lvl == "WARN" {
				fmt.Fprintln(os.Stderr, "server:", strings.TrimSpace(sc.Text()))
			}
		}
		cmd.Wait()
		close(s.done)
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("strata exited before listening")
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("strata did not start")
	}
}

// peakRSS reads the server's high-water resident set size from /proc.
func (s *server) peakRSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading server RSS: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc status")
}

// cpuTimes reads the CPU time (user and system) used so far by the server
// and by this process, the load generator.
func cpuTimes(s *server) (srv, gen time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("reading server CPU time: %w", err)
	}
	// The fields after the command name (which may hold spaces) start at
	// the state; utime and stime are the 14th and 15th fields overall.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("short /proc stat line")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("reading server CPU time: %w", err)
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	gen = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return time.Duration(ut+st) * tick, gen, nil
}

func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// querySizes reads -query-events and -query-users: comma-separated lists
// of events and of users for each size (one user per 20 events where
// users gives none).
func querySizes(events, users string) (sizes, userCounts []int, err error) {
	for _, f := range strings.Split(events, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, nil, fmt.Errorf("-query-events: %q is not a number of events", f)
		}
		sizes = append(sizes, n)
	}
	var given []string
	if users != "" {
		given = strings.Split(users, ",")
	}
	if len(given) > len(sizes) {
		return nil, nil, fmt.Errorf("-query-users: %d counts for %d sizes of -query-events", len(given), len(sizes))
	}
	for i, n := range sizes {
		u := n / 20
		if i < len(given) {
			if u, err = strconv.Atoi(strings.TrimSpace(given[i])); err != nil || u <= 0 {
				return nil, nil, fmt.Errorf("-query-users: %q is not a number of users", given[i])
			}
		}
		userCounts = append(userCounts, u)
	}
	return sizes, userCounts, nil
}

// runQuerySizes runs the query benchmark o at each size (events, with
// userCounts users), then prints every query's figures at every size.
func runQuerySizes(o queryBench, dataRoot string, sizes, userCounts []int) error {
	var queries []benchQuery
	var all [][]backendResult
	for i, n := range sizes {
		u := userCounts[i]
		dir, reuse := "", false
		if dataRoot != "" {
			dir = filepath.Join(dataRoot, strconv.Itoa(n))
			_, err := os.Stat(filepath.Join(dir, duckdb.FileName))
			reuse = err == nil
		}
		fmt.Printf("\n## Queries over %d events of %d users\n\n", n, u)
		run := o
		run.dataDir, run.reuse, run.events, run.users = dir, reuse, n, u
		q, res, err := runQueryBench(run)
		if err != nil {
			return fmt.Errorf("%d events: %w", n, err)
		}
		queries, all = q, append(all, res)
	}
	printQuerySizes(sizes, queries, all)
	return nil
}
