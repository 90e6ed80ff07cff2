package strata

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// How long the flag configuration and a user's variant are reused, as
// every Strata SDK reuses them (docs/flags.md): a change to a flag reaches
// a Go server within ConfigTTL + VariantTTL.
const (
	ConfigTTL  = 5 * time.Minute
	VariantTTL = 60 * time.Second
)

const (
	// configRetry is how long after a failed read of the configuration
	// calls answer control at once instead of asking again, so that a
	// Strata that is down costs each request nothing, not a timeout.
	configRetry = 5 * time.Second
	// maxConfigBytes bounds the configuration read into memory. The
	// server's is a few hundred bytes a flag; 4 MiB is thousands of flags.
	maxConfigBytes = 4 << 20
	// maxExposed is how many (flag, user, experiment, variant) exposures
	// the client remembers having sent; the same bound as the Node SDK's.
	maxExposed = 50_000
)

// flagState is the client's flag configuration and its caches, guarded by
// Client.flagMu.
type flagState struct {
	flags  map[string]*flagConfig // nil until a read succeeded
	etag   string
	readAt time.Time // when the configuration was last read (or confirmed by a 304)
	// failedAt is when the last read failed; zero after a success.
	failedAt time.Time
	// loading is the read under way, shared by every call that needs it.
	loading  *configRead
	variants *lru // flag + user → cachedVariant
	exposed  *lru // flag + user + experiment + variant → struct{}
	cohorts  *lru // user → cachedCohorts
}

// cachedCohorts is a user's memberships of the cohorts the flags name, as
// GET /api/v1/config?distinct_id= gave them.
type cachedCohorts struct {
	at      time.Time
	cohorts map[string]bool
}

// configRead is one request for the configuration; done is closed when
// it ended, and err (guarded by Client.flagMu) is then why it failed.
type configRead struct {
	done chan struct{}
	err  error
}

type cachedVariant struct {
	at         time.Time
	variant    string
	exposed    string
	experiment *int64
}

// Variant returns the user's variant of a flag: "control", "on" (a flag
// without variants, for a user in its rollout), or an arm's key. It
// follows the rule every Strata SDK follows (docs/flags.md), evaluating the
// flag here from the product's configuration, which it reads from
// GET /api/v1/config on first use and again when it is ConfigTTL old.
// Calls that need the configuration at the same time share one request,
// which takes at most Options.ConfigTimeout (and ctx). A user's answer is
// reused for VariantTTL.
//
// A missing or disabled flag, a user outside the flag's rollout or in its
// experiment's holdout, a paused experiment, and a configuration that was
// never read (Strata unreachable: the answer is not cached, and the
// configuration is asked for again after 5 s) all give "control". Once
// read, the configuration is kept when a later read fails.
//
// The first time a user gets a flag, with a given experiment and arm, a
// $exposure event {flag, experiment_id, variant} is queued like any event
// (unless Options.DisableExposures); its variant is "holdout" for a user
// in the holdout and "excluded" for one outside the rollout, so that the
// experiment counts neither in an arm.
//
// A flag with targeting conditions is evaluated on no properties here:
// every condition but neq fails. Use VariantWithProperties to pass the
// user's.
func (c *Client) Variant(ctx context.Context, flagKey, distinctID string) string {
	return c.VariantWithProperties(ctx, flagKey, distinctID, nil)
}

// VariantWithProperties is Variant for a user with these properties (the
// traits you would pass to identify, e.g. {"plan": "pro", "seats": 12}),
// on which the flag's targeting conditions are evaluated (the server's
// docs/flags.md, "Targeting"): a user they do not target gets "control"
// and is exposed as "excluded". The answer is reused for VariantTTL for
// the same user and the same properties.
//
// A flag with a cohort condition is evaluated on the user's memberships,
// which the client reads from GET /api/v1/config for that user (its
// answer names that user's cohorts alone) and keeps for VariantTTL
// (docs/flags.md, "Cohorts"). When they cannot be read, the user's cohort
// conditions fail and the answer is not kept.
func (c *Client) VariantWithProperties(ctx context.Context, flagKey, distinctID string, properties map[string]any) string {
	now := c.now()
	key := flagKey + "\x00" + distinctID
	if len(properties) > 0 {
		// json.Marshal sorts map keys: equal properties give one key.
		b, _ := json.Marshal(properties)
		key += "\x00" + string(b)
	}
	c.flagMu.Lock()
	v, ok := c.fs.variants.get(key).(cachedVariant)
	c.flagMu.Unlock()
	if !ok || now.Sub(v.at) >= VariantTTL {
		flags, ok := c.flagConfig(ctx)
		if !ok {
			return "control"
		}
		f := flags[flagKey]
		var cohorts map[string]bool
		known := true
		if needsCohorts(f) {
			cohorts, known = c.userCohorts(ctx, distinctID)
		}
		a, ok := assign(f, distinctID, properties, cohorts)
		if !ok {
			v = cachedVariant{at: now, variant: "control"}
		} else {
			v = cachedVariant{at: now, variant: a.variant, exposed: a.exposed}
			if e := f.Experiment; e != nil && e.Status == "running" {
				v.experiment = e.ID
			}
		}
		if known {
			c.flagMu.Lock()
			c.fs.variants.put(key, v)
			c.flagMu.Unlock()
		}
	}
	// An event needs a distinct_id: ingest would refuse an exposure of no
	// one.
	if v.exposed != "" && distinctID != "" && !c.opt.DisableExposures {
		c.expose(flagKey, distinctID, v)
	}
	return v.variant
}

