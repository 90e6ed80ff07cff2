package sqlmeta

import (
	"context"
	"encoding/json"
	"fmt"

	"strata/internal/analytics"
)

// Saved queries: named query definitions of a product.

func scanSavedQuery(row Scanner) (analytics.SavedQuery, error) {
	var q analytics.SavedQuery
	var def string
	err := row.Scan(&q.ID, &q.ProductID, &q.Kind, &q.Name, &def, &q.CreatedAt, &q.UpdatedAt)
	q.Definition = json.RawMessage(def)
	return q, err
}

const savedQueryColumns = `id, product_id, kind, name, definition, created_at, updated_at`

// CreateSavedQuery stores q (ProductID, Kind, Name and Definition set) and
// fills in its ID and times.
func (s *Store) CreateSavedQuery(ctx context.Context, q *analytics.SavedQuery) error {
	q.CreatedAt = s.stamp()
	q.UpdatedAt = q.CreatedAt
	err := s.conn().QueryRowContext(ctx,
		`INSERT INTO saved_queries (product_id, kind, name, definition, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		q.ProductID, string(q.Kind), q.Name, string(q.Definition), q.CreatedAt, q.UpdatedAt).Scan(&q.ID)
	if err != nil {
		return fmt.Errorf("creating saved query: %w", err)
	}
	return nil
}

// SavedQuery returns one saved query of a product, or ErrNotFound.
func (s *Store) SavedQuery(ctx context.Context, productID, id int64) (analytics.SavedQuery, error) {
	return queryOne(ctx, s.conn(), "reading saved query", scanSavedQuery,
		`SELECT `+savedQueryColumns+` FROM saved_queries WHERE product_id = $1 AND id = $2`, productID, id)
}

// ListSavedQueries returns a product's saved queries, newest first.
func (s *Store) ListSavedQueries(ctx context.Context, productID int64) ([]analytics.SavedQuery, error) {
	return QueryAll(ctx, s.conn(), "listing saved queries", scanSavedQuery,
		`SELECT `+savedQueryColumns+` FROM saved_queries WHERE product_id = $1 ORDER BY id DESC`, productID)
}

// UpdateSavedQuery replaces the name and definition of a product's saved
// query and sets its UpdatedAt, or returns ErrNotFound.
func (s *Store) UpdateSavedQuery(ctx context.Context, q *analytics.SavedQuery) error {
	q.UpdatedAt = s.stamp()
	res, err := s.conn().ExecContext(ctx,
		`UPDATE saved_queries SET name = $1, definition = $2, updated_at = $3 WHERE product_id = $4 AND id = $5`,
		q.Name, string(q.Definition), q.UpdatedAt, q.ProductID, q.ID)
	if err != nil {
		return fmt.Errorf("updating saved query: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("updating saved query %d: %w", q.ID, analytics.ErrNotFound)
	}
	return nil
}

// DeleteSavedQuery removes a product's saved query, the annotations
// scoped to it and the board tiles that show it, in one transaction, or returns ErrNotFound. Saved query ids
// are unique across products, so query_id alone names its annotations and tiles.
func (s *Store) DeleteSavedQuery(ctx context.Context, productID, id int64) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("deleting saved query: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM saved_queries WHERE product_id = $1 AND id = $2`, productID, id)
	if err != nil {
		return fmt.Errorf("deleting saved query: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("deleting saved query %d: %w", id, analytics.ErrNotFound)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM annotations WHERE query_id = $1`, id); err != nil {
		return fmt.Errorf("deleting the annotations of saved query %d: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM board_tiles WHERE query_id = $1`, id); err != nil {
		return fmt.Errorf("deleting the board tiles of saved query %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("deleting saved query: %w", err)
	}
	return nil
}
