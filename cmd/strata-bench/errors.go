package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// The error tracking benchmark of issue 21: ingest of $exception events
// whose stacks point into a minified bundle with a 2 MB sourcemap (uploaded
// first, so every frame is de-minified from the cached map), and the error
// groups list over 10 M events of which 1 M are exceptions, on the
// embedded store, over HTTP.

// runErrorsBench runs both parts.
func runErrorsBench(bin string, nEvents, users, runs int, duration time.Duration, keep bool) error {
	dataDir, cleanup, err := benchDataDir("strata-ebench-", keep)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Printf("# Error tracking benchmark\n\n")
	if err := benchExceptionIngest(bin, dataDir+"-ingest", duration); err != nil {
		return fmt.Errorf("exception ingest: %w", err)
	}
	return benchErrorGroups(bin, dataDir, nEvents, users, runs)
}

// bundle builds, with the browser SDK's esbuild, a bundle of n small
// modules' functions, minified with its sourcemap, and returns the
// minified text and the map.
func bundle(n int) (minified, sourcemap []byte, err error) {
	dir, err := os.MkdirTemp("", "strata-bundle-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "export function handler%d(order: { items: number[] }): number {\n", i)
		fmt.Fprintf(&src, "  const total = order.items.reduce((sum, n) => sum + n * %d, 0);\n", i%7+1)
		fmt.Fprintf(&src, "  if (total > %d) {\n    throw new RangeError(\"marker-%d\");\n  }\n  return total;\n}\n\n", 1000+i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.ts"), []byte(src.String()), 0o644); err != nil {
		return nil, nil, err
	}
	esbuild := filepath.Join("sdk", "browser", "node_modules", ".bin", "esbuild")
	out, err := exec.Command(esbuild, filepath.Join(dir, "app.ts"), "--bundle", "--minify", "--sourcemap", "--format=iife",
		"--global-name=app", "--sources-content=true", "--outfile="+filepath.Join(dir, "app.min.js")).CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("esbuild (run make build first): %w: %s", err, out)
	}
	if minified, err = os.ReadFile(filepath.Join(dir, "app.min.js")); err != nil {
		return nil, nil, err
	}
	sourcemap, err = os.ReadFile(filepath.Join(dir, "app.min.js.map"))
	return minified, sourcemap, err
}

// benchExceptionIngest uploads a 2 MB map and posts batches of $exception
// events, each thrown at one of the bundle's markers, for duration.
func benchExceptionIngest(bin, dataDir string, duration time.Duration) error {
	minified, mapText, err := bundle(5000)
	if err != nil {
		return err
	}
	const appURL = "https://shop.example.com/assets/app.min.js"
	// Where each marker's throw is in the one-line bundle.
	var cols []int
	for _, m := range regexp.MustCompile(`"marker-\d+"`).FindAllIndex(minified, -1) {
		cols = append(cols, m[0]+1)
	}
	fmt.Printf("bundle: %d bytes minified, a %d-byte sourcemap, %d throw sites\n", len(minified), len(mapText), len(cols))

	srv, err := startServer(bin, dataDir)
	if err != nil {
		return err
	}
	defer srv.stop()
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	w.WriteField("release", "2.0.0")
	w.WriteField("url", appURL)
	part, _ := w.CreateFormFile("file", "app.min.js.map")
	part.Write(mapText)
	w.Close()
	req, _ := http.NewRequest("POST", srv.url+"/api/v1/sourcemaps", &form)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+srv.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		return fmt.Errorf("upload: %d %s", resp.StatusCode, body)
	}

	const batch, conns = 100, 8
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns}, Timeout: 30 * time.Second}
	var sent, failed atomic.Int64
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 9))
			var b bytes.Buffer
			for time.Now().Before(deadline) {
				b.Reset()
				b.WriteString(`{"batch":[`)
				for i := range batch {
					if i > 0 {
						b.WriteByte(',')
					}
					col := cols[r.IntN(len(cols))]
					caller := cols[r.IntN(len(cols))]
					stack := fmt.Sprintf("RangeError: marker\n    at h (%s:1:%d)\n    at Array.reduce (<anonymous>)\n    at c (%s:1:%d)", appURL, col, appURL, caller)
					s, _ := json.Marshal(stack)
					fmt.Fprintf(&b, `{"event_name":"$exception","distinct_id":"user_%d","properties":{"$exception_type":"RangeError","$exception_message":"marker","$exception_source":"onerror","$release":"2.0.0","$exception_stack":%s}}`, r.IntN(50000), s)
				}
				b.WriteString("]}")
				if post(client, &server{url: srv.url, key: srv.key}, b.Bytes()) {
					sent.Add(batch)
				} else {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d batches were not accepted", n)
	}
	rate := float64(sent.Load()) / elapsed.Seconds()
	fmt.Printf("\n| measure | target | result |\n|---|---|---|\n")
	fmt.Printf("| $exception ingest, de-minified against a cached %.1f MB map, %d-event batches, %d connections, %s | ≥ 20,000 exceptions/s | %.0f exceptions/s |\n",
		float64(len(mapText))/(1<<20), batch, conns, duration, rate)
	return nil
}

