package duckdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"strata/internal/analytics"
)

var _ analytics.PersonCountStore = (*Store)(nil)

// PersonEventCounts counts the events of each of distinctIDs in the
// product, every environment and bots included (the people list's
// column, docs/queries.md, "People"): one scan of the product's events
// with an IN list of the page's ids.
func (s *Store) PersonEventCounts(ctx context.Context, productID int64, distinctIDs []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(distinctIDs) == 0 {
		return out, nil
	}
	args := []any{productID}
	marks := make([]string, len(distinctIDs))
	for i, id := range distinctIDs {
		args = append(args, id)
		marks[i] = "$" + strconv.Itoa(i+2)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT distinct_id, count(*) FROM events WHERE product_id = $1 AND distinct_id IN (`+
		strings.Join(marks, ", ")+`) GROUP BY distinct_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("counting persons' events: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("counting persons' events: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}
