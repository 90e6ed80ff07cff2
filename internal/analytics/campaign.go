package analytics

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"strata/internal/flags"
)

// CampaignStatus is where a message campaign is in its life
// (docs/messages.md, "States").
type CampaignStatus string

// The states of a campaign.
const (
	CampaignDraft    CampaignStatus = "draft"
	CampaignActive   CampaignStatus = "active"
	CampaignPaused   CampaignStatus = "paused"
	CampaignArchived CampaignStatus = "archived"
)

// Limits of a campaign.
const (
	MaxCampaignSteps      = 10
	MaxCampaignVariants   = 4
	MaxActiveCampaigns    = 100
	MaxTraitConditions    = 10
	MaxStepTitle          = 200
	MaxStepBody           = 5000
	MaxSelector           = 500
	MaxCTALabel           = 60
	MaxURL                = 2000
	MaxQuestionChoices    = 10
	MaxChoice             = 200
	MaxTextAnswer         = 2000
	MaxCapCount           = 1000
	MaxPathRegex          = 500
	MaxTraitName          = 100
	MaxTraitValue         = 500
	MaxTraitsJSON         = 4096
	campaignVariantWeight = 100
)

// Campaign is an in-app message: steps the SDK shows to an audience when
// a trigger event happens on matching pages, at most as often as its cap
// allows. Variants split users between versions of the steps by a linked
// experiment's flag.
type Campaign struct {
	ID        int64          `json:"id"`
	ProductID int64          `json:"productId"`
	Name      string         `json:"name"`
	Status    CampaignStatus `json:"status"`
	Trigger   Trigger        `json:"trigger"`
	// PathRegex must match the page's pathname; "" matches every path.
	PathRegex string            `json:"pathRegex"`
	Audience  Audience          `json:"audience"`
	Cap       FrequencyCap      `json:"cap"`
	Variants  []CampaignVariant `json:"variants"`
	// ExperimentID and FlagKey name the experiment that splits users
	// between the variants, and its flag; nil and "" without one.
	ExperimentID *int64    `json:"experimentId"`
	FlagKey      string    `json:"flagKey"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// Trigger is the event that shows a campaign.
type Trigger struct {
	Event string `json:"event"`
}

// Audience is who may see a campaign: identified users only, a percentage
// of users, and trait conditions that must all hold.
type Audience struct {
	Identified bool             `json:"identified"`
	Percentage float64          `json:"percentage"`
	Conditions []TraitCondition `json:"conditions"`
}

// TraitCondition compares one identify trait with a value.
type TraitCondition struct {
	// Type is "trait" (or left out) for a condition on the user's
	// traits, "cohort" for a condition on a cohort's membership (Op in
	// or not_in, CohortID; Trait empty), as a flag's (FlagCondition).
	Type     string `json:"type,omitempty"`
	Trait    string `json:"trait,omitempty"`
	CohortID int64  `json:"cohortId,omitempty"`
	// Op is eq, neq, contains, exists, gt or lt; in or not_in for a cohort.
	Op    string `json:"op"`
	Value string `json:"value"`
}

// Cohorts lists the cohorts an audience's conditions name, each once.
func (a *Audience) Cohorts() []int64 {
	var ids []int64
	for _, c := range a.Conditions {
		if c.Type == FlagConditionCohort && !slices.Contains(ids, c.CohortID) {
			ids = append(ids, c.CohortID)
		}
	}
	return ids
}

// The frequency caps: one impression ever, Count ever, Count a UTC day.
const (
	CapOnce   = "once"
	CapTimes  = "times"
	CapPerDay = "per_day"
)

// FrequencyCap bounds a user's impressions of a campaign, counted across
// all its variants.
type FrequencyCap struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// CampaignVariant is one version of a campaign's steps.
type CampaignVariant struct {
	Key    string  `json:"key"`
	Weight float64 `json:"weight"`
	Steps  []Step  `json:"steps"`
}

// The kinds of step.
const (
	StepTooltip = "tooltip"
	StepModal   = "modal"
	StepBanner  = "banner"
	StepSurvey  = "survey"
)

// Step is one screen of a campaign.
type Step struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	Body  string `json:"body"`
	// BodyFormat is text or markdown (the safe subset).
	BodyFormat string `json:"bodyFormat"`
	// Selector anchors a tooltip; Placement puts a banner at the top or
	// the bottom.
	Selector  string    `json:"selector"`
	Placement string    `json:"placement"`
	CTA       *CTA      `json:"cta"`
	Question  *Question `json:"question"`
}

// CTA is a step's call to action: a button that ends the flow and opens
// URL.
type CTA struct {
	Label string `json:"label"`
	URL   string `json:"url"`
}

// The kinds of survey question.
const (
	QuestionRating   = "rating"
	QuestionNPS      = "nps"
	QuestionSingle   = "single"
	QuestionMultiple = "multiple"
	QuestionText     = "text"
)

// Question is a survey step's question. ID names it in answers.
type Question struct {
	ID      string   `json:"id"`
	Type    string   `json:"type"`
	Prompt  string   `json:"prompt"`
	Scale   int      `json:"scale"`
	Choices []string `json:"choices"`
}

var (
	traitRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_.$-]{0,99}$`)
	// triggerAutocapture are the reserved events a trigger may name.
	triggerAutocapture = map[string]bool{"$pageview": true, "$click": true, "$form_submit": true}
	traitOps           = map[string]bool{"eq": true, "neq": true, "contains": true, "exists": true, "gt": true, "lt": true}
	campaignStatuses   = map[CampaignStatus]bool{CampaignDraft: true, CampaignActive: true, CampaignPaused: true, CampaignArchived: true}
)

