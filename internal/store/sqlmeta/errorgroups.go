package sqlmeta

import (
	"context"
	"database/sql"
	"fmt"

	"strata/internal/analytics"
)

// The statuses of error groups (migration 0015, docs/errors.md).

var _ analytics.ErrorGroupStore = (*Store)(nil)

// ErrorGroupStatuses returns a product's recorded statuses.
func (s *Store) ErrorGroupStatuses(ctx context.Context, productID int64) (map[string]analytics.ErrorGroupStatus, error) {
	list, err := QueryAll(ctx, s.conn(), "listing error group statuses", func(r Scanner) (analytics.ErrorGroupStatus, error) {
		var st analytics.ErrorGroupStatus
		var at sql.NullTime
		err := r.Scan(&st.Fingerprint, &st.Status, &st.ResolvedRelease, &at, &st.ChangedBy)
		if at.Valid {
			t := at.Time.UTC()
			st.ChangedAt = &t
		}
		return st, err
	}, `SELECT fingerprint, status, resolved_release, changed_at, changed_by FROM error_groups WHERE product_id = $1`, productID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]analytics.ErrorGroupStatus, len(list))
	for _, st := range list {
		out[st.Fingerprint] = st
	}
	return out, nil
}

// SetErrorGroupStatus records a group's status, replacing the last one.
// The key is updated in place (ON CONFLICT), never deleted and inserted:
// DuckDB's primary-key check refuses that within one transaction.
func (s *Store) SetErrorGroupStatus(ctx context.Context, productID int64, st *analytics.ErrorGroupStatus) error {
	now := s.stamp()
	st.ChangedAt = &now
	_, err := s.conn().ExecContext(ctx,
		`INSERT INTO error_groups (product_id, fingerprint, status, resolved_release, changed_at, changed_by)
		 VALUES ($1, $2, $3, $4, $5, $6)
		 ON CONFLICT (product_id, fingerprint) DO UPDATE SET status = excluded.status,
		   resolved_release = excluded.resolved_release, changed_at = excluded.changed_at, changed_by = excluded.changed_by`,
		productID, st.Fingerprint, st.Status, st.ResolvedRelease, now, st.ChangedBy)
	if err != nil {
		return fmt.Errorf("setting error group status: %w", err)
	}
	return nil
}
