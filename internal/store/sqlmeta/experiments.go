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
	e.secondary_events, e.start_date, e.end_date, e.status, e.pause_reason, e.winner, e.started_at, e.sample_ratio,
	e.created_at, e.updated_at`

// experimentFrom joins the flag for its key; a deleted flag leaves it "".
const experimentFrom = ` FROM experiments e LEFT JOIN flags f ON f.id = e.flag_id`

func scanExperiment(row Scanner) (analytics.Experiment, error) {
	var e analytics.Experiment
	var bp int
	var secondary string
	var start, end, started sql.NullTime
	var ratio sql.NullString
	err := row.Scan(&e.ID, &e.ProductID, &e.FlagID, &e.FlagKey, &e.Name, &bp, &e.PrimaryEvent, &secondary,
		&start, &end, &e.Status, &e.PauseReason, &e.Winner, &started, &ratio, &e.CreatedAt, &e.UpdatedAt)
	if err != nil {
		return e, err
	}
	if started.Valid {
		t := started.Time.UTC()
		e.StartedAt = &t
	}
	if ratio.Valid {
		e.SampleRatio = new(analytics.SampleRatio)
		if err := json.Unmarshal([]byte(ratio.String), e.SampleRatio); err != nil {
			return e, fmt.Errorf("experiment %d: stored sample ratio: %w", e.ID, err)
		}
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
	return queryOne(ctx, s.conn(), fmt.Sprintf("experiment %d", id), scanExperiment,
		`SELECT `+experimentColumns+experimentFrom+` WHERE e.product_id = $1 AND e.id = $2`, productID, id)
}

// ListExperiments returns a product's experiments, oldest first.
func (s *Store) ListExperiments(ctx context.Context, productID int64) ([]analytics.Experiment, error) {
	return QueryAll(ctx, s.conn(), "listing experiments", scanExperiment,
		`SELECT `+experimentColumns+experimentFrom+` WHERE e.product_id = $1 ORDER BY e.id`, productID)
}

// UpdateExperiment stores what may change of an experiment.
func (s *Store) UpdateExperiment(ctx context.Context, e *analytics.Experiment) error {
	secondary, err := eventsJSON(e.SecondaryEvents)
	if err != nil {
		return fmt.Errorf("updating experiment: %w", err)
	}
	e.UpdatedAt = s.stamp()
	res, err := s.conn().ExecContext(ctx,
		`UPDATE experiments SET name = $1, holdout_bp = $2, primary_event = $3, secondary_events = $4, start_date = $5,
		   end_date = $6, status = $7, pause_reason = $8, winner = $9, started_at = $10, updated_at = $11
		 WHERE product_id = $12 AND id = $13`,
		e.Name, analytics.BasisPoints(e.Holdout), e.PrimaryEvent, secondary, day(e.StartDate), day(e.EndDate),
		string(e.Status), e.PauseReason, e.Winner, e.StartedAt, e.UpdatedAt, e.ProductID, e.ID)
	if err != nil {
		return fmt.Errorf("updating experiment %d: %w", e.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("experiment %d: %w", e.ID, analytics.ErrNotFound)
	}
	return nil
}

// RunningExperiments returns the running experiments of every product,
// oldest first: what the sample-ratio check looks at.
func (s *Store) RunningExperiments(ctx context.Context) ([]analytics.Experiment, error) {
	return QueryAll(ctx, s.conn(), "listing running experiments", scanExperiment,
		`SELECT `+experimentColumns+experimentFrom+` WHERE e.status = $1 ORDER BY e.id`, string(analytics.ExperimentRunning))
}

// RecordSampleRatio stores a sample-ratio check and, when pause is set,
// pauses the experiment for the mismatch, in one statement that changes
// the status only of an experiment still running: a pause, resume or
// completion made meanwhile is never undone.
func (s *Store) RecordSampleRatio(ctx context.Context, productID, id int64, check analytics.SampleRatio, pause bool) (paused bool, err error) {
	text, err := json.Marshal(check)
	if err != nil {
		return false, fmt.Errorf("recording sample ratio: %w", err)
	}
	now := s.stamp()
	if _, err := s.conn().ExecContext(ctx, `UPDATE experiments SET sample_ratio = $1 WHERE product_id = $2 AND id = $3`,
		string(text), productID, id); err != nil {
		return false, fmt.Errorf("recording sample ratio of experiment %d: %w", id, err)
	}
	if !pause {
		return false, nil
	}
	res, err := s.conn().ExecContext(ctx,
		`UPDATE experiments SET status = $1, pause_reason = $2, updated_at = $3 WHERE product_id = $4 AND id = $5 AND status = $6`,
		string(analytics.ExperimentPaused), analytics.PauseSampleRatio, now, productID, id, string(analytics.ExperimentRunning))
	if err != nil {
		return false, fmt.Errorf("pausing experiment %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// AcquireLease takes or renews the lease name for holder until expires,
// unless another holder has it and it has not expired at now. It reports
// whether holder has the lease. The upsert is one statement, so two nodes
// racing for a free lease cannot both win; the read after it says who did.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, now, expires time.Time) (bool, error) {
	var got string
	err := s.inTx(ctx, "acquiring lease", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3)
			 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
			 WHERE leases.holder = excluded.holder OR leases.expires_at < $4`,
			name, holder, expires.UTC(), now.UTC()); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT holder FROM leases WHERE name = $1`, name).Scan(&got)
	})
	return got == holder, err
}
