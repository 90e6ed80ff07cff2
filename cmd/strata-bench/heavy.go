package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The heavy-query benchmark of the hardening issue: a server with about a
// million events answers many heavy queries sent at once, and the benchmark
// reports what each got (status and error code), how long the slowest
// waited, and the server's peak RSS during each burst. It measures what a
// burst of dashboard users or a misbehaving script does to one node, not
// how fast one query is (that is the query benchmark).

// heavyFunnel is a five-step funnel over 30 days with a 720-hour window:
// every step's join holds each user's events of a month.
func heavyFunnel(from, to string) map[string]any {
	return map[string]any{
		"steps":    []string{"$pageview", "button_clicked", "form_submitted", "signup", "purchase"},
		"dateFrom": from, "dateTo": to, "windowHours": 720,
	}
}

// heavyTrend is ten hourly unique-user series over 30 days (720 buckets
// each), broken down by path, with a regular-expression filter that
// matches most events, so that nothing is skipped.
func heavyTrend(from, to string) map[string]any {
	var series []map[string]any
	for i := range 10 {
		s := map[string]any{"event": benchNames[i%len(benchNames)], "math": "unique_users"}
		if i >= len(benchNames) {
			s["filters"] = []map[string]any{{"property": "properties.plan", "operator": "neq", "value": "free"}}
		}
		series = append(series, s)
	}
	return map[string]any{
		"series": series, "interval": "hour", "breakdown": "path",
		"filters":  []map[string]any{{"property": "url", "operator": "regex", "value": `^https://shop\.example\.com/([a-z]+(/[a-z-]+)?)?$`}},
		"dateFrom": from, "dateTo": to,
	}
}

// burstResult is what one burst of concurrent queries got.
type burstResult struct {
	statuses map[string]int // "200", "503 server_busy", …
	slowest  time.Duration
	median   time.Duration
	peakRSS  int64
	wall     time.Duration
	// retryAfterMissing counts 429 and 503 answers without Retry-After.
	retryAfterMissing int
}

func (b burstResult) String() string {
	keys := make([]string, 0, len(b.statuses))
	for k := range b.statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, b.statuses[k]))
	}
	s := fmt.Sprintf("%s; median %s, slowest %s, burst %s; peak RSS %d MB",
		strings.Join(parts, ", "), b.median.Round(time.Millisecond), b.slowest.Round(time.Millisecond),
		b.wall.Round(time.Millisecond), b.peakRSS>>20)
	if b.retryAfterMissing > 0 {
		s += fmt.Sprintf("; %d refusals WITHOUT Retry-After", b.retryAfterMissing)
	}
	return s
}

// burst sends n copies of one query at once, each with a credential from
// tokens in turn, after resetting the server's RSS high-water mark.
func burst(srv *server, tokens []string, path string, body any, n int) burstResult {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 10 * time.Minute}
	raw, _ := json.Marshal(body)
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", srv.cmd.Process.Pid), []byte("5"), 0)
	res := burstResult{statuses: map[string]int{}}
	var mu sync.Mutex
	var times []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", srv.url+path, bytes.NewReader(raw))
			req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
			t0 := time.Now()
			resp, err := client.Do(req)
			key := ""
			missing := false
			if err != nil {
				key = "transport error"
			} else {
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				key = fmt.Sprint(resp.StatusCode)
				if resp.StatusCode != 200 {
					var e struct {
						Error struct{ Code string } `json:"error"`
					}
					json.Unmarshal(out, &e)
					key += " " + e.Error.Code
				}
				missing = (resp.StatusCode == 429 || resp.StatusCode == 503) && resp.Header.Get("Retry-After") == ""
			}
			d := time.Since(t0)
			mu.Lock()
			res.statuses[key]++
			times = append(times, d)
			if missing {
				res.retryAfterMissing++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	res.peakRSS, _ = srv.peakRSS()
	slices.Sort(times)
	res.slowest, res.median = times[len(times)-1], times[len(times)/2]
	return res
}

