package httpapi

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"strata/internal/analytics"
	"strata/internal/auth"
	"strata/internal/messages"
)

// The campaign API: /api/v1/campaigns and /api/v1/messages/settings, for a
// query token or a dashboard session of the product (never an API key,
// never CORS-open). The rules on a campaign's fields are
// analytics.Campaign.Validate's; docs/messages.md explains them.

var errTooManyActive = analytics.Errorf(analytics.KindConflict, "too_many_active_campaigns",
	"The product has %d active campaigns, the most it may have; pause or archive one first.", analytics.MaxActiveCampaigns)

// campaignRequest is the body of POST /campaigns and PUT /campaigns/{id}.
// Pointers tell a field that was left out from an empty one.
type campaignRequest struct {
	Name      *string                     `json:"name"`
	Status    *analytics.CampaignStatus   `json:"status"`
	Trigger   *analytics.Trigger          `json:"trigger"`
	PathRegex *string                     `json:"pathRegex"`
	Audience  *analytics.Audience         `json:"audience"`
	Cap       *analytics.FrequencyCap     `json:"cap"`
	Variants  []analytics.CampaignVariant `json:"variants"`
}

// apply sets c's fields from the request. On a new campaign a field left
// out takes its default: a draft, shown to every user, once, with the
// steps sent as its only variant required. On an existing one a field
// left out keeps its value.
func (req *campaignRequest) apply(c *analytics.Campaign) error {
	if c.ID == 0 {
		c.Status = analytics.CampaignDraft
		c.Audience = analytics.Audience{Percentage: 100}
		c.Cap = analytics.FrequencyCap{Kind: analytics.CapOnce}
	}
	if req.Name != nil {
		c.Name = *req.Name
	}
	if req.Status != nil {
		c.Status = *req.Status
	}
	if req.Trigger != nil {
		c.Trigger = *req.Trigger
	}
	if req.PathRegex != nil {
		c.PathRegex = *req.PathRegex
	}
	if req.Audience != nil {
		c.Audience = *req.Audience
	}
	if req.Cap != nil {
		c.Cap = *req.Cap
	}
	if req.Variants != nil {
		c.Variants = req.Variants
	}
	c.Normalize()
	return c.Validate()
}

// campaignView is a campaign as the list shows it: with its users'
// outcomes.
type campaignView struct {
	analytics.Campaign
	Stats analytics.CampaignStats `json:"stats"`
}

// campaignTarget authenticates a request on a /campaigns/{id} path and
// reads the campaign, of the credential's product.
func (s *Server) campaignTarget(r *http.Request) (auth.Principal, analytics.Campaign, error) {
	p, err := s.principal(r)
	if err != nil {
		return p, analytics.Campaign{}, err
	}
	id, err := campaignPathID(r)
	if err != nil {
		return p, analytics.Campaign{}, err
	}
	c, err := s.Campaigns.Campaign(r.Context(), p.ProductID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return p, c, messages.ErrNotFound
	}
	return p, c, err
}

