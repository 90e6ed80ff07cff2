package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"strata/internal/analytics"
)

// Group profiles of a product (migration 0018, docs/ingest.md, "Groups").

var _ analytics.GroupStore = (*Store)(nil)

const groupColumns = `group_type, group_key, properties, created_at, updated_at`

func scanGroup(productID int64) func(Scanner) (analytics.Group, error) {
	return func(row Scanner) (analytics.Group, error) {
		g := analytics.Group{ProductID: productID}
		var props string
		err := row.Scan(&g.Type, &g.Key, &props, &g.CreatedAt, &g.UpdatedAt)
		g.Properties = json.RawMessage(props)
		g.CreatedAt, g.UpdatedAt = g.CreatedAt.UTC(), g.UpdatedAt.UTC()
		return g, err
	}
}

// Group returns one group of a product, or ErrNotFound.
func (s *Store) Group(ctx context.Context, productID int64, groupType, key string) (analytics.Group, error) {
	g, err := scanGroup(productID)(s.conn().QueryRowContext(ctx,
		`SELECT `+groupColumns+` FROM groups WHERE product_id = $1 AND group_type = $2 AND group_key = $3`,
		productID, groupType, key))
	if err != nil {
		return g, notFound(err, fmt.Sprintf("group %s %q", groupType, key))
	}
	return g, nil
}

// ListGroups returns a product's groups, most recently updated first.
func (s *Store) ListGroups(ctx context.Context, productID int64, groupType string, limit int) ([]analytics.Group, error) {
	return QueryAll(ctx, s.conn(), "listing groups", scanGroup(productID),
		`SELECT `+groupColumns+` FROM groups WHERE product_id = $1 AND ($2 = '' OR group_type = $2)
		 ORDER BY updated_at DESC, group_type, group_key LIMIT $3`, productID, groupType, limit)
}

// GroupTypes returns the types a product has groups of.
func (s *Store) GroupTypes(ctx context.Context, productID int64) ([]string, error) {
	return QueryAll(ctx, s.conn(), "listing group types", func(r Scanner) (t string, err error) {
		err = r.Scan(&t)
		return t, err
	}, `SELECT DISTINCT group_type FROM groups WHERE product_id = $1 ORDER BY group_type`, productID)
}

// upsertAttempts bounds how often UpsertGroup reads and writes again
// after losing a race to another write of the same group; between
// attempts it waits a random moment of up to a millisecond per attempt
// made, so that racing writers spread out.
const upsertAttempts = 20

// UpsertGroup merges properties into the group's, creating it when new.
// The merge is made here, not in SQL, since the two databases share no
// JSON merge function; it is kept safe against concurrent writes without
// locks (DuckDB has no SELECT … FOR UPDATE): the row is written only if it
// still holds what was read (an insert that does nothing on a conflict, an
// update conditioned on the old properties), and read again otherwise. A
// write that DuckDB refuses as a conflicting transaction is retried the
// same way.
func (s *Store) UpsertGroup(ctx context.Context, productID int64, groupType, key string, properties json.RawMessage) (analytics.Group, error) {
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(properties, &sent); err != nil {
		return analytics.Group{}, fmt.Errorf("group properties: %w", err)
	}
	var lastErr error
	for attempt := range upsertAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return analytics.Group{}, ctx.Err()
			case <-time.After(rand.N(time.Duration(attempt) * time.Millisecond)):
			}
		}
		now := s.stamp()
		old, err := s.Group(ctx, productID, groupType, key)
		switch {
		case errors.Is(err, analytics.ErrNotFound):
			merged, err := mergeProperties(nil, sent)
			if err != nil {
				return old, err
			}
			res, err := s.conn().ExecContext(ctx,
				`INSERT INTO groups (product_id, group_type, group_key, properties, created_at, updated_at)
				 VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (product_id, group_type, group_key) DO NOTHING`,
				productID, groupType, key, merged, now)
			if won(res, err, &lastErr) {
				return analytics.Group{ProductID: productID, Type: groupType, Key: key,
					Properties: json.RawMessage(merged), CreatedAt: now, UpdatedAt: now}, nil
			}
		case err != nil:
			return old, err
		default:
			merged, err := mergeProperties(old.Properties, sent)
			if err != nil {
				return old, err
			}
			res, err := s.conn().ExecContext(ctx,
				`UPDATE groups SET properties = $4, updated_at = $5
				 WHERE product_id = $1 AND group_type = $2 AND group_key = $3 AND properties = $6`,
				productID, groupType, key, merged, now, string(old.Properties))
			if won(res, err, &lastErr) {
				old.Properties, old.UpdatedAt = json.RawMessage(merged), now
				return old, nil
			}
		}
	}
	if lastErr == nil {
		lastErr = errors.New("other writes of the group kept winning")
	}
	return analytics.Group{}, fmt.Errorf("storing group %s %q: %w", groupType, key, lastErr)
}

// won reports whether a conditional write changed its row, keeping its
// error, if any, for the caller's last answer.
func won(res sql.Result, err error, lastErr *error) bool {
	if err != nil {
		*lastErr = err
		return false
	}
	n, err := res.RowsAffected()
	if err != nil {
		*lastErr = err
		return false
	}
	return n == 1
}

// mergeProperties returns the stored object old with every key of sent
// set to sent's value, as compact JSON with sorted keys.
func mergeProperties(old json.RawMessage, sent map[string]json.RawMessage) (string, error) {
	merged := map[string]json.RawMessage{}
	if len(old) > 0 {
		if err := json.Unmarshal(old, &merged); err != nil {
			return "", fmt.Errorf("stored group properties: %w", err)
		}
	}
	for k, v := range sent {
		merged[k] = v
	}
	// Marshal would write <, > and & as \u escapes; the text is kept as sent.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(merged); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
