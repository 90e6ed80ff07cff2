package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"strata/internal/analytics"
)

// Credentials: API keys and query tokens, stored by the SHA-256 of their
// secret, and the usage totals that hold rate limits across nodes.

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
	err := s.conn().QueryRowContext(ctx,
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
	return queryOne(ctx, s.conn(), "api key", scanKey, `SELECT `+keyColumns+` FROM api_keys WHERE hash = $1`, hash)
}

// APIKey returns the key with the given ID.
func (s *Store) APIKey(ctx context.Context, id int64) (analytics.APIKey, error) {
	return queryOne(ctx, s.conn(), fmt.Sprintf("api key %d", id), scanKey, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id)
}

// ListAPIKeys returns a product's keys, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, productID int64) ([]analytics.APIKey, error) {
	return QueryAll(ctx, s.conn(), "listing api keys", scanKey,
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
	tx, err := s.begin(ctx)
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
	tx, err := s.begin(ctx)
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
	err := s.conn().QueryRowContext(ctx,
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
	return queryOne(ctx, s.conn(), "query token", scanToken, `SELECT `+tokenColumns+` FROM query_tokens WHERE hash = $1`, hash)
}

// ListQueryTokens returns a product's tokens, oldest first.
func (s *Store) ListQueryTokens(ctx context.Context, productID int64) ([]analytics.QueryToken, error) {
	return QueryAll(ctx, s.conn(), "listing query tokens", scanToken,
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
	res, err := s.conn().ExecContext(ctx, `UPDATE `+table+` SET status = $1 WHERE id = $2`, string(status), id)
	if err != nil {
		return fmt.Errorf("updating %s %d: %w", table, id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%s %d: %w", table, id, analytics.ErrNotFound)
	}
	return nil
}

// TouchQueryTokens records when query tokens were last used, as
// TouchAPIKeys does for keys.
func (s *Store) TouchQueryTokens(ctx context.Context, lastUsed map[int64]time.Time) error {
	return s.touch(ctx, "query token", `UPDATE query_tokens SET last_used_at = $1 WHERE id = $2`, lastUsed)
}
