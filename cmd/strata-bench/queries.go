package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
	"strata/internal/config"
	"strata/internal/query"
	"strata/internal/store/duckdb"
)

// The query benchmark of issue 3: events of users over days, ingested
// through the real ingest path, then each query timed over HTTP, and the
// same 3-step funnel written as plain SQL timed directly on DuckDB.

// queryEvent is one generated event, kept small: 10M of them are sorted.
type queryEvent struct {
	ts   int64 // µs since the epoch
	user int32
	name uint8
}

var benchNames = []string{"page_viewed", "button_clicked", "form_submitted", "search", "signup", "purchase", "logout"}

// nameWeights make page views common and purchases rare, like a real site.
var nameWeights = []int{40, 20, 10, 10, 8, 6, 6}

// generateEvents spreads n events over users and days: each user's events
// come in sessions, minutes apart, so that funnels convert at realistic
// rates, and the whole set is sorted by time as ingest would see it.
func generateEvents(n, users, days int, start time.Time) []queryEvent {
	r := rand.New(rand.NewPCG(3, 7))
	var cum []int
	total := 0
	for _, w := range nameWeights {
		total += w
		cum = append(cum, total)
	}
	span := int64(days) * 24 * int64(time.Hour/time.Microsecond)
	base := start.UnixMicro()
	out := make([]queryEvent, 0, n)
	per := n / users
	for u := 0; u < users && len(out) < n; u++ {
		k := per
		if u < n%users {
			k++
		}
		t := r.Int64N(span)
		for i := 0; i < k; i++ {
			if r.IntN(4) == 0 { // a new session, hours or days later
				t += r.Int64N(48 * int64(time.Hour/time.Microsecond))
			} else {
				t += r.Int64N(20 * int64(time.Minute/time.Microsecond))
			}
			w := r.IntN(total)
			name := sort.SearchInts(cum, w+1)
			out = append(out, queryEvent{ts: base + t%span, user: int32(u), name: uint8(name)})
		}
	}
	slices.SortFunc(out, func(a, b queryEvent) int { return int(a.ts - b.ts) })
	return out
}

