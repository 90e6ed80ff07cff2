package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"

	"strata/internal/analytics"
)

// Sourcemaps of a product's releases (migrations 0014 and 0021,
// docs/errors.md).

var _ analytics.SourcemapStore = (*Store)(nil)

// PutSourcemap replaces the upload of sm's product, release and URL, in
// one transaction that first takes the product's turn (its row of
// sourcemap_locks: a second transaction of the product waits on
// PostgreSQL, and would conflict on DuckDB, where the product's lock
// stripe makes it wait first), then reads the product's usage without the
// upload it replaces, and stores nothing when quota refuses it.
func (s *Store) PutSourcemap(ctx context.Context, sm *analytics.Sourcemap, mapText, minified []byte, quota analytics.SourcemapAmount) error {
	sm.Size, sm.Minified, sm.CreatedAt = int64(len(mapText)), minified != nil, s.stamp()
	var min any
	if minified != nil {
		min = string(minified)
	}
	turn := &s.uploads[uint64(sm.ProductID)%uint64(len(s.uploads))]
	turn.Lock()
	defer turn.Unlock()
	return s.inTx(ctx, "storing sourcemap", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO sourcemap_locks (product_id, writes) VALUES ($1, 1)
			 ON CONFLICT (product_id) DO UPDATE SET writes = sourcemap_locks.writes + 1`, sm.ProductID); err != nil {
			return err
		}
		var others analytics.SourcemapAmount
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*), coalesce(sum(size + minified_size), 0) FROM sourcemaps
			 WHERE product_id = $1 AND NOT (release = $2 AND url = $3)`,
			sm.ProductID, sm.Release, sm.URL).Scan(&others.Count, &others.Bytes); err != nil {
			return err
		}
		if err := quota.Admit(others, int64(len(mapText)+len(minified))); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sourcemaps WHERE product_id = $1 AND release = $2 AND url = $3`,
			sm.ProductID, sm.Release, sm.URL); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx,
			`INSERT INTO sourcemaps (product_id, release, url, size, map, minified, minified_size, created_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			sm.ProductID, sm.Release, sm.URL, sm.Size, string(mapText), min, len(minified), sm.CreatedAt).Scan(&sm.ID)
	})
}

// SourcemapUsage returns what a product's sourcemaps take.
func (s *Store) SourcemapUsage(ctx context.Context, productID int64) (analytics.SourcemapAmount, error) {
	var u analytics.SourcemapAmount
	err := s.conn().QueryRowContext(ctx, `SELECT count(*), coalesce(sum(size + minified_size), 0) FROM sourcemaps WHERE product_id = $1`,
		productID).Scan(&u.Count, &u.Bytes)
	if err != nil {
		return u, fmt.Errorf("reading sourcemap usage: %w", err)
	}
	return u, nil
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
		return QueryAll(ctx, s.conn(), "listing sourcemaps", scanSourcemap, cols+` ORDER BY id DESC`, productID)
	}
	return QueryAll(ctx, s.conn(), "listing sourcemaps", scanSourcemap, cols+` AND release = $2 ORDER BY id DESC`, productID, release)
}

// SourcemapContent returns the map and minified file of a release and URL.
func (s *Store) SourcemapContent(ctx context.Context, productID int64, release, url string) ([]byte, []byte, error) {
	var mapText string
	var minified sql.NullString
	err := s.conn().QueryRowContext(ctx, `SELECT map, minified FROM sourcemaps WHERE product_id = $1 AND release = $2 AND url = $3`,
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

// HasSourcemap reports whether a release and URL have a map, without
// reading it.
func (s *Store) HasSourcemap(ctx context.Context, productID int64, release, url string) (bool, error) {
	var has bool
	err := s.conn().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sourcemaps WHERE product_id = $1 AND release = $2 AND url = $3)`,
		productID, release, url).Scan(&has)
	if err != nil {
		return false, fmt.Errorf("looking up a sourcemap: %w", err)
	}
	return has, nil
}

// SourcemapText returns the map of a release and URL.
func (s *Store) SourcemapText(ctx context.Context, productID int64, release, url string) ([]byte, error) {
	var mapText []byte
	err := s.conn().QueryRowContext(ctx, `SELECT map FROM sourcemaps WHERE product_id = $1 AND release = $2 AND url = $3`,
		productID, release, url).Scan(&mapText)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("sourcemap of %s for %s", release, url))
	}
	return mapText, nil
}

// DeleteSourcemaps deletes a release's uploads.
func (s *Store) DeleteSourcemaps(ctx context.Context, productID int64, release string) (int64, error) {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM sourcemaps WHERE product_id = $1 AND release = $2`, productID, release)
	if err != nil {
		return 0, fmt.Errorf("deleting sourcemaps: %w", err)
	}
	return res.RowsAffected()
}
