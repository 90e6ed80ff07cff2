package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"strata/internal/analytics"
)

// Annotations: chart markers of a workspace (docs/annotations.md).

const annotationColumns = `id, workspace_id, scope, query_id, marked_at, label, description, color, created_by, created_at`

func scanAnnotation(row Scanner) (analytics.Annotation, error) {
	var a analytics.Annotation
	var scope string
	var queryID sql.NullInt64
	err := row.Scan(&a.ID, &a.WorkspaceID, &scope, &queryID, &a.Date, &a.Label, &a.Description, &a.Color, &a.CreatedBy, &a.CreatedAt)
	a.Scope = analytics.AnnotationScope(scope)
	if queryID.Valid {
		id := queryID.Int64
		a.QueryID = &id
	}
	return a, err
}

// annotationWhere is the WHERE clause, and its arguments, that selects what
// f selects. Only $n placeholders are written into the text; every value
// is an argument.
func annotationWhere(f analytics.AnnotationFilter) (string, []any) {
	args := []any{f.WorkspaceID}
	where := `workspace_id = $1 AND (query_id IS NULL`
	if f.QueryID != 0 {
		args = append(args, f.QueryID)
		where += fmt.Sprintf(` OR query_id = $%d`, len(args))
	}
	where += `)`
	if !f.From.IsZero() {
		args = append(args, f.From.UTC().Truncate(time.Microsecond))
		where += fmt.Sprintf(` AND marked_at >= $%d`, len(args))
	}
	if !f.To.IsZero() {
		args = append(args, f.To.UTC().Truncate(time.Microsecond))
		where += fmt.Sprintf(` AND marked_at <= $%d`, len(args))
	}
	return where, args
}

// annotationOrder is the order of every annotation listing: newest marker
// first, and among markers at the same instant the newest annotation.
const annotationOrder = ` ORDER BY marked_at DESC, id DESC`

// CreateAnnotation stores a and fills in its ID and CreatedAt. For a
// query-scoped annotation it first checks, in the same transaction, that
// the saved query belongs to a product of a's workspace, and returns
// ErrNotFound when it does not.
func (s *Store) CreateAnnotation(ctx context.Context, a *analytics.Annotation) error {
	a.Date = a.Date.UTC().Truncate(time.Microsecond)
	a.CreatedAt = s.stamp()
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("creating annotation: %w", err)
	}
	defer tx.Rollback()
	var queryID sql.NullInt64
	if a.QueryID != nil {
		queryID = sql.NullInt64{Int64: *a.QueryID, Valid: true}
		var n int
		err := tx.QueryRowContext(ctx,
			`SELECT count(*) FROM saved_queries q JOIN products p ON p.id = q.product_id
			 WHERE q.id = $1 AND p.workspace_id = $2`, *a.QueryID, a.WorkspaceID).Scan(&n)
		if err != nil {
			return fmt.Errorf("creating annotation: finding saved query %d: %w", *a.QueryID, err)
		}
		if n == 0 {
			return fmt.Errorf("creating annotation: saved query %d of workspace %d: %w", *a.QueryID, a.WorkspaceID, analytics.ErrNotFound)
		}
	}
	err = tx.QueryRowContext(ctx,
		`INSERT INTO annotations (workspace_id, scope, query_id, marked_at, label, description, color, created_by, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		a.WorkspaceID, string(a.Scope), queryID, a.Date, a.Label, a.Description, a.Color, a.CreatedBy, a.CreatedAt).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("creating annotation: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating annotation: %w", err)
	}
	return nil
}

// ListAnnotations returns one page of the annotations f selects and their
// total. The page and the count are two statements; a write between them
// can make the total differ from the pages by that write.
func (s *Store) ListAnnotations(ctx context.Context, f analytics.AnnotationFilter, offset, limit int) ([]analytics.Annotation, int, error) {
	where, args := annotationWhere(f)
	var total int
	if err := s.conn().QueryRowContext(ctx, `SELECT count(*) FROM annotations WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting annotations: %w", err)
	}
	n := len(args)
	page, err := QueryAll(ctx, s.conn(), "listing annotations", scanAnnotation,
		`SELECT `+annotationColumns+` FROM annotations WHERE `+where+annotationOrder+
			fmt.Sprintf(` LIMIT $%d OFFSET $%d`, n+1, n+2),
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, err
	}
	return page, total, nil
}

// EachAnnotation calls fn for every annotation f selects, streaming the
// rows.
func (s *Store) EachAnnotation(ctx context.Context, f analytics.AnnotationFilter, fn func(analytics.Annotation) error) error {
	where, args := annotationWhere(f)
	rows, err := s.conn().QueryContext(ctx, `SELECT `+annotationColumns+` FROM annotations WHERE `+where+annotationOrder, args...)
	if err != nil {
		return fmt.Errorf("reading annotations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAnnotation(rows)
		if err != nil {
			return fmt.Errorf("reading annotations: %w", err)
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading annotations: %w", err)
	}
	return nil
}

// DeleteAnnotation removes one annotation of a workspace, or returns
// ErrNotFound.
func (s *Store) DeleteAnnotation(ctx context.Context, workspaceID, id int64) error {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM annotations WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err != nil {
		return fmt.Errorf("deleting annotation: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("deleting annotation %d: %w", id, analytics.ErrNotFound)
	}
	return nil
}

// DeleteAnnotations removes the workspace's annotations among ids in one
// statement and returns how many went. The id list is written as one $n
// placeholder per distinct id; the ids themselves are arguments.
func (s *Store) DeleteAnnotations(ctx context.Context, workspaceID int64, ids []int64) (int, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return 0, nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, workspaceID)
	var in strings.Builder
	for i, id := range ids {
		if i > 0 {
			in.WriteString(", ")
		}
		args = append(args, id)
		fmt.Fprintf(&in, "$%d", len(args))
	}
	res, err := s.conn().ExecContext(ctx, `DELETE FROM annotations WHERE workspace_id = $1 AND id IN (`+in.String()+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("deleting annotations: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("deleting annotations: %w", err)
	}
	return int(n), nil
}