// benchErrorGroups loads nEvents events of users, one in ten an
// $exception of one of 1,000 fingerprints, in process, and times GET
// /api/v1/errors over HTTP.
func benchErrorGroups(bin, dataDir string, nEvents, users, runs int) error {
	ctx := context.Background()
	st, err := openLoader(ctx, dataDir, 0x21)
	if err != nil {
		return err
	}
	loadStart := time.Now()
	r := rand.New(rand.NewPCG(21, 4))
	days := 30
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -days+1)
	span := int64(days) * 24 * int64(time.Hour/time.Microsecond)
	exceptions := 0
	for n := 0; n < nEvents; n++ {
		u := r.IntN(users)
		id := "user_" + strconv.Itoa(u)
		ts := time.UnixMicro(start.UnixMicro() + r.Int64N(span)).UTC()
		ev := analytics.Event{Env: analytics.EnvLive, Timestamp: ts, ReceivedAt: ts, Name: "$pageview", DistinctID: id,
			UserID: ingest.UserID(id), URL: "https://shop.example.com/", Path: "/", Properties: json.RawMessage(`{"plan":"pro"}`)}
		if n%10 == 0 {
			fp := r.IntN(1000)
			fp = fp * fp / 1000 // a few large groups, many small ones
			ev.Name = "$exception"
			ev.Properties = json.RawMessage(fmt.Sprintf(`{"$exception_type":"TypeError","$exception_message":"failed in step %d","$release":"2.0.%d","$exception_fingerprint":"fp%04d"}`,
				r.IntN(9), fp%3, fp))
			exceptions++
		}
		if err := st.add(ctx, ev); err != nil {
			return err
		}
	}
	if err := st.close(ctx); err != nil {
		return err
	}
	fmt.Printf("\nerror groups: %d events of %d users over %d days, %d exceptions, loaded in process in %s\n",
		nEvents, users, days, exceptions, time.Since(loadStart).Round(time.Second))
	srv, tok, err := startWithToken(bin, dataDir)
	if err != nil {
		return err
	}
	defer srv.stop()
	q := benchQuery{"error groups, 30 days, 7-day sparklines (GET /api/v1/errors)", "GET", "/api/v1/errors?dateFrom=" + start.Format(time.DateOnly), nil}
	med, rss, answer, err := timeQuery(srv, tok, q, runs)
	if err != nil {
		return err
	}
	var res struct{ Groups []struct{ Events int64 } }
	json.Unmarshal(answer, &res)
	var total int64
	for _, g := range res.Groups {
		total += g.Events
	}
	fmt.Printf("%d groups listed (the top 100), %d of the exceptions in them\n", len(res.Groups), total)

	// The largest group's page, alone and with 20 groups merged into it
	// (each described with its own events: one query each), and the
	// merge and unmerge themselves, timed once each.
	since := "?dateFrom=" + start.Format(time.DateOnly)
	page := benchQuery{"the largest group's page (GET /api/v1/errors/fp0000)", "GET", "/api/v1/errors/fp0000" + since, nil}
	alone, _, _, err := timeQuery(srv, tok, page, runs)
	if err != nil {
		return err
	}
	var merged []string
	for i := 1; i <= 20; i++ {
		merged = append(merged, fmt.Sprintf("fp%04d", i))
	}
	mergeTime, err := timeOnce(srv, tok, benchQuery{"merge", "POST", "/api/v1/errors/merge" + since, map[string]any{"into": "fp0000", "groups": merged}})
	if err != nil {
		return err
	}
	withMerged, _, answer, err := timeQuery(srv, tok, page, runs)
	if err != nil {
		return err
	}
	var detail struct{ Merged []struct{ Events int64 } }
	json.Unmarshal(answer, &detail)
	unmergeTime, err := timeOnce(srv, tok, benchQuery{"unmerge", "POST", "/api/v1/errors/unmerge", map[string]any{"groups": merged}})
	if err != nil {
		return err
	}

	fmt.Printf("\n| measure | target | result |\n|---|---|---|\n")
	fmt.Printf("| %s over %d M events, %d M exceptions, median of %d over HTTP | ≤ 300 ms | %s (peak RSS %d MB) |\n",
		q.name, nEvents/1_000_000, exceptions/1_000_000, runs, ms(med), rss>>20)
	fmt.Printf("| %s, median of %d | | %s |\n", page.name, runs, ms(alone))
	fmt.Printf("| the same page with %d groups merged into it, each described, median of %d | | %s |\n", len(detail.Merged), runs, ms(withMerged))
	fmt.Printf("| merging those %d groups (POST /api/v1/errors/merge, one request) | | %s |\n", len(merged), ms(mergeTime))
	fmt.Printf("| unmerging them (POST /api/v1/errors/unmerge, one request) | | %s |\n", ms(unmergeTime))
	return nil
}

// timeOnce sends q once, for a write that cannot be repeated, and returns
// how long it took.
func timeOnce(srv *server, token string, q benchQuery) (time.Duration, error) {
	body, _ := json.Marshal(q.body)
	req, _ := http.NewRequest(q.method, srv.url+q.path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	if resp.StatusCode != 200 {
		return 0, fmt.Errorf("%s: %d %s", q.name, resp.StatusCode, out)
	}
	return took, nil
}
