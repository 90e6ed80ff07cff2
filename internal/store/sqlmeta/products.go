package sqlmeta

import (
	"context"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// Workspaces and products: a product is the unit of data isolation, and
// belongs to one workspace.

// CreateWorkspace inserts a workspace.
func (s *Store) CreateWorkspace(ctx context.Context, name string) (analytics.Workspace, error) {
	w := analytics.Workspace{Name: name, CreatedAt: s.stamp()}
	err := s.conn().QueryRowContext(ctx,
		`INSERT INTO workspaces (name, created_at) VALUES ($1, $2) RETURNING id`,
		w.Name, w.CreatedAt).Scan(&w.ID)
	if err != nil {
		return w, fmt.Errorf("creating workspace: %w", err)
	}
	return w, nil
}

// ListWorkspaces returns every workspace, oldest first.
func (s *Store) ListWorkspaces(ctx context.Context) ([]analytics.Workspace, error) {
	return QueryAll(ctx, s.conn(), "listing workspaces", func(r Scanner) (w analytics.Workspace, err error) {
		err = r.Scan(&w.ID, &w.Name, &w.CreatedAt)
		return w, err
	}, `SELECT id, name, created_at FROM workspaces ORDER BY id`)
}

// CreateProduct inserts a product into a workspace.
func (s *Store) CreateProduct(ctx context.Context, workspaceID int64, name string) (analytics.Product, error) {
	p := analytics.Product{WorkspaceID: workspaceID, Name: name, CreatedAt: s.stamp(), TimeZone: analytics.DefaultTimeZone}
	err := s.conn().QueryRowContext(ctx,
		`INSERT INTO products (workspace_id, name, created_at) VALUES ($1, $2, $3) RETURNING id`,
		p.WorkspaceID, p.Name, p.CreatedAt).Scan(&p.ID)
	if err != nil {
		return p, fmt.Errorf("creating product: %w", err)
	}
	return p, nil
}

// Product returns one product.
func (s *Store) Product(ctx context.Context, id int64) (analytics.Product, error) {
	var p analytics.Product
	err := s.conn().QueryRowContext(ctx, productSelect+` WHERE p.id = $1`, id).
		Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt, &p.TimeZone,
			&p.Retention.EventsDays, &p.Retention.ErrorsDays, &p.Retention.ReplaysDays,
			&p.Privacy.Cookieless, &p.Privacy.RespectPrivacySignals)
	if err != nil {
		return p, notFound(err, fmt.Sprintf("product %d", id))
	}
	return p, nil
}

// ListProducts returns the products of a workspace, oldest first.
func (s *Store) ListProducts(ctx context.Context, workspaceID int64) ([]analytics.Product, error) {
	return QueryAll(ctx, s.conn(), "listing products", func(r Scanner) (p analytics.Product, err error) {
		err = r.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt, &p.TimeZone,
			&p.Retention.EventsDays, &p.Retention.ErrorsDays, &p.Retention.ReplaysDays,
			&p.Privacy.Cookieless, &p.Privacy.RespectPrivacySignals)
		return p, err
	}, productSelect+` WHERE p.workspace_id = $1 ORDER BY p.id`, workspaceID)
}

// productSelect reads a product's columns, its time zone (migration
// 0029), UTC when none was set, its retention periods (0036), 0 (the
// defaults) when none were, and its privacy settings (0037), off when
// none were.
const productSelect = `SELECT p.id, p.workspace_id, p.name, p.created_at, coalesce(z.time_zone, 'UTC'),
	coalesce(r.events_days, 0), coalesce(r.errors_days, 0), coalesce(r.replays_days, 0),
	coalesce(v.cookieless, false), coalesce(v.respect_signals, false)
	FROM products p LEFT JOIN product_time_zones z ON z.product_id = p.id
	LEFT JOIN product_retention r ON r.product_id = p.id
	LEFT JOIN product_privacy v ON v.product_id = p.id`

// SetProductTimeZone sets a product's time zone, an IANA name the caller
// checked, or returns ErrNotFound.
func (s *Store) SetProductTimeZone(ctx context.Context, id int64, zone string) error {
	if _, err := s.Product(ctx, id); err != nil {
		return fmt.Errorf("setting the time zone of product %d: %w", id, err)
	}
	_, err := s.conn().ExecContext(ctx, `INSERT INTO product_time_zones (product_id, time_zone) VALUES ($1, $2)
		ON CONFLICT (product_id) DO UPDATE SET time_zone = excluded.time_zone`, id, zone)
	if err != nil {
		return fmt.Errorf("setting the time zone of product %d: %w", id, err)
	}
	return nil
}