// LoadFlags reads the flag configuration now, so that the first Variant
// call does not wait for it (or to take up a change at once), and returns
// why it could not. The configuration in memory, if any, stays when the
// read fails.
func (c *Client) LoadFlags(ctx context.Context) error {
	c.flagMu.Lock()
	read := c.startRead()
	c.flagMu.Unlock()
	select {
	case <-read.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.flagMu.Lock()
	defer c.flagMu.Unlock()
	return read.err
}

// expose queues the user's $exposure unless this client sent it before.
func (c *Client) expose(flagKey, distinctID string, v cachedVariant) {
	expID := "null"
	var experimentID any
	if v.experiment != nil {
		expID = strconv.FormatInt(*v.experiment, 10)
		experimentID = *v.experiment
	}
	mark := flagKey + "\x00" + distinctID + "\x00" + expID + "\x00" + v.exposed
	c.flagMu.Lock()
	seen := c.fs.exposed.get(mark) != nil
	if !seen {
		c.fs.exposed.put(mark, struct{}{})
	}
	c.flagMu.Unlock()
	if !seen {
		c.Capture(Event{Name: "$exposure", DistinctID: distinctID,
			Properties: map[string]any{"flag": flagKey, "experiment_id": experimentID, "variant": v.exposed}})
	}
}

// flagConfig returns the product's flags; false when none could be read.
// The configuration is the product's, the same for every user (the server
// answers it per API key), so one copy serves all users and one request
// serves every call under way. Only the first read is waited for: once a
// configuration is in memory, one older than ConfigTTL is still answered
// while a read in the background replaces it, so that no request of the
// Go server waits on Strata again, and a read that fails keeps it.
func (c *Client) flagConfig(ctx context.Context) (map[string]*flagConfig, bool) {
	c.flagMu.Lock()
	fs := &c.fs
	now := c.now()
	flags := fs.flags
	if flags != nil && now.Sub(fs.readAt) < ConfigTTL {
		c.flagMu.Unlock()
		return flags, true
	}
	read := fs.loading
	if read == nil {
		if !fs.failedAt.IsZero() && now.Sub(fs.failedAt) < configRetry {
			// A read failed moments ago: do not ask again yet.
			c.flagMu.Unlock()
			return flags, flags != nil
		}
		read = c.startRead()
	}
	c.flagMu.Unlock()
	if flags != nil {
		return flags, true
	}
	select {
	case <-read.done:
	case <-ctx.Done():
		return nil, false
	}
	c.flagMu.Lock()
	flags = fs.flags
	c.flagMu.Unlock()
	return flags, flags != nil
}

// startRead starts a read of the configuration unless one is under way,
// and returns it. c.flagMu is held.
func (c *Client) startRead() *configRead {
	if c.fs.loading == nil {
		c.fs.loading = &configRead{done: make(chan struct{})}
		go c.readConfig(c.fs.loading, c.fs.etag)
	}
	return c.fs.loading
}

// readConfig makes one request for the configuration, with its own
// timeout: it serves every caller waiting, so no one caller's context may
// end it. It sends the last ETag, so that an unchanged configuration costs
// a 304 without a body.
func (c *Client) readConfig(read *configRead, etag string) {
	defer close(read.done)
	ctx, cancel := context.WithTimeout(context.Background(), c.opt.ConfigTimeout)
	defer cancel()
	flags, newTag, err := c.fetchConfig(ctx, etag)
	c.flagMu.Lock()
	defer c.flagMu.Unlock()
	c.fs.loading = nil
	now := c.now()
	switch {
	case err != nil:
		c.fs.failedAt, read.err = now, err
	case flags == nil: // 304: the configuration in memory is current.
		c.fs.readAt, c.fs.failedAt = now, time.Time{}
	default:
		c.fs.flags, c.fs.etag, c.fs.readAt, c.fs.failedAt = flags, newTag, now, time.Time{}
	}
	c.configReads.Add(1)
}

// fetchConfig asks the server for the product's configuration: nil flags
// and no error when it answered 304 Not Modified.
func (c *Client) fetchConfig(ctx context.Context, etag string) (map[string]*flagConfig, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opt.Host+"/api/v1/config?api_key="+url.QueryEscape(c.opt.APIKey), nil)
	if err != nil {
		return nil, "", fmt.Errorf("strata: GET /api/v1/config: %w", err)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.opt.HTTPClient.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("strata: GET /api/v1/config: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && etag != "" {
		return nil, "", nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxConfigBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("strata: GET /api/v1/config: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("strata: GET /api/v1/config: %d %.200s", resp.StatusCode, body)
	}
	if len(body) > maxConfigBytes {
		return nil, "", fmt.Errorf("strata: GET /api/v1/config: the answer is over %d bytes", maxConfigBytes)
	}
	var cfg struct {
		Flags []*flagConfig `json:"flags"`
	}
	if err := json.Unmarshal(body, &cfg); err != nil {
		return nil, "", fmt.Errorf("strata: GET /api/v1/config: %w", err)
	}
	if cfg.Flags == nil {
		return nil, "", errors.New("strata: GET /api/v1/config: the answer has no flags list")
	}
	flags := make(map[string]*flagConfig, len(cfg.Flags))
	for _, f := range cfg.Flags {
		if f != nil {
			flags[f.Key] = f
		}
	}
	return flags, resp.Header.Get("ETag"), nil
}

// userCohorts returns the user's memberships from memory or from
// GET /api/v1/config?distinct_id=, and false when they could not be read.
func (c *Client) userCohorts(ctx context.Context, distinctID string) (map[string]bool, bool) {
	now := c.now()
	c.flagMu.Lock()
	held, ok := c.fs.cohorts.get(distinctID).(cachedCohorts)
	c.flagMu.Unlock()
	if ok && now.Sub(held.at) < VariantTTL {
		return held.cohorts, true
	}
	ctx, cancel := context.WithTimeout(ctx, c.opt.ConfigTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		c.opt.Host+"/api/v1/config?api_key="+url.QueryEscape(c.opt.APIKey)+"&distinct_id="+url.QueryEscape(distinctID), nil)
	if err != nil {
		return nil, false
	}
	resp, err := c.opt.HTTPClient.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxConfigBytes+1))
	var cfg struct {
		Cohorts map[string]bool `json:"cohorts"`
	}
	if err != nil || resp.StatusCode != http.StatusOK || len(body) > maxConfigBytes || json.Unmarshal(body, &cfg) != nil {
		return nil, false
	}
	c.flagMu.Lock()
	c.fs.cohorts.put(distinctID, cachedCohorts{at: now, cohorts: cfg.Cohorts})
	c.flagMu.Unlock()
	return cfg.Cohorts, true
}

// lru is a map bounded to max entries that forgets the least recently used
// one to make room: a server sees many users, and what the client keeps of
// each must not grow with how many it has seen.
type lru struct {
	max   int
	order *list.List // front: most recently used; values are *lruEntry
	items map[string]*list.Element
}

type lruEntry struct {
	key   string
	value any
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: make(map[string]*list.Element)}
}

// get returns key's value, or nil.
func (l *lru) get(key string) any {
	e, ok := l.items[key]
	if !ok {
		return nil
	}
	l.order.MoveToFront(e)
	return e.Value.(*lruEntry).value
}

// put sets key's value, forgetting the least recently used entry when the
// map is full.
func (l *lru) put(key string, value any) {
	if e, ok := l.items[key]; ok {
		e.Value.(*lruEntry).value = value
		l.order.MoveToFront(e)
		return
	}
	if l.order.Len() >= l.max {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.items, oldest.Value.(*lruEntry).key)
	}
	l.items[key] = l.order.PushFront(&lruEntry{key: key, value: value})
}

func (l *lru) len() int { return l.order.Len() }
