// Package sqlmeta is the metadata store shared by Strata's SQL backends:
// workspaces, products, API keys, query tokens, saved queries and
// annotations.
//
// Every statement here is written once, in the PostgreSQL dialect that
// DuckDB also runs, with $n parameters and nothing else interpolated. The
// embedded DuckDB store and the PostgreSQL store both embed a *Store over
// their own *sql.DB, so a change to the metadata SQL is made in one place
// and checked against both databases by the storetest conformance suite.
// Each backend owns its connection, its migrations (the tables these
// statements expect are created by migration files of the same name in
// both backends) and its Close; this package owns only the statements.
//
// The statements rely on nothing that differs between the two databases:
// ids come from sequences as column defaults and are read back with
// INSERT … RETURNING, timestamps are TIMESTAMP columns that hold UTC
// (both drivers read them back as UTC), and a missing row is told apart
// by sql.ErrNoRows or zero rows affected rather than by an error code.
package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"strata/internal/analytics"
)

// Store implements analytics.MetaStore, analytics.SavedQueryStore and
// analytics.AnnotationStore with the shared statements. It holds no state
// of its own besides the handle and the clock; the backend that creates it
// closes the handle.
type Store struct {
	db  *sql.DB
	now func() time.Time
}

var (
	_ analytics.MetaStore       = (*Store)(nil)
	_ analytics.SavedQueryStore = (*Store)(nil)
	_ analytics.AnnotationStore = (*Store)(nil)
)

// New returns a store over db, whose schema the caller has migrated. now
// is the clock for created_at and updated_at columns; nil means time.Now.
func New(db *sql.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now}
}

// stamp is the current time as stored: UTC, to the microsecond that both
// databases keep, so that a value handed back to the caller equals the one
// read later.
func (s *Store) stamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Scanner is what *sql.Row and *sql.Rows share.
type Scanner interface{ Scan(...any) error }

// QueryAll runs a query and scans every row with scan; what names the
// operation in errors.
func QueryAll[T any](ctx context.Context, db *sql.DB, what string, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// notFound wraps sql.ErrNoRows as analytics.ErrNotFound so that callers need
// not know which database answered.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, analytics.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// CreateWorkspace inserts a workspace.
func (s *Store) CreateWorkspace(ctx context.Context, name string) (analytics.Workspace, error) {
	w := analytics.Workspace{Name: name, CreatedAt: s.stamp()}
	err := s.db.QueryRowContext(ctx,
		`INSERT INTO workspaces (name, created_at) VALUES ($1, $2) RETURNING id`,
		w.Name, w.CreatedAt).Scan(&w.ID)
	if err != nil {
		return w, fmt.Errorf("creating workspace: %w", err)
	}
	return w, nil
}

// ListWorkspaces returns every workspace, oldest first.
func (s *Store) ListWorkspaces(ctx context.Context) ([]analytics.Workspace, error) {
	return QueryAll(ctx, s.db, "listing workspaces", func(r Scanner) (w analytics.Workspace, err error) {
		err = r.Scan(&w.ID, &w.Name, &w.CreatedAt)
		return w, err
	}, `SELECT id, name, created_at FROM workspaces ORDER BY id`)
}

// CreateProduct inserts a product into a workspace.
func (s *Store) CreateProduct(ctx context.Context, workspaceID int64, name string) (analytics.Product, error) {
	p := analytics.Product{WorkspaceID: workspaceID, Name: name, CreatedAt: s.stamp()}
	err := s.db.QueryRowContext(ctx,
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
	err := s.db.QueryRowContext(ctx,
		`SELECT id, workspace_id, name, created_at FROM products WHERE id = $1`, id).
		Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt)
	if err != nil {
		return p, notFound(err, fmt.Sprintf("product %d", id))
	}
	return p, nil
}

// ListProducts returns the products of a workspace, oldest first.
func (s *Store) ListProducts(ctx context.Context, workspaceID int64) ([]analytics.Product, error) {
	return QueryAll(ctx, s.db, "listing products", func(r Scanner) (p analytics.Product, err error) {
		err = r.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt)
		return p, err
	}, `SELECT id, workspace_id, name, created_at FROM products WHERE workspace_id = $1 ORDER BY id`, workspaceID)
}

const keyColumns = `id, product_id, hash, prefix, env, status, rate_limit, created_at, last_used_at`