// ingestEvents posts the events in batches over conns connections and
// returns the rate.
func ingestEvents(srv *server, events []queryEvent, batch, conns int) (float64, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 60 * time.Second}
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b bytes.Buffer
			for {
				lo := int(next.Add(int64(batch))) - batch
				if lo >= len(events) {
					return
				}
				hi := min(lo+batch, len(events))
				b.Reset()
				b.WriteString(`{"batch":[`)
				for i, e := range events[lo:hi] {
					if i > 0 {
						b.WriteByte(',')
					}
					name, agent := benchNames[e.name], agents[int(e.user)%4]
					if e.user%100 == 99 { // one user in a hundred is an AI crawler
						name, agent = "$pageview", agents[4]
					}
					fmt.Fprintf(&b, `{"event_name":%q,"distinct_id":"user_%d","timestamp":%q,"user_agent":%q,"url":"https://shop.example.com%s","properties":{"plan":%q}}`,
						name, e.user, time.UnixMicro(e.ts).UTC().Format(time.RFC3339Nano),
						agent, pages[int(e.ts)%len(pages)], []string{"free", "pro", "team"}[e.user%3])
				}
				b.WriteString("]}")
				for attempt := 0; ; attempt++ {
					if post(client, srv, b.Bytes()) {
						break
					}
					if attempt == 5 {
						failed.Add(1)
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		return 0, fmt.Errorf("%d batches were not accepted", n)
	}
	return float64(len(events)) / time.Since(start).Seconds(), nil
}

// benchQuery is one query the benchmark times.
type benchQuery struct {
	name, method, path string
	body               any
}

// timeQuery runs q runs times after one warm-up and returns the median
// time, the peak RSS of the server while it ran (the high-water mark is
// reset first) and the last answer.
func timeQuery(srv *server, token string, q benchQuery, runs int) (time.Duration, int64, []byte, error) {
	client := &http.Client{Timeout: 5 * time.Minute}
	call := func() ([]byte, error) {
		body, _ := json.Marshal(q.body)
		req, _ := http.NewRequest(q.method, srv.url+q.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %d %s", q.name, resp.StatusCode, out)
		}
		return out, nil
	}
	if _, err := call(); err != nil {
		return 0, 0, nil, err
	}
	// Writing 5 to clear_refs resets VmHWM to the current RSS.
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", srv.cmd.Process.Pid), []byte("5"), 0)
	var times []time.Duration
	var last []byte
	for i := 0; i < runs; i++ {
		start := time.Now()
		out, err := call()
		if err != nil {
			return 0, 0, nil, err
		}
		times = append(times, time.Since(start))
		last = out
	}
	rss, err := srv.peakRSS()
	slices.Sort(times)
	return times[len(times)/2], rss, last, err
}

// plainFunnelSQL is the funnel as someone would write it by hand: a chain
// of CTEs joined on the string distinct_id, each step the earliest event
// after the previous step's time within the window.
const plainFunnelSQL = `
WITH s0 AS (
  SELECT distinct_id, min(ts) AS t FROM events
  WHERE event = 'page_viewed' AND ts >= $1 AND ts < $2
  GROUP BY distinct_id),
s1 AS (
  SELECT s0.distinct_id, min(e.ts) AS t FROM s0 JOIN events e ON e.distinct_id = s0.distinct_id
  WHERE e.event = 'button_clicked' AND e.ts > s0.t AND e.ts <= s0.t + INTERVAL 24 HOUR
  GROUP BY s0.distinct_id),
s2 AS (
  SELECT s1.distinct_id, min(e.ts) AS t FROM s1 JOIN events e ON e.distinct_id = s1.distinct_id
  WHERE e.event = 'form_submitted' AND e.ts > s1.t AND e.ts <= s1.t + INTERVAL 24 HOUR
  GROUP BY s1.distinct_id)
SELECT (SELECT count(*) FROM s0), (SELECT count(*) FROM s1), (SELECT count(*) FROM s2)`

// funnelPair is the in-process comparison: Strata's funnel (the query
// engine on the DuckDB store, exactly what the server runs, minus HTTP) and
// the plain SQL, on one database handle, alternating run by run so that
// both see the same machine.
type funnelPair struct {
	strata, plain             time.Duration
	strataCounts, plainCounts [3]int64
}

// compareFunnels opens the data directory's database in this process with
// the server's memory limit and times both funnels, one warm-up each, then
// runs alternating, and returns the medians.
func compareFunnels(dataDir string, from, to time.Time, runs int) (funnelPair, error) {
	ctx := context.Background()
	st, err := duckdb.Open(ctx, dataDir, duckdb.Options{MemoryLimit: config.Default().DuckDBMemoryLimit})
	if err != nil {
		return funnelPair{}, err
	}
	defer st.Close()
	var p funnelPair
	p.strata, p.plain, err = alternate(runs, strataFunnel(st, from, to, &p.strataCounts), func() error {
		return st.DB().QueryRow(plainFunnelSQL, from, to).Scan(&p.plainCounts[0], &p.plainCounts[1], &p.plainCounts[2])
	})
	return p, err
}

// strataFunnel returns a run of the benchmark's funnel through the query
// engine on store, which leaves its counts in counts.
func strataFunnel(store analytics.QueryStore, from, to time.Time, counts *[3]int64) func() error {
	engine := &query.Engine{Store: store}
	q := analytics.FunnelQuery{
		EventRange: analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: from, To: to},
		Steps:      []string{"page_viewed", "button_clicked", "form_submitted"}, Window: 24 * time.Hour,
	}
	return func() error {
		res, err := engine.RunFunnel(context.Background(), q)
		if err != nil {
			return err
		}
		for k := range counts {
			counts[k] = res.Steps[k].Count
		}
		return nil
	}
}

// alternate times a and b alternately, runs times each after one warm-up
// run of each, so that both see the same moments of a noisy machine, and
// returns their medians.
func alternate(runs int, a, b func() error) (time.Duration, time.Duration, error) {
	var ta, tb []time.Duration
	for i := 0; i <= runs; i++ {
		for _, f := range []struct {
			run   func() error
			times *[]time.Duration
		}{{a, &ta}, {b, &tb}} {
			start := time.Now()
			if err := f.run(); err != nil {
				return 0, 0, err
			}
			if i > 0 { // the first run of each warms the cache
				*f.times = append(*f.times, time.Since(start))
			}
		}
	}
	slices.Sort(ta)
	slices.Sort(tb)
	return ta[len(ta)/2], tb[len(tb)/2], nil
}