// runHeavyBench loads nEvents events for users users over 30 days through
// POST /e, then sends bursts of concurrent heavy funnels and heavy trends,
// rounds times each, and prints what every burst got.
//
// With reuse set to a data directory this benchmark loaded before (kept
// with -query-keep), it skips the load and queries those events, dated by
// the directory's modification day.
//
// With ingestConns above zero, that many connections post 500-event
// batches at full speed during every burst, as a busy site would.
func runHeavyBench(bin string, nEvents, users, conc, rounds, ingestConns int, keep bool, reuse string) error {
	dataDir := reuse
	if reuse == "" {
		dir, cleanup, err := benchDataDir("strata-heavy-", keep)
		if err != nil {
			return err
		}
		defer cleanup()
		dataDir = dir
	}
	const days = 30
	day := time.Now().UTC()
	if reuse != "" {
		st, err := os.Stat(filepath.Join(reuse, "heavy-loaded"))
		if err != nil {
			return fmt.Errorf("-heavy-data %s: not loaded by this benchmark: %w", reuse, err)
		}
		day = st.ModTime().UTC()
	}
	start := day.Truncate(24*time.Hour).AddDate(0, 0, -days)
	from, to := start.Format("2006-01-02"), start.AddDate(0, 0, days-1).Format("2006-01-02")

	srv, err := startServer(bin, dataDir)
	if err != nil {
		return err
	}
	defer srv.stop()
	rate := 0.0
	if reuse == "" {
		events := generateEvents(nEvents, users, days, start)
		if rate, err = ingestEvents(srv, events, 0, 500, 8); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dataDir, "heavy-loaded"), nil, 0o600); err != nil {
			return err
		}
	}
	fmt.Printf("heavy-query benchmark: %d events, %d users, %s to %s; server flags %q; ingest %.0f events/s\n",
		nEvents, users, from, to, strings.Join(serverArgs, " "), rate)
	// One token per ten queries, so that a per-credential rate limit does
	// not decide the outcome: this measures the node, not one client.
	var tokens []string
	for range max(1, conc/10) {
		out, err := exec.Command(bin, "tokens", "create", "--product", "1", "--data", dataDir).Output()
		if err != nil {
			return fmt.Errorf("creating a token: %w", err)
		}
		tokens = append(tokens, strings.TrimSpace(string(out)))
	}
	// Wait for the spool to load everything and for the idle checkpoint,
	// as the query benchmark does.
	client := &http.Client{Timeout: 5 * time.Minute}
	req, _ := http.NewRequest("GET", srv.url+"/api/v1/query/events?dateFrom="+from+"&dateTo="+to, nil)
	req.Header.Set("Authorization", "Bearer "+tokens[0])
	if resp, err := client.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if reuse == "" {
		select {
		case <-srv.checkpoints:
		case <-time.After(2 * time.Minute):
			fmt.Println("(no idle checkpoint within 2 minutes)")
		}
	}
	rss, _ := srv.peakRSS()
	fmt.Printf("settled; peak RSS so far %d MB\n", rss>>20)
	if ingestConns > 0 {
		out, err := exec.Command(bin, "keys", "create", "--product", "1", "--data", dataDir).Output()
		if err != nil {
			return fmt.Errorf("creating a key: %w", err)
		}
		srv.key = strings.TrimSpace(string(out))
	}
	for r := range rounds {
		stop := ingestDuring(srv, ingestConns)
		fmt.Printf("round %d: %d concurrent 720-hour funnels: %s%s\n", r+1, conc,
			burst(srv, tokens, "/api/v1/query/funnel", heavyFunnel(from, to), conc), stop())
		stop = ingestDuring(srv, ingestConns)
		fmt.Printf("round %d: %d concurrent hourly 10-series unique-user trends by path, regex filter: %s%s\n", r+1, conc,
			burst(srv, tokens, "/api/v1/query/trend", heavyTrend(from, to), conc), stop())
	}
	return nil
}

// ingestDuring posts 500-event batches on conns connections until the
// returned function is called; it reports the rate ingested meanwhile.
func ingestDuring(srv *server, conns int) func() string {
	if conns == 0 {
		return func() string { return "" }
	}
	tmpl := newTemplate(500)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: time.Minute}
	done := make(chan struct{})
	var accepted, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if post(client, srv, tmpl.body()) {
					accepted.Add(int64(tmpl.n))
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	return func() string {
		close(done)
		wg.Wait()
		return fmt.Sprintf("; meanwhile ingest at %.0f events/s (%d batches refused)",
			float64(accepted.Load())/time.Since(start).Seconds(), failed.Load())
	}
}