func scanKey(row Scanner) (analytics.APIKey, error) {
	var k analytics.APIKey
	var env, status string
	var lastUsed sql.NullTime
	err := row.Scan(&k.ID, &k.ProductID, &k.Hash, &k.Prefix, &env, &status, &k.RateLimit, &k.CreatedAt, &lastUsed)
	k.Env, k.Status = analytics.Env(env), analytics.KeyStatus(status)
	if lastUsed.Valid {
		t := lastUsed.Time
		k.LastUsedAt = &t
	}
	return k, err
}

// CreateAPIKey stores a key and fills in its ID, status and creation time.
func (s *Store) CreateAPIKey(ctx context.Context, k *analytics.APIKey) error {
	k.Status = analytics.KeyActive
	k.CreatedAt = s.stamp()
	err := s.db.QueryRowContext(ctx,
		`INSERT INTO api_keys (product_id, hash, prefix, env, status, rate_limit, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		k.ProductID, k.Hash, k.Prefix, string(k.Env), string(k.Status), k.RateLimit, k.CreatedAt).Scan(&k.ID)
	if err != nil {
		return fmt.Errorf("creating api key: %w", err)
	}
	return nil
}

// APIKeyByHash returns the key with the given SHA-256.
func (s *Store) APIKeyByHash(ctx context.Context, hash []byte) (analytics.APIKey, error) {
	k, err := scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = $1`, hash))
	if err != nil {
		return k, notFound(err, "api key")
	}
	return k, nil
}

// APIKey returns the key with the given ID.
func (s *Store) APIKey(ctx context.Context, id int64) (analytics.APIKey, error) {
	k, err := scanKey(s.db.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if err != nil {
		return k, notFound(err, fmt.Sprintf("api key %d", id))
	}
	return k, nil
}

// ListAPIKeys returns a product's keys, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, productID int64) ([]analytics.APIKey, error) {
	return QueryAll(ctx, s.db, "listing api keys", scanKey,
		`SELECT `+keyColumns+` FROM api_keys WHERE product_id = $1 ORDER BY id`, productID)
}

// SetAPIKeyStatus changes a key's status.
func (s *Store) SetAPIKeyStatus(ctx context.Context, id int64, status analytics.KeyStatus) error {
	return s.setStatus(ctx, "api_keys", id, status)
}

// TouchAPIKeys records when keys were last used.
func (s *Store) TouchAPIKeys(ctx context.Context, lastUsed map[int64]time.Time) error {
	return s.touch(ctx, "api key", `UPDATE api_keys SET last_used_at = $1 WHERE id = $2`, lastUsed)
}

// touch runs update (last_used_at = $1 for id $2) for every credential of
// lastUsed, in one transaction. Rows are updated in id order: several nodes
// sharing one PostgreSQL touch overlapping credentials, and two transactions
// that lock the same rows in different orders deadlock, which PostgreSQL
// resolves by failing one. update is a constant of this package.
func (s *Store) touch(ctx context.Context, what, update string, lastUsed map[int64]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(lastUsed))
	for id := range lastUsed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("touching %ss: %w", what, err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, update, utc(lastUsed[id]), id); err != nil {
			return fmt.Errorf("touching %s %d: %w", what, id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("touching %ss: %w", what, err)
	}
	return nil
}

// AddUsage adds each id's count of admitted requests under scope (a
// constant of the caller: "key", "workspace") to the total all nodes share
// and returns the new totals, in one transaction (in id order, as touch,
// so that nodes never deadlock). A zero count just reads the total.
func (s *Store) AddUsage(ctx context.Context, scope string, deltas map[int64]int64) (map[int64]int64, error) {
	totals := make(map[int64]int64, len(deltas))
	if len(deltas) == 0 {
		return totals, nil
	}
	ids := make([]int64, 0, len(deltas))
	for id := range deltas {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("recording %s usage: %w", scope, err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		var total int64
		err := tx.QueryRowContext(ctx, `INSERT INTO usage_totals (scope, id, used) VALUES ($1, $2, $3)
			ON CONFLICT (scope, id) DO UPDATE SET used = usage_totals.used + excluded.used
			RETURNING used`, scope, id, deltas[id]).Scan(&total)
		if err != nil {
			return nil, fmt.Errorf("recording usage of %s %d: %w", scope, id, err)
		}
		totals[id] = total
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("recording %s usage: %w", scope, err)
	}
	return totals, nil
}

const tokenColumns = `id, product_id, hash, prefix, status, created_at, last_used_at`

func scanToken(row Scanner) (analytics.QueryToken, error) {
	var t analytics.QueryToken
	var status string
	var lastUsed sql.NullTime
	err := row.Scan(&t.ID, &t.ProductID, &t.Hash, &t.Prefix, &status, &t.CreatedAt, &lastUsed)
	t.Status = analytics.KeyStatus(status)
	if lastUsed.Valid {
		lu := lastUsed.Time
		t.LastUsedAt = &lu
	}
	return t, err
}

// CreateQueryToken stores a token and fills in its ID, status and creation
// time.
func (s *Store) CreateQueryToken(ctx context.Context, t *analytics.QueryToken) error {
	t.Status = analytics.KeyActive
	t.CreatedAt = s.stamp()
	err := s.db.QueryRowContext(ctx,
		`INSERT INTO query_tokens (product_id, hash, prefix, status, created_at)
		 VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		t.ProductID, t.Hash, t.Prefix, string(t.Status), t.CreatedAt).Scan(&t.ID)
	if err != nil {
		return fmt.Errorf("creating query token: %w", err)
	}
	return nil
}

// QueryTokenByHash returns the token with the given SHA-256.
func (s *Store) QueryTokenByHash(ctx context.Context, hash []byte) (analytics.QueryToken, error) {
	t, err := scanToken(s.db.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM query_tokens WHERE hash = $1`, hash))
	if err != nil {
		return t, notFound(err, "query token")
	}
	return t, nil
}