// backendResult is one storage backend's (or build's) figures in the
// query benchmark.
type backendResult struct {
	name    string
	ingest  float64 // events/s through POST /e
	times   []time.Duration
	rss     []int64
	answers [][]byte
	// errs holds, for each query, why it got no answer ("" when it did):
	// a build that answers 503 query_too_large is reported, not aborted.
	errs []string
}

// cell is query i's figure for the table: its median and peak RSS, or
// the start of its error.
func (r backendResult) cell(i int) string {
	if r.errs[i] != "" {
		e := r.errs[i]
		if len(e) > 40 {
			e = e[:40]
		}
		return fmt.Sprintf("%-26s", "failed: "+e)
	}
	return fmt.Sprintf("%12s %6d MB", ms(r.times[i]), r.rss[i]>>20)
}

// timeQueries creates a token for product 1 and times every query on srv.
// A query that fails is recorded in r.errs and the next one is timed.
func timeQueries(bin, dataDir string, srv *server, queries []benchQuery, runs int, r *backendResult) error {
	tok, err := token(bin, dataDir)
	if err != nil {
		return err
	}
	for _, q := range queries {
		med, rss, answer, err := timeQuery(srv, tok, q, runs)
		failed := ""
		if err != nil {
			failed = err.Error()
			if _, after, ok := strings.Cut(failed, q.name+": "); ok {
				failed = after
			}
			// "503 {"error":{"code":…}}" is told by its status and code.
			if status, body, ok := strings.Cut(failed, " "); ok {
				var e struct{ Error struct{ Code string } }
				if json.Unmarshal([]byte(body), &e) == nil && e.Error.Code != "" {
					failed = status + " " + e.Error.Code
				}
			}
		}
		r.times, r.rss, r.answers, r.errs = append(r.times, med), append(r.rss, rss), append(r.answers, answer), append(r.errs, failed)
	}
	return nil
}

