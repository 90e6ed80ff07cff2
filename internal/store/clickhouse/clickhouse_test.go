package clickhouse

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	chtest.StopAll()
	os.Exit(code)
}

var databases atomic.Int64

// fresh names a database no other test uses.
func fresh() string { return fmt.Sprintf("strata_test_%d", databases.Add(1)) }

func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the event half of the suite on one real server.
func TestConformance(t *testing.T) {
	srv := chtest.Shared(t)
	storetest.RunEvents(t, func(t *testing.T) storetest.Events {
		return open(t, srv.URL(fresh(), ""))
	})
}

// TestClusterConformance runs the same suite on a Distributed table over
// two shards, each its own clickhouse-server process: the answers must be
// those of one server, which the suite checks against its reference.
func TestClusterConformance(t *testing.T) {
	shards := chtest.Cluster(t, 2)
	storetest.RunEvents(t, func(t *testing.T) storetest.Events {
		return open(t, shards[0].URL(fresh(), "cluster=strata"))
	})
}

func TestOpenRejectsBadURLs(t *testing.T) {
	for _, u := range []string{
		"postgres://127.0.0.1:9000/x",
		"clickhouse://127.0.0.1:9000/bad-name",
		"clickhouse://127.0.0.1:9000/db?cluster=a;b",
	} {
		if _, err := Open(context.Background(), u); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		}
	}
}

func TestFlatten(t *testing.T) {
	keys, values, err := flatten([]byte(`{"s":"a\"b","n":1.50,"b":true,"z":null,"o":{"x":[1,2]},"e":""}`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for i, k := range keys {
		got[k] = values[i]
	}
	want := map[string]string{"s": `a"b`, "n": "1.50", "b": "true", "o": `{"x":[1,2]}`, "e": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("flatten = %v, want %v", got, want)
	}
}
