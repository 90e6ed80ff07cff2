// Command openapi-proxy stands in front of one strata server for the Node
// end-to-end suites (e2e/browser/harness.mjs starts one per server) and
// checks every response it passes on against api/openapi.yaml, with the
// checker the Go suite uses (e2e/openapicheck).
//
//	openapi-proxy --target http://127.0.0.1:PORT --spec api/openapi.yaml --violations FILE
//
// It listens on a free loopback port and prints "listening http://ADDR" on
// standard output once it does. Each response the document does not allow
// is appended to FILE as one JSON line (method, path, status, error), so
// that the suite can fail listing them. On SIGTERM or SIGINT it lets the
// requests under way finish, prints how many responses it checked (and of
// them, how many from operations of the document and how many JSON bodies
// against a schema), the violations, the responses not checked and the CPU
// time it used, and exits 0.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"strata/e2e/openapicheck"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "openapi-proxy:", err)
		os.Exit(1)
	}
}

func run() error {
	target := flag.String("target", "", "the strata server to pass requests to, e.g. http://127.0.0.1:8080")
	spec := flag.String("spec", "api/openapi.yaml", "the OpenAPI document to check responses against")
	out := flag.String("violations", "", "the file each response the document does not allow is appended to, one JSON line each")
	flag.Parse()
	if *target == "" || *out == "" {
		return errors.New("--target and --violations are required")
	}
	u, err := url.Parse(*target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("--target %q is not an http://host:port address", *target)
	}
	checker, err := openapicheck.Load(*spec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(*out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()

	var (
		mu         sync.Mutex
		violations atomic.Int64
	)
	report := func(v openapicheck.Violation) {
		line, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		violations.Add(1)
		// One write a line, so that a line is never split even when the
		// suite reads the file while the proxy still runs.
		if _, err := f.Write(append(line, '\n')); err != nil {
			fmt.Fprintln(os.Stderr, "openapi-proxy: writing a violation:", err)
		}
	}
	proxy := openapicheck.NewProxy(u, checker, report)

	// Loopback only: the proxy carries the suite's credentials.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("listening http://%s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		// Streams still open after the wait (a browser holding a
		// connection) are cut: their responses were passed on already.
		srv.Close()
	}
	n := proxy.Counts()
	// The CPU the proxy used, so that what it adds to a suite is measured.
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Printf("checked %d responses (%d from operations of the document, %d JSON bodies against their schema), %d violations, %d not checked, %v CPU\n",
		n.Checked, n.Described, n.Schema, violations.Load(), n.Unchecked, cpu.Round(time.Millisecond))
	return nil
}
