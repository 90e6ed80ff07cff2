package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Deleting rows: retention (retention.go) and deleting persons
// (persons.go) both delete by a mutation, ALTER TABLE … DELETE WHERE,
// which ClickHouse 18.16 has, on the table that holds the rows.

// mutationPoll is how often mutate looks whether its mutation is done,
// and mutationWait how long it waits: a mutation that cannot finish (one
// of another operation that keeps failing leaves the table's is_done at 0
// too) fails the caller instead of holding it forever.
const (
	mutationPoll = 100 * time.Millisecond
	mutationWait = 10 * time.Minute
)

// onEveryShard runs fn on the table that holds the rows: events on a
// single server, events_local on each shard of a cluster, through a
// connection of its own (the Distributed table takes no ALTER, and ON
// CLUSTER needs ZooKeeper), as the migrations do.
func (s *Store) onEveryShard(ctx context.Context, fn func(conn driver.Conn, table string) error) error {
	if s.cluster == "" {
		return fn(s.conn, "events")
	}
	shards, err := s.shards(ctx)
	if err != nil {
		return err
	}
	for _, addr := range shards {
		o := *s.opts
		o.Addr = []string{addr}
		conn, err := clickhouse.Open(&o)
		if err != nil {
			return fmt.Errorf("connecting to shard %s: %w", addr, err)
		}
		err = fn(conn, "events_local")
		conn.Close()
		if err != nil {
			return fmt.Errorf("on shard %s: %w", addr, err)
		}
	}
	return nil
}

// mutate deletes the rows of db.table that cond selects and waits until
// the server has applied every mutation of the table; cond is SQL with
// placeholders for args. ClickHouse 18.16
// has no mutations_sync setting (19.x), hence the polling.
func mutate(ctx context.Context, conn driver.Conn, db, table, cond string, args []any) error {
	// The names are the URL's validated identifiers and constants; the
	// values are bound by the driver.
	text := "ALTER TABLE `" + db + "`." + table + " DELETE WHERE " + cond
	if err := conn.Exec(ctx, text, args...); err != nil {
		return fmt.Errorf("deleting from %s: %w", table, err)
	}
	tick := time.NewTicker(mutationPoll)
	defer tick.Stop()
	deadline := time.Now().Add(mutationWait)
	for {
		var pending uint64
		err := conn.QueryRow(ctx, `SELECT count() FROM system.mutations WHERE database = ? AND table = ? AND is_done = 0`,
			db, table).Scan(&pending)
		if err != nil {
			return fmt.Errorf("waiting for the deletion from %s: %w", table, err)
		}
		if pending == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the deletion from %s is not done after %v: see system.mutations (latest_fail_reason) on the server", table, mutationWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// shards lists the addresses of the cluster's shards, from the server's
// remote_servers: each holds an events_local that the migrations create and
// a mutation must reach.
func (s *Store) shards(ctx context.Context) ([]string, error) {
	var b builder
	b.Write("SELECT DISTINCT host_address, port FROM system.clusters WHERE cluster = ", b.arg(s.cluster))
	shards, err := queryAll(ctx, s, "reading cluster "+s.cluster, &b, func(rows driver.Rows) (string, error) {
		var host string
		var port uint16
		err := rows.Scan(&host, &port)
		return fmt.Sprintf("%s:%d", host, port), err
	})
	if err == nil && len(shards) == 0 {
		err = fmt.Errorf("cluster %q is not in the ClickHouse server's remote_servers", s.cluster)
	}
	return shards, err
}