// runQueryBench is the whole query benchmark: the same events through the
// embedded store and, when ClickHouse is installed, through a ClickHouse
// server, with every query timed on both and the answers compared.
//
// With oldBin, the previous build is started on the same data directory
// after the embedded run and the same queries are timed on it, side by
// side. With a dataDir (-query-data), the events are loaded there and
// kept; with reuse, dataDir holds them already, loaded by an earlier run
// on the same UTC day (the dates of the queries follow from the day), and
// is queried without loading.
func runQueryBench(bin, oldBin, dataDir string, reuse bool, nEvents, users, days, runs int, keep, withClickHouse, plain bool) ([]benchQuery, []backendResult, error) {
	if dataDir == "" {
		dir, cleanup, err := benchDataDir("strata-qbench-", keep)
		if err != nil {
			return nil, nil, err
		}
		defer cleanup()
		dataDir = dir
	}
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -days)
	from, to := start, start.AddDate(0, 0, days-1)

	var events []queryEvent
	if !reuse {
		genStart := time.Now()
		events = generateEvents(nEvents, users, days, start)
		fmt.Printf("query benchmark: %d events, %d users, %d days (%s to %s), generated in %s\n",
			len(events), users, days, from.Format("2006-01-02"), to.Format("2006-01-02"), time.Since(genStart).Round(time.Millisecond))
	} else {
		fmt.Printf("query benchmark: %d events, %d users, %d days (%s to %s), loaded earlier in %s\n",
			nEvents, users, days, from.Format("2006-01-02"), to.Format("2006-01-02"), dataDir)
	}

	dates := map[string]any{"dateFrom": from.Format("2006-01-02"), "dateTo": to.Format("2006-01-02")}
	with := func(m map[string]any) map[string]any {
		for k, v := range dates {
			m[k] = v
		}
		return m
	}
	funnel := benchQuery{"3-step funnel (24 h window)", "POST", "/api/v1/query/funnel",
		with(map[string]any{"steps": []string{"page_viewed", "button_clicked", "form_submitted"}, "windowHours": 24})}
	queries := []benchQuery{
		funnel,
		{"daily unique users, 30 days (page_viewed, 40%)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "page_viewed", "math": "unique_users"}}, "interval": "day"})},
		{"daily unique users, 30 days (button_clicked, 20%)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "button_clicked", "math": "unique_users"}}, "interval": "day"})},
		{"daily unique users, 30 days (search, 10%)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "search", "math": "unique_users"}}, "interval": "day"})},
		{"daily events by browser (top 5 + other)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "page_viewed"}}, "interval": "day", "breakdown": "browser", "breakdownLimit": 5})},
		{"daily events, filter properties.plan = pro", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "purchase"}}, "interval": "day",
				"filters": []map[string]any{{"property": "properties.plan", "operator": "eq", "value": "pro"}}})},
		{"weekly retention signup → purchase", "POST", "/api/v1/query/retention",
			with(map[string]any{"startEvent": "signup", "returnEvent": "purchase", "period": "week"})},
		{"AI bots panel", "GET", "/api/v1/query/bots?dateFrom=" + from.Format("2006-01-02") + "&dateTo=" + to.Format("2006-01-02"), nil},
		// There are no exceptions in these events: this times the scan
		// that finds none, the errors suite times the groups themselves.
		{"error groups, 30 days (GET /api/v1/errors)", "GET", "/api/v1/errors?dateFrom=" + from.Format("2006-01-02"), nil},
		{"a user's events (GET /api/v1/users/{id}/events)", "GET", "/api/v1/users/user_4242/events", nil},
	}
	// The bots panel is the one query run to settle the server below.
	settleQuery := queries[7:8]

	// Embedded: DuckDB behind the spool.
	embedded := backendResult{name: "embedded"}
	srv, err := startServer(bin, dataDir)
	if err != nil {
		return nil, nil, err
	}
	defer srv.stop()
	if !reuse {
		if embedded.ingest, err = ingestEvents(srv, events, 500, 8); err != nil {
			return nil, nil, err
		}
		fmt.Printf("embedded: ingest through POST /e: %.0f events/s\n", embedded.ingest)
	}
	// Let the server settle as it would between a load and a dashboard
	// visit: the first query waits for the spool to load everything, and
	// the server checkpoints once ingest has been quiet for two seconds.
	settle := time.Now()
	if err := timeQueries(bin, dataDir, srv, settleQuery, 1, &backendResult{}); err != nil {
		return nil, nil, err
	}
	if !reuse {
		select {
		case <-srv.checkpoints:
		case <-time.After(2 * time.Minute):
			fmt.Println("(no idle checkpoint within 2 minutes)")
		}
	}
	fmt.Printf("embedded: settled in %s (spool loaded, idle checkpoint done)\n", time.Since(settle).Round(time.Millisecond))
	if err := timeQueries(bin, dataDir, srv, queries, runs, &embedded); err != nil {
		return nil, nil, err
	}
	srv.stop()
	results := []backendResult{embedded}
	if oldBin != "" {
		// The previous build on the same data, one after the other: the
		// figures are ratios on a machine that others may share.
		old := backendResult{name: "old build"}
		osrv, err := startServer(oldBin, dataDir)
		if err != nil {
			return nil, nil, fmt.Errorf("the old build: %w", err)
		}
		if err := timeQueries(oldBin, dataDir, osrv, settleQuery, 1, &backendResult{}); err != nil {
			osrv.stop()
			return nil, nil, err
		}
		err = timeQueries(oldBin, dataDir, osrv, queries, runs, &old)
		osrv.stop()
		if err != nil {
			return nil, nil, fmt.Errorf("the old build: %w", err)
		}
		results = append(results, old)
	}

	var ch *clickHouseRun
	if withClickHouse && events != nil {
		if ch, err = startClickHouse(); err != nil {
			fmt.Println("ClickHouse part skipped:", err)
		} else {
			defer ch.stop()
			r, err := ch.bench(bin, filepath.Join(filepath.Dir(dataDir), "ch-node"), events, queries, runs)
			if err != nil {
				return nil, nil, fmt.Errorf("ClickHouse: %w", err)
			}
			results = append(results, r)
		}
	}
	events = nil

	fmt.Printf("\n%-52s", "query (median of "+strconv.Itoa(runs)+", over HTTP)")
	for _, r := range results {
		fmt.Printf(" %12s %9s", r.name, "peak RSS")
	}
	fmt.Println()
	if !reuse {
		fmt.Printf("%-52s", "ingest through POST /e (events/s)")
		for _, r := range results {
			fmt.Printf(" %12.0f %9s", r.ingest, "")
		}
		fmt.Println()
	}
	for i, q := range queries {
		fmt.Printf("%-52s", q.name)
		for _, r := range results {
			fmt.Printf(" %s", r.cell(i))
		}
		if len(results) > 1 {
			switch {
			case slices.ContainsFunc(results, func(r backendResult) bool { return r.errs[i] != "" }):
			case bytes.Equal(results[0].answers[i], results[1].answers[i]):
				fmt.Print("  same answer")
			default:
				fmt.Print("  ANSWERS DIFFER")
			}
		}
		fmt.Println()
	}
	for i := range queries {
		if embedded.errs[i] != "" {
			return nil, nil, fmt.Errorf("%s: %s", queries[i].name, embedded.errs[i])
		}
		if len(results) > 1 && results[1].errs[i] == "" && !bytes.Equal(results[0].answers[i], results[1].answers[i]) {
			return nil, nil, fmt.Errorf("%s: %s answered %s, %s %s", queries[i].name, results[0].name, results[0].answers[i], results[1].name, results[1].answers[i])
		}
	}
	if !plain {
		return queries, results, nil
	}

	pair, err := compareFunnels(dataDir, from, to.AddDate(0, 0, 1), runs)
	if err != nil {
		return nil, nil, fmt.Errorf("comparing funnels: %w", err)
	}
	fmt.Printf("\nin-process, alternating (median of %d each):\n", runs)
	fmt.Printf("%-52s %12s\n", "strata funnel (query engine + DuckDB store)", ms(pair.strata))
	fmt.Printf("%-52s %12s\n", "plain SQL funnel (CTE joins on distinct_id)", ms(pair.plain))
	fmt.Printf("strata funnel / plain SQL = %.2f in-process, %.2f over HTTP  (target ≤ 0.50)\n",
		float64(pair.strata)/float64(pair.plain), float64(embedded.times[0])/float64(pair.plain))
	fmt.Printf("counts: strata %v, plain SQL %v; over HTTP strata answered %s\n", pair.strataCounts, pair.plainCounts, embedded.answers[0])
	if pair.strataCounts != pair.plainCounts {
		return nil, nil, fmt.Errorf("the funnels disagree: strata %v, plain SQL %v", pair.strataCounts, pair.plainCounts)
	}
	if ch != nil {
		wp, err := ch.compareWindowFunnel(from, to.AddDate(0, 0, 1), runs)
		if err != nil {
			return nil, nil, fmt.Errorf("comparing ClickHouse funnels: %w", err)
		}
		fmt.Printf("\nClickHouse, in-process, alternating (median of %d each):\n", runs)
		fmt.Printf("%-52s %12s  %v\n", "strata funnel (query engine + ClickHouse store)", ms(wp.strata), wp.strataCounts)
		fmt.Printf("%-52s %12s  %v\n", "ClickHouse windowFunnel (seconds, window from step 0)", ms(wp.plain), wp.plainCounts)
		fmt.Printf("strata funnel / windowFunnel = %.2f (windowFunnel answers a looser question: see docs/benchmarks.md)\n",
			float64(wp.strata)/float64(wp.plain))
	}
	return queries, results, nil
}