// Normalize fills in what a campaign's fields leave to defaults and
// cleans what the server stores differently from what was sent: Markdown
// bodies (CleanMarkdown). It runs before Validate.
func (c *Campaign) Normalize() {
	if c.Status == "" {
		c.Status = CampaignDraft
	}
	if c.Audience.Conditions == nil {
		c.Audience.Conditions = []TraitCondition{}
	}
	for i := range c.Variants {
		for j := range c.Variants[i].Steps {
			st := &c.Variants[i].Steps[j]
			if st.BodyFormat == "" {
				st.BodyFormat = "text"
			}
			if st.BodyFormat == "markdown" {
				st.Body = CleanMarkdown(st.Body)
			}
			if st.Question != nil && st.Question.Choices == nil {
				st.Question.Choices = []string{}
			}
		}
	}
}

// Validate checks every rule of a campaign's own fields, in field order,
// and returns the first fault naming its field. Whether its experiment
// exists is the caller's check.
func (c *Campaign) Validate() error {
	if err := validName(c.Name); err != nil {
		return err
	}
	if !campaignStatuses[c.Status] {
		return InvalidField("status", "must be draft, active, paused or archived, not %q", c.Status)
	}
	if err := validTrigger(c.Trigger.Event); err != nil {
		return err
	}
	if len(c.PathRegex) > MaxPathRegex {
		return InvalidField("pathRegex", "must be at most %d characters, not %d", MaxPathRegex, len(c.PathRegex))
	}
	if _, err := CheckPathRegex(c.PathRegex); err != nil {
		return InvalidField("pathRegex", "%s", err.Error())
	}
	if err := c.Audience.validate(); err != nil {
		return err
	}
	if err := c.Cap.validate(); err != nil {
		return err
	}
	return validCampaignVariants(c.Variants)
}

func validTrigger(event string) error {
	switch n := utf8.RuneCountInString(event); {
	case n == 0:
		return InvalidField("trigger.event", "is required: an event name, or $pageview, $click or $form_submit")
	case n > 255:
		return InvalidField("trigger.event", "must be at most 255 characters, not %d", n)
	case strings.HasPrefix(event, "$") && !triggerAutocapture[event]:
		return InvalidField("trigger.event", "may be $pageview, $click or $form_submit among the reserved events, not %q", event)
	case strings.HasPrefix(event, "message_"):
		return InvalidField("trigger.event", "may not be a message_ event, which messages themselves emit")
	case strings.IndexFunc(event, unicode.IsControl) >= 0:
		return InvalidField("trigger.event", "must not contain control characters")
	}
	return nil
}

