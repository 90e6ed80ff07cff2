package main

import (
	"slices"
	"testing"
)

// TestServeArgsCarryServerArgs checks that -server-args reaches every
// server a suite starts, after the suite's own flags so that it wins: the
// queries suite once started its servers without it, so --duckdb-memory
// could not be tried there.
func TestServeArgsCarryServerArgs(t *testing.T) {
	serverArgs = []string{"--duckdb-memory", "64MB"}
	defer func() { serverArgs = nil }()
	for _, extra := range [][]string{nil, {"--events", "clickhouse://127.0.0.1:9000/b"}, {"--duckdb-memory", "1GB"}} {
		args := serveArgs("/data", extra)
		if i := slices.Index(args, "--duckdb-memory"); i < 0 || args[len(args)-1] != "64MB" || args[len(args)-2] != "--duckdb-memory" {
			t.Errorf("extra %q: %q does not end with -server-args", extra, args)
		}
		if args[0] != "serve" || !slices.Contains(args, "/data") {
			t.Errorf("extra %q: %q", extra, args)
		}
		for _, e := range extra {
			if !slices.Contains(args, e) {
				t.Errorf("extra %q: %q lacks %s", extra, args, e)
			}
		}
	}
}