// benchDataDir makes a data directory for a benchmark's server under a new
// temporary directory, and returns it with the clean-up that removes it,
// unless keep asks to leave it for inspection.
func benchDataDir(prefix string, keep bool) (string, func(), error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if keep {
		fmt.Println("keeping the data directory", dir)
		return filepath.Join(dir, "data"), func() {}, nil
	}
	return filepath.Join(dir, "data"), func() { os.RemoveAll(dir) }, nil
}

// printQuerySizes prints every query's figures at each size side by side,
// with the new build's time over the old one's, so that the growth of
// each query's cost with the data shows in one table.
func printQuerySizes(sizes []int, queries []benchQuery, runs [][]backendResult) {
	fmt.Printf("\n| query | events | new build | peak RSS | old build | peak RSS | new / old |\n|---|---|---|---|---|---|---|\n")
	for i, q := range queries {
		for k, n := range sizes {
			res := runs[k]
			newCell := func(r backendResult) (string, string) {
				if r.errs[i] != "" {
					return "failed: " + r.errs[i], ""
				}
				return ms(r.times[i]), fmt.Sprintf("%d MB", r.rss[i]>>20)
			}
			t, rss := newCell(res[0])
			ot, orss, ratio := "", "", ""
			if len(res) > 1 && res[1].name == "old build" {
				ot, orss = newCell(res[1])
				if res[0].errs[i] == "" && res[1].errs[i] == "" {
					ratio = fmt.Sprintf("%.2f", float64(res[0].times[i])/float64(res[1].times[i]))
				}
			}
			fmt.Printf("| %s | %d M | %s | %s | %s | %s | %s |\n", q.name, n/1_000_000, t, rss, ot, orss, ratio)
		}
	}
}
