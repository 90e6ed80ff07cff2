package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-analytics/strata/sdk/go/strata"
)

// The Go middleware benchmark of issue 23: what sdk/go/strata's
// middleware adds to a request, for a human (the classification only) and
// for an AI bot (the classification and queueing the event), in process
// (testing.Benchmark, the handler alone) and over HTTP (wrk against a
// net/http server with and without the middleware, alternating). The bots'
// events go to a real server.

const (
	benchHumanUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
	benchBotUA   = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
)

func runMiddlewareBench(bin string, keep bool) error {
	dataDir, cleanup, err := benchDataDir("strata-mwbench-", keep)
	if err != nil {
		return err
	}
	defer cleanup()
	srv, err := startServer(bin, dataDir)
	if err != nil {
		return err
	}
	defer srv.stop()
	client := strata.New(strata.Options{APIKey: srv.key, Host: srv.url, MaxQueue: 100_000})
	defer client.Close(context.Background())
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<h1>Pricing</h1>") })
	wrapped := client.Middleware(page)

	fmt.Printf("# Go middleware benchmark (sdk/go/strata)\n\n")
	perCall := func(h http.Handler, ua string) float64 {
		r := httptest.NewRequest("GET", "http://shop.example/pricing?plan=pro", nil)
		r.Header.Set("User-Agent", ua)
		res := testing.Benchmark(func(b *testing.B) {
			w := httptest.NewRecorder()
			for b.Loop() {
				w.Body.Reset()
				h.ServeHTTP(w, r)
			}
		})
		return float64(res.NsPerOp())
	}
	bare, human, bot := perCall(page, benchHumanUA), perCall(wrapped, benchHumanUA), perCall(wrapped, benchBotUA)
	fmt.Printf("| in process, one request through the handler | bare | with the middleware | added |\n|---|---|---|---|\n")
	fmt.Printf("| a browser | %.0f ns | %.0f ns | %.2f µs |\n", bare, human, (human-bare)/1000)
	fmt.Printf("| GPTBot (the event queued) | %.0f ns | %.0f ns | %.2f µs |\n\n", bare, bot, (bot-bare)/1000)

	// Over HTTP: the same page served with and without the middleware,
	// alternating, each with wrk -c16 for 5 s.
	serve := func(h http.Handler) (string, func(), error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		s := &http.Server{Handler: h}
		go s.Serve(ln)
		return "http://" + ln.Addr().String() + "/pricing", func() { s.Close() }, nil
	}
	fmt.Printf("| over HTTP, wrk -c16 5 s, round | bare: requests/s (p99) | browser through the middleware | GPTBot through the middleware |\n|---|---|---|---|\n")
	setups := []struct {
		h  http.Handler
		ua string
	}{{page, benchHumanUA}, {wrapped, benchHumanUA}, {wrapped, benchBotUA}}
	for round := 1; round <= 3; round++ {
		// Each round starts with another setup, so that none is always
		// measured first (the first of a round ran slower in trials).
		cells := make([]string, len(setups))
		for k := range setups {
			i := (k + round - 1) % len(setups)
			url, stop, err := serve(setups[i].h)
			if err != nil {
				return err
			}
			rps, p99, err := runWrk(16, 5*time.Second, "-H", "User-Agent: "+setups[i].ua, url)
			stop()
			if err != nil {
				return err
			}
			cells[i] = fmt.Sprintf("%.0f (%.2f ms)", rps, p99)
		}
		fmt.Printf("| %d | %s | %s | %s |\n", round, cells[0], cells[1], cells[2])
	}
	fmt.Printf("\nbot events: %d sent, %d dropped (queue of 100,000), %d given up\n", client.Sent(), client.Dropped(), client.Failed())
	return nil
}