func (a *Audience) validate() error {
	if err := validPercent("audience.percentage", a.Percentage, 100); err != nil {
		return err
	}
	if len(a.Conditions) > MaxTraitConditions {
		return InvalidField("audience.conditions", "must list at most %d conditions, not %d", MaxTraitConditions, len(a.Conditions))
	}
	for i := range a.Conditions {
		cond := &a.Conditions[i]
		if cond.Type == FlagConditionTrait {
			cond.Type = "" // the trait type is the one left out, as before types
		}
		if err := validCondition("audience.conditions["+strconv.Itoa(i)+"]", *cond); err != nil {
			return err
		}
	}
	return nil
}

// validCondition checks one targeting condition, of a message audience or
// of a flag; field names it in the error. A cohort condition names a
// cohort by id, with in or not_in, and nothing else.
func validCondition(field string, cond TraitCondition) error {
	switch cond.Type {
	case "", FlagConditionTrait:
	case FlagConditionCohort:
		if cond.CohortID <= 0 {
			return InvalidField(field+".cohortId", "must be the id of a cohort of this product")
		}
		if cond.Op != "in" && cond.Op != "not_in" {
			return InvalidField(field+".op", "must be in or not_in for a cohort condition, not %q", cond.Op)
		}
		if cond.Trait != "" || cond.Value != "" {
			return InvalidField(field, "a cohort condition has no trait or value")
		}
		return nil
	default:
		return InvalidField(field+".type", "must be trait (a condition on a user property) or cohort (on a cohort's membership), not %q", cond.Type)
	}
	if cond.CohortID != 0 {
		return InvalidField(field+".cohortId", "belongs to a cohort condition (type cohort), not to a trait condition")
	}
	if !traitRE.MatchString(cond.Trait) {
		return InvalidField(field+".trait", "must be a trait name of 1 to %d letters, digits, _ . $ or -, not %q", MaxTraitName, cond.Trait)
	}
	if !traitOps[cond.Op] {
		return InvalidField(field+".op", "must be eq, neq, contains, exists, gt or lt, not %q", cond.Op)
	}
	if utf8.RuneCountInString(cond.Value) > MaxTraitValue {
		return InvalidField(field+".value", "must be at most %d characters", MaxTraitValue)
	}
	if (cond.Op == "gt" || cond.Op == "lt") && !isNumber(cond.Value) {
		return InvalidField(field+".value", "must be a number for %s, not %q", cond.Op, cond.Value)
	}
	return nil
}

// CohortLookup reads a product's cohort: what CheckCohorts needs.
type CohortLookup interface {
	Cohort(ctx context.Context, productID, id int64) (Cohort, error)
}

