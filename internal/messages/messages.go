// Package messages decides which in-app message campaigns a user may see
// now, and keeps each user's state with each campaign: the server side of
// GET /api/v1/messages/active and POST /api/v1/messages/{id}/track
// (docs/messages.md). It answers from memory: each product's campaigns,
// compiled, and the users it read lately; a user it does not hold costs
// one indexed lookup in the metadata store. Nothing scans events.
package messages

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"strata/internal/analytics"
	"strata/internal/flags"
)

// Engine answers the SDK's message requests; New makes one.
type Engine struct {
	Store analytics.CampaignStore
	// Flags returns a product's flags as the SDKs evaluate them, by key:
	// a campaign's variant is its flag's assignment.
	Flags FlagsFunc
	Now   func() time.Time
	Log   *slog.Logger
	// Cohorts answers users' memberships of the cohorts that audiences and
	// flags target (cohorts.Targets); nil leaves them unknown, so cohort
	// conditions fail.
	Cohorts CohortTargets

	products productCache
	users    userCache
	loader   *loader
	// locks serialise the read-modify-write of a user's state on this
	// node, striped by user.
	locks [64]sync.Mutex
}

// CohortTargets holds the members of targeted cohorts (cohorts.Targets).
type CohortTargets interface {
	// Refresh reads the product's cohorts ids that changed.
	Refresh(ctx context.Context, productID int64, ids []int64) error
	// Member answers from memory, for each of the cohorts ids held,
	// whether the user is a member.
	Member(productID int64, ids []int64, distinctID string) flags.Cohorts
}

// FlagsFunc returns a product's flags as the SDKs evaluate them, by key.
type FlagsFunc func(ctx context.Context, productID int64) (map[string]*flags.Flag, error)

// New returns an engine over store that holds at most users users'
// states in memory (0: 200,000). It starts the goroutines that read
// users' states (loader), which live as long as the process.
func New(store analytics.CampaignStore, flags FlagsFunc, users int, now func() time.Time, log *slog.Logger) *Engine {
	if users <= 0 {
		users = defaultUsers
	}
	e := &Engine{Store: store, Flags: flags, Now: now, Log: log, loader: newLoader(store)}
	e.users.max = users
	return e
}

// productTTL is how long a product's campaigns are served from memory
// before they are read again (in the background, the old ones still
// served): a change made on another node shows here within it.
const productTTL = 2 * time.Second

// userTTL is how long a user's states are trusted from memory: a track
// recorded on another node shows here within it.
const userTTL = 30 * time.Second

// ErrNotFound is the error of a campaign the product does not have.
var ErrNotFound = analytics.Errorf(analytics.KindNotFound, "campaign_not_found", "There is no campaign with this id in this product.")

// Errors of a campaign that exists but does not take what was sent: a
// draft has never been shown, so nothing about it can be tracked; only an
// active campaign's survey takes answers (docs/messages.md, "The SDK
// paths"). A message already shown when its campaign was paused or
// archived may still be dismissed or completed, which records the user's
// state, but its survey's answers are refused: the campaign's owner
// stopped collecting them.
var (
	ErrCampaignDraft = analytics.Errorf(analytics.KindConflict, "campaign_not_active",
		"This campaign is a draft: it is shown to nobody, so nothing about it can be tracked.")
	ErrSurveyClosed = analytics.Errorf(analytics.KindConflict, "campaign_not_active",
		"This campaign is not active, so its survey takes no answers.")
)

// Request is one GET /api/v1/messages/active.
type Request struct {
	ProductID  int64
	DistinctID string
	Path       string
	Identified bool
	// Traits are the identify traits the SDK holds, for the audience's
	// conditions.
	Traits map[string]any
}

// Message is one campaign in the answer: the steps of the user's variant.
type Message struct {
	ID        int64             `json:"id"`
	Name      string            `json:"name"`
	Variant   string            `json:"variant"`
	Trigger   analytics.Trigger `json:"trigger"`
	PathRegex string            `json:"pathRegex"`
	// Remaining is how many more impressions the cap allows now.
	Remaining int `json:"remaining"`
	// Exposure is what the SDK sends as $exposure when the variant's
	// first step renders, or nil without a flag.
	Exposure *Exposure       `json:"exposure"`
	Steps    json.RawMessage `json:"steps"`

	// head is the message's JSON up to "remaining", encoded once with its
	// campaign's variant (AppendJSON).
	head []byte
}

