package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"strata/internal/analytics"
)

// The privacy operations' metadata (docs/privacy.md): deletion jobs
// (migration 0035), the audit log (migration 0034), and a person's survey
// responses and message states, deleted and exported by distinct id.

var _ analytics.PrivacyStore = (*Store)(nil)

// CreatePersonDeletion stores d as pending with its ids.
func (s *Store) CreatePersonDeletion(ctx context.Context, d *analytics.PersonDeletion) error {
	ids, err := json.Marshal(d.DistinctIDs)
	if err != nil {
		return fmt.Errorf("storing a person deletion: %w", err)
	}
	d.Status, d.IDCount, d.Counts = analytics.DeletionPending, len(d.DistinctIDs), map[string]int64{}
	d.CreatedAt = s.stamp()
	d.UpdatedAt = d.CreatedAt
	err = s.conn().QueryRowContext(ctx,
		`INSERT INTO person_deletions (product_id, status, distinct_ids, id_count, counts, error, actor, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, '{}', '', $5, $6, $6) RETURNING id`,
		d.ProductID, d.Status, string(ids), d.IDCount, d.Actor, d.CreatedAt).Scan(&d.ID)
	if err != nil {
		return fmt.Errorf("storing a person deletion: %w", err)
	}
	return nil
}

const deletionColumns = `id, product_id, status, distinct_ids, id_count, counts, error, actor, created_at, updated_at`

func scanDeletion(row Scanner) (analytics.PersonDeletion, error) {
	var d analytics.PersonDeletion
	var ids, counts string
	if err := row.Scan(&d.ID, &d.ProductID, &d.Status, &ids, &d.IDCount, &counts, &d.Error, &d.Actor, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return d, err
	}
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	if err := json.Unmarshal([]byte(ids), &d.DistinctIDs); err != nil {
		return d, err
	}
	return d, json.Unmarshal([]byte(counts), &d.Counts)
}

// PersonDeletion returns one of a product's jobs.
func (s *Store) PersonDeletion(ctx context.Context, productID, id int64) (analytics.PersonDeletion, error) {
	return queryOne(ctx, s.conn(), "person deletion", scanDeletion,
		`SELECT `+deletionColumns+` FROM person_deletions WHERE product_id = $1 AND id = $2`, productID, id)
}

// UnfinishedPersonDeletions returns the jobs a runner must (re)run.
func (s *Store) UnfinishedPersonDeletions(ctx context.Context) ([]analytics.PersonDeletion, error) {
	return QueryAll(ctx, s.conn(), "listing person deletions", scanDeletion,
		`SELECT `+deletionColumns+` FROM person_deletions WHERE status IN ($1, $2) ORDER BY id`,
		analytics.DeletionPending, analytics.DeletionRunning)
}

