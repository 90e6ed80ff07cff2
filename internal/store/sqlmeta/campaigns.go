package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"strata/internal/analytics"
)

// Message campaigns, the products' message settings, the users' states
// with campaigns and survey responses (migration 0017, docs/messages.md).

var _ analytics.CampaignStore = (*Store)(nil)

const campaignColumns = `id, product_id, name, status, experiment_id, flag_key, definition, created_at, updated_at`

// campaignDefinition is the stored JSON of what a campaign's rules read.
type campaignDefinition struct {
	Trigger   analytics.Trigger           `json:"trigger"`
	PathRegex string                      `json:"pathRegex"`
	Audience  analytics.Audience          `json:"audience"`
	Cap       analytics.FrequencyCap      `json:"cap"`
	Variants  []analytics.CampaignVariant `json:"variants"`
}

func definitionJSON(c *analytics.Campaign) (string, error) {
	b, err := json.Marshal(campaignDefinition{c.Trigger, c.PathRegex, c.Audience, c.Cap, c.Variants})
	return string(b), err
}

func scanCampaign(row Scanner) (analytics.Campaign, error) {
	var c analytics.Campaign
	var experiment sql.NullInt64
	var def string
	if err := row.Scan(&c.ID, &c.ProductID, &c.Name, &c.Status, &experiment, &c.FlagKey, &def, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return c, err
	}
	if experiment.Valid {
		c.ExperimentID = &experiment.Int64
	}
	var d campaignDefinition
	if err := json.Unmarshal([]byte(def), &d); err != nil {
		return c, fmt.Errorf("campaign %d: stored definition: %w", c.ID, err)
	}
	c.Trigger, c.PathRegex, c.Audience, c.Cap, c.Variants = d.Trigger, d.PathRegex, d.Audience, d.Cap, d.Variants
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// CreateCampaign stores c and fills in its ID and times.
func (s *Store) CreateCampaign(ctx context.Context, c *analytics.Campaign) error {
	def, err := definitionJSON(c)
	if err != nil {
		return fmt.Errorf("creating campaign: %w", err)
	}
	c.CreatedAt = s.stamp()
	c.UpdatedAt = c.CreatedAt
	err = s.db.QueryRowContext(ctx,
		`INSERT INTO campaigns (product_id, name, status, experiment_id, flag_key, definition, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		c.ProductID, c.Name, string(c.Status), c.ExperimentID, c.FlagKey, def, c.CreatedAt, c.UpdatedAt).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("creating campaign: %w", err)
	}
	return nil
}

// Campaign returns one campaign of a product, or ErrNotFound.
func (s *Store) Campaign(ctx context.Context, productID, id int64) (analytics.Campaign, error) {
	c, err := scanCampaign(s.db.QueryRowContext(ctx,
		`SELECT `+campaignColumns+` FROM campaigns WHERE product_id = $1 AND id = $2`, productID, id))
	if err != nil {
		return c, notFound(err, fmt.Sprintf("campaign %d", id))
	}
	return c, nil
}

// ListCampaigns returns a product's campaigns, oldest first.
func (s *Store) ListCampaigns(ctx context.Context, productID int64) ([]analytics.Campaign, error) {
	return QueryAll(ctx, s.db, "listing campaigns", scanCampaign,
		`SELECT `+campaignColumns+` FROM campaigns WHERE product_id = $1 ORDER BY id`, productID)
}

// UpdateCampaign replaces a campaign's fields (never its product or
// creation time).
func (s *Store) UpdateCampaign(ctx context.Context, c *analytics.Campaign) error {
	def, err := definitionJSON(c)
	if err != nil {
		return fmt.Errorf("updating campaign: %w", err)
	}
	c.UpdatedAt = s.stamp()
	res, err := s.db.ExecContext(ctx,
		`UPDATE campaigns SET name = $1, status = $2, experiment_id = $3, flag_key = $4, definition = $5, updated_at = $6
		 WHERE product_id = $7 AND id = $8`,
		c.Name, string(c.Status), c.ExperimentID, c.FlagKey, def, c.UpdatedAt, c.ProductID, c.ID)
	return affectedOne(res, err, fmt.Sprintf("campaign %d", c.ID))
}

// DeleteCampaign removes a campaign, its users' states and its survey
// responses, together.
func (s *Store) DeleteCampaign(ctx context.Context, productID, id int64) error {
	return s.inTx(ctx, "deleting campaign", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM campaigns WHERE product_id = $1 AND id = $2`, productID, id)
		if err := affectedOne(res, err, fmt.Sprintf("campaign %d", id)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM message_states WHERE product_id = $1 AND campaign_id = $2`, productID, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM survey_responses WHERE product_id = $1 AND campaign_id = $2`, productID, id)
		return err
	})
}

// affectedOne turns an UPDATE or DELETE that touched no row into
// ErrNotFound.
func affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, analytics.ErrNotFound)
	}
	return nil
}

// AutoRender reports a product's auto-render messages setting; a product
// that never set it has it off.
func (s *Store) AutoRender(ctx context.Context, productID int64) (bool, error) {
	var on bool
	err := s.db.QueryRowContext(ctx, `SELECT auto_render FROM message_settings WHERE product_id = $1`, productID).Scan(&on)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading message settings: %w", err)
	}
	return on, nil
}

