package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"strata/internal/analytics"
)

// Feature flags of a product and their audit trail (migration 0010,
// docs/flags.md), and their targeting conditions (migration 0046, a
// sibling table: a flag without a row has none). Every write and its
// trail entry commit together.

var _ analytics.FlagStore = (*Store)(nil)

// flagSelect reads flags with their conditions; the WHERE clause names
// flags f.
const flagSelect = `SELECT f.id, f.product_id, f.key, f.name, f.description, f.enabled, f.rollout_bp, f.variants,
	COALESCE(c.conditions, '[]'), f.created_at, f.updated_at
	FROM flags f LEFT JOIN flag_conditions c ON c.flag_id = f.id`

func scanFlag(row Scanner) (analytics.Flag, error) {
	var f analytics.Flag
	var bp int
	var variants, conditions string
	err := row.Scan(&f.ID, &f.ProductID, &f.Key, &f.Name, &f.Description, &f.Enabled, &bp, &variants, &conditions, &f.CreatedAt, &f.UpdatedAt)
	if err != nil {
		return f, err
	}
	f.Rollout = float64(bp) / 100
	if err := json.Unmarshal([]byte(variants), &f.Variants); err != nil {
		return f, fmt.Errorf("flag %d: stored variants: %w", f.ID, err)
	}
	if err := json.Unmarshal([]byte(conditions), &f.Conditions); err != nil {
		return f, fmt.Errorf("flag %d: stored conditions: %w", f.ID, err)
	}
	return f, nil
}

// conditionsJSON is the stored form of a flag's conditions: never null.
func conditionsJSON(cs []analytics.FlagCondition) (string, error) {
	if cs == nil {
		cs = []analytics.FlagCondition{}
	}
	b, err := json.Marshal(cs)
	return string(b), err
}

