package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"strata/internal/analytics"
)

// Experiments of a product, each on one of its flags (migration 0011,
// docs/flags.md).

var _ analytics.ExperimentStore = (*Store)(nil)

const experimentColumns = `e.id, e.product_id, e.flag_id, COALESCE(f.key, ''), e.name, e.holdout_bp, e.primary_event,
	e.secondary_events, e.start_date, e.end_date, e.status, e.pause_reason, e.winner, e.created_at, e.updated_at`

// experimentFrom joins the flag for its key; a deleted flag leaves it "".
const experimentFrom = ` FROM experiments e LEFT JOIN flags f ON f.id = e.flag_id`

func scanExperiment(row Scanner) (analytics.Experiment, error) {
	var e analytics.Experiment
	var bp int
	var secondary string
	var start, end sql.NullTime
	err := row.Scan(&e.ID, &e.ProductID, &e.FlagID, &e.FlagKey, &e.Name, &bp, &e.PrimaryEvent, &secondary,
		&start, &end, &e.Status, &e.PauseReason, &e.Winner, &e.CreatedAt, &e.UpdatedAt)
	if err != nil {
		return e, err
	}
	e.Holdout = float64(bp) / 100
	if start.Valid {
		t := start.Time.UTC()
		e.StartDate = &t
	}
	if end.Valid {
		t := end.Time.UTC()
		e.EndDate = &t
	}
	if err := json.Unmarshal([]byte(secondary), &e.SecondaryEvents); err != nil {
		return e, fmt.Errorf("experiment %d: stored secondary events: %w", e.ID, err)
	}
	return e, nil
}

// day is a date column's value: the UTC day, or NULL.
func day(t *time.Time) any {
	if t == nil {
		return nil
	}
	d := t.UTC().Truncate(24 * time.Hour)
	return d
}

// CreateExperiment stores e as a draft on its flag.
func (s *Store) CreateExperiment(ctx context.Context, e *analytics.Experiment) error {
	secondary, err := eventsJSON(e.SecondaryEvents)
	if err != nil {
		return fmt.Errorf("creating experiment: %w", err)
	}
	e.Status, e.PauseReason, e.Winner = analytics.ExperimentDraft, "", ""
	e.CreatedAt = s.stamp()
	e.UpdatedAt = e.CreatedAt
	return s.inTx(ctx, "creating experiment", func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT key FROM flags WHERE product_id = $1 AND id = $2`,
			e.ProductID, e.FlagID).Scan(&e.FlagKey); err != nil {
			return notFound(err, fmt.Sprintf("flag %d", e.FlagID))
		}
		var open int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM experiments WHERE product_id = $1 AND flag_id = $2 AND status <> $3`,
			e.ProductID, e.FlagID, string(analytics.ExperimentCompleted)).Scan(&open); err != nil {
			return err
		}
		if open > 0 {
			return fmt.Errorf("flag %q has an experiment: %w", e.FlagKey, analytics.ErrDuplicate)
		}
		return tx.QueryRowContext(ctx,
			`INSERT INTO experiments (product_id, flag_id, name, holdout_bp, primary_event, secondary_events, start_date, end_date,
			   status, pause_reason, winner, created_at, updated_at)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
			e.ProductID, e.FlagID, e.Name, analytics.BasisPoints(e.Holdout), e.PrimaryEvent, secondary, day(e.StartDate), day(e.EndDate),
			string(e.Status), e.PauseReason, e.Winner, e.CreatedAt, e.UpdatedAt).Scan(&e.ID)
	})
}

// eventsJSON is the stored form of a list of event names: never null.
func eventsJSON(events []string) (string, error) {
	if events == nil {
		events = []string{}
	}
	b, err := json.Marshal(events)
	return string(b), err
}

// Experiment returns one experiment of a product, or ErrNotFound.
func (s *Store) Experiment(ctx context.Context, productID, id int64) (analytics.Experiment, error) {
	e, err := scanExperiment(s.db.QueryRowContext(ctx,
		`SELECT `+experimentColumns+experimentFrom+` WHERE e.product_id = $1 AND e.id = $2`, productID, id))
	if err != nil {
		return e, notFound(err, fmt.Sprintf("experiment %d", id))
	}
	return e, nil
}

// ListExperiments returns a product's experiments, oldest first.
func (s *Store) ListExperiments(ctx context.Context, productID int64) ([]analytics.Experiment, error) {
	return QueryAll(ctx, s.db, "listing experiments", scanExperiment,
		`SELECT `+experimentColumns+experimentFrom+` WHERE e.product_id = $1 ORDER BY e.id`, productID)
}

// UpdateExperiment stores what may change of an experiment.
func (s *Store) UpdateExperiment(ctx context.Context, e *analytics.Experiment) error {
	secondary, err := eventsJSON(e.SecondaryEvents)
	if err != nil {
		return fmt.Errorf("updating experiment: %w", err)
	}
	e.UpdatedAt = s.stamp()
	res, err := s.db.ExecContext(ctx,
		`UPDATE experiments SET name = $1, holdout_bp = $2, primary_event = $3, secondary_events = $4, start_date = $5,
		   end_date = $6, status = $7, pause_reason = $8, winner = $9, updated_at = $10 WHERE product_id = $11 AND id = $12`,
		e.Name, analytics.BasisPoints(e.Holdout), e.PrimaryEvent, secondary, day(e.StartDate), day(e.EndDate),
		string(e.Status), e.PauseReason, e.Winner, e.UpdatedAt, e.ProductID, e.ID)
	if err != nil {
		return fmt.Errorf("updating experiment %d: %w", e.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("experiment %d: %w", e.ID, analytics.ErrNotFound)
	}
	return nil
}
