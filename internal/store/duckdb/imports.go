package duckdb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
)

var _ analytics.ImportStore = (*Store)(nil)

// StoredUUIDs reads which of uuids the product's events of [from, to]
// hold. The time range prunes row groups by their zone maps; the uuids
// are bound as one list.
func (s *Store) StoredUUIDs(ctx context.Context, productID int64, from, to time.Time, uuids [][16]byte, fn func([16]byte)) error {
	if len(uuids) == 0 {
		return nil
	}
	list := make([]string, len(uuids))
	for i, u := range uuids {
		list[i] = uuid.UUID(u).String()
	}
	rows, err := s.db.QueryContext(ctx, `SELECT uuid FROM events
		WHERE product_id = $1 AND ts >= $2::TIMESTAMP AND ts <= $3::TIMESTAMP AND uuid IN (SELECT unnest($4::VARCHAR[])::UUID)`,
		productID, from.UTC(), to.UTC(), list)
	if err != nil {
		return fmt.Errorf("reading stored uuids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return fmt.Errorf("reading stored uuids: %w", err)
		}
		if len(b) == 16 {
			fn([16]byte(b))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading stored uuids: %w", err)
	}
	return nil
}
