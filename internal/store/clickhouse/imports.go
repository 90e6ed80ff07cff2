package clickhouse

import (
	"context"
	"fmt"
	"time"

	"strata/internal/analytics"
)

var _ analytics.ImportStore = (*Store)(nil)

// StoredUUIDs reads which of uuids the product's events of [from, to]
// hold. The time range is in the table's sort key after the event name,
// so it prunes by the primary index only with the name; it still skips
// the partitions (months) outside it.
func (s *Store) StoredUUIDs(ctx context.Context, productID int64, from, to time.Time, uuids [][16]byte, fn func([16]byte)) error {
	if len(uuids) == 0 {
		return nil
	}
	list := make([]string, len(uuids))
	for i, u := range uuids {
		list[i] = string(u[:])
	}
	rows, err := s.conn.Query(ctx, "SELECT uuid FROM "+s.table+
		" WHERE product_id = ? AND ts >= ? AND ts <= ? AND uuid IN (?)", productID, from.UnixMicro(), to.UnixMicro(), list)
	if err != nil {
		return fmt.Errorf("reading stored uuids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return fmt.Errorf("reading stored uuids: %w", err)
		}
		if len(u) == 16 {
			fn([16]byte([]byte(u)))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading stored uuids: %w", err)
	}
	return nil
}
