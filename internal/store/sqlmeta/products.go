package sqlmeta

import (
	"context"
	"fmt"

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
	p := analytics.Product{WorkspaceID: workspaceID, Name: name, CreatedAt: s.stamp()}
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
	err := s.conn().QueryRowContext(ctx,
		`SELECT id, workspace_id, name, created_at FROM products WHERE id = $1`, id).
		Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt)
	if err != nil {
		return p, notFound(err, fmt.Sprintf("product %d", id))
	}
	return p, nil
}

// ListProducts returns the products of a workspace, oldest first.
func (s *Store) ListProducts(ctx context.Context, workspaceID int64) ([]analytics.Product, error) {
	return QueryAll(ctx, s.conn(), "listing products", func(r Scanner) (p analytics.Product, err error) {
		err = r.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt)
		return p, err
	}, `SELECT id, workspace_id, name, created_at FROM products WHERE workspace_id = $1 ORDER BY id`, workspaceID)
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
