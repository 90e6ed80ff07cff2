package clickhouse

import (
	"context"
	"fmt"
	"strings"

	"strata/internal/analytics"
)

var _ analytics.PersonCountStore = (*Store)(nil)

// PersonEventCounts counts the events of each of distinctIDs in the
// product, every environment and bots included (the people list's
// column): the product's events with an IN list of the page's ids, bound.
func (s *Store) PersonEventCounts(ctx context.Context, productID int64, distinctIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(distinctIDs) == 0 {
		return out, nil
	}
	args := []any{productID}
	for _, id := range distinctIDs {
		args = append(args, id)
	}
	rows, err := s.conn.Query(ctx, "SELECT distinct_id, count() FROM "+s.table+" WHERE product_id = ? AND distinct_id IN ("+
		strings.TrimSuffix(strings.Repeat("?, ", len(distinctIDs)), ", ")+") GROUP BY distinct_id", args...)
	if err != nil {
		return nil, fmt.Errorf("counting persons' events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n uint64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("counting persons' events: %w", err)
		}
		out[id] = int64(n)
	}
	return out, rows.Err()
}
