package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/store/clickhouse"
	"strata/internal/store/duckdb"
)

// The forget suite (issue 39, docs/privacy.md): the time to delete one
// person, and 100 at once, from 10 M events, on the embedded store (a
// data directory of events, -forget-data, which the suite changes: give
// it a copy) and on ClickHouse 18.16 (a local clickhouse-server, its
// events generated in the server by INSERT … SELECT and merged, as the
// queries suite's are, before the mutation runs).

// runForgetBench runs both halves; an empty dataDir skips the embedded
// one, chEvents 0 the ClickHouse one.
func runForgetBench(dataDir string, chEvents int) error {
	if dataDir != "" {
		if err := forgetDuckDB(dataDir); err != nil {
			return fmt.Errorf("embedded: %w", err)
		}
	}
	if chEvents > 0 {
		if err := forgetClickHouse(chEvents); err != nil {
			return fmt.Errorf("clickhouse: %w", err)
		}
	}
	return nil
}

// loadAverage is the first field of /proc/loadavg, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func forgetDuckDB(dir string) error {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, dir, duckdb.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	var total int64
	if err := s.DB().QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&total); err != nil {
		return err
	}
	// 101 persons in an order unrelated to their activity: the first
	// alone, the other 100 at once.
	rows, err := s.DB().QueryContext(ctx, `SELECT product_id, distinct_id FROM users ORDER BY hash(distinct_id) LIMIT 101`)
	if err != nil {
		return err
	}
	var product int64
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&product, &id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) < 101 {
		return fmt.Errorf("only %d persons in %s", len(ids), dir)
	}
	// The first call reads the dense ids into memory, as a server's first
	// query or append does; not part of a deletion's time.
	if _, err := s.DeletePersons(ctx, product, []string{"strata-bench: nobody"}); err != nil {
		return err
	}
	for _, batch := range [][]string{ids[:1], ids[1:]} {
		load := loadAverage()
		start := time.Now()
		n, err := s.DeletePersons(ctx, product, batch)
		took := time.Since(start)
		if err != nil {
			return err
		}
		cp := time.Now()
		if _, err := s.DB().ExecContext(ctx, "CHECKPOINT"); err != nil {
			return err
		}
		fmt.Printf("forget, embedded DuckDB, %d events: %d person(s), %d events deleted in %v (then CHECKPOINT %v), load average %s\n",
			total, len(batch), n, took.Round(time.Millisecond), time.Since(cp).Round(time.Millisecond), load)
	}
	return nil
}

func forgetClickHouse(events int) error {
	ctx := clickHouseContext()
	run, err := startClickHouse()
	if err != nil {
		return err
	}
	defer run.stop()
	const db = "strata_forget"
	st, err := clickhouse.Open(ctx, run.server.URL(db, ""))
	if err != nil {
		return err
	}
	defer st.Close()
	conn, err := run.conn()
	if err != nil {
		return err
	}
	defer conn.Close()
	// 200,000 users over 30 days, one product: about 50 events a user.
	start := time.Now()
	from := time.Now().Add(-30 * 24 * time.Hour).UnixMicro()
	step := int64(30*24*time.Hour/time.Microsecond) / int64(events)
	err = conn.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.events (uuid, product_id, env, ts, received_at, event, distinct_id, user_id, url, path, properties)
		SELECT toFixedString(concat(reinterpretAsString(cityHash64(number)), reinterpretAsString(cityHash64(number, 1))), 16),
		       1, 'live', %d + number * %d, %d + number * %d, if(number %% 5 = 0, 'signup', '$pageview'),
		       concat('u', toString(cityHash64(number, 2) %% 200000)), cityHash64(concat('u', toString(cityHash64(number, 2) %% 200000))),
		       'https://shop.example/p', '/p', '{}'
		FROM system.numbers LIMIT %d`, db, from, step, from, step, events))
	if err != nil {
		return fmt.Errorf("generating events: %w", err)
	}
	if err := mergePartitions(ctx, conn, db); err != nil {
		return err
	}
	fmt.Printf("forget, ClickHouse: %d events generated and merged in %v\n", events, time.Since(start).Round(time.Millisecond))
	var ids []string
	for i := range 101 {
		ids = append(ids, fmt.Sprintf("u%d", 1000+i*37))
	}
	for _, batch := range [][]string{ids[:1], ids[1:]} {
		load := loadAverage()
		start := time.Now()
		n, err := st.DeletePersons(ctx, 1, batch)
		if err != nil {
			return err
		}
		fmt.Printf("forget, ClickHouse 18.16, %d events: %d person(s), %d events deleted in %v (mutation done), load average %s\n",
			events, len(batch), n, time.Since(start).Round(time.Millisecond), load)
	}
	return nil
}

// mergePartitions merges each partition of db.events into one part, as
// clickHouseRun.merge does for the queries suite's database.
func mergePartitions(ctx context.Context, conn driver.Conn, db string) error {
	rows, err := conn.Query(ctx, "SELECT DISTINCT partition FROM system.parts WHERE database = ? AND table = 'events' AND active", db)
	if err != nil {
		return err
	}
	var partitions []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return err
		}
		partitions = append(partitions, p)
	}
	rows.Close()
	for _, p := range partitions {
		if _, err := strconv.Atoi(p); err != nil {
			return fmt.Errorf("unexpected partition %q", p)
		}
		if err := conn.Exec(ctx, "OPTIMIZE TABLE "+db+".events PARTITION "+p+" FINAL"); err != nil {
			return fmt.Errorf("merging partition %s: %w", p, err)
		}
	}
	return nil
}