// handleListCampaigns is GET /api/v1/campaigns: the product's campaigns,
// oldest first, each with its users' outcomes.
func (s *Server) handleListCampaigns(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	list, err := readMeta(s, r, func(ctx context.Context) ([]analytics.Campaign, error) {
		return s.Campaigns.ListCampaigns(ctx, p.ProductID)
	})
	if err != nil {
		return err
	}
	stats, err := s.campaignStats(r, p.ProductID)
	if err != nil {
		return err
	}
	items := make([]campaignView, 0, len(list))
	for _, c := range list {
		items = append(items, campaignView{Campaign: c, Stats: stats[c.ID]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
	return nil
}

// handleGetCampaign is GET /api/v1/campaigns/{id}.
func (s *Server) handleGetCampaign(w http.ResponseWriter, r *http.Request) error {
	p, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	stats, err := s.campaignStats(r, p.ProductID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, campaignView{Campaign: c, Stats: stats[c.ID]})
	return nil
}

// handleCreateCampaign is POST /api/v1/campaigns.
func (s *Server) handleCreateCampaign(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	var req campaignRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	c := analytics.Campaign{ProductID: p.ProductID}
	if err := req.apply(&c); err != nil {
		return err
	}
	if err := s.checkActivation(r.Context(), &c, ""); err != nil {
		return err
	}
	if err := s.linkExperiment(r.Context(), p, &c); err != nil {
		return err
	}
	if err := s.Campaigns.CreateCampaign(r.Context(), &c); err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID) // the campaigns, and messagesEnabled
	writeJSON(w, http.StatusCreated, campaignView{Campaign: c})
	return nil
}

// handleUpdateCampaign is PUT /api/v1/campaigns/{id}: any field, the
// status among them.
func (s *Server) handleUpdateCampaign(w http.ResponseWriter, r *http.Request) error {
	p, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	var req campaignRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	before := c.Status
	if err := req.apply(&c); err != nil {
		return err
	}
	if before == analytics.CampaignArchived && c.Status != analytics.CampaignArchived && c.Status != analytics.CampaignDraft {
		return analytics.Errorf(analytics.KindConflict, "invalid_transition", "An archived campaign can only go back to draft, not to %s.", c.Status)
	}
	if err := s.checkActivation(r.Context(), &c, before); err != nil {
		return err
	}
	if err := s.linkExperiment(r.Context(), p, &c); err != nil {
		return err
	}
	if err := s.Campaigns.UpdateCampaign(r.Context(), &c); err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID) // the campaigns, and messagesEnabled
	stats, err := s.campaignStats(r, p.ProductID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, campaignView{Campaign: c, Stats: stats[c.ID]})
	return nil
}

// handleDeleteCampaign is DELETE /api/v1/campaigns/{id}: the campaign, its
// users' states and its survey responses go; its experiment stays.
func (s *Server) handleDeleteCampaign(w http.ResponseWriter, r *http.Request) error {
	p, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	if err := s.Campaigns.DeleteCampaign(r.Context(), p.ProductID, c.ID); err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID) // the campaigns, and messagesEnabled
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// checkActivation holds a product to MaxActiveCampaigns when c becomes
// active.
func (s *Server) checkActivation(ctx context.Context, c *analytics.Campaign, before analytics.CampaignStatus) error {
	if c.Status != analytics.CampaignActive || before == analytics.CampaignActive {
		return nil
	}
	list, err := s.Campaigns.ListCampaigns(ctx, c.ProductID)
	if err != nil {
		return err
	}
	n := 0
	for _, x := range list {
		if x.Status == analytics.CampaignActive && x.ID != c.ID {
			n++
		}
	}
	if n >= analytics.MaxActiveCampaigns {
		return errTooManyActive
	}
	return nil
}

// linkExperiment keeps a campaign's experiment in step with its variants
// (docs/messages.md, "A/B variants"): with 2 or more, the first time it
// creates the experiment and its flag (arms named and weighted as the
// variants, primary metric message_cta_click); later it updates the flag's
// arms when they changed, which a running experiment refuses. With one
// variant the campaign keeps no experiment. An active campaign starts its
// draft experiment.
func (s *Server) linkExperiment(ctx context.Context, p auth.Principal, c *analytics.Campaign) error {
	if len(c.Variants) < 2 {
		c.ExperimentID, c.FlagKey = nil, ""
		return nil
	}
	arms := make([]analytics.FlagVariant, len(c.Variants))
	for i, v := range c.Variants {
		arms[i] = analytics.FlagVariant{Key: v.Key, Weight: v.Weight}
	}
	var e analytics.Experiment
	var err error
	if c.ExperimentID != nil {
		if e, err = s.Experiments.Experiment(ctx, p.ProductID, *c.ExperimentID); err != nil && !errors.Is(err, analytics.ErrNotFound) {
			return err
		}
	}
	if e.ID == 0 {
		if e, err = s.createCampaignExperiment(ctx, p, c, arms); err != nil {
			return err
		}
	} else {
		f, err := s.Flags.Flag(ctx, p.ProductID, e.FlagID)
		if err != nil {
			return flagStoreError(err)
		}
		if !analytics.SameSplit(f.Variants, arms) && e.Status != analytics.ExperimentCompleted {
			if e.Status == analytics.ExperimentRunning {
				return analytics.Errorf(analytics.KindConflict, "experiment_running",
					"The campaign's experiment is running, so its variants and weights cannot change; pause it first.")
			}
			f.Variants = arms
			if err := f.Validate(); err != nil {
				return err
			}
			if err := s.Flags.UpdateFlag(ctx, &f, p.Describe()); err != nil {
				return err
			}
		}
	}
	c.ExperimentID, c.FlagKey = &e.ID, e.FlagKey
	if c.Status == analytics.CampaignActive && e.Status == analytics.ExperimentDraft {
		now := s.Now().UTC()
		e.Status, e.StartedAt = analytics.ExperimentRunning, &now
		if err := s.Experiments.UpdateExperiment(ctx, &e); err != nil {
			return err
		}
	}
	return nil
}

// createCampaignExperiment creates a campaign's experiment and its flag,
// whose key is message_ and the campaign's slug, numbered when taken.
func (s *Server) createCampaignExperiment(ctx context.Context, p auth.Principal, c *analytics.Campaign, arms []analytics.FlagVariant) (analytics.Experiment, error) {
	name := []rune("Message: " + c.Name)
	if len(name) > analytics.MaxFlagName {
		name = name[:analytics.MaxFlagName]
	}
	base := analytics.Slug("message " + c.Name)
	if len(base) > analytics.MaxFlagKey-4 {
		base = strings.TrimRight(base[:analytics.MaxFlagKey-4], "_")
	}
	f := analytics.Flag{ProductID: p.ProductID, Name: string(name), Description: "The variants of a message campaign.",
		Enabled: true, Rollout: 100, Variants: arms}
	for n := 1; ; n++ {
		f.Key = base
		if n > 1 {
			f.Key = base + "_" + strconv.Itoa(n)
		}
		if err := f.Validate(); err != nil {
			return analytics.Experiment{}, err
		}
		err := s.Flags.CreateFlag(ctx, &f, p.Describe())
		if err == nil {
			break
		}
		if !errors.Is(err, analytics.ErrDuplicate) || n == 50 {
			return analytics.Experiment{}, err
		}
	}
	e := analytics.Experiment{ProductID: p.ProductID, FlagID: f.ID, Name: string(name), PrimaryEvent: analytics.MessageCTAClick,
		SecondaryEvents: []string{analytics.MessageComplete}}
	if err := e.Validate(); err != nil {
		return e, err
	}
	if err := s.Experiments.CreateExperiment(ctx, &e); err != nil {
		return e, err
	}
	return e, nil
}

// handleGetMessageSettings is GET /api/v1/messages/settings.
func (s *Server) handleGetMessageSettings(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	on, err := s.Campaigns.AutoRender(r.Context(), p.ProductID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"autoRender": on})
	return nil
}

