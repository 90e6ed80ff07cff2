package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// Cohorts' definitions and computation state (migration 0043,
// docs/queries.md, "Cohorts"); their members are in the event store.

var _ analytics.CohortStore = (*Store)(nil)

const cohortColumns = `id, product_id, name, description, kind, definition, generation, size, computed_at, state, error, created_by, created_at, updated_at`

func scanCohort(row Scanner) (analytics.Cohort, error) {
	var c analytics.Cohort
	var def string
	var computed sql.NullTime
	err := row.Scan(&c.ID, &c.ProductID, &c.Name, &c.Description, &c.Kind, &def, &c.Generation, &c.Size, &computed,
		&c.State, &c.Error, &c.CreatedBy, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return c, err
	}
	if def != "" {
		c.Definition = &analytics.CohortDefinition{}
		if err := json.Unmarshal([]byte(def), c.Definition); err != nil {
			return c, fmt.Errorf("cohort %d's definition: %w", c.ID, err)
		}
	}
	if computed.Valid {
		at := computed.Time.UTC()
		c.ComputedAt = &at
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// cohortDefinition is how a definition is stored: its JSON, ” for none.
func cohortDefinition(d *analytics.CohortDefinition) (string, error) {
	if d == nil {
		return "", nil
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// CreateCohort stores c, pending, unless the product has max cohorts; the
// count and the insert share a transaction, as boards' do.
func (s *Store) CreateCohort(ctx context.Context, c *analytics.Cohort, max int) error {
	def, err := cohortDefinition(c.Definition)
	if err != nil {
		return err
	}
	c.CreatedAt = s.stamp()
	c.UpdatedAt, c.State, c.Generation, c.Size, c.ComputedAt, c.Error = c.CreatedAt, analytics.CohortPending, 0, 0, nil, ""
	return keepRefusal(s.inTx(ctx, "creating a cohort", func(tx *sql.Tx) error {
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM cohorts WHERE product_id = $1`, c.ProductID).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return analytics.CohortsFull(max)
			}
		}
		return tx.QueryRowContext(ctx, `INSERT INTO cohorts (product_id, name, description, kind, definition, generation, last_generation,
			size, state, error, created_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, 0, 0, 0, $6, '', $7, $8, $8) RETURNING id`,
			c.ProductID, c.Name, c.Description, string(c.Kind), def, string(c.State), c.CreatedBy, c.CreatedAt).Scan(&c.ID)
	}))
}

// Cohort returns one cohort of a product, or ErrNotFound.
func (s *Store) Cohort(ctx context.Context, productID, id int64) (analytics.Cohort, error) {
	return queryOne(ctx, s.conn(), fmt.Sprintf("cohort %d", id), scanCohort,
		`SELECT `+cohortColumns+` FROM cohorts WHERE product_id = $1 AND id = $2`, productID, id)
}

// Cohorts lists a product's cohorts by name, then id.
func (s *Store) Cohorts(ctx context.Context, productID int64) ([]analytics.Cohort, error) {
	return QueryAll(ctx, s.conn(), "listing cohorts", scanCohort,
		`SELECT `+cohortColumns+` FROM cohorts WHERE product_id = $1 ORDER BY name, id`, productID)
}

// UpdateCohort replaces a cohort's name, description and definition. A
// changed definition makes a dynamic cohort pending (its members are those
// of the old definition until the next computation).
func (s *Store) UpdateCohort(ctx context.Context, c *analytics.Cohort) error {
	def, err := cohortDefinition(c.Definition)
	if err != nil {
		return err
	}
	c.UpdatedAt = s.stamp()
	// The new definition is bound twice: PostgreSQL deduces one type per
	// parameter, and a column's and a comparison's differ.
	res, err := s.conn().ExecContext(ctx, `UPDATE cohorts SET name = $1, description = $2, definition = $3, updated_at = $4,
		state = CASE WHEN definition <> $7 AND state <> 'computing' THEN 'pending' ELSE state END
		WHERE product_id = $5 AND id = $6`, c.Name, c.Description, def, c.UpdatedAt, c.ProductID, c.ID, def)
	if err != nil {
		return fmt.Errorf("updating cohort: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("cohort %d: %w", c.ID, analytics.ErrNotFound)
	}
	return nil
}

// DeleteCohort removes a cohort (its members are the event store's to
// drop).
func (s *Store) DeleteCohort(ctx context.Context, productID, id int64) error {
	res, err := s.conn().ExecContext(ctx, `DELETE FROM cohorts WHERE product_id = $1 AND id = $2`, productID, id)
	if err != nil {
		return fmt.Errorf("deleting cohort: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("cohort %d: %w", id, analytics.ErrNotFound)
	}
	return nil
}

// StartCohort hands out the cohort's next generation and marks it
// computing, unless a computation started after staleBefore still runs.
// The condition and the write are one UPDATE, so of two nodes starting at
// once one wins.
func (s *Store) StartCohort(ctx context.Context, productID, id int64, staleBefore time.Time) (int64, bool, error) {
	var gen int64
	err := s.inTx(ctx, "starting a cohort computation", func(tx *sql.Tx) error {
		var state string
		var started sql.NullTime
		if err := tx.QueryRowContext(ctx, `SELECT state, last_generation, started_at FROM cohorts WHERE product_id = $1 AND id = $2`,
			productID, id).Scan(&state, &gen, &started); err != nil {
			return notFound(err, fmt.Sprintf("cohort %d", id))
		}
		if state == string(analytics.CohortComputing) && started.Valid && started.Time.After(staleBefore) {
			gen = 0
			return nil
		}
		now := s.stamp()
		res, err := tx.ExecContext(ctx, `UPDATE cohorts SET state = 'computing', error = '', last_generation = $1, started_at = $2
			WHERE product_id = $3 AND id = $4 AND last_generation = $5`, gen+1, now, productID, id, gen)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			gen = 0
			return err
		}
		gen++
		return nil
	})
	if err != nil {
		return 0, false, keepRefusal(err)
	}
	return gen, gen > 0, nil
}

// FinishCohort makes generation the cohort's current set, unless a later
// generation is already current.
func (s *Store) FinishCohort(ctx context.Context, productID, id, generation, size int64) (bool, error) {
	now := s.stamp()
	res, err := s.conn().ExecContext(ctx, `UPDATE cohorts SET generation = $1, size = $2, computed_at = $3,
		state = CASE WHEN last_generation = $1 THEN 'ready' ELSE state END,
		error = CASE WHEN last_generation = $1 THEN '' ELSE error END
		WHERE product_id = $4 AND id = $5 AND generation < $1`, generation, size, now, productID, id)
	if err != nil {
		return false, fmt.Errorf("finishing a cohort computation: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// FailCohort records why generation's computation failed, unless a later
// one has started.
func (s *Store) FailCohort(ctx context.Context, productID, id, generation int64, message string) error {
	_, err := s.conn().ExecContext(ctx, `UPDATE cohorts SET state = 'failed', error = $1
		WHERE product_id = $2 AND id = $3 AND last_generation = $4`, message, productID, id, generation)
	if err != nil {
		return fmt.Errorf("recording a cohort's failure: %w", err)
	}
	return nil
}

// AbandonCohort puts back the state an upload of generation found,
// unless another has started since.
func (s *Store) AbandonCohort(ctx context.Context, productID, id, generation int64) error {
	_, err := s.conn().ExecContext(ctx, `UPDATE cohorts SET state = CASE WHEN generation > 0 THEN 'ready' ELSE 'pending' END
		WHERE product_id = $1 AND id = $2 AND last_generation = $3`, productID, id, generation)
	if err != nil {
		return fmt.Errorf("abandoning a cohort upload: %w", err)
	}
	return nil
}

// DueCohorts returns the dynamic cohorts of every product to recompute,
// the least recently computed first.
func (s *Store) DueCohorts(ctx context.Context, before, staleBefore time.Time, limit int) ([]analytics.Cohort, error) {
	return QueryAll(ctx, s.conn(), "listing due cohorts", scanCohort,
		`SELECT `+cohortColumns+` FROM cohorts
		 WHERE kind = 'dynamic' AND (computed_at IS NULL OR computed_at < $1)
		   AND (state <> 'computing' OR started_at IS NULL OR started_at < $2)
		 ORDER BY computed_at NULLS FIRST, id LIMIT $3`, before.UTC(), staleBefore.UTC(), limit)
}