// CheckCohorts refuses a condition naming a cohort the product does not
// have: field is the conditions' field ("conditions", or
// "audience.conditions"), conds their types and cohort ids.
func CheckCohorts(ctx context.Context, store CohortLookup, productID int64, field string, conds []TraitCondition) error {
	for i, c := range conds {
		if c.Type != FlagConditionCohort {
			continue
		}
		_, err := store.Cohort(ctx, productID, c.CohortID)
		if errors.Is(err, ErrNotFound) {
			return InvalidField(field+"["+strconv.Itoa(i)+"].cohortId", "must be the id of a cohort of this product, not %d", c.CohortID)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TraitConditions is a flag's conditions in a message audience's form.
func TraitConditions(conds []FlagCondition) []TraitCondition {
	out := make([]TraitCondition, len(conds))
	for i, c := range conds {
		out[i] = TraitCondition{Type: c.Type, Trait: c.Trait, CohortID: c.CohortID, Op: c.Op, Value: c.Value}
	}
	return out
}

// isNumber reports whether s is a number as trait conditions compare
// them: a finite decimal number, which Go and the JavaScript SDKs read
// alike (flags.Number).
func isNumber(s string) bool {
	_, ok := flags.Number(s)
	return ok
}

func (f *FrequencyCap) validate() error {
	switch f.Kind {
	case CapOnce:
		if f.Count != 0 && f.Count != 1 {
			return InvalidField("cap.count", "must be left out (or 1) for once, not %d", f.Count)
		}
		f.Count = 1
	case CapTimes, CapPerDay:
		if f.Count < 1 || f.Count > MaxCapCount {
			return InvalidField("cap.count", "must be 1 to %d for %s, not %d", MaxCapCount, f.Kind, f.Count)
		}
	default:
		return InvalidField("cap.kind", "must be once, times or per_day, not %q", f.Kind)
	}
	return nil
}

// validCampaignVariants checks the arms: 1 to MaxCampaignVariants with
// distinct keys and weights summing to 100, each with 1 to
// MaxCampaignSteps steps, and question ids unique in the campaign.
func validCampaignVariants(vs []CampaignVariant) error {
	if len(vs) < 1 || len(vs) > MaxCampaignVariants {
		return InvalidField("variants", "must list 1 to %d variants, not %d", MaxCampaignVariants, len(vs))
	}
	keys := map[string]bool{}
	questions := map[string]bool{}
	total := 0
	for i, v := range vs {
		field := "variants[" + strconv.Itoa(i) + "]"
		w, err := validArm(field, v.Key, v.Weight, keys, "a variant of this campaign")
		if err != nil {
			return err
		}
		total += w
		if len(v.Steps) < 1 || len(v.Steps) > MaxCampaignSteps {
			return InvalidField(field+".steps", "must list 1 to %d steps, not %d", MaxCampaignSteps, len(v.Steps))
		}
		for j := range v.Steps {
			if err := v.Steps[j].validate(field+".steps["+strconv.Itoa(j)+"]", questions, v.Key); err != nil {
				return err
			}
		}
	}
	if total != campaignVariantWeight*100 {
		return InvalidField("variants", "the weights must sum to 100, not %v", float64(total)/100)
	}
	return nil
}

// validText checks a one-line or multi-line text field of a step.
func validText(field, s string, maxChars int, required, multiline bool) error {
	n := utf8.RuneCountInString(s)
	switch {
	case required && strings.TrimSpace(s) == "":
		return InvalidField(field, "is required")
	case n > maxChars:
		return InvalidField(field, "must be at most %d characters, not %d", maxChars, n)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t')) }) >= 0:
		return InvalidField(field, "must not contain control characters")
	}
	return nil
}

// validate checks a step; questions collects the survey question ids
// seen in the campaign (the same id may recur in another variant only).
func (st *Step) validate(field string, questions map[string]bool, variant string) error {
	switch st.Kind {
	case StepTooltip, StepModal, StepBanner, StepSurvey:
	default:
		return InvalidField(field+".kind", "must be tooltip, modal, banner or survey, not %q", st.Kind)
	}
	if err := validText(field+".title", st.Title, MaxStepTitle, st.Kind != StepSurvey, false); err != nil {
		return err
	}
	if err := validText(field+".body", st.Body, MaxStepBody, false, true); err != nil {
		return err
	}
	if st.BodyFormat != "text" && st.BodyFormat != "markdown" {
		return InvalidField(field+".bodyFormat", "must be text or markdown, not %q", st.BodyFormat)
	}
	if st.Kind == StepTooltip {
		if err := validText(field+".selector", st.Selector, MaxSelector, true, false); err != nil {
			return err
		}
	} else if st.Selector != "" {
		return InvalidField(field+".selector", "anchors tooltips only; leave it empty for a %s", st.Kind)
	}
	switch {
	case st.Kind == StepBanner && st.Placement != "top" && st.Placement != "bottom":
		return InvalidField(field+".placement", "must be top or bottom for a banner, not %q", st.Placement)
	case st.Kind != StepBanner && st.Placement != "":
		return InvalidField(field+".placement", "places banners only; leave it empty for a %s", st.Kind)
	}
	if st.CTA != nil {
		if err := validText(field+".cta.label", st.CTA.Label, MaxCTALabel, true, false); err != nil {
			return err
		}
		if len(st.CTA.URL) > MaxURL || !SafeURL(st.CTA.URL) {
			return InvalidField(field+".cta.url", "must be an http, https or mailto URL, or a path starting with /, of at most %d characters", MaxURL)
		}
	}
	if st.Kind != StepSurvey {
		if st.Question != nil {
			return InvalidField(field+".question", "belongs to survey steps only")
		}
		return nil
	}
	if st.Question == nil {
		return InvalidField(field+".question", "is required for a survey step")
	}
	key := variant + "\x00" + st.Question.ID
	if questions[key] {
		return InvalidField(field+".question.id", "%q is already a question of this variant", st.Question.ID)
	}
	questions[key] = true
	return st.Question.validate(field + ".question")
}

func (q *Question) validate(field string) error {
	if err := validSlug(field+".id", q.ID); err != nil {
		return err
	}
	if err := validText(field+".prompt", q.Prompt, MaxStepTitle, true, false); err != nil {
		return err
	}
	choices := q.Type == QuestionSingle || q.Type == QuestionMultiple
	switch q.Type {
	case QuestionRating:
		if q.Scale != 5 && q.Scale != 10 {
			return InvalidField(field+".scale", "must be 5 or 10 for a rating, not %d", q.Scale)
		}
	case QuestionNPS, QuestionText, QuestionSingle, QuestionMultiple:
		if q.Scale != 0 {
			return InvalidField(field+".scale", "applies to ratings only; leave it out for %s", q.Type)
		}
	default:
		return InvalidField(field+".type", "must be rating, nps, single, multiple or text, not %q", q.Type)
	}
	if !choices {
		if len(q.Choices) > 0 {
			return InvalidField(field+".choices", "apply to single and multiple choice only")
		}
		return nil
	}
	if len(q.Choices) < 2 || len(q.Choices) > MaxQuestionChoices {
		return InvalidField(field+".choices", "must list 2 to %d choices, not %d", MaxQuestionChoices, len(q.Choices))
	}
	seen := map[string]bool{}
	for i, ch := range q.Choices {
		if err := validText(field+".choices["+strconv.Itoa(i)+"]", ch, MaxChoice, true, false); err != nil {
			return err
		}
		if seen[ch] {
			return InvalidField(field+".choices["+strconv.Itoa(i)+"]", "%q is listed twice", ch)
		}
		seen[ch] = true
	}
	return nil
}

// Question returns the survey question id of a campaign's variant, or
// nil.
func (c *Campaign) Question(variant, id string) *Question {
	for _, v := range c.Variants {
		if v.Key != variant {
			continue
		}
		for _, st := range v.Steps {
			if st.Question != nil && st.Question.ID == id {
				return st.Question
			}
		}
	}
	return nil
}

// Questions lists a campaign's survey questions, each id once, in the
// order of the variants and their steps.
func (c *Campaign) Questions() []Question {
	var out []Question
	seen := map[string]bool{}
	for _, v := range c.Variants {
		for _, st := range v.Steps {
			if st.Question != nil && !seen[st.Question.ID] {
				seen[st.Question.ID] = true
				out = append(out, *st.Question)
			}
		}
	}
	return out
}

// CheckAnswer checks one survey answer's value against its question and
// returns it in its stored JSON form.
func (q *Question) CheckAnswer(field string, value json.RawMessage) (json.RawMessage, error) {
	switch q.Type {
	case QuestionRating, QuestionNPS:
		var n float64
		lo, hi := 1, q.Scale
		if q.Type == QuestionNPS {
			lo, hi = 0, 10
		}
		if json.Unmarshal(value, &n) != nil || n != float64(int(n)) || int(n) < lo || int(n) > hi {
			return nil, InvalidField(field, "must be a whole number from %d to %d for question %q", lo, hi, q.ID)
		}
		return json.RawMessage(strconv.Itoa(int(n))), nil
	case QuestionSingle, QuestionText:
		var s string
		if json.Unmarshal(value, &s) != nil {
			return nil, InvalidField(field, "must be a string for question %q", q.ID)
		}
		if q.Type == QuestionSingle && !contains(q.Choices, s) {
			return nil, InvalidField(field, "must be one of the choices of question %q, not %q", q.ID, s)
		}
		if err := validText(field, s, MaxTextAnswer, true, true); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(s)
		return b, nil
	default: // multiple
		var list []string
		if json.Unmarshal(value, &list) != nil || len(list) == 0 {
			return nil, InvalidField(field, "must be a non-empty list of choices for question %q", q.ID)
		}
		seen := map[string]bool{}
		for _, s := range list {
			if !contains(q.Choices, s) || seen[s] {
				return nil, InvalidField(field, "must list distinct choices of question %q, not %q", q.ID, s)
			}
			seen[s] = true
		}
		b, _ := json.Marshal(list)
		return b, nil
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The message events: the first is an impression, the others end a
// user's flow of a campaign for good.
const (
	MessageImpression = "message_impression"
	MessageDismiss    = "message_dismiss"
	MessageCTAClick   = "message_cta_click"
	MessageComplete   = "message_complete"
)

// OutcomeShown is the outcome of a user's first impression of a campaign.
const OutcomeShown = "shown"

// MessageState is one user's history with one campaign: what the
// frequency cap and the terminal rule read.
type MessageState struct {
	CampaignID  int64 `json:"c"`
	Impressions int   `json:"i"`
	// Day is the UTC day (days since the epoch) DayImpressions counts.
	Day            int `json:"d"`
	DayImpressions int `json:"di"`
	// Ended is the terminal event, or "".
	Ended   string `json:"e,omitempty"`
	Variant string `json:"v"`
}

// CampaignStats counts a campaign's users by where their flows got to.
type CampaignStats struct {
	Shown     int `json:"shown"`
	CTAClicks int `json:"ctaClicks"`
	Completed int `json:"completed"`
	Dismissed int `json:"dismissed"`
}

// SurveyAnswer is one answer of a response.
type SurveyAnswer struct {
	QuestionID string          `json:"questionId"`
	Value      json.RawMessage `json:"value"`
}

// SurveyResponse is one user's answers to a campaign's survey.
type SurveyResponse struct {
	ID         int64          `json:"id"`
	CampaignID int64          `json:"campaignId"`
	DistinctID string         `json:"distinctId"`
	Variant    string         `json:"variant"`
	Answers    []SurveyAnswer `json:"answers"`
	At         time.Time      `json:"at"`
}

// CampaignStore keeps message campaigns, the product's message settings,
// each user's state with each campaign, and survey responses. Every
// method is scoped to one product: another product's campaign is
// ErrNotFound.
type CampaignStore interface {
	// CreateCampaign stores c (ProductID and the validated fields set)
	// and fills in its ID and times.
	CreateCampaign(ctx context.Context, c *Campaign) error
	// Campaign returns one campaign of a product, or ErrNotFound.
	Campaign(ctx context.Context, productID, id int64) (Campaign, error)
	// ListCampaigns returns a product's campaigns, oldest first.
	ListCampaigns(ctx context.Context, productID int64) ([]Campaign, error)
	// UpdateCampaign replaces a campaign's fields and sets UpdatedAt, or
	// returns ErrNotFound.
	UpdateCampaign(ctx context.Context, c *Campaign) error
	// DeleteCampaign removes a campaign with its users' states and survey
	// responses, or returns ErrNotFound.
	DeleteCampaign(ctx context.Context, productID, id int64) error

	// AutoRender reports a product's auto-render messages setting (off
	// until set); SetAutoRender sets it.
	AutoRender(ctx context.Context, productID int64) (bool, error)
	SetAutoRender(ctx context.Context, productID int64, on bool) error

	// MessageStates returns the states of users with the product's
	// campaigns, by distinct_id; a user without any is left out. It reads
	// many users in one statement, so that a server under load makes one
	// lookup for the users its requests wait for together.
	MessageStates(ctx context.Context, productID int64, distinctIDs []string) (map[string][]MessageState, error)
	// PutMessageStates replaces a user's states with the product's
	// campaigns by states, and, when outcome is not "", records that the
	// user reached it in campaign outcomeOf (OutcomeShown or a terminal
	// event), in the same transaction.
	PutMessageStates(ctx context.Context, productID int64, distinctID string, states []MessageState, outcomeOf int64, outcome string) error
	// CampaignStats counts each campaign's users by outcome, by campaign
	// id.
	CampaignStats(ctx context.Context, productID int64) (map[int64]CampaignStats, error)

	// AddSurveyResponse stores a response and fills in its ID.
	AddSurveyResponse(ctx context.Context, productID int64, r *SurveyResponse) error
	// SurveyResponses returns a page of a campaign's responses: at most
	// limit of those whose id is above afterID, oldest first. A caller
	// reads every response a page at a time (afterID the last id of the
	// previous page), never all at once (survey.go).
	SurveyResponses(ctx context.Context, productID, campaignID, afterID int64, limit int) ([]SurveyResponse, error)
}
