package httpapi

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"strata/internal/analytics"
	"strata/internal/auth"
)

// The campaign API: /api/v1/campaigns and /api/v1/messages/settings, for a
// query token or a dashboard session of the product (never an API key,
// never CORS-open). The rules on a campaign's fields are
// analytics.Campaign.Validate's; docs/messages.md explains them.

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
	c, err := s.CampaignOps.Get(r.Context(), p.ProductID, id)
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
		return s.CampaignOps.List(ctx, p.ProductID)
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
	if err := s.CampaignOps.Create(r.Context(), p.Describe(), &c); err != nil {
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
	if err := s.CampaignOps.Update(r.Context(), p.Describe(), &c, before); err != nil {
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
	if err := s.CampaignOps.Delete(r.Context(), p.ProductID, c.ID); err != nil {
		return err
	}
	s.FlagsChanged(p.ProductID) // the campaigns, and messagesEnabled
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleGetMessageSettings is GET /api/v1/messages/settings.
func (s *Server) handleGetMessageSettings(w http.ResponseWriter, r *http.Request) error {
	p, err := s.principal(r)
	if err != nil {
		return err
	}
	on, err := s.CampaignOps.AutoRender(r.Context(), p.ProductID)
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
	if err := s.CampaignOps.SetAutoRender(r.Context(), p.ProductID, *req.AutoRender); err != nil {
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
		return s.CampaignOps.Stats(ctx, productID)
	})
}

// handleSurveyResults is GET /api/v1/campaigns/{id}/survey: the results
// view, tallied from the responses a page at a time under the query
// admission (messages.Surveys.Results).
func (s *Server) handleSurveyResults(w http.ResponseWriter, r *http.Request) error {
	_, c, err := s.campaignTarget(r)
	if err != nil {
		return err
	}
	responses, questions, err := s.SurveyOps.Results(r.Context(), c)
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
	_, c, err := s.campaignTarget(r)
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
	err = s.SurveyOps.EachPage(r.Context(), c, func(page []analytics.SurveyResponse) error {
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
			s.Log.ErrorContext(r.Context(), "survey export cut short", "campaign", c.ID, "err", err)
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