// AppendJSON appends the body of GET /api/v1/messages/active for list to
// dst. What does not depend on the user was encoded when the campaign was
// read; encoding/json would check and compact the steps again on every
// request.
func AppendJSON(dst []byte, list []Message) []byte {
	dst = append(dst, `{"messages":[`...)
	for i, m := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.head...)
		dst = strconv.AppendInt(dst, int64(m.Remaining), 10)
		dst = append(dst, `,"exposure":`...)
		if m.Exposure == nil {
			dst = append(dst, "null"...)
		} else {
			b, _ := json.Marshal(m.Exposure)
			dst = append(dst, b...)
		}
		dst = append(dst, `,"steps":`...)
		dst = append(dst, m.Steps...)
		dst = append(dst, '}')
	}
	return append(dst, "]}\n"...)
}

// Exposure is the $exposure a campaign with variants sends, as a flag's.
type Exposure struct {
	Flag         string `json:"flag"`
	ExperimentID *int64 `json:"experiment_id"`
	Variant      string `json:"variant"`
}

// Active returns the campaigns the user may see on the path now, in the
// order they were created.
func (e *Engine) Active(ctx context.Context, req Request) ([]Message, error) {
	p, err := e.products.get(ctx, e, req.ProductID)
	if err != nil {
		return nil, err
	}
	out := []Message{}
	if !p.autoRender || len(p.active) == 0 {
		return out, nil
	}
	states, err := e.states(ctx, req.ProductID, req.DistinctID)
	if err != nil {
		return nil, err
	}
	today := day(e.Now())
	var cohorts flags.Cohorts
	if len(p.cohorts) > 0 {
		cohorts = e.Cohorts.Member(req.ProductID, p.cohorts, req.DistinctID)
	}
	for _, c := range p.active {
		if c.path != nil && !c.path.MatchString(req.Path) {
			continue
		}
		if !c.audience(req, cohorts) {
			continue
		}
		remaining := c.remaining(states[c.ID], today)
		if remaining <= 0 {
			continue
		}
		v, exposure := c.variant(p.flags[c.FlagKey], req.DistinctID, req.Traits, cohorts)
		out = append(out, Message{ID: c.ID, Name: c.Name, Variant: v.key, Trigger: c.Trigger, PathRegex: c.PathRegex,
			Remaining: remaining, Exposure: exposure, Steps: v.steps, head: v.head})
	}
	return out, nil
}

// Track records a message event of a user with a campaign: an impression
// counts against the cap, and the first terminal event ends the user's
// flow of the campaign for good, whatever the variant.
func (e *Engine) Track(ctx context.Context, productID, campaignID int64, distinctID, event, variant string) error {
	c, err := e.campaign(ctx, productID, campaignID)
	if err != nil {
		return err
	}
	if c.Status == analytics.CampaignDraft {
		return ErrCampaignDraft
	}
	if !c.hasVariant(variant) {
		return analytics.InvalidField("variant", "must be a variant of campaign %d, not %q", campaignID, variant)
	}
	switch event {
	case analytics.MessageImpression, analytics.MessageDismiss, analytics.MessageCTAClick, analytics.MessageComplete:
	default:
		return analytics.InvalidField("event", "must be message_impression, message_dismiss, message_cta_click or message_complete, not %q", event)
	}
	lock := &e.locks[userHash(productID, distinctID)%uint64(len(e.locks))]
	lock.Lock()
	defer lock.Unlock()
	states, err := e.states(ctx, productID, distinctID)
	if err != nil {
		return err
	}
	now := e.Now()
	st := states[campaignID]
	st.CampaignID = campaignID
	outcome := ""
	if event == analytics.MessageImpression {
		if st.Impressions == 0 {
			outcome = analytics.OutcomeShown
		}
		st.Impressions++
		if today := day(now); st.Day == today {
			st.DayImpressions++
		} else {
			st.Day, st.DayImpressions = today, 1
		}
		st.Variant = variant
	} else if st.Ended == "" {
		st.Ended, outcome = event, event
		if st.Variant == "" {
			st.Variant = variant
		}
	}
	// The user's row keeps every state, those of deleted campaigns too:
	// this node's list of campaigns may be up to productTTL old, and a
	// campaign made on another node meanwhile must not lose its state.
	next := make(map[int64]analytics.MessageState, len(states)+1)
	list := make([]analytics.MessageState, 0, len(states)+1)
	for id, s := range states {
		if id != campaignID {
			next[id] = s
			list = append(list, s)
		}
	}
	next[campaignID] = st
	list = append(list, st)
	slices.SortFunc(list, func(a, b analytics.MessageState) int { return cmp.Compare(a.CampaignID, b.CampaignID) })
	if err := e.Store.PutMessageStates(ctx, productID, distinctID, list, campaignID, outcome); err != nil {
		e.users.drop(productID, distinctID)
		return err
	}
	e.users.put(productID, distinctID, next, now)
	return nil
}

