package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
	"strata/internal/config"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
	"strata/internal/ingest"
	"strata/internal/query"
	"strata/internal/store/clickhouse"
	"strata/internal/store/duckdb"
)

// The query benchmark of issue 3: events of users over days, ingested
// through the real ingest path, then each query timed over HTTP, and the
// same 3-step funnel written as plain SQL timed directly on DuckDB.

// queryEvent is one generated event, kept small: 10M of them are sorted.
type queryEvent struct {
	ts   int64 // µs since the epoch
	user int32
	name uint8 // an index into benchNames, or exposureName
}

// exposureName marks the $exposure of the benchmark's experiment: every
// fourth user's first event is one, with the variant variantOf gives, so
// that the experiment's results are timed over the same data as the other
// queries (benchExperiment).
const exposureName = 255

// benchHoldout is the experiment's holdout percentage, and variantOf the
// arm a user is exposed to: a tenth held out, the rest halved, by a
// multiplicative hash of the user so that any build or backend sees the
// same split.
const benchHoldout = 10

func variantOf(user int32) string {
	h := uint32(user) * 2654435761
	switch {
	case h%100 < benchHoldout:
		return "holdout"
	case (h>>16)%2 == 0:
		return "control"
	}
	return "treatment"
}

var benchNames = []string{"$pageview", "button_clicked", "form_submitted", "search", "signup", "purchase", "logout"}

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
			name := uint8(sort.SearchInts(cum, w+1))
			if i == 0 && u%4 == 1 {
				name = exposureName
			}
			out = append(out, queryEvent{ts: base + t%span, user: int32(u), name: name})
		}
	}
	slices.SortFunc(out, func(a, b queryEvent) int { return int(a.ts - b.ts) })
	return out
}

// writeBatch writes events as the body of one POST /e, the experiment's
// exposures naming experimentID.
func writeBatch(b *bytes.Buffer, events []queryEvent, experimentID int64) {
	b.WriteString(`{"batch":[`)
	for i, e := range events {
		if i > 0 {
			b.WriteByte(',')
		}
		agent := agents[int(e.user)%4]
		ts := time.UnixMicro(e.ts).UTC().Format(time.RFC3339Nano)
		page := pages[int(e.ts)%len(pages)]
		switch {
		case e.user%100 == 99: // one user in a hundred is an AI crawler
			fmt.Fprintf(b, `{"event_name":"$pageview","distinct_id":"user_%d","timestamp":%q,"user_agent":%q,"url":"https://shop.example.com%s"}`,
				e.user, ts, agents[4], page)
		case e.name == exposureName:
			fmt.Fprintf(b, `{"event_name":"$exposure","distinct_id":"user_%d","timestamp":%q,"user_agent":%q,"url":"https://shop.example.com%s","properties":{"flag":"checkout_test","experiment_id":%d,"variant":%q}}`,
				e.user, ts, agent, page, experimentID, variantOf(e.user))
		default:
			fmt.Fprintf(b, `{"event_name":%q,"distinct_id":"user_%d","timestamp":%q,"user_agent":%q,"url":"https://shop.example.com%s","properties":{"plan":%q}}`,
				benchNames[e.name], e.user, ts, agent, page, []string{"free", "pro", "team"}[e.user%3])
		}
	}
	b.WriteString("]}")
}

