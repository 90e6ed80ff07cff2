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

// TestQuerySizes checks how -query-events and -query-users are read: one
// user per 20 events unless given, a count for each size at most.
func TestQuerySizes(t *testing.T) {
	sizes, users, err := querySizes("10000000,50000000", "")
	if err != nil || !slices.Equal(sizes, []int{10_000_000, 50_000_000}) || !slices.Equal(users, []int{500_000, 2_500_000}) {
		t.Errorf("defaults: %v %v %v", sizes, users, err)
	}
	sizes, users, err = querySizes("1000000, 2000000", "7000")
	if err != nil || !slices.Equal(sizes, []int{1_000_000, 2_000_000}) || !slices.Equal(users, []int{7000, 100_000}) {
		t.Errorf("one count given: %v %v %v", sizes, users, err)
	}
	for _, bad := range [][2]string{{"", ""}, {"10M", ""}, {"100", "1,2"}, {"100", "x"}, {"-5", ""}} {
		if _, _, err := querySizes(bad[0], bad[1]); err == nil {
			t.Errorf("%q %q: no error", bad[0], bad[1])
		}
	}
}
