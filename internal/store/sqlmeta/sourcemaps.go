package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"

	"strata/internal/analytics"
)

// Sourcemaps of a product's releases (migration 0014, docs/errors.md).

var _ analytics.SourcemapStore = (*Store)(nil)

// PutSourcemap replaces the upload of sm's product, release and URL, in
// one transaction.
func (s *Store) PutSourcemap(ctx context.Context, sm *analytics.Sourcemap, mapText, minified []byte) error {
	sm.Size, sm.Minified, sm.CreatedAt = int64(len(mapText)), minified != nil, s.stamp()
	var min any
	if minified != nil {
		min = string(minified)
	}
	return s.inTx(ctx, "storing sourcemap", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sourcemaps WHERE product_id = $1 AND release = $2 AND url = $3`,
			sm.ProductID, sm.Release, sm.URL); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx,
			`INSERT INTO sourcemaps (product_id, release, url, size, map, minified, created_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			sm.ProductID, sm.Release, sm.URL, sm.Size, string(mapText), min, sm.CreatedAt).Scan(&sm.ID)
	})
}

func scanSourcemap(row Scanner) (analytics.Sourcemap, error) {
	var sm analytics.Sourcemap
	err := row.Scan(&sm.ID, &sm.ProductID, &sm.Release, &sm.URL, &sm.Size, &sm.Minified, &sm.CreatedAt)
	return sm, err
}

// ListSourcemaps returns a product's uploads, newest first.
func (s *Store) ListSourcemaps(ctx context.Context, productID int64, release string) ([]analytics.Sourcemap, error) {
	const cols = `SELECT id, product_id, release, url, size, minified IS NOT NULL, created_at FROM sourcemaps WHERE product_id = $1`
	if release == "" {
		return QueryAll(ctx, s.db, "listing sourcemaps", scanSourcemap, cols+` ORDER BY id DESC`, productID)
	}
	return QueryAll(ctx, s.db, "listing sourcemaps", scanSourcemap, cols+` AND release = $2 ORDER BY id DESC`, productID, release)
}

// SourcemapContent returns the map and minified file of a release and URL.
func (s *Store) SourcemapContent(ctx context.Context, productID int64, release, url string) ([]byte, []byte, error) {
	var mapText string
	var minified sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT map, minified FROM sourcemaps WHERE product_id = $1 AND release = $2 AND url = $3`,
		productID, release, url).Scan(&mapText, &minified)
	if err != nil {
		return nil, nil, notFound(err, fmt.Sprintf("sourcemap of %s for %s", release, url))
	}
	var min []byte
	if minified.Valid {
		min = []byte(minified.String)
	}
	return []byte(mapText), min, nil
}

// DeleteSourcemaps deletes a release's uploads.
func (s *Store) DeleteSourcemaps(ctx context.Context, productID int64, release string) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sourcemaps WHERE product_id = $1 AND release = $2`, productID, release)
	if err != nil {
		return 0, fmt.Errorf("deleting sourcemaps: %w", err)
	}
	return res.RowsAffected()
}
