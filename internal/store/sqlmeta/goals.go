package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"strata/internal/analytics"
)

// Goals (migration 0028, docs/queries.md, "Goals").

var _ analytics.GoalStore = (*Store)(nil)

const goalColumns = `id, product_id, kind, event, path, created_at`

func scanGoal(row Scanner) (analytics.Goal, error) {
	var g analytics.Goal
	var kind string
	err := row.Scan(&g.ID, &g.ProductID, &kind, &g.Event, &g.Path, &g.CreatedAt)
	g.Kind = analytics.GoalKind(kind)
	return g, err
}

// CreateGoal stores a goal unless the product has max goals. The count
// and the insert share a transaction; two creations at once on two nodes
// may both see room, so a product may go over max by the number of nodes
// that create one at that moment, as with shared links.
func (s *Store) CreateGoal(ctx context.Context, g *analytics.Goal, max int) error {
	g.CreatedAt = s.stamp()
	err := s.inTx(ctx, "creating a goal", func(tx *sql.Tx) error {
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM goals WHERE product_id = $1`, g.ProductID).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return analytics.GoalsFull(max)
			}
		}
		return tx.QueryRowContext(ctx, `INSERT INTO goals (product_id, kind, event, path, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			g.ProductID, string(g.Kind), g.Event, g.Path, g.CreatedAt).Scan(&g.ID)
	})
	var full *analytics.Error
	if errors.As(err, &full) {
		return full
	}
	return err
}

// Goals returns a product's goals, oldest first.
func (s *Store) Goals(ctx context.Context, productID int64) ([]analytics.Goal, error) {
	return QueryAll(ctx, s.conn(), "listing goals", scanGoal,
		`SELECT `+goalColumns+` FROM goals WHERE product_id = $1 ORDER BY id`, productID)
}

// DeleteGoal deletes one of the product's goals.
func (s *Store) DeleteGoal(ctx context.Context, productID, id int64) error {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM goals WHERE product_id = $1 AND id = $2`, productID, id)
	return affected(res, err, fmt.Sprintf("goal %d", id))
}