// SetAutoRender sets a product's auto-render messages setting.
func (s *Store) SetAutoRender(ctx context.Context, productID int64, on bool) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO message_settings (product_id, auto_render, updated_at) VALUES ($1, $2, $3)
		 ON CONFLICT (product_id) DO UPDATE SET auto_render = EXCLUDED.auto_render, updated_at = EXCLUDED.updated_at`,
		productID, on, s.stamp())
	if err != nil {
		return fmt.Errorf("storing message settings: %w", err)
	}
	return nil
}

// MessageStates returns a user's states with the product's campaigns, by
// one lookup of the primary key's prefix.
func (s *Store) MessageStates(ctx context.Context, productID int64, distinctID string) ([]analytics.MessageState, error) {
	return QueryAll(ctx, s.db, "reading message states", func(row Scanner) (analytics.MessageState, error) {
		var st analytics.MessageState
		err := row.Scan(&st.CampaignID, &st.Impressions, &st.Day, &st.DayImpressions, &st.Ended, &st.Variant, &st.UpdatedAt)
		st.DistinctID = distinctID
		st.UpdatedAt = st.UpdatedAt.UTC()
		return st, err
	}, `SELECT campaign_id, impressions, day, day_impressions, ended, variant, updated_at FROM message_states
		WHERE product_id = $1 AND distinct_id = $2 ORDER BY campaign_id`, productID, distinctID)
}

// PutMessageState stores a user's state with a campaign, replacing the
// one before.
func (s *Store) PutMessageState(ctx context.Context, productID int64, st analytics.MessageState) error {
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO message_states (product_id, distinct_id, campaign_id, impressions, day, day_impressions, ended, variant, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		 ON CONFLICT (product_id, distinct_id, campaign_id) DO UPDATE SET impressions = EXCLUDED.impressions,
		   day = EXCLUDED.day, day_impressions = EXCLUDED.day_impressions, ended = EXCLUDED.ended,
		   variant = EXCLUDED.variant, updated_at = EXCLUDED.updated_at`,
		productID, st.DistinctID, st.CampaignID, st.Impressions, st.Day, st.DayImpressions, st.Ended, st.Variant, st.UpdatedAt.UTC())
	if err != nil {
		return fmt.Errorf("storing message state: %w", err)
	}
	return nil
}

// CampaignStats counts each campaign's users: shown (at least one
// impression), and by terminal event.
func (s *Store) CampaignStats(ctx context.Context, productID int64) (map[int64]analytics.CampaignStats, error) {
	type row struct {
		id int64
		st analytics.CampaignStats
	}
	rows, err := QueryAll(ctx, s.db, "counting campaign outcomes", func(r Scanner) (row, error) {
		var x row
		err := r.Scan(&x.id, &x.st.Shown, &x.st.CTAClicks, &x.st.Completed, &x.st.Dismissed)
		return x, err
	}, `SELECT campaign_id,
		  SUM(CASE WHEN impressions > 0 THEN 1 ELSE 0 END),
		  SUM(CASE WHEN ended = $2 THEN 1 ELSE 0 END),
		  SUM(CASE WHEN ended = $3 THEN 1 ELSE 0 END),
		  SUM(CASE WHEN ended = $4 THEN 1 ELSE 0 END)
		FROM message_states WHERE product_id = $1 GROUP BY campaign_id`,
		productID, analytics.MessageCTAClick, analytics.MessageComplete, analytics.MessageDismiss)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]analytics.CampaignStats, len(rows))
	for _, x := range rows {
		out[x.id] = x.st
	}
	return out, nil
}

// AddSurveyResponse stores a response and fills in its ID and time.
func (s *Store) AddSurveyResponse(ctx context.Context, productID int64, r *analytics.SurveyResponse) error {
	b, err := json.Marshal(r.Answers)
	if err != nil {
		return fmt.Errorf("storing survey response: %w", err)
	}
	r.At = s.stamp()
	err = s.db.QueryRowContext(ctx,
		`INSERT INTO survey_responses (product_id, campaign_id, distinct_id, variant, answers, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		productID, r.CampaignID, r.DistinctID, r.Variant, string(b), r.At).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("storing survey response: %w", err)
	}
	return nil
}

// SurveyResponses returns a campaign's responses, oldest first.
func (s *Store) SurveyResponses(ctx context.Context, productID, campaignID int64) ([]analytics.SurveyResponse, error) {
	return QueryAll(ctx, s.db, "reading survey responses", func(row Scanner) (analytics.SurveyResponse, error) {
		var r analytics.SurveyResponse
		var answers string
		if err := row.Scan(&r.ID, &r.CampaignID, &r.DistinctID, &r.Variant, &answers, &r.At); err != nil {
			return r, err
		}
		r.At = r.At.UTC()
		return r, json.Unmarshal([]byte(answers), &r.Answers)
	}, `SELECT id, campaign_id, distinct_id, variant, answers, created_at FROM survey_responses
		WHERE product_id = $1 AND campaign_id = $2 ORDER BY id`, productID, campaignID)
}