// saveConditions stores a flag's conditions in its transaction: the row is
// updated in place, or added when the flag has none and gets some.
func saveConditions(ctx context.Context, tx *sql.Tx, flagID int64, conditions string) error {
	res, err := tx.ExecContext(ctx, `UPDATE flag_conditions SET conditions = $1 WHERE flag_id = $2`, conditions, flagID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 || conditions == "[]" {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO flag_conditions (flag_id, conditions) VALUES ($1, $2)`, flagID, conditions)
	return err
}

// variantsJSON is the stored form of a flag's arms: never null.
func variantsJSON(vs []analytics.FlagVariant) (string, error) {
	if vs == nil {
		vs = []analytics.FlagVariant{}
	}
	b, err := json.Marshal(vs)
	return string(b), err
}

// CreateFlag stores f and records its creation, or returns ErrDuplicate
// when the product has a flag with f's key.
func (s *Store) CreateFlag(ctx context.Context, f *analytics.Flag, actor string) error {
	variants, err := variantsJSON(f.Variants)
	if err != nil {
		return fmt.Errorf("creating flag: %w", err)
	}
	conditions, err := conditionsJSON(f.Conditions)
	if err != nil {
		return fmt.Errorf("creating flag: %w", err)
	}
	f.CreatedAt = s.stamp()
	f.UpdatedAt = f.CreatedAt
	return s.inTx(ctx, "creating flag", func(tx *sql.Tx) error {
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM flags WHERE product_id = $1 AND key = $2`,
			f.ProductID, f.Key).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("flag %q: %w", f.Key, analytics.ErrDuplicate)
		}
		err := tx.QueryRowContext(ctx,
			`INSERT INTO flags (product_id, key, name, description, enabled, rollout_bp, variants, created_at, updated_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
			f.ProductID, f.Key, f.Name, f.Description, f.Enabled, analytics.BasisPoints(f.Rollout), variants,
			f.CreatedAt, f.UpdatedAt).Scan(&f.ID)
		if err != nil {
			return err
		}
		if err := saveConditions(ctx, tx, f.ID, conditions); err != nil {
			return err
		}
		return s.recordFlag(ctx, tx, f, "created", actor, f.ChangesFrom(nil))
	})
}

// Flag returns one flag of a product, or ErrNotFound.
func (s *Store) Flag(ctx context.Context, productID, id int64) (analytics.Flag, error) {
	return queryOne(ctx, s.conn(), fmt.Sprintf("flag %d", id), scanFlag,
		flagSelect+` WHERE f.product_id = $1 AND f.id = $2`, productID, id)
}

// ListFlags returns a product's flags, oldest first.
func (s *Store) ListFlags(ctx context.Context, productID int64) ([]analytics.Flag, error) {
	return QueryAll(ctx, s.conn(), "listing flags", scanFlag,
		flagSelect+` WHERE f.product_id = $1 ORDER BY f.id`, productID)
}

// UpdateFlag replaces what may change of a flag and records what did.
func (s *Store) UpdateFlag(ctx context.Context, f *analytics.Flag, actor string) error {
	variants, err := variantsJSON(f.Variants)
	if err != nil {
		return fmt.Errorf("updating flag: %w", err)
	}
	conditions, err := conditionsJSON(f.Conditions)
	if err != nil {
		return fmt.Errorf("updating flag: %w", err)
	}
	return s.inTx(ctx, "updating flag", func(tx *sql.Tx) error {
		old, err := scanFlag(tx.QueryRowContext(ctx,
			flagSelect+` WHERE f.product_id = $1 AND f.id = $2`, f.ProductID, f.ID))
		if err != nil {
			return notFound(err, fmt.Sprintf("flag %d", f.ID))
		}
		f.Key, f.CreatedAt = old.Key, old.CreatedAt
		changes := f.ChangesFrom(&old)
		if len(changes) == 0 {
			f.UpdatedAt = old.UpdatedAt
			return nil
		}
		f.UpdatedAt = s.stamp()
		if _, err := tx.ExecContext(ctx,
			`UPDATE flags SET name = $1, description = $2, enabled = $3, rollout_bp = $4, variants = $5, updated_at = $6
			 WHERE product_id = $7 AND id = $8`,
			f.Name, f.Description, f.Enabled, analytics.BasisPoints(f.Rollout), variants, f.UpdatedAt, f.ProductID, f.ID); err != nil {
			return err
		}
		if err := saveConditions(ctx, tx, f.ID, conditions); err != nil {
			return err
		}
		return s.recordFlag(ctx, tx, f, "updated", actor, changes)
	})
}

// DeleteFlag removes a flag of a product and records it; its trail stays.
func (s *Store) DeleteFlag(ctx context.Context, productID, id int64, actor string) error {
	return s.inTx(ctx, "deleting flag", func(tx *sql.Tx) error {
		old, err := scanFlag(tx.QueryRowContext(ctx,
			flagSelect+` WHERE f.product_id = $1 AND f.id = $2`, productID, id))
		if err != nil {
			return notFound(err, fmt.Sprintf("flag %d", id))
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM flags WHERE product_id = $1 AND id = $2`, productID, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM flag_conditions WHERE flag_id = $1`, id); err != nil {
			return err
		}
		gone := make([]analytics.FieldChange, 0, 7)
		for _, c := range old.ChangesFrom(nil) {
			gone = append(gone, analytics.FieldChange{Field: c.Field, From: c.To})
		}
		return s.recordFlag(ctx, tx, &old, "deleted", actor, gone)
	})
}

// recordFlag adds one entry to the trail, in the write's transaction.
func (s *Store) recordFlag(ctx context.Context, tx *sql.Tx, f *analytics.Flag, action, actor string, changes []analytics.FieldChange) error {
	b, err := json.Marshal(changes)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx,
		`INSERT INTO flag_changes (product_id, flag_id, flag_key, action, actor, changes, changed_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		f.ProductID, f.ID, f.Key, action, actor, string(b), s.stamp())
	return err
}

// FlagChanges returns the trail of one flag of a product, or of all of
// them, newest first.
func (s *Store) FlagChanges(ctx context.Context, productID, flagID int64) ([]analytics.FlagChange, error) {
	query, args := `SELECT id, product_id, flag_id, flag_key, action, actor, changes, changed_at FROM flag_changes
		WHERE product_id = $1 ORDER BY id DESC`, []any{productID}
	if flagID != 0 {
		query, args = `SELECT id, product_id, flag_id, flag_key, action, actor, changes, changed_at FROM flag_changes
		WHERE product_id = $1 AND flag_id = $2 ORDER BY id DESC`, []any{productID, flagID}
	}
	return QueryAll(ctx, s.conn(), "reading flag changes", func(row Scanner) (analytics.FlagChange, error) {
		var c analytics.FlagChange
		var changes string
		if err := row.Scan(&c.ID, &c.ProductID, &c.FlagID, &c.FlagKey, &c.Action, &c.Actor, &changes, &c.At); err != nil {
			return c, err
		}
		c.At = c.At.UTC()
		return c, json.Unmarshal([]byte(changes), &c.Changes)
	}, query, args...)
}

// inTx runs fn in one transaction and commits it; what names the operation
// in errors. An error that is already an ErrNotFound or ErrDuplicate keeps
// its meaning through the wrapping.
func (s *Store) inTx(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback()
	if err := fn(tx.Tx); err != nil {
		if errors.Is(err, analytics.ErrNotFound) || errors.Is(err, analytics.ErrDuplicate) {
			return err
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
