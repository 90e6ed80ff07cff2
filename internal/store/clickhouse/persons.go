package clickhouse

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/analytics"
)

// Deleting a person's events (docs/privacy.md, "ClickHouse"): by a
// mutation, ALTER TABLE … DELETE WHERE, which ClickHouse 18.16 has. A
// mutation rewrites, in the background, every part that holds a matching
// row, so its cost grows with the parts' size, not with the rows deleted:
// batching ids into one mutation (up to analytics.MaxPersonDeletionIDs) is
// far cheaper than one mutation a person. On a cluster the Distributed
// table takes no ALTER, and ON CLUSTER needs ZooKeeper, so the mutation
// runs on every shard's events_local through a connection of its own, as
// the migrations do. The deletion is complete when system.mutations says
// so on every shard (mutate); until then a query may still see
// the rows.

var _ analytics.PersonEventStore = (*Store)(nil)

// DeletePersons deletes the product's events of distinctIDs by a mutation
// on every shard and waits until it is done. It returns how many events
// matched before the mutation.
func (s *Store) DeletePersons(ctx context.Context, productID int64, distinctIDs []string) (int64, error) {
	if len(distinctIDs) == 0 {
		return 0, nil
	}
	// The ids as a tuple, distinct_id IN ('a', 'b', …): a set lookup per
	// row, where has([…], distinct_id) compared each row with every id
	// (5 times slower for 100 ids over 10 M events).
	set := make([]any, len(distinctIDs))
	for i, id := range distinctIDs {
		set[i] = id
	}
	ids := clickhouse.GroupSet{Value: set}
	var n uint64
	if err := s.conn.QueryRow(ctx, "SELECT count() FROM "+s.table+" WHERE product_id = ? AND distinct_id IN ?",
		productID, ids).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting a person's events: %w", err)
	}
	if n == 0 {
		return 0, nil // no mutation: it would rewrite parts for nothing
	}
	err := s.onEveryShard(ctx, func(conn driver.Conn, table string) error {
		return mutate(ctx, conn, s.db, table, "product_id = ? AND distinct_id IN ?", []any{productID, ids})
	})
	if err != nil {
		return 0, fmt.Errorf("deleting persons: %w", err)
	}
	return int64(n), nil
}

// PersonEvents streams a person's events, oldest first.
func (s *Store) PersonEvents(ctx context.Context, productID int64, distinctID string, fn func(analytics.ExportedEvent) error) error {
	rows, err := s.conn.Query(ctx, "SELECT uuid, env, ts, received_at, event, distinct_id, url, referrer, user_agent, browser, os, device_type, country, region, city, properties FROM "+
		s.table+" WHERE product_id = ? AND distinct_id = ? ORDER BY ts, uuid", productID, distinctID)
	if err != nil {
		return fmt.Errorf("exporting events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e analytics.ExportedEvent
		var u, props string
		var ts, received int64
		if err := rows.Scan(&u, &e.Env, &ts, &received, &e.Event, &e.DistinctID, &e.URL, &e.Referrer, &e.UserAgent,
			&e.Browser, &e.OS, &e.DeviceType, &e.Country, &e.Region, &e.City, &props); err != nil {
			return fmt.Errorf("exporting events: %w", err)
		}
		e.UUID = formatUUID([]byte(u))
		e.Timestamp, e.ReceivedAt = time.UnixMicro(ts).UTC(), time.UnixMicro(received).UTC()
		e.Properties = []byte(props)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("exporting events: %w", err)
	}
	return nil
}

// formatUUID writes a 16-byte uuid in its usual text form.
func formatUUID(b []byte) string {
	if len(b) != 16 {
		return hex.EncodeToString(b)
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

var _ analytics.PersonHistoryStore = (*Store)(nil)

// EachPersonSeen streams each distinct id of the product's events with its
// first and last event's time; ClickHouse holds the aggregation.
func (s *Store) EachPersonSeen(ctx context.Context, productID int64, fn func(distinctID string, first, last time.Time) error) error {
	rows, err := s.conn.Query(ctx, "SELECT distinct_id, min(ts), max(ts) FROM "+s.table+
		" WHERE product_id = ? AND distinct_id != '' GROUP BY distinct_id", productID)
	if err != nil {
		return fmt.Errorf("reading persons' first and last events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var first, last int64
		if err := rows.Scan(&id, &first, &last); err != nil {
			return fmt.Errorf("reading persons' first and last events: %w", err)
		}
		if err := fn(id, time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading persons' first and last events: %w", err)
	}
	return nil
}

// EachTraitEvent streams the product's $identify events and those whose
// properties hold "$set, oldest first.
func (s *Store) EachTraitEvent(ctx context.Context, productID int64, fn func(analytics.Event) error) error {
	rows, err := s.conn.Query(ctx, "SELECT ts, event, distinct_id, properties FROM "+s.table+
		" WHERE product_id = ? AND distinct_id != '' AND (event = '$identify' OR position(properties, '\"$set') > 0)"+
		" ORDER BY ts, uuid", productID)
	if err != nil {
		return fmt.Errorf("reading events that set person properties: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e := analytics.Event{ProductID: productID}
		var ts int64
		var props string
		if err := rows.Scan(&ts, &e.Name, &e.DistinctID, &props); err != nil {
			return fmt.Errorf("reading events that set person properties: %w", err)
		}
		e.Timestamp, e.Properties = time.UnixMicro(ts).UTC(), []byte(props)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading events that set person properties: %w", err)
	}
	return nil
}