// Campaign returns a campaign of the product, from memory when the
// product's campaigns are held, else from the store; ErrNotFound when the
// product has none with that id.
func (e *Engine) Campaign(ctx context.Context, productID, id int64) (analytics.Campaign, error) {
	c, err := e.campaign(ctx, productID, id)
	if err != nil {
		return analytics.Campaign{}, err
	}
	return c.Campaign, nil
}

// SurveyCampaign returns a campaign whose survey takes answers now: as
// Campaign, but ErrSurveyClosed unless the campaign is active.
func (e *Engine) SurveyCampaign(ctx context.Context, productID, id int64) (analytics.Campaign, error) {
	c, err := e.Campaign(ctx, productID, id)
	if err == nil && c.Status != analytics.CampaignActive {
		return analytics.Campaign{}, ErrSurveyClosed
	}
	return c, err
}

func (e *Engine) campaign(ctx context.Context, productID, id int64) (*compiled, error) {
	p, err := e.products.get(ctx, e, productID)
	if err != nil {
		return nil, err
	}
	if c, ok := p.all[id]; ok {
		return c, nil
	}
	// Created on another node since the product was read.
	c, err := e.Store.Campaign(ctx, productID, id)
	if errors.Is(err, analytics.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return compile(c)
}

// Changed drops what this node holds of a product's campaigns after a
// change made here, so that the next request reads them again.
func (e *Engine) Changed(productID int64) { e.products.drop(productID) }

// CacheStats is how many reads of a product's campaigns were answered from
// memory (hits) and from the store (misses).
func (e *Engine) CacheStats() (hits, misses uint64) {
	return e.products.hits.Load(), e.products.misses.Load()
}

// states returns a user's states by campaign id, from memory if held
// and fresh, else from the store.
func (e *Engine) states(ctx context.Context, productID int64, distinctID string) (map[int64]analytics.MessageState, error) {
	now := e.Now()
	if m, ok := e.users.get(productID, distinctID, now); ok {
		return m, nil
	}
	list, err := e.loader.load(ctx, productID, distinctID)
	if err != nil {
		return nil, err
	}
	m := make(map[int64]analytics.MessageState, len(list))
	for _, st := range list {
		m[st.CampaignID] = st
	}
	e.users.put(productID, distinctID, m, now)
	return m, nil
}

// day is t's UTC day, in days since the epoch.
func day(t time.Time) int { return int(t.UTC().Unix() / 86400) }

// compiled is a campaign ready to be evaluated: its path expression
// compiled and each variant's steps encoded once.
type compiled struct {
	analytics.Campaign
	path     *regexp.Regexp
	variants []variant
}

type variant struct {
	key   string
	steps json.RawMessage
	head  []byte // Message.head
}

func compile(c analytics.Campaign) (*compiled, error) {
	out := &compiled{Campaign: c}
	if c.PathRegex != "" {
		re, err := regexp.Compile(c.PathRegex)
		if err != nil {
			return nil, fmt.Errorf("campaign %d: stored path expression: %w", c.ID, err)
		}
		out.path = re
	}
	for _, v := range c.Variants {
		steps, err := json.Marshal(v.Steps)
		if err != nil {
			return nil, err
		}
		head, err := json.Marshal(struct {
			ID        int64             `json:"id"`
			Name      string            `json:"name"`
			Variant   string            `json:"variant"`
			Trigger   analytics.Trigger `json:"trigger"`
			PathRegex string            `json:"pathRegex"`
		}{c.ID, c.Name, v.Key, c.Trigger, c.PathRegex})
		if err != nil {
			return nil, err
		}
		head = append(head[:len(head)-1], `,"remaining":`...)
		out.variants = append(out.variants, variant{key: v.Key, steps: steps, head: head})
	}
	if len(out.variants) == 0 {
		return nil, fmt.Errorf("campaign %d has no variants", c.ID)
	}
	return out, nil
}

func (c *compiled) hasVariant(key string) bool {
	for _, v := range c.variants {
		if v.key == key {
			return true
		}
	}
	return false
}

// remaining is how many impressions the cap still allows the user, 0
// once the user's flow ended.
func (c *compiled) remaining(st analytics.MessageState, today int) int {
	if st.Ended != "" {
		return 0
	}
	switch c.Cap.Kind {
	case analytics.CapPerDay:
		if st.Day != today {
			return c.Cap.Count
		}
		return c.Cap.Count - st.DayImpressions
	default: // once, times
		return c.Cap.Count - st.Impressions
	}
}

// variant is the user's variant: the flag's assignment when the campaign
// has several, else its only one. A user the flag does not assign (it is
// off, or gone), a holdout user, a user outside the flag's rollout, or an
// arm the campaign lacks sees the first variant; a holdout user's exposure
// says holdout and an outside user's excluded, so neither counts in an arm.
// The flag's targeting conditions are evaluated on the user's traits, as
// the SDKs evaluate them on the traits passed to identify, and cohorts.
func (c *compiled) variant(f *flags.Flag, distinctID string, traits map[string]any, cohorts flags.Cohorts) (variant, *Exposure) {
	first := c.variants[0]
	if len(c.variants) == 1 || f == nil {
		return first, nil
	}
	a, ok := flags.Assign(f, distinctID, traits, cohorts)
	if !ok {
		return first, nil
	}
	exposure := &Exposure{Flag: f.Key, Variant: a.Exposed()}
	if f.Experiment != nil && f.Experiment.Status == string(analytics.ExperimentRunning) {
		id := f.Experiment.ID
		exposure.ExperimentID = &id
	}
	if a.Holdout || a.Excluded {
		return first, exposure
	}
	for _, v := range c.variants {
		if v.key == a.Variant {
			return v, exposure
		}
	}
	return first, nil
}

// audience reports whether the user, whose memberships of the targeted
// cohorts are cohorts, is in the campaign's audience.
func (c *compiled) audience(req Request, cohorts flags.Cohorts) bool {
	a := &c.Audience
	if a.Identified && !req.Identified {
		return false
	}
	if a.Percentage < 100 && flags.Bucket("message", strconv.FormatInt(c.ID, 10), req.DistinctID) >= analytics.BasisPoints(a.Percentage) {
		return false
	}
	for _, cond := range a.Conditions {
		if !holds(cond, req.Traits, cohorts) {
			return false
		}
	}
	return true
}

// holds evaluates one condition, by the rule flags' targeting conditions
// share (flags.Holds, flags.InCohort). A trait that is missing (or null)
// fails every condition but neq; a cohort not held fails both operators.
func holds(cond analytics.TraitCondition, traits map[string]any, cohorts flags.Cohorts) bool {
	if cond.Type == analytics.FlagConditionCohort {
		return flags.InCohort(cond.CohortID, cond.Op, cohorts)
	}
	return flags.Holds(cond.Trait, cond.Op, cond.Value, traits)
}
