package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"

	"strata/internal/analytics"
	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/migrate"
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

// TestClusterConformance runs the event suite on the two-shard cluster,
// with half of each random-data case's datasets: TestConformance holds the
// same statements to the reference on all of them on one server, and the
// cluster's differences (Distributed tables, GLOBAL IN) show on any.
func TestClusterConformance(t *testing.T) {
	shards := chtest.Cluster(t, 2)
	storetest.RunEventsShare(t, func(t *testing.T) storetest.Events {
		return open(t, shards[0].URL(fresh(), "cluster=strata"))
	}, 0.5)
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

// TestOutOfMemoryIsMarked checks on a real server that ClickHouse's
// MEMORY_LIMIT_EXCEEDED reaches the engine as analytics.ErrOutOfMemory
// (which it answers with 503 query_too_large). A per-query
// max_memory_usage far below what any query needs stands in for a server
// short of memory.
func TestOutOfMemoryIsMarked(t *testing.T) {
	srv := chtest.Shared(t)
	s := open(t, srv.URL(fresh(), ""))
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	var events []analytics.Event
	for i := range 20_000 {
		at := start.Add(time.Duration(i) * time.Minute)
		events = append(events, analytics.Event{UUID: uuid.New(), ProductID: 1, Env: analytics.EnvLive,
			Timestamp: at, ReceivedAt: at, Name: []string{"a", "b"}[i%2], DistinctID: fmt.Sprint("user_", i%500),
			Properties: []byte("{}")})
	}
	ctx := context.Background()
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	q := analytics.FunnelQuery{EventRange: analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: start, To: start.AddDate(0, 1, 0)},
		Steps: []string{"a", "b"}, Window: 24 * time.Hour}
	if _, err := s.Funnel(ctx, q); err != nil {
		t.Fatalf("funnel without a limit: %v", err)
	}
	limited := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_memory_usage": 1000}))
	_, err := s.Funnel(limited, q)
	if !errors.Is(err, analytics.ErrOutOfMemory) {
		t.Errorf("funnel over max_memory_usage: %v; want it to wrap analytics.ErrOutOfMemory", err)
	}
	_, err = s.Trend(limited, analytics.TrendQuery{EventRange: q.EventRange, Interval: analytics.Day,
		Series: []analytics.TrendSeries{{Event: "a", UniqueUsers: true}}})
	if !errors.Is(err, analytics.ErrOutOfMemory) {
		t.Errorf("trend over max_memory_usage: %v; want it to wrap analytics.ErrOutOfMemory", err)
	}
	// Another server error (an unknown setting) is not marked.
	_, err = s.Funnel(clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"strata_no_such_setting": 1})), q)
	if err == nil || errors.Is(err, analytics.ErrOutOfMemory) {
		t.Errorf("another error marked as out of memory: %v", err)
	}
}

// TestGeneratedSQL holds the SQL this store generates for each kind of
// query to testdata/sql (storetest.GoldenSQL; -update rewrites it). The
// database has a fixed name, since it is part of the text.
func TestGeneratedSQL(t *testing.T) {
	s := open(t, chtest.Shared(t).URL("strata_golden", ""))
	var trace []storetest.Statement
	s.traceSQL = func(sql string, args []any) { trace = append(trace, storetest.Statement{SQL: sql, Args: args}) }
	storetest.GoldenSQL(t, s, &trace)
}

// TestMigrations checks that the DDL files adopt a database created before
// they were recorded (its events kept), are recorded once however often a
// node starts, and that a schema newer than the binary is refused.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	srv := chtest.Shared(t)
	db := fresh()
	// The tables as the store created them before its DDL moved into
	// migration files: the same statements, with nothing recorded.
	first := open(t, srv.URL(db, ""))
	if err := first.conn.Exec(ctx, "DROP TABLE `"+db+"`.schema_migrations"); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	if err := first.AppendEvents(ctx, []analytics.Event{{ProductID: 1, Env: analytics.EnvLive, Timestamp: day,
		ReceivedAt: day, Name: "kept", DistinctID: "u", Properties: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	recorded := func(s *Store) (n uint64) {
		t.Helper()
		if err := s.conn.QueryRow(ctx, "SELECT count() FROM `"+db+"`.schema_migrations").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	files, err := migrate.Load(migrationFS, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s := open(t, srv.URL(db, ""))
		if n := recorded(s); n != uint64(len(files)) || n < 4 {
			t.Errorf("%d migrations recorded, want one for each of the %d files", n, len(files))
		}
		names, err := s.EventNames(ctx, analytics.EventNamesQuery{Limit: 10,
			EventRange: analytics.EventRange{ProductID: 1, Env: analytics.EnvLive, From: day, To: day.AddDate(0, 0, 1)}})
		if err != nil || len(names) != 1 || names[0].Name != "kept" {
			t.Errorf("the adopted table's events: %v, %v", names, err)
		}
	}

	s := open(t, srv.URL(db, ""))
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO `"+db+"`.schema_migrations (version, name, target, applied_at)")
	if err != nil {
		t.Fatal(err)
	}
	if err := batch.Append(uint32(9999), "9999_future.sql", "events", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, srv.URL(db, "")); err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Errorf("a newer schema opened: %v", err)
	}
}
