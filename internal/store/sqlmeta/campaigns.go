package sqlmeta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"strata/internal/analytics"
	"strata/internal/store/sqlbuild"
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
	err = s.conn().QueryRowContext(ctx,
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
	return queryOne(ctx, s.conn(), fmt.Sprintf("campaign %d", id), scanCampaign,
		`SELECT `+campaignColumns+` FROM campaigns WHERE product_id = $1 AND id = $2`, productID, id)
}

// ListCampaigns returns a product's campaigns, oldest first.
func (s *Store) ListCampaigns(ctx context.Context, productID int64) ([]analytics.Campaign, error) {
	return QueryAll(ctx, s.conn(), "listing campaigns", scanCampaign,
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
	res, err := s.conn().ExecContext(ctx,
		`UPDATE campaigns SET name = $1, status = $2, experiment_id = $3, flag_key = $4, definition = $5, updated_at = $6
		 WHERE product_id = $7 AND id = $8`,
		c.Name, string(c.Status), c.ExperimentID, c.FlagKey, def, c.UpdatedAt, c.ProductID, c.ID)
	return affected(res, err, fmt.Sprintf("campaign %d", c.ID))
}

// DeleteCampaign removes a campaign, its outcomes and its survey
// responses, together.
func (s *Store) DeleteCampaign(ctx context.Context, productID, id int64) error {
	return s.inTx(ctx, "deleting campaign", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM campaigns WHERE product_id = $1 AND id = $2`, productID, id)
		if err := affected(res, err, fmt.Sprintf("campaign %d", id)); err != nil {
			return err
		}
		// The users' rows keep their states with the campaign, which no
		// request reads again (docs/messages.md, "The per-user state").
		if _, err := tx.ExecContext(ctx, `DELETE FROM message_outcomes WHERE product_id = $1 AND campaign_id = $2`, productID, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM survey_responses WHERE product_id = $1 AND campaign_id = $2`, productID, id)
		return err
	})
}

// AutoRender reports a product's auto-render messages setting; a product
// that never set it has it off.
func (s *Store) AutoRender(ctx context.Context, productID int64) (bool, error) {
	var on bool
	err := s.conn().QueryRowContext(ctx, `SELECT auto_render FROM message_settings WHERE product_id = $1`, productID).Scan(&on)
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
	_, err := s.conn().ExecContext(ctx,
		`INSERT INTO message_settings (product_id, auto_render, updated_at) VALUES ($1, $2, $3)
		 ON CONFLICT (product_id) DO UPDATE SET auto_render = EXCLUDED.auto_render, updated_at = EXCLUDED.updated_at`,
		productID, on, s.stamp())
	if err != nil {
		return fmt.Errorf("storing message settings: %w", err)
	}
	return nil
}

// MessageStates returns users' states with the product's campaigns, from
// their rows, found through user_key's index by one IN list.
func (s *Store) MessageStates(ctx context.Context, productID int64, distinctIDs []string) (map[string][]analytics.MessageState, error) {
	out := make(map[string][]analytics.MessageState, len(distinctIDs))
	if len(distinctIDs) == 0 {
		return out, nil
	}
	// The IN list has a power-of-two length, the last key repeated, so
	// that a few prepared statements serve every batch.
	n := 1
	for n < len(distinctIDs) {
		n *= 2
	}
	args := make([]any, n)
	for i := range args {
		args[i] = userKey(productID, distinctIDs[min(i, len(distinctIDs)-1)])
	}
	stmt, err := s.prepared(ctx, statesQuery(n))
	if err != nil {
		return nil, fmt.Errorf("reading message states: %w", err)
	}
	type row struct {
		id     string
		states []analytics.MessageState
	}
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("reading message states: %w", err)
	}
	found, err := sqlbuild.Collect("reading message states", rows, func(r *sql.Rows) (row, error) {
		var x row
		var raw string
		if err := r.Scan(&x.id, &raw); err != nil {
			return x, err
		}
		return x, json.Unmarshal([]byte(raw), &x.states)
	})
	if err != nil {
		return nil, err
	}
	for _, x := range found {
		out[x.id] = x.states
	}
	return out, nil
}

// statesQuery reads the rows of n user keys.
func statesQuery(n int) string {
	var q strings.Builder
	q.WriteString(`SELECT distinct_id, states FROM message_users WHERE user_key IN (`)
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("$" + strconv.Itoa(i+1))
	}
	q.WriteString(")")
	return q.String()
}

