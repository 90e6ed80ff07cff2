package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

var _ analytics.RetentionStore = (*Store)(nil)

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
	err := s.onEveryShard(ctx, func(conn driver.Conn, table string) error {
		return mutate(ctx, conn, s.db, table, cond.SQL(), cond.Args())
	})
	if err != nil {
		return 0, err
	}
	return int64(n), nil
}
