package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"strata/internal/analytics"
	"strata/internal/ingest"
	"strata/internal/jsontext"
	"strata/internal/messages"
)

// The SDK's message paths (docs/messages.md): GET /api/v1/messages/active,
// POST /api/v1/messages/{id}/track and POST /api/v1/surveys/{id}/respond.
// They are CORS-open and take the product's API key, in X-API-Key or
// ?api_key= (a beacon cannot set headers), like /api/v1/config.

// maxMessageBody bounds the bodies of the SDK's message paths.
const maxMessageBody = 64 << 10

var errMessageBodyTooLarge = analytics.Errorf(analytics.KindTooLarge, "body_too_large",
	"The request body is over 64 KB (%d bytes); a message event or a survey response is a small JSON object.", maxMessageBody)

// sdkKeyText is the API key an SDK request sends: in X-API-Key, else in
// the query (a beacon cannot set headers).
func sdkKeyText(r *http.Request) string {
	if plain := r.Header.Get("X-API-Key"); plain != "" {
		return plain
	}
	return r.URL.Query().Get("api_key")
}

// sdkKey authenticates an SDK read by its API key and refuses a test key
// from a page that is not local. The SDK's writes go through admit
// instead, which also takes from the key's rate-limit bucket.
func (s *Server) sdkKey(r *http.Request) (analytics.APIKey, error) {
	key, err := s.Keys.Authenticate(r.Context(), sdkKeyText(r))
	if err != nil {
		return key, err
	}
	return key, testKeyOrigin(key.Env, []byte(r.Header.Get("Origin")))
}

// readMessageBody decodes a JSON body of at most maxMessageBody bytes.
func readMessageBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readLimitedBody(w, r, maxMessageBody, errMessageBodyTooLarge)
	if err != nil {
		return err
	}
	return jsontext.Decode(body, v)
}

// checkDistinctID checks a distinct_id as ingest does.
func checkDistinctID(id string) error {
	if n := utf8.RuneCountInString(id); n < 1 || n > 255 || !utf8.ValidString(id) {
		return analytics.InvalidField("distinct_id", "is required: the user's id, 1 to 255 characters")
	}
	return nil
}

// campaignPathID reads the {id} of a campaign path; anything but a
// positive integer names no campaign.
func campaignPathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, messages.ErrNotFound
	}
	return id, nil
}

// handleActiveMessages is GET /api/v1/messages/active: the campaigns this
// user may see on this path now (messages.Engine.Active). It is served on
// fasthttp directly, like /e: it is called on every page view of a
// customer's site that shows messages (docs/benchmarks.md).
func (s *Server) handleActiveMessages(ctx *fasthttp.RequestCtx) error {
	q := ctx.QueryArgs()
	plain := string(ctx.Request.Header.Peek("X-API-Key"))
	if plain == "" {
		plain = string(q.Peek("api_key"))
	}
	rctx := context.WithoutCancel(ctx)
	key, err := s.Keys.Authenticate(rctx, plain)
	if err != nil {
		return err
	}
	if err := testKeyOrigin(key.Env, ctx.Request.Header.Peek("Origin")); err != nil {
		return err
	}
	identified := string(q.Peek("identified"))
	req := messages.Request{ProductID: key.ProductID, DistinctID: string(q.Peek("distinct_id")), Path: string(q.Peek("path")),
		Identified: identified == "1" || identified == "true"}
	if err := checkDistinctID(req.DistinctID); err != nil {
		return err
	}
	if req.Path == "" {
		req.Path = "/"
	}
	if len(req.Path) > 2000 {
		return analytics.InvalidField("path", "must be at most 2,000 bytes")
	}
	if t := q.Peek("traits"); len(t) > 0 {
		if len(t) > analytics.MaxTraitsJSON {
			return analytics.InvalidField("traits", "must be at most %d bytes of JSON", analytics.MaxTraitsJSON)
		}
		if err := json.Unmarshal(t, &req.Traits); err != nil || req.Traits == nil {
			return analytics.InvalidField("traits", "must be a JSON object of the identify traits")
		}
	}
	list, err := s.Messages.Active(rctx, req)
	if err != nil {
		return err
	}
	ctx.Response.Header.Set("Cache-Control", "no-store")
	buf := activeBuffers.Get().(*[]byte)
	*buf = messages.AppendJSON((*buf)[:0], list)
	writeFastJSON(ctx, fasthttp.StatusOK, *buf) // SetBody copies
	activeBuffers.Put(buf)
	return nil
}

