package httpapi

import (
	"context"
	"encoding/csv"
	"encoding/json"
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
	list, err := s.Campaigns.ListCampaigns(r.Context(), p.ProductID)
	if err != nil {
		return err
	}
	stats, err := s.Campaigns.CampaignStats(r.Context(), p.ProductID)
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
	stats, err := s.Campaigns.CampaignStats(r.Context(), p.ProductID)
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
	stats, err := s.Campaigns.CampaignStats(r.Context(), p.ProductID)
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

// surveyQuestionResult is one question's answers in the results view.
type surveyQuestionResult struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Prompt  string `json:"prompt"`
	Answers int    `json:"answers"`
	// Counts are the answers per value: every value of a scale and every
	// choice, in order, zeros included; none for text questions.
	Counts []surveyCount `json:"counts"`
	// NPS is the net promoter score of an nps question with answers.
	NPS *npsScore `json:"nps"`
	// Recent are the latest text answers, newest first, at most 20.
	Recent []string `json:"recent"`
}

type surveyCount struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

// npsScore is % promoters (9–10) minus % detractors (0–6).
type npsScore struct {
	Score      float64 `json:"score"`
	Promoters  int     `json:"promoters"`
	Passives   int     `json:"passives"`
	Detractors int     `json:"detractors"`
}

// handleSurveyResults is GET /api/v1/campaigns/{id}/survey.
func (s *Server) handleSurveyResults(w http.ResponseWriter, r *http.Request) error {
	p, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	responses, err := s.Campaigns.SurveyResponses(r.Context(), p.ProductID, c.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"responses": len(responses), "questions": surveyResults(c, responses)})
	return nil
}

// surveyResults counts the answers to each of the campaign's questions.
func surveyResults(c analytics.Campaign, responses []analytics.SurveyResponse) []surveyQuestionResult {
	out := []surveyQuestionResult{}
	for _, q := range c.Questions() {
		res := surveyQuestionResult{ID: q.ID, Type: q.Type, Prompt: q.Prompt, Counts: []surveyCount{}, Recent: []string{}}
		var values []string
		switch q.Type {
		case analytics.QuestionRating:
			for v := 1; v <= q.Scale; v++ {
				values = append(values, strconv.Itoa(v))
			}
		case analytics.QuestionNPS:
			for v := 0; v <= 10; v++ {
				values = append(values, strconv.Itoa(v))
			}
		default:
			values = q.Choices
		}
		count := map[string]int{}
		for i := len(responses) - 1; i >= 0; i-- {
			for _, a := range responses[i].Answers {
				if a.QuestionID != q.ID {
					continue
				}
				res.Answers++
				for _, v := range answerValues(a.Value) {
					count[v]++
					if q.Type == analytics.QuestionText && len(res.Recent) < 20 {
						res.Recent = append(res.Recent, v)
					}
				}
			}
		}
		for _, v := range values {
			res.Counts = append(res.Counts, surveyCount{Value: v, Count: count[v]})
		}
		if q.Type == analytics.QuestionNPS && res.Answers > 0 {
			var n npsScore
			for v, k := range count {
				switch x, _ := strconv.Atoi(v); {
				case x >= 9:
					n.Promoters += k
				case x >= 7:
					n.Passives += k
				default:
					n.Detractors += k
				}
			}
			n.Score = float64(100*(n.Promoters-n.Detractors)) / float64(res.Answers)
			res.NPS = &n
		}
		out = append(out, res)
	}
	return out
}

// answerValues is a stored answer as text: one value, or each choice of a
// multiple-choice answer.
func answerValues(raw json.RawMessage) []string {
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	return []string{string(raw)}
}

// handleSurveyCSV is GET /api/v1/campaigns/{id}/survey.csv: every
// response, one row each, a column per question (the choices of a
// multiple-choice answer joined by "; ").
func (s *Server) handleSurveyCSV(w http.ResponseWriter, r *http.Request) error {
	p, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	responses, err := s.Campaigns.SurveyResponses(r.Context(), p.ProductID, c.ID)
	if err != nil {
		return err
	}
	questions := c.Questions()
	header := []string{"response_id", "answered_at", "distinct_id", "variant"}
	for _, q := range questions {
		header = append(header, q.ID)
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="strata-survey-%d-%s.csv"`, c.ID, s.Now().UTC().Format(time.DateOnly)))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	out := csv.NewWriter(w)
	out.UseCRLF = true
	out.Write(header)
	for _, resp := range responses {
		byQuestion := map[string]string{}
		for _, a := range resp.Answers {
			byQuestion[a.QuestionID] = strings.Join(answerValues(a.Value), "; ")
		}
		row := []string{strconv.FormatInt(resp.ID, 10), resp.At.Format(time.RFC3339), csvCell(resp.DistinctID), csvCell(resp.Variant)}
		for _, q := range questions {
			row = append(row, csvCell(byQuestion[q.ID]))
		}
		out.Write(row)
	}
	out.Flush()
	return out.Error()
}