// userKey is the one-column key of a user's row (migration 0017): the
// product and the distinct_id, which may hold any character, so the
// product comes first and ends at the first '/'.
func userKey(productID int64, distinctID string) string {
	return strconv.FormatInt(productID, 10) + "/" + distinctID
}

// PutMessageStates replaces a user's states and records an outcome, in one
// transaction.
func (s *Store) PutMessageStates(ctx context.Context, productID int64, distinctID string, states []analytics.MessageState, outcomeOf int64, outcome string) error {
	if states == nil {
		states = []analytics.MessageState{}
	}
	b, err := json.Marshal(states)
	if err != nil {
		return fmt.Errorf("storing message states: %w", err)
	}
	now := s.stamp()
	return s.inTx(ctx, "storing message states", func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO message_users (user_key, product_id, distinct_id, states, updated_at) VALUES ($1, $2, $3, $4, $5)
			 ON CONFLICT (user_key) DO UPDATE SET states = EXCLUDED.states, updated_at = EXCLUDED.updated_at`,
			userKey(productID, distinctID), productID, distinctID, string(b), now); err != nil {
			return err
		}
		if outcome == "" {
			return nil
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO message_outcomes (product_id, campaign_id, distinct_id, outcome, reached_at) VALUES ($1, $2, $3, $4, $5)`,
			productID, outcomeOf, distinctID, outcome, now)
		return err
	})
}

// CampaignStats counts each campaign's users by outcome.
func (s *Store) CampaignStats(ctx context.Context, productID int64) (map[int64]analytics.CampaignStats, error) {
	type row struct {
		id      int64
		outcome string
		users   int
	}
	rows, err := QueryAll(ctx, s.conn(), "counting campaign outcomes", func(r Scanner) (row, error) {
		var x row
		err := r.Scan(&x.id, &x.outcome, &x.users)
		return x, err
	}, `SELECT campaign_id, outcome, count(DISTINCT distinct_id) FROM message_outcomes
		WHERE product_id = $1 GROUP BY campaign_id, outcome`, productID)
	if err != nil {
		return nil, err
	}
	out := map[int64]analytics.CampaignStats{}
	for _, x := range rows {
		st := out[x.id]
		switch x.outcome {
		case analytics.OutcomeShown:
			st.Shown = x.users
		case analytics.MessageCTAClick:
			st.CTAClicks = x.users
		case analytics.MessageComplete:
			st.Completed = x.users
		case analytics.MessageDismiss:
			st.Dismissed = x.users
		}
		out[x.id] = st
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
	err = s.conn().QueryRowContext(ctx,
		`INSERT INTO survey_responses (product_id, campaign_id, distinct_id, variant, answers, created_at)
		 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		productID, r.CampaignID, r.DistinctID, r.Variant, string(b), r.At).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("storing survey response: %w", err)
	}
	return nil
}

// SurveyResponses returns a page of a campaign's responses, oldest first,
// in two statements: the page's ids first, from the narrow key columns
// (product, campaign, id: the index's, migration 0020), then the rows
// between its first and last id. One statement that sorted by id with a
// limit made DuckDB read the answers of every response after afterID for
// each page (2.5 s for the pages of 2,500 responses of 20 KB, against
// 0.1 s this way); here each page reads its own rows' answers.
func (s *Store) SurveyResponses(ctx context.Context, productID, campaignID, afterID int64, limit int) ([]analytics.SurveyResponse, error) {
	var lo, hi sql.NullInt64
	err := s.conn().QueryRowContext(ctx, `SELECT min(id), max(id) FROM (
			SELECT id FROM survey_responses WHERE product_id = $1 AND campaign_id = $2 AND id > $3 ORDER BY id LIMIT $4) AS page`,
		productID, campaignID, afterID, limit).Scan(&lo, &hi)
	if err != nil {
		return nil, fmt.Errorf("reading survey responses: %w", err)
	}
	if !lo.Valid {
		return nil, nil
	}
	return QueryAll(ctx, s.conn(), "reading survey responses", func(row Scanner) (analytics.SurveyResponse, error) {
		var r analytics.SurveyResponse
		var answers string
		if err := row.Scan(&r.ID, &r.CampaignID, &r.DistinctID, &r.Variant, &answers, &r.At); err != nil {
			return r, err
		}
		r.At = r.At.UTC()
		return r, json.Unmarshal([]byte(answers), &r.Answers)
	}, `SELECT id, campaign_id, distinct_id, variant, answers, created_at FROM survey_responses
		WHERE product_id = $1 AND campaign_id = $2 AND id >= $3 AND id <= $4 ORDER BY id`, productID, campaignID, lo.Int64, hi.Int64)
}