// ingestEvents posts the events in batches over conns connections and
// returns the rate.
func ingestEvents(srv *server, events []queryEvent, experimentID int64, batch, conns int) (float64, error) {
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
				writeBatch(&b, events[lo:hi], experimentID)
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
  WHERE event = '$pageview' AND ts >= $1 AND ts < $2
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

// funnelVariants are the funnels funnelDepth times against the plain
// 4-step one (issue 40's targets, each at most twice the plain funnel):
// the same four events with a filter on each step and a breakdown by
// browser (benchQueries' deep4Funnel), and the plain funnel's time to
// convert and conversion by day, whole and by browser. Each is a request
// body's fields over the plain funnel's.
var funnelVariants = []funnelVariant{
	{deep4Funnel, nil},
	{"4-step funnel, time to convert", map[string]any{"view": "time_to_convert"}},
	{"4-step funnel, conversion by day", map[string]any{"view": "trends", "interval": "day"}},
	{"4-step funnel, time to convert, by browser", map[string]any{"view": "time_to_convert", "breakdown": "browser", "breakdownLimit": 5}},
	{"4-step funnel, conversion by day, by browser", map[string]any{"view": "trends", "interval": "day", "breakdown": "browser", "breakdownLimit": 5}},
}

// funnelVariant is a funnel request timed by funnelDepth: name's body in
// benchQueries (the plain funnel's, when it has none) with the fields of
// with over it.
type funnelVariant struct {
	name string
	with map[string]any
}

// funnelDepth times, through the query engine on store in this process,
// the plain 4-step funnel and each of funnelVariants, in turn run by run
// so that all see the same moments of a busy machine, and returns the
// medians: the plain funnel's first.
func funnelDepth(store analytics.QueryStore, from, to time.Time, runs int) ([]time.Duration, error) {
	engine := &query.Engine{Store: store}
	scope := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	bodies := map[string]map[string]any{}
	for _, q := range benchQueries(from, to.AddDate(0, 0, -1), 0) {
		if q.name == plain4Funnel || q.name == deep4Funnel {
			bodies[q.name] = q.body.(map[string]any)
		}
	}
	var fns []func() error
	for _, v := range append([]funnelVariant{{plain4Funnel, nil}}, funnelVariants...) {
		body := maps.Clone(bodies[v.name])
		if body == nil {
			body = maps.Clone(bodies[plain4Funnel])
		}
		maps.Copy(body, v.with)
		raw, _ := json.Marshal(body)
		q, err := query.ParseFunnel(raw, scope, to)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		fns = append(fns, func() error { _, err := engine.RunFunnel(context.Background(), q); return err })
	}
	return alternateAll(runs, fns...)
}

// printFunnelDepthInProcess prints funnelDepth's figures on the DuckDB
// store of dataDir and, with ch, on ClickHouse.
func printFunnelDepthInProcess(dataDir string, ch *clickHouseRun, from, to time.Time, runs int) error {
	ctx := context.Background()
	st, err := duckdb.Open(ctx, dataDir, duckdb.Options{MemoryLimit: config.Default().DuckDBMemoryLimit})
	if err != nil {
		return err
	}
	times, err := funnelDepth(st, from, to, runs)
	st.Close()
	if err != nil {
		return err
	}
	fmt.Printf("\nin-process, in turn (median of %d each):\n", runs)
	printVariants("DuckDB", times)
	if ch == nil {
		return nil
	}
	cs, err := clickhouse.Open(ctx, ch.server.URL(benchDatabase, ""))
	if err != nil {
		return err
	}
	defer cs.Close()
	if times, err = funnelDepth(cs, from, to, runs); err != nil {
		return err
	}
	printVariants("ClickHouse", times)
	return nil
}

// printVariants prints the plain funnel's time and each variant's, with
// its ratio to the plain one.
func printVariants(backend string, times []time.Duration) {
	fmt.Printf("%-60s %12s\n", plain4Funnel+", "+backend, ms(times[0]))
	for i, v := range funnelVariants {
		fmt.Printf("%-60s %12s  %.2f × plain (target ≤ 2)\n", v.name+", "+backend, ms(times[i+1]), float64(times[i+1])/float64(times[0]))
	}
}

// printLiveVisitors times the Overview's visitors now (issue 37: ≤ 20 ms)
// in process: the query engine on the DuckDB store and, when ch is set,
// on the ClickHouse one, without the live cache so that every run is a
// count, its clock at end, the end of the benchmark's data, so that the
// five minutes counted hold events (over HTTP the server's clock is past
// the data, and after the first count the cache answers). The previous
// build has no such count: "—".
func printLiveVisitors(dataDir string, ch *clickHouseRun, end time.Time, runs int, old bool) error {
	ctx := context.Background()
	duck, err := duckdb.Open(ctx, dataDir, duckdb.Options{MemoryLimit: config.Default().DuckDBMemoryLimit})
	if err != nil {
		return err
	}
	defer duck.Close()
	stores := []analytics.QueryStore{duck}
	if ch != nil {
		house, err := clickhouse.Open(ctx, ch.server.URL(benchDatabase, ""))
		if err != nil {
			return err
		}
		defer house.Close()
		stores = append(stores, house)
	}
	fmt.Println()
	for i, st := range stores {
		engine := &query.Engine{Store: st, Now: func() time.Time { return end }}
		var n int64
		count := func() error {
			res, err := engine.LiveVisitors(ctx, analytics.EventRange{ProductID: 1, Env: analytics.EnvLive})
			n = res.Visitors
			return err
		}
		if err := count(); err != nil {
			return err
		}
		times := make([]time.Duration, runs)
		for k := range times {
			start := time.Now()
			if err := count(); err != nil {
				return err
			}
			times[k] = time.Since(start)
		}
		slices.Sort(times)
		fmt.Printf("%-52s %12s", "visitors now, last 5 min, "+[]string{"DuckDB", "ClickHouse"}[i]+" (no cache)", ms(times[len(times)/2]))
		if old && i == 0 {
			fmt.Printf(" %12s", "—")
		}
		fmt.Printf("  %d visitors  (target ≤ 20 ms)\n", n)
	}
	return nil
}

// strataFunnel returns a run of the benchmark's funnel through the query
// engine on store, which leaves its counts in counts.
func strataFunnel(store analytics.QueryStore, from, to time.Time, counts *[3]int64) func() error {
	engine := &query.Engine{Store: store}
	q := analytics.FunnelQuery{
		EventRange: analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: from, To: to},
		Steps:      []string{"$pageview", "button_clicked", "form_submitted"}, Window: 24 * time.Hour,
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

// alternateAll times fns in turn, runs rounds after one warm-up run of
// each, so that all see the same moments of a noisy machine, and returns
// their medians, in order.
func alternateAll(runs int, fns ...func() error) ([]time.Duration, error) {
	times := make([][]time.Duration, len(fns))
	for i := 0; i <= runs; i++ {
		for j, f := range fns {
			start := time.Now()
			if err := f(); err != nil {
				return nil, err
			}
			if i > 0 {
				times[j] = append(times[j], time.Since(start))
			}
		}
	}
	out := make([]time.Duration, len(fns))
	for j, t := range times {
		slices.Sort(t)
		out[j] = t[len(t)/2]
	}
	return out, nil
}

// alternate is alternateAll of two.
func alternate(runs int, a, b func() error) (time.Duration, time.Duration, error) {
	t, err := alternateAll(runs, a, b)
	if err != nil {
		return 0, 0, err
	}
	return t[0], t[1], nil
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
	if r.errs[i] == "404 not_found" {
		// A build older than the query's endpoint: nothing to time.
		return fmt.Sprintf("%12s %9s", "—", "")
	}
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

// queryBench is one run of the query benchmark at one size.
type queryBench struct {
	bin, oldBin string
	// dataDir holds the events (a new temporary directory when empty);
	// with reuse it holds them already, loaded by an earlier run on the
	// same UTC day (the dates of the queries follow from the day).
	dataDir             string
	reuse               bool
	events, users, days int
	runs                int
	keep, clickHouse    bool
	plain               bool
	// overviewOnly times the whole Overview alone (overview.go), not the
	// list of queries nor the hand-written funnel.
	overviewOnly bool
	// direct loads the events into the database file in process, through
	// the ingest pipeline but not over HTTP (directLoad): the way to load
	// 100 M events in minutes rather than an hour. The ClickHouse part
	// needs events over HTTP and is left out.
	direct bool
}

// runQueryBench is the whole query benchmark: the same events through the
// embedded store and, when ClickHouse is installed, through a ClickHouse
// server, with every query timed on both and the answers compared.
//
// With oldBin, the previous build is started on the same data directory
// after the embedded run and the same queries are timed on it, side by
// side. With a dataDir (-query-data), the events are loaded there and
// kept; with reuse, dataDir holds them already and is queried without
// loading.
func runQueryBench(o queryBench) ([]benchQuery, []backendResult, error) {
	bin, dataDir, reuse, days, runs := o.bin, o.dataDir, o.reuse, o.days, o.runs
	if dataDir == "" {
		dir, cleanup, err := benchDataDir("strata-qbench-", o.keep)
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
		events = generateEvents(o.events, o.users, days, start)
		fmt.Printf("query benchmark: %d events, %d users, %d days (%s to %s), generated in %s\n",
			len(events), o.users, days, from.Format("2006-01-02"), to.Format("2006-01-02"), time.Since(genStart).Round(time.Millisecond))
	} else {
		fmt.Printf("query benchmark: %d events, %d users, %d days (%s to %s), loaded earlier in %s\n",
			o.events, o.users, days, from.Format("2006-01-02"), to.Format("2006-01-02"), dataDir)
	}

	// The previous build reads a copy of data loaded earlier, taken before
	// this build opens it: this build's migrations would make the file
	// newer than the previous build accepts.
	oldDir := dataDir
	if o.oldBin != "" && reuse {
		oldDir = dataDir + "-previous"
		os.RemoveAll(oldDir)
		if out, err := exec.Command("cp", "-r", dataDir, oldDir).CombinedOutput(); err != nil {
			return nil, nil, fmt.Errorf("copying the data for the previous build: %v: %s", err, out)
		}
		defer os.RemoveAll(oldDir)
	}

	// The first start makes the product (and, on a new directory, the
	// experiment whose exposures the events carry).
	srv, err := startServer(bin, dataDir)
	if err != nil {
		return nil, nil, err
	}
	defer func() { srv.stop() }()
	tok, err := token(bin, dataDir)
	if err != nil {
		return nil, nil, err
	}
	expID, err := benchExperiment(srv, tok, from, to)
	if err != nil {
		return nil, nil, err
	}

	queries := benchQueries(from, to, expID)
	// The bots panel is the one query run to settle the server below.
	settleQuery := queries[7:8]

	// Embedded: DuckDB behind the spool.
	embedded := backendResult{name: "embedded"}
	switch {
	case reuse:
	case o.direct:
		srv.stop()
		rate, err := directLoad(dataDir, events, expID)
		if err != nil {
			return nil, nil, err
		}
		fmt.Printf("embedded: loaded in process through the ingest pipeline: %.0f events/s\n", rate)
		if srv, err = startServer(bin, dataDir); err != nil {
			return nil, nil, err
		}
	default:
		if embedded.ingest, err = ingestEvents(srv, events, expID, 500, 8); err != nil {
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
	if !reuse && !o.direct {
		select {
		case <-srv.checkpoints:
		case <-time.After(2 * time.Minute):
			fmt.Println("(no idle checkpoint within 2 minutes)")
		}
	}
	fmt.Printf("embedded: settled in %s (spool loaded, idle checkpoint done)\n", time.Since(settle).Round(time.Millisecond))
	if o.overviewOnly {
		queries = nil
	}
	if err := timeQueries(bin, dataDir, srv, queries, runs, &embedded); err != nil {
		return nil, nil, err
	}
	ranges := overviewRanges(from, to)
	srv.awaitVisits()
	overviews := [][]overviewResult{nil}
	if overviews[0], err = timeOverviews(bin, dataDir, srv, ranges, runs); err != nil {
		return nil, nil, err
	}
	switch boardReqs, board, err := timeBoard(bin, dataDir, srv, from, to, runs); {
	case errors.Is(err, errNoBoards):
		fmt.Printf("\nNo board timed: %v.\n", err)
	case err != nil:
		return nil, nil, err
	default:
		printBoard(boardReqs, board, from, to, runs)
	}
	srv.stop()
	results := []backendResult{embedded}
	if oldBin := o.oldBin; oldBin != "" {
		// The previous build on the same data, one after the other: the
		// figures are ratios on a machine that others may share.
		old := backendResult{name: "old build"}
		osrv, err := startServer(oldBin, oldDir)
		if err != nil {
			return nil, nil, fmt.Errorf("the old build: %w", err)
		}
		if err := timeQueries(oldBin, oldDir, osrv, settleQuery, 1, &backendResult{}); err != nil {
			osrv.stop()
			return nil, nil, err
		}
		err = timeQueries(oldBin, oldDir, osrv, queries, runs, &old)
		if err == nil {
			var ov []overviewResult
			ov, err = timeOverviews(oldBin, oldDir, osrv, ranges, runs)
			overviews = append(overviews, ov)
		}
		osrv.stop()
		if err != nil {
			return nil, nil, fmt.Errorf("the old build: %w", err)
		}
		results = append(results, old)
	}

	names := []string{"this build"}
	if len(overviews) > 1 {
		names = append(names, "previous build")
	}
	var ch *clickHouseRun
	if o.clickHouse && (o.direct || reuse) {
		// Loaded in process, the ClickHouse node is timed on the Overview
		// alone, beside the embedded store, on the same generated events.
		if events == nil {
			events = generateEvents(o.events, o.users, days, start)
		}
		if ch, err = startClickHouse(); err != nil {
			fmt.Println("ClickHouse part skipped:", err)
		} else {
			defer ch.stop()
			nodeDir, cleanup, err := benchDataDir("strata-chnode-", o.keep)
			if err != nil {
				return nil, nil, err
			}
			defer cleanup()
			ov, err := ch.overview(bin, nodeDir, events, expID, from, to, ranges, runs)
			if err != nil {
				return nil, nil, fmt.Errorf("ClickHouse: %w", err)
			}
			overviews = append(overviews, ov)
			names = append(names, "ClickHouse")
		}
	} else if o.clickHouse && events != nil {
		if ch, err = startClickHouse(); err != nil {
			fmt.Println("ClickHouse part skipped:", err)
		} else {
			defer ch.stop()
			r, err := ch.bench(bin, filepath.Join(filepath.Dir(dataDir), "ch-node"), events, expID, from, to, queries, runs)
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
	if !reuse && !o.direct {
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
	printFunnelDepth(queries, results)
	printOverviews(ranges, names, overviews, runs)
	if err := printLiveVisitors(dataDir, ch, to.AddDate(0, 0, 1), runs, len(results) > 1 && results[1].name == "old build"); err != nil {
		return nil, nil, fmt.Errorf("visitors now: %w", err)
	}
	if !o.overviewOnly {
		if err := printFunnelDepthInProcess(dataDir, ch, from, to.AddDate(0, 0, 1), runs); err != nil {
			return nil, nil, fmt.Errorf("funnel depth: %w", err)
		}
	}
	for i := range queries {
		if embedded.errs[i] != "" {
			return nil, nil, fmt.Errorf("%s: %s", queries[i].name, embedded.errs[i])
		}
		if len(results) > 1 && results[1].errs[i] == "" && !bytes.Equal(results[0].answers[i], results[1].answers[i]) {
			return nil, nil, fmt.Errorf("%s: %s answered %s, %s %s", queries[i].name, results[0].name, results[0].answers[i], results[1].name, results[1].answers[i])
		}
	}
	if !o.plain || o.overviewOnly {
		return queries, results, nil
	}

	pair, err := compareFunnels(dataDir, from, to.AddDate(0, 0, 1), runs)
	if err != nil {
		return nil, nil, fmt.Errorf("comparing funnels: %w", err)
	}
	fmt.Printf("\nin-process, alternating (median of %d each):\n", runs)
	fmt.Printf("%-52s %12s\n", "strata funnel (query engine + DuckDB store)", ms(pair.strata))
	fmt.Printf("%-52s %12s\n", "plain SQL funnel (CTE joins on distinct_id)", ms(pair.plain))
	fmt.Printf("strata funnel / plain SQL = %.2f in-process, %.2f over HTTP  (target ≤ 0.30, issue 40)\n",
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
				if r.errs[i] == "404 not_found" {
					return "—", "" // a build older than the query's endpoint
				}
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
			fmt.Printf("| %s | %g M | %s | %s | %s | %s | %s |\n", q.name, float64(n)/1e6, t, rss, ot, orss, ratio)
		}
	}
}

// benchExperiment returns the id of the benchmark's experiment on srv's
// product, creating and starting it on a new directory: two arms of the
// flag checkout_test with a holdout, purchase the primary metric, signup
// the secondary one, over the days of the events (so that its results
// cover a fixed range, and two runs' answers can be compared).
func benchExperiment(srv *server, tok string, from, to time.Time) (int64, error) {
	const name = "Checkout test"
	var list struct {
		Items []struct {
			ID   int64
			Name string
		}
	}
	if err := apiCall(srv, tok, "GET", "/api/v1/experiments", nil, &list); err != nil {
		return 0, err
	}
	for _, e := range list.Items {
		if e.Name == name {
			return e.ID, nil
		}
	}
	var e struct{ ID int64 }
	err := apiCall(srv, tok, "POST", "/api/v1/experiments", map[string]any{
		"name": name, "holdout": benchHoldout, "primaryEvent": "purchase", "secondaryEvents": []string{"signup"},
		"startDate": from.Format("2006-01-02"), "endDate": to.Format("2006-01-02"),
		"variants": []map[string]any{{"key": "control", "weight": 50}, {"key": "treatment", "weight": 50}},
	}, &e)
	if err != nil {
		return 0, err
	}
	return e.ID, apiCall(srv, tok, "POST", "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10)+"/start", nil, nil)
}

// directLoad stores events in dataDir's database in process: each batch is
// the body writeBatch makes for POST /e, parsed and enriched by the ingest
// pipeline the server runs (pipelineLoad), and appended to the store in
// commits of loadBatch. What it leaves out of the server's path is HTTP,
// the spool and the deduplication window, which the ingest suite
// measures. The server must not be running. It returns events per second.
func directLoad(dataDir string, events []queryEvent, experimentID int64) (float64, error) {
	ctx := context.Background()
	st, err := duckdb.Open(ctx, dataDir, duckdb.Options{MemoryLimit: config.Default().DuckDBMemoryLimit, Appenders: runtime.NumCPU()})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	failed := pipelineLoad(events, experimentID, st.AppendEvents)
	if err := st.Close(); err != nil && failed == nil {
		failed = err
	}
	if failed != nil {
		return 0, fmt.Errorf("loading in process: %w", failed)
	}
	return float64(len(events)) / time.Since(start).Seconds(), nil
}

// pipelineLoad turns events into the bodies writeBatch makes for POST /e,
// parses and enriches them by the ingest pipeline the server runs (the
// same user-agent parsing, bot detection and sources), and hands them to
// appendEvents in commits of loadBatch, on as many goroutines as there are
// cores. The DuckDB and the ClickHouse loads share it, so both stores hold
// the same events (all but their uuids, which the pipeline draws).
func pipelineLoad(events []queryEvent, experimentID int64, appendEvents func(context.Context, []analytics.Event) error) error {
	ctx := context.Background()
	pipe := &ingest.Pipeline{UA: ua.NewParser(50000, bots.Default())}
	var next atomic.Int64
	errs := make(chan error, runtime.NumCPU())
	for range runtime.NumCPU() {
		go func() {
			errs <- func() error {
				for {
					lo := int(next.Add(loadBatch)) - loadBatch
					if lo >= len(events) {
						return nil
					}
					hi := min(lo+loadBatch, len(events))
					out := make([]analytics.Event, 0, hi-lo)
					for k := lo; k < hi; k += 500 {
						// A new buffer for each batch: the accepted events
						// may point into the body they came from.
						var b bytes.Buffer
						writeBatch(&b, events[k:min(k+500, hi)], experimentID)
						env, err := ingest.ParseEnvelope(b.Bytes())
						if err != nil {
							return err
						}
						accepted, rejected := pipe.Process(env, ingest.Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now()})
						if len(rejected) > 0 {
							return fmt.Errorf("the pipeline rejected an event: %+v", rejected[0])
						}
						for _, p := range accepted {
							out = append(out, p.Event)
						}
						ingest.Release(accepted)
					}
					if err := appendEvents(ctx, out); err != nil {
						return err
					}
				}
			}()
		}()
	}
	var failed error
	for range runtime.NumCPU() {
		if err := <-errs; err != nil && failed == nil {
			failed = err
			next.Store(int64(len(events))) // the others stop at their next batch
		}
	}
	return failed
}

// benchQueries are the queries the benchmark times over the days from to
// to, the experiment's results those of expID. The bots panel must stay
// the eighth: it settles the server before the timing.
func benchQueries(from, to time.Time, expID int64) []benchQuery {
	dates := map[string]any{"dateFrom": from.Format("2006-01-02"), "dateTo": to.Format("2006-01-02")}
	with := func(m map[string]any) map[string]any {
		for k, v := range dates {
			m[k] = v
		}
		return m
	}
	funnel := benchQuery{"3-step funnel (24 h window)", "POST", "/api/v1/query/funnel",
		with(map[string]any{"steps": []string{"$pageview", "button_clicked", "form_submitted"}, "windowHours": 24})}
	return []benchQuery{
		funnel,
		{"daily unique users, 30 days ($pageview, 40%)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "$pageview", "math": "unique_users"}}, "interval": "day"})},
		{"daily unique users, 30 days (button_clicked, 20%)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "button_clicked", "math": "unique_users"}}, "interval": "day"})},
		{"daily unique users, 30 days (search, 10%)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "search", "math": "unique_users"}}, "interval": "day"})},
		{"daily events by browser (top 5 + other)", "POST", "/api/v1/query/trend",
			with(map[string]any{"series": []map[string]any{{"event": "$pageview"}}, "interval": "day", "breakdown": "browser", "breakdownLimit": 5})},
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
		// Every event of the range built into visits by the 30-minute rule
		// (these events carry no $session_id): the Overview's sessions card.
		{"visits, bounce rate, entry/exit pages (sessions)", "POST", "/api/v1/query/sessions",
			with(map[string]any{"interval": "day", "limit": 10})},
		// Every user's first visit of the range as pages, five deep, the
		// top five pages of each step kept (docs/queries.md, "Paths").
		{"paths 5 deep from each user's first page (top 5 + other)", "POST", "/api/v1/query/paths",
			with(map[string]any{"kind": "pageview", "depth": 5, "branches": 5})},
		{"paths 5 deep after /pricing's first view", "POST", "/api/v1/query/paths",
			with(map[string]any{"kind": "pageview", "start": "/pricing", "depth": 5, "branches": 5})},
		// A quarter of the users exposed, a tenth of them held out; the
		// primary metric is purchase, the secondary signup.
		{"experiment results (2 arms, 2 metrics)", "GET", "/api/v1/experiments/" + strconv.FormatInt(expID, 10) + "/results", nil},
		// Issue 40's funnel target: filters on every step and a breakdown
		// by browser against the plain funnel of the same four events
		// (printFunnelDepth gives the ratio).
		{plain4Funnel, "POST", "/api/v1/query/funnel",
			with(map[string]any{"steps": []string{"$pageview", "button_clicked", "form_submitted", "purchase"}, "windowHours": 24})},
		{deep4Funnel, "POST", "/api/v1/query/funnel",
			with(map[string]any{"steps": []any{
				map[string]any{"event": "$pageview", "where": []map[string]any{{"property": "path", "operator": "neq", "value": "/blog/launch"}}},
				map[string]any{"event": "button_clicked", "where": []map[string]any{{"property": "properties.plan", "operator": "is_set"}}},
				map[string]any{"event": "form_submitted", "where": []map[string]any{{"property": "url", "operator": "contains", "value": "shop"}}},
				map[string]any{"event": "purchase", "where": []map[string]any{{"property": "properties.plan", "operator": "neq", "value": "team"}}},
			}, "windowHours": 24, "breakdown": "browser", "breakdownLimit": 5})},
	}
}

// The names of the two funnels printFunnelDepth compares.
const (
	plain4Funnel = "4-step funnel (24 h window)"
	deep4Funnel  = "4-step funnel, a filter on each step, by browser"
)

// printFunnelDepth prints how much the funnel with step filters and a
// breakdown costs over the plain funnel of the same events (issue 40's
// target: at most twice), for each backend timed.
func printFunnelDepth(queries []benchQuery, results []backendResult) {
	plain := slices.IndexFunc(queries, func(q benchQuery) bool { return q.name == plain4Funnel })
	deep := slices.IndexFunc(queries, func(q benchQuery) bool { return q.name == deep4Funnel })
	if plain < 0 || deep < 0 {
		return
	}
	for _, r := range results {
		if r.errs[plain] != "" || r.errs[deep] != "" || r.times[plain] == 0 {
			continue
		}
		fmt.Printf("funnel with step filters and a breakdown / plain 4-step funnel (%s) = %.2f  (target ≤ 2)\n",
			r.name, float64(r.times[deep])/float64(r.times[plain]))
	}
}