// UpdatePersonDeletion records a job's progress; a finished job's ids are
// dropped (migration 0035).
func (s *Store) UpdatePersonDeletion(ctx context.Context, d *analytics.PersonDeletion) error {
	counts, err := json.Marshal(d.Counts)
	if err != nil {
		return fmt.Errorf("updating a person deletion: %w", err)
	}
	ids := d.DistinctIDs
	if d.Status == analytics.DeletionDone || d.Status == analytics.DeletionFailed {
		ids = []string{}
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("updating a person deletion: %w", err)
	}
	d.UpdatedAt = s.stamp()
	res, err := s.conn().ExecContext(ctx,
		`UPDATE person_deletions SET status = $1, distinct_ids = $2, counts = $3, error = $4, updated_at = $5
		 WHERE product_id = $6 AND id = $7`,
		d.Status, string(idsJSON), string(counts), d.Error, d.UpdatedAt, d.ProductID, d.ID)
	if err != nil {
		return fmt.Errorf("updating a person deletion: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("person deletion %d: %w", d.ID, analytics.ErrNotFound)
	}
	d.DistinctIDs = ids
	return nil
}

// AddAudit appends an entry to the audit log.
func (s *Store) AddAudit(ctx context.Context, e *analytics.AuditEntry) error {
	e.CreatedAt = s.stamp()
	err := s.conn().QueryRowContext(ctx,
		`INSERT INTO audit_log (product_id, actor, action, summary, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		e.ProductID, e.Actor, e.Action, e.Summary, e.CreatedAt).Scan(&e.ID)
	if err != nil {
		return fmt.Errorf("writing the audit log: %w", err)
	}
	return nil
}

// AuditLog returns a page of a product's audit log, newest first.
func (s *Store) AuditLog(ctx context.Context, productID, before int64, limit int) ([]analytics.AuditEntry, error) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	return QueryAll(ctx, s.conn(), "reading the audit log", func(row Scanner) (analytics.AuditEntry, error) {
		var e analytics.AuditEntry
		err := row.Scan(&e.ID, &e.ProductID, &e.Actor, &e.Action, &e.Summary, &e.CreatedAt)
		e.CreatedAt = e.CreatedAt.UTC()
		return e, err
	}, `SELECT id, product_id, actor, action, summary, created_at FROM audit_log
		WHERE product_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`, productID, before, limit)
}

// inList returns "$first, $first+1, …" for n parameters.
func inList(first, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
	}
	return b.String()
}

// personArgs is the product followed by the ids, the arguments of a
// statement "WHERE product_id = $1 AND distinct_id IN (inList(2, n))".
func personArgs(productID int64, distinctIDs []string) []any {
	args := make([]any, 0, len(distinctIDs)+1)
	args = append(args, productID)
	for _, id := range distinctIDs {
		args = append(args, id)
	}
	return args
}

// DeletePersonSurveyResponses deletes the ids' survey responses.
func (s *Store) DeletePersonSurveyResponses(ctx context.Context, productID int64, distinctIDs []string) (int64, error) {
	if len(distinctIDs) == 0 {
		return 0, nil
	}
	res, err := s.conn().ExecContext(ctx, `DELETE FROM survey_responses WHERE product_id = $1 AND distinct_id IN (`+
		inList(2, len(distinctIDs))+`)`, personArgs(productID, distinctIDs)...)
	if err != nil {
		return 0, fmt.Errorf("deleting survey responses: %w", err)
	}
	return res.RowsAffected()
}

// PersonSurveyResponses streams a person's survey responses.
func (s *Store) PersonSurveyResponses(ctx context.Context, productID int64, distinctID string, fn func(analytics.SurveyResponse) error) error {
	rows, err := s.conn().QueryContext(ctx, `SELECT id, campaign_id, distinct_id, variant, answers, created_at
		FROM survey_responses WHERE product_id = $1 AND distinct_id = $2 ORDER BY id`, productID, distinctID)
	if err != nil {
		return fmt.Errorf("reading survey responses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r analytics.SurveyResponse
		var answers string
		if err := rows.Scan(&r.ID, &r.CampaignID, &r.DistinctID, &r.Variant, &answers, &r.At); err != nil {
			return fmt.Errorf("reading survey responses: %w", err)
		}
		r.At = r.At.UTC()
		if err := json.Unmarshal([]byte(answers), &r.Answers); err != nil {
			return fmt.Errorf("reading survey responses: %w", err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// DeletePersonMessageStates deletes the ids' message states and outcomes
// in one transaction.
func (s *Store) DeletePersonMessageStates(ctx context.Context, productID int64, distinctIDs []string) (int64, error) {
	if len(distinctIDs) == 0 {
		return 0, nil
	}
	var total int64
	err := s.inTx(ctx, "deleting message states", func(tx *sql.Tx) error {
		for _, table := range []string{"message_users", "message_outcomes"} {
			res, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE product_id = $1 AND distinct_id IN (`+
				inList(2, len(distinctIDs))+`)`, personArgs(productID, distinctIDs)...)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}

// PersonMessageStates streams a person's message states, then the
// outcomes the person reached.
func (s *Store) PersonMessageStates(ctx context.Context, productID int64, distinctID string, fn func(analytics.PersonMessageRow) error) error {
	var states string
	var at sql.NullTime
	err := s.conn().QueryRowContext(ctx, `SELECT states, updated_at FROM message_users WHERE user_key = $1`,
		userKey(productID, distinctID)).Scan(&states, &at)
	switch {
	case err == sql.ErrNoRows:
	case err != nil:
		return fmt.Errorf("reading message states: %w", err)
	default:
		if err := fn(analytics.PersonMessageRow{States: json.RawMessage(states), At: at.Time.UTC()}); err != nil {
			return err
		}
	}
	rows, err := s.conn().QueryContext(ctx, `SELECT campaign_id, outcome, reached_at FROM message_outcomes
		WHERE product_id = $1 AND distinct_id = $2 ORDER BY reached_at`, productID, distinctID)
	if err != nil {
		return fmt.Errorf("reading message outcomes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r analytics.PersonMessageRow
		if err := rows.Scan(&r.CampaignID, &r.Outcome, &r.At); err != nil {
			return fmt.Errorf("reading message outcomes: %w", err)
		}
		r.At = r.At.UTC()
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
