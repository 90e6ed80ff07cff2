// Command openapi-proxy stands in front of the strata servers of one Node
// end-to-end run (e2e/browser/harness.mjs starts one per run) and checks
// every response it passes on against api/openapi.yaml, with the checker
// the Go suite uses (e2e/openapicheck).
//
//	openapi-proxy --spec api/openapi.yaml --violations FILE
//
// It reads commands on standard input, one a line, and answers each on
// standard output:
//
//	proxy http://127.0.0.1:PORT  →  listening http://127.0.0.1:PORT http://ADDR
//	stop http://127.0.0.1:PORT   →  stopped http://127.0.0.1:PORT SUMMARY
//
// "proxy" opens a free loopback port in front of the server at PORT;
// "stop" closes it once the requests under way finished, so that clients
// find nothing listening, as when the server itself stops. SUMMARY says how
// many responses were checked (and of them, how many from operations of the
// document and how many JSON bodies against a schema), the violations and
// the responses not checked. One process serves every server of a run, so
// that the document is loaded and its schemas compiled once. Each response
// the document does not allow is appended to FILE as one JSON line (method,
// path, status, error). At the end of its input, or on SIGTERM or SIGINT, it
// stops what is still open, answering for each as for "stop", prints the
// CPU time it used, and exits 0.
package main

import (
	"bufio"
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
	"strings"
	"sync"
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

// front is one listener and the proxy behind it.
type front struct {
	proxy      *openapicheck.Proxy
	srv        *http.Server
	violations int64 // under the run's mutex
}

func run() error {
	spec := flag.String("spec", "api/openapi.yaml", "the OpenAPI document to check responses against")
	out := flag.String("violations", "", "the file each response the document does not allow is appended to, one JSON line each")
	flag.Parse()
	if *out == "" {
		return errors.New("--violations is required")
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
		mu     sync.Mutex // guards fronts, each front's violations and f
		fronts = map[string]*front{}
	)
	open := func(target string) (string, error) {
		u, err := url.Parse(target)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return "", fmt.Errorf("%q is not an http://host:port address", target)
		}
		fr := &front{}
		fr.proxy = openapicheck.NewProxy(u, checker, func(v openapicheck.Violation) {
			line, _ := json.Marshal(v)
			mu.Lock()
			defer mu.Unlock()
			fr.violations++
			// One write a line, so that a line is never split.
			if _, err := f.Write(append(line, '\n')); err != nil {
				fmt.Fprintln(os.Stderr, "openapi-proxy: writing a violation:", err)
			}
		})
		// Loopback only: the proxy carries the suite's credentials.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		fr.srv = &http.Server{Handler: fr.proxy, ReadHeaderTimeout: 30 * time.Second}
		go fr.srv.Serve(ln)
		mu.Lock()
		fronts[target] = fr
		mu.Unlock()
		return "http://" + ln.Addr().String(), nil
	}
	stop := func(target string) (string, error) {
		mu.Lock()
		fr := fronts[target]
		delete(fronts, target)
		mu.Unlock()
		if fr == nil {
			return "", fmt.Errorf("no proxy in front of %s", target)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := fr.srv.Shutdown(ctx); err != nil {
			// Streams still open after the wait (a browser holding a
			// connection) are cut: their responses were passed on already.
			fr.srv.Close()
		}
		n := fr.proxy.Counts()
		mu.Lock()
		v := fr.violations
		mu.Unlock()
		return fmt.Sprintf("checked %d responses (%d from operations of the document, %d JSON bodies against their schema), %d violations, %d not checked",
			n.Checked, n.Described, n.Schema, v, n.Unchecked), nil
	}

	// Answers are written whole under their own lock, so that a "stop"
	// answered while another command runs never interleaves.
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	input := make(chan struct{})
	go func() {
		defer close(input)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			cmd, target, _ := strings.Cut(strings.TrimSpace(sc.Text()), " ")
			switch cmd {
			case "proxy":
				addr, err := open(target)
				if err != nil {
					say("error %s %v", target, err)
					continue
				}
				say("listening %s %s", target, addr)
			case "stop":
				summary, err := stop(target)
				if err != nil {
					say("error %s %v", target, err)
					continue
				}
				say("stopped %s %s", target, summary)
			case "":
			default:
				say("error %s unknown command %q", target, cmd)
			}
		}
	}()
	say("ready")

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-input:
	}
	mu.Lock()
	var openTargets []string
	for target := range fronts {
		openTargets = append(openTargets, target)
	}
	mu.Unlock()
	for _, target := range openTargets {
		if summary, err := stop(target); err == nil {
			say("stopped %s %s", target, summary)
		}
	}
	// The CPU the proxy used, so that what it adds to a run is measured.
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	say("cpu %v", time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Round(time.Millisecond))
	return nil
}
