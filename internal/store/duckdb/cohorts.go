package duckdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"strata/internal/analytics"
)

// Cohort members and the behaviour streams of a cohort's computation
// (migration 0044, docs/queries.md, "Cohorts").

var _ analytics.CohortMemberStore = (*Store)(nil)

// cohortInsertRows is how many ids one INSERT writes: a statement's
// parameters stay few, and its text is one of a handful (the sizes of a
// batch's last statement vary).
const cohortInsertRows = 500

// AppendCohortMembers adds ids to a generation of a cohort.
func (s *Store) AppendCohortMembers(ctx context.Context, productID, cohortID, generation int64, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := s.pool.writable(); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("writing cohort members: %w", err)
	}
	defer tx.Rollback()
	// The ids go as one list parameter, unnested: a statement of thousands
	// of VALUES rows costs DuckDB more to parse and bind than to insert.
	if _, err := tx.ExecContext(ctx, `INSERT INTO cohort_members (product_id, cohort_id, generation, distinct_id)
		SELECT $1, $2, $3, unnest(CAST($4 AS VARCHAR[]))`, productID, cohortID, generation, ids); err != nil {
		return fmt.Errorf("writing cohort members: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("writing cohort members: %w", err)
	}
	return nil
}

// CohortSize counts a generation's distinct members.
func (s *Store) CohortSize(ctx context.Context, productID, cohortID, generation int64) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT count(DISTINCT distinct_id) FROM cohort_members
		WHERE product_id = $1 AND cohort_id = $2 AND generation = $3`, productID, cohortID, generation).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting cohort members: %w", err)
	}
	return n, nil
}

// CohortMembers returns one page of a generation's members in byte
// order (DuckDB's default collation is byte order; COLLATE "C" says so).
func (s *Store) CohortMembers(ctx context.Context, productID, cohortID, generation int64, after string, limit int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT distinct_id FROM cohort_members
		WHERE product_id = $1 AND cohort_id = $2 AND generation = $3 AND distinct_id COLLATE "C" > $4
		ORDER BY distinct_id COLLATE "C" LIMIT $5`, productID, cohortID, generation, after, limit)
	if err != nil {
		return nil, fmt.Errorf("listing cohort members: %w", err)
	}
	return scanIDs(rows, "listing cohort members")
}

// DropCohortGenerations deletes every generation of a cohort but keep.
func (s *Store) DropCohortGenerations(ctx context.Context, productID, cohortID, keep int64) error {
	if err := s.pool.writable(); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `DELETE FROM cohort_members WHERE product_id = $1 AND cohort_id = $2 AND generation <> $3`,
		productID, cohortID, keep)
	if err != nil {
		return fmt.Errorf("dropping cohort generations: %w", err)
	}
	return nil
}

// DropPersonSets deletes the product's person sets of generations below
// before.
func (s *Store) DropPersonSets(ctx context.Context, productID, before int64) error {
	if err := s.pool.writable(); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM cohort_members WHERE product_id = $1 AND cohort_id < 0 AND generation < $2`, productID, before); err != nil {
		return fmt.Errorf("dropping person sets: %w", err)
	}
	return nil
}

// PersonCohorts lists the saved cohorts' generations that hold a person
// (a person set, cohort_id below 0, is no cohort of theirs).
func (s *Store) PersonCohorts(ctx context.Context, productID int64, distinctID string) ([]analytics.CohortMembership, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT cohort_id, generation FROM cohort_members
		WHERE product_id = $1 AND distinct_id = $2 AND cohort_id > 0 ORDER BY cohort_id, generation`, productID, distinctID)
	if err != nil {
		return nil, fmt.Errorf("reading a person's cohorts: %w", err)
	}
	defer rows.Close()
	var out []analytics.CohortMembership
	for rows.Next() {
		var m analytics.CohortMembership
		if err := rows.Scan(&m.CohortID, &m.Generation); err != nil {
			return nil, fmt.Errorf("reading a person's cohorts: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// DeleteCohortMemberships deletes distinctIDs from every cohort of the
// product.
func (s *Store) DeleteCohortMemberships(ctx context.Context, productID int64, distinctIDs []string) error {
	if len(distinctIDs) == 0 {
		return nil
	}
	if err := s.pool.writable(); err != nil {
		return err
	}
	for start := 0; start < len(distinctIDs); start += cohortInsertRows {
		part := distinctIDs[start:min(start+cohortInsertRows, len(distinctIDs))]
		args := []any{productID}
		marks := make([]string, len(part))
		for i, id := range part {
			args = append(args, id)
			marks[i] = "$" + strconv.Itoa(i+2)
		}
		if _, err := s.db.ExecContext(ctx, `DELETE FROM cohort_members WHERE product_id = $1 AND distinct_id IN (`+
			strings.Join(marks, ", ")+`)`, args...); err != nil {
			return fmt.Errorf("deleting cohort memberships: %w", err)
		}
	}
	return nil
}

// EachBehaviorPerson streams the persons that did q.Event at least
// q.AtLeast times since q.Since, human events of the live environment, in
// byte order. DuckDB groups and sorts (spilling past its memory limit);
// only the ids cross over, one row at a time.
func (s *Store) EachBehaviorPerson(ctx context.Context, q analytics.BehaviorQuery, fn func(string) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT distinct_id FROM events
		WHERE product_id = $1 AND env = $2 AND event = $3 AND ts >= $4 AND NOT is_bot
		GROUP BY distinct_id HAVING count(*) >= $5 ORDER BY distinct_id COLLATE "C"`,
		q.ProductID, string(analytics.EnvLive), q.Event, q.Since.UTC(), q.AtLeast)
	if err != nil {
		return fmt.Errorf("reading a behaviour's persons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("reading a behaviour's persons: %w", err)
		}
		if err := fn(id); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading a behaviour's persons: %w", err)
	}
	return nil
}

// scanIDs reads a result of one string column.
func scanIDs(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}, what string) ([]string, error) {
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}
