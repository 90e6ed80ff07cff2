package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

var _ analytics.RetentionStore = (*Store)(nil)

// mutationPoll is how often DropEventsBefore looks whether its mutation
// is done, and mutationWait how long it waits: a mutation that cannot
// finish (one of another operation that keeps failing leaves the table's
// is_done at 0 too) fails the round instead of holding the job forever.
const (
	mutationPoll = 100 * time.Millisecond
	mutationWait = 10 * time.Minute
)

// DropEventsBefore deletes a product's events before before, or only its
// events named name (docs/privacy.md, "Retention"), by a mutation:
// ALTER TABLE … DELETE WHERE, on each shard's local table on a cluster,
// and waits until every mutation is done (system.mutations), so that the
// events are gone from every answer when it returns.
//
// Not by TTL, which is what a current ClickHouse would use: a table TTL
// arrived in 19.6 and 18.16, the release Debian ships, has none; and one
// TTL for the table cannot differ per product. On a current release the
// form would be a column retain_until, set at insert from the product's
// period, and TTL toDateTime(retain_until) on the table; a change of
// period would then apply to new events only. The mutation rewrites the
// parts that hold matching rows, so a round that has nothing to delete
// (the usual one, when the job runs more often than daily) issues none:
// the rows are counted first, which the sort key (product_id, env, event,
// ts) makes cheap.
func (s *Store) DropEventsBefore(ctx context.Context, productID int64, name string, before time.Time) (int64, error) {
	var cond builder
	cond.Write("product_id = ", cond.arg(productID), " AND ts < ", cond.arg(before.UnixMicro()))
	if name != "" {
		cond.Write(" AND event = ", cond.arg(name))
	}
	var count builder
	count.Write("SELECT count() FROM ", s.table, " WHERE ", cond.SQL())
	text, _ := s.statement(&count)
	var n uint64
	if err := s.conn.QueryRow(ctx, text, cond.Args()...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting events to drop: %w", err)
	}
	if n == 0 {
		return 0, nil
	}
	if s.cluster == "" {
		if err := mutate(ctx, s.conn, s.db, "events", cond.SQL(), cond.Args()); err != nil {
			return 0, err
		}
		return int64(n), nil
	}
	shards, err := s.shards(ctx)
	if err != nil {
		return 0, err
	}
	for _, addr := range shards {
		o := *s.opts
		o.Addr = []string{addr}
		conn, err := clickhouse.Open(&o)
		if err != nil {
			return 0, fmt.Errorf("connecting to shard %s: %w", addr, err)
		}
		err = mutate(ctx, conn, s.db, "events_local", cond.SQL(), cond.Args())
		conn.Close()
		if err != nil {
			return 0, fmt.Errorf("shard %s: %w", addr, err)
		}
	}
	return int64(n), nil
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