// ListQueryTokens returns a product's tokens, oldest first.
func (s *Store) ListQueryTokens(ctx context.Context, productID int64) ([]analytics.QueryToken, error) {
	return QueryAll(ctx, s.db, "listing query tokens", scanToken,
		`SELECT `+tokenColumns+` FROM query_tokens WHERE product_id = $1 ORDER BY id`, productID)
}

// SetQueryTokenStatus changes a token's status.
func (s *Store) SetQueryTokenStatus(ctx context.Context, id int64, status analytics.KeyStatus) error {
	return s.setStatus(ctx, "query_tokens", id, status)
}

// setStatus updates the status column of a credential table. table is one
// of the two credential tables, named by the callers above, never caller
// input.
func (s *Store) setStatus(ctx context.Context, table string, id int64, status analytics.KeyStatus) error {
	res, err := s.db.ExecContext(ctx, `UPDATE `+table+` SET status = $1 WHERE id = $2`, string(status), id)
	if err != nil {
		return fmt.Errorf("updating %s %d: %w", table, id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%s %d: %w", table, id, analytics.ErrNotFound)
	}
	return nil
}

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
	err := s.db.QueryRowContext(ctx,
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
	q, err := scanSavedQuery(s.db.QueryRowContext(ctx,
		`SELECT `+savedQueryColumns+` FROM saved_queries WHERE product_id = $1 AND id = $2`, productID, id))
	if err != nil {
		return q, notFound(err, "reading saved query")
	}
	return q, nil
}

// ListSavedQueries returns a product's saved queries, newest first.
func (s *Store) ListSavedQueries(ctx context.Context, productID int64) ([]analytics.SavedQuery, error) {
	return QueryAll(ctx, s.db, "listing saved queries", scanSavedQuery,
		`SELECT `+savedQueryColumns+` FROM saved_queries WHERE product_id = $1 ORDER BY id DESC`, productID)
}

// UpdateSavedQuery replaces the name and definition of a product's saved
// query and sets its UpdatedAt, or returns ErrNotFound.
func (s *Store) UpdateSavedQuery(ctx context.Context, q *analytics.SavedQuery) error {
	q.UpdatedAt = s.stamp()
	res, err := s.db.ExecContext(ctx,
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

// DeleteSavedQuery removes a product's saved query and the annotations
// scoped to it, in one transaction, or returns ErrNotFound. Saved query ids
// are unique across products, so query_id alone names its annotations.
func (s *Store) DeleteSavedQuery(ctx context.Context, productID, id int64) error {
	tx, err := s.db.BeginTx(ctx, nil)
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
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("deleting saved query: %w", err)
	}
	return nil
}

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
	tx, err := s.db.BeginTx(ctx, nil)
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
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM annotations WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting annotations: %w", err)
	}
	n := len(args)
	page, err := QueryAll(ctx, s.db, "listing annotations", scanAnnotation,
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
	rows, err := s.db.QueryContext(ctx, `SELECT `+annotationColumns+` FROM annotations WHERE `+where+annotationOrder, args...)
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
	res, err := s.db.ExecContext(ctx, `DELETE FROM annotations WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
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
	res, err := s.db.ExecContext(ctx, `DELETE FROM annotations WHERE workspace_id = $1 AND id IN (`+in.String()+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("deleting annotations: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("deleting annotations: %w", err)
	}
	return int(n), nil
}