// handlePutMessageSettings is PUT /api/v1/messages/settings {"autoRender"}.
func (s *Server) handlePutMessageSettings(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	var req struct {
		AutoRender *bool `json:"autoRender"`
	}
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	if req.AutoRender == nil {
		return analytics.InvalidField("autoRender", "is required: true or false")
	}
	if err := s.Campaigns.SetAutoRender(r.Context(), p.ProductID, *req.AutoRender); err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID) // the campaigns, and messagesEnabled
	writeJSON(w, http.StatusOK, map[string]bool{"autoRender": *req.AutoRender})
	return nil
}

// campaignStats reads the product's campaign stats, an aggregate over
// every user a campaign reached, under the query admission (readMeta).
func (s *Server) campaignStats(r *http.Request, productID int64) (map[int64]analytics.CampaignStats, error) {
	return readMeta(s, r, func(ctx context.Context) (map[int64]analytics.CampaignStats, error) {
		return s.Campaigns.CampaignStats(ctx, productID)
	})
}

// handleSurveyResults is GET /api/v1/campaigns/{id}/survey: the results
// view, tallied from the responses a page at a time under the query
// admission (messages.SurveyResults).
func (s *Server) handleSurveyResults(w http.ResponseWriter, r *http.Request) error {
	_, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	responses, questions, err := messages.SurveyResults(r.Context(), s.Campaigns, s.Queries.ReadMeta, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"responses": responses, "questions": questions})
	return nil
}

// handleSurveyCSV is GET /api/v1/campaigns/{id}/survey.csv: every
// response, one row each, a column per question (the choices of a
// multiple-choice answer joined by "; "). It is streamed: each page of
// responses is read under the query admission, written and flushed, so
// the server holds one page whatever the survey's size. An error after
// the first page cannot change the status any more; it cuts the body
// short, which the client sees as a failed download.
func (s *Server) handleSurveyCSV(w http.ResponseWriter, r *http.Request) error {
	p, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	questions := c.Questions()
	header := []string{"response_id", "answered_at", "distinct_id", "variant"}
	for _, q := range questions {
		header = append(header, q.ID)
	}
	out := csv.NewWriter(w)
	out.UseCRLF = true
	// The headers go once the first page is read, so that a failure to
	// read it is still answered with its own status.
	started := false
	start := func() {
		if !started {
			s.startSurveyCSV(w, c)
			out.Write(header)
			started = true
		}
	}
	err = messages.EachSurveyPage(r.Context(), s.Campaigns, s.Queries.ReadMeta, p.ProductID, c.ID, func(page []analytics.SurveyResponse) error {
		start()
		for _, resp := range page {
			byQuestion := map[string]string{}
			for _, a := range resp.Answers {
				byQuestion[a.QuestionID] = strings.Join(analytics.AnswerValues(a.Value), "; ")
			}
			row := []string{strconv.FormatInt(resp.ID, 10), resp.At.Format(time.RFC3339), csvCell(resp.DistinctID), csvCell(resp.Variant)}
			for _, q := range questions {
				row = append(row, csvCell(byQuestion[q.ID]))
			}
			out.Write(row)
		}
		out.Flush()
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return out.Error()
	})
	if err != nil {
		if started {
			// The header is sent: abort the response so that the client
			// does not take a cut file for the whole.
			s.Log.Error("survey export cut short", "campaign", c.ID, "err", err)
			panic(http.ErrAbortHandler)
		}
		return err
	}
	start()
	out.Flush()
	return out.Error()
}

// startSurveyCSV sets the headers of the survey export.
func (s *Server) startSurveyCSV(w http.ResponseWriter, c analytics.Campaign) {
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="strata-survey-%d-%s.csv"`, c.ID, s.Now().UTC().Format(time.DateOnly)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}