// activeBuffers hold the bodies of the active list while they are encoded.
var activeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// campaignPost reads what the SDK's POSTs about a campaign share: the API
// key, the campaign id of the path, and the body into req, whose
// distinct_id is checked. Each is a write a visitor's page makes with the
// public key, so it is taken from the key's rate-limit bucket as /e is,
// before the body is read (docs/security.md, "Every public write counts").
func (s *Server) campaignPost(w http.ResponseWriter, r *http.Request, req any, distinctID *string) (analytics.APIKey, int64, error) {
	key, err := s.admit(r.Context(), []byte(r.Header.Get("Origin")), sdkKeyText(r))
	if err != nil {
		return key, 0, err
	}
	id, err := campaignPathID(r)
	if err != nil {
		return key, 0, err
	}
	if err := readMessageBody(w, r, req); err != nil {
		return key, 0, err
	}
	return key, id, checkDistinctID(*distinctID)
}

// trackRequest is the body of POST /api/v1/messages/{id}/track.
type trackRequest struct {
	DistinctID string `json:"distinct_id"`
	Event      string `json:"event"`
	Variant    string `json:"variant"`
	Step       int    `json:"step"`
}

// handleTrackMessage is POST /api/v1/messages/{id}/track: a message event
// of a user, for the server-side cap and terminal rule. The SDK sends the
// same event to /e, where analyses count it; this records the state only.
func (s *Server) handleTrackMessage(w http.ResponseWriter, r *http.Request) error {
	var req trackRequest
	key, id, err := s.campaignPost(w, r, &req, &req.DistinctID)
	if err != nil {
		return err
	}
	if req.Step < 0 || req.Step >= analytics.MaxCampaignSteps {
		return analytics.InvalidField("step", "must be a step index from 0 to %d", analytics.MaxCampaignSteps-1)
	}
	if err := s.Messages.Track(r.Context(), key.ProductID, id, req.DistinctID, req.Event, req.Variant); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, struct{}{})
	return nil
}

// respondRequest is the body of POST /api/v1/surveys/{id}/respond.
type respondRequest struct {
	DistinctID string                   `json:"distinct_id"`
	Variant    string                   `json:"variant"`
	Answers    []analytics.SurveyAnswer `json:"answers"`
}

// handleSurveyResponse is POST /api/v1/surveys/{id}/respond: one user's
// answers to a campaign's survey, each checked against its question;
// stored for the results view and recorded as one $survey_response event.
// A response with any answer wrong stores nothing.
func (s *Server) handleSurveyResponse(w http.ResponseWriter, r *http.Request) error {
	var req respondRequest
	key, id, err := s.campaignPost(w, r, &req, &req.DistinctID)
	if err != nil {
		return err
	}
	c, err := s.Messages.SurveyCampaign(r.Context(), key.ProductID, id)
	if err != nil {
		return err
	}
	if req.Variant == "" {
		req.Variant = c.Variants[0].Key
	}
	if len(req.Answers) == 0 || len(req.Answers) > analytics.MaxCampaignSteps {
		return analytics.InvalidField("answers", "must list 1 to %d answers", analytics.MaxCampaignSteps)
	}
	answers := map[string]json.RawMessage{}
	for i, a := range req.Answers {
		field := "answers[" + strconv.Itoa(i) + "]"
		q := c.Question(req.Variant, a.QuestionID)
		if q == nil {
			return analytics.InvalidField(field+".questionId", "must name a survey question of variant %q of campaign %d, not %q", req.Variant, id, a.QuestionID)
		}
		if _, dup := answers[a.QuestionID]; dup {
			return analytics.InvalidField(field+".questionId", "%q is answered twice", a.QuestionID)
		}
		v, err := q.CheckAnswer(field+".value", a.Value)
		if err != nil {
			return err
		}
		req.Answers[i].Value = v
		answers[a.QuestionID] = v
	}
	resp := analytics.SurveyResponse{CampaignID: id, DistinctID: req.DistinctID, Variant: req.Variant, Answers: req.Answers}
	props, err := json.Marshal(map[string]any{"$survey_id": id, "$survey_name": c.Name, "$variant": req.Variant, "$answers": answers})
	if err != nil {
		return err
	}
	now := s.Now().UTC().Truncate(time.Microsecond)
	ev := analytics.Event{UUID: uuid.New(), ProductID: key.ProductID, Env: key.Env, Timestamp: now, ReceivedAt: now,
		Name: "$survey_response", DistinctID: req.DistinctID, UserID: ingest.UserID(req.DistinctID), Properties: props}
	// The event first: a response stored without its event could not be
	// counted in analyses, and a retry after a failed store writes a
	// second event only for a response the results view lacks.
	if err := s.Writer.Write(r.Context(), []ingest.Pending{{Event: ev}}); err != nil {
		return err
	}
	if err := s.SurveyOps.Add(r.Context(), key.ProductID, &resp); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, struct{}{})
	return nil
}