// SetProductRetention sets a product's retention periods, which the
// caller checked, or returns ErrNotFound.
func (s *Store) SetProductRetention(ctx context.Context, id int64, r analytics.DataRetention) error {
	if _, err := s.Product(ctx, id); err != nil {
		return fmt.Errorf("setting the retention of product %d: %w", id, err)
	}
	_, err := s.conn().ExecContext(ctx, `INSERT INTO product_retention (product_id, events_days, errors_days, replays_days)
		VALUES ($1, $2, $3, $4) ON CONFLICT (product_id) DO UPDATE SET events_days = excluded.events_days,
		errors_days = excluded.errors_days, replays_days = excluded.replays_days`, id, r.EventsDays, r.ErrorsDays, r.ReplaysDays)
	if err != nil {
		return fmt.Errorf("setting the retention of product %d: %w", id, err)
	}
	return nil
}

// SetProductPrivacy sets what a product asks of its browser SDKs, or
// returns ErrNotFound.
func (s *Store) SetProductPrivacy(ctx context.Context, id int64, v analytics.PrivacySettings) error {
	if _, err := s.Product(ctx, id); err != nil {
		return fmt.Errorf("setting the privacy of product %d: %w", id, err)
	}
	_, err := s.conn().ExecContext(ctx, `INSERT INTO product_privacy (product_id, cookieless, respect_signals)
		VALUES ($1, $2, $3) ON CONFLICT (product_id) DO UPDATE SET cookieless = excluded.cookieless,
		respect_signals = excluded.respect_signals`, id, v.Cookieless, v.RespectPrivacySignals)
	if err != nil {
		return fmt.Errorf("setting the privacy of product %d: %w", id, err)
	}
	return nil
}

// DailySalt returns day's salt, storing fresh as it if no node stored
// one yet, and deletes the salts older than the day before. The insert
// that loses a race to another node's changes nothing on PostgreSQL (ON
// CONFLICT DO NOTHING); on DuckDB, whose concurrent transactions are
// optimistic, it fails with a conflict instead, as can the deletion when
// another caller deletes the same rows. Either way the salt then read is
// the one stored; a step that failed while another caller's transaction
// was in flight is tried again, a few times, before its error counts.
func (s *Store) DailySalt(ctx context.Context, day int64, fresh []byte) ([]byte, error) {
	const attempts = 5
	var err error
	for attempt := range attempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt) * 5 * time.Millisecond):
			}
		}
		var salt []byte
		if salt, err = s.dailySalt(ctx, day, fresh); err == nil {
			return salt, nil
		}
	}
	return nil, err
}

// dailySalt is one attempt of DailySalt.
func (s *Store) dailySalt(ctx context.Context, day int64, fresh []byte) ([]byte, error) {
	_, insertErr := s.conn().ExecContext(ctx, `INSERT INTO daily_salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING`, day, fresh)
	var salt []byte
	if err := s.conn().QueryRowContext(ctx, `SELECT salt FROM daily_salts WHERE day = $1`, day).Scan(&salt); err != nil {
		if insertErr != nil {
			return nil, fmt.Errorf("storing the salt of day %d: %w", day, insertErr)
		}
		return nil, fmt.Errorf("reading the salt of day %d: %w", day, err)
	}
	if _, err := s.conn().ExecContext(ctx, `DELETE FROM daily_salts WHERE day < $1`, day-1); err != nil {
		return nil, fmt.Errorf("deleting the salts before day %d: %w", day-1, err)
	}
	return salt, nil
}

// RenameProduct changes a product's name, or returns ErrNotFound.
func (s *Store) RenameProduct(ctx context.Context, id int64, name string) error {
	res, err := s.conn().ExecContext(ctx, `UPDATE products SET name = $1 WHERE id = $2`, name, id)
	if err != nil {
		return fmt.Errorf("renaming product %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("renaming product %d: %w", id, analytics.ErrNotFound)
	}
	return nil
}
