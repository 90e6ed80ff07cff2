package sqlmeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"strata/internal/analytics"
)

// The aliases of error groups (migration 0025, docs/errors.md, "One bug,
// one group").

var _ analytics.ErrorAliasStore = (*Store)(nil)

// ErrorAliases returns a product's aliases, fingerprint → group.
func (s *Store) ErrorAliases(ctx context.Context, productID int64) (map[string]string, error) {
	rows, err := QueryAll(ctx, s.conn(), "listing error aliases", func(r Scanner) ([2]string, error) {
		var a [2]string
		return a, r.Scan(&a[0], &a[1])
	}, `SELECT fingerprint, into_fingerprint FROM error_aliases WHERE product_id = $1`, productID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, a := range rows {
		out[a[0]] = a[1]
	}
	return out, nil
}

// AddErrorAlias records one alias unless its fingerprint has one: the
// insert does nothing on a conflict, and the stored alias is read back,
// so that two nodes that record one at once both answer the first's. The
// count against max and the insert are one statement; two inserts at once
// may still both see room, so a product may go over max by the number of
// nodes that record one at that moment.
func (s *Store) AddErrorAlias(ctx context.Context, productID int64, a analytics.ErrorAlias, max int) (string, error) {
	var into string
	err := s.inTx(ctx, "recording an error alias", func(tx *sql.Tx) error {
		var err error
		if into, err = aliasTarget(ctx, tx, productID, a.Into); err != nil {
			return err
		}
		if into == a.Fingerprint {
			return nil
		}
		var existing string
		switch err := tx.QueryRowContext(ctx, `SELECT into_fingerprint FROM error_aliases WHERE product_id = $1 AND fingerprint = $2`,
			productID, a.Fingerprint).Scan(&existing); {
		case err == nil:
			into = existing
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM error_aliases WHERE product_id = $1`, productID).Scan(&n); err != nil {
				return err
			}
			if n >= max {
				return analytics.ErrorAliasesFull(max)
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO error_aliases (product_id, fingerprint, into_fingerprint, reason, created_at, created_by)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (product_id, fingerprint) DO NOTHING`,
			productID, a.Fingerprint, into, a.Reason, s.stamp(), a.CreatedBy)
		return err
	})
	if err != nil {
		var full *analytics.Error
		if errors.As(err, &full) {
			return "", full
		}
		return "", err
	}
	// Another node's alias may have won the key: read what is stored.
	var stored string
	err = s.conn().QueryRowContext(ctx, `SELECT into_fingerprint FROM error_aliases WHERE product_id = $1 AND fingerprint = $2`,
		productID, a.Fingerprint).Scan(&stored)
	switch {
	case err == nil:
		return stored, nil
	case errors.Is(err, sql.ErrNoRows):
		return into, nil
	}
	return "", fmt.Errorf("reading an error alias: %w", err)
}

// MergeErrorGroups records groups as aliases of into in one transaction.
func (s *Store) MergeErrorGroups(ctx context.Context, productID int64, into string, groups []string, by string, max int) (string, error) {
	err := s.inTx(ctx, "merging error groups", func(tx *sql.Tx) error {
		var err error
		if into, err = aliasTarget(ctx, tx, productID, into); err != nil {
			return err
		}
		now := s.stamp()
		var merged []string
		for _, g := range groups {
			if g == into || slices.Contains(merged, g) {
				continue
			}
			merged = append(merged, g)
			// The aliases of a merged group now count in into.
			if _, err := tx.ExecContext(ctx, `UPDATE error_aliases SET into_fingerprint = $1 WHERE product_id = $2 AND into_fingerprint = $3`,
				into, productID, g); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO error_aliases (product_id, fingerprint, into_fingerprint, reason, created_at, created_by)
				VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (product_id, fingerprint) DO UPDATE SET into_fingerprint = excluded.into_fingerprint,
				reason = excluded.reason, created_at = excluded.created_at, created_by = excluded.created_by`,
				productID, g, into, analytics.AliasMerge, now, by); err != nil {
				return err
			}
		}
		if max > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM error_aliases WHERE product_id = $1`, productID).Scan(&n); err != nil {
				return err
			}
			if n > max {
				return analytics.ErrorAliasesFull(max)
			}
		}
		return nil
	})
	if err != nil {
		var full *analytics.Error
		if errors.As(err, &full) {
			return "", full
		}
		return "", err
	}
	return into, nil
}

// aliasTarget follows fingerprint's alias, if it has one: the group its
// events count in.
func aliasTarget(ctx context.Context, tx *sql.Tx, productID int64, fingerprint string) (string, error) {
	var into string
	err := tx.QueryRowContext(ctx, `SELECT into_fingerprint FROM error_aliases WHERE product_id = $1 AND fingerprint = $2`,
		productID, fingerprint).Scan(&into)
	switch {
	case err == nil:
		return into, nil
	case errors.Is(err, sql.ErrNoRows):
		return fingerprint, nil
	}
	return "", err
}

// MergedErrorGroups returns the aliases whose events count in the group
// of into, newest first.
func (s *Store) MergedErrorGroups(ctx context.Context, productID int64, into string) ([]analytics.ErrorAlias, error) {
	return QueryAll(ctx, s.db, "listing merged error groups", func(r Scanner) (analytics.ErrorAlias, error) {
		var a analytics.ErrorAlias
		err := r.Scan(&a.Fingerprint, &a.Into, &a.Reason, &a.CreatedAt, &a.CreatedBy)
		a.CreatedAt = utc(a.CreatedAt)
		return a, err
	}, `SELECT fingerprint, into_fingerprint, reason, created_at, created_by FROM error_aliases
		WHERE product_id = $1 AND into_fingerprint = $2 ORDER BY created_at DESC, fingerprint`, productID, into)
}

// UnmergeErrorGroups deletes the aliases of fingerprints in one
// transaction and returns them as they were; a fingerprint that is not an
// alias of the product rolls the whole back.
func (s *Store) UnmergeErrorGroups(ctx context.Context, productID int64, fingerprints []string) ([]analytics.ErrorAlias, error) {
	var out []analytics.ErrorAlias
	err := s.inTx(ctx, "unmerging error groups", func(tx *sql.Tx) error {
		for _, fp := range fingerprints {
			if slices.ContainsFunc(out, func(a analytics.ErrorAlias) bool { return a.Fingerprint == fp }) {
				continue
			}
			a := analytics.ErrorAlias{Fingerprint: fp}
			err := tx.QueryRowContext(ctx, `SELECT into_fingerprint, reason, created_at, created_by FROM error_aliases
				WHERE product_id = $1 AND fingerprint = $2`, productID, fp).Scan(&a.Into, &a.Reason, &a.CreatedAt, &a.CreatedBy)
			if errors.Is(err, sql.ErrNoRows) {
				return analytics.ErrorGroupNotMerged(fp)
			}
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM error_aliases WHERE product_id = $1 AND fingerprint = $2`, productID, fp); err != nil {
				return err
			}
			a.CreatedAt = utc(a.CreatedAt)
			out = append(out, a)
		}
		return nil
	})
	if err != nil {
		var refused *analytics.Error
		if errors.As(err, &refused) {
			return nil, refused
		}
		return nil, err
	}
	return out, nil
}
