// Package strata is Strata's SDK for Go servers: a small client that
// sends events to a Strata server's ingest (POST /e), evaluates the
// product's feature flags and experiments locally (Client.Variant, from
// GET /api/v1/config; flags.go), and net/http middleware that reports the
// page fetches of AI bots, which run no JavaScript and so are never seen
// by the browser SDK.
//
// The package is a module of its own that imports the standard library
// alone, so that a Go program using it pulls none of the server's
// dependencies; it carries copies of what it shares with the server (the
// AI-bot allowlist, and for its tests the classification cases and the
// assignment vectors), which the server module's tests hold to the
// originals.
//
// The middleware classifies each request's User-Agent against that copy
// of the server's allowlist (internal/enrich/bots): a human request costs
// that classification and nothing else. A bot's fetch is queued as a
// $pageview carrying the bot's user agent, which ingest stores as
// $bot_pageview (a client may not send that name itself), and the
// response goes on at once: the client sends in the background, in
// batches, retrying with backoff, and drops its oldest events rather than
// grow when Strata is down or slow.
//
//	client := strata.New(strata.Options{APIKey: os.Getenv("STRATA_API_KEY"), Host: "https://strata.example.com"})
//	defer client.Close(context.Background())
//	http.ListenAndServe(":8080", client.Middleware(mux))
package strata

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bot is what ClassifyBot tells of an AI bot.
type Bot struct {
	Name          string `json:"name"`
	Operator      string `json:"operator"`
	Category      string `json:"category"`
	CategoryLabel string `json:"categoryLabel"`
}

// ClassifyBot returns the AI bot whose product token is in userAgent, as
// Strata's ingest classifies it, and whether there is one. Any input,
// empty or enormous, is answered; none panics.
func ClassifyBot(userAgent string) (Bot, bool) {
	return table().classify(userAgent)
}

// IsAIBot reports whether userAgent is an AI bot's.
func IsAIBot(userAgent string) bool {
	_, ok := table().classify(userAgent)
	return ok
}

// Event is one event to send. Name and DistinctID are required; the other
// fields may be left out (Timestamp: the time of Capture).
type Event struct {
	Name       string
	DistinctID string
	Timestamp  time.Time
	URL        string
	Referrer   string
	UserAgent  string
	Properties map[string]any
}

// Options configure a Client. APIKey and Host are required.
type Options struct {
	// APIKey is the product's API key; Host the Strata server's base URL
	// (https://strata.example.com).
	APIKey string
	Host   string
	// BatchSize is the most events a request carries (default 100, at
	// most 500); FlushInterval how long an event waits for more
	// (default 1 s).
	BatchSize     int
	FlushInterval time.Duration
	// MaxQueue bounds the events held while Strata is slow or down
	// (default 10,000); past it the oldest are dropped and counted
	// (Client.Dropped).
	MaxQueue int
	// MaxRetries bounds the attempts at one batch after its first, on 429,
	// 5xx and network errors (default 5); backoff doubles from 500 ms
	// with jitter, or follows Retry-After.
	MaxRetries int
	// HTTPClient sends the requests (default: a client with a 10 s
	// timeout).
	HTTPClient *http.Client
	// BotDistinctID is the distinct_id of the bots' page views (default
	// "$server_bot"): a bot is not a user.
	BotDistinctID string

	// ConfigTimeout bounds one read of the flag configuration
	// (default 5 s); until the first read succeeds, Variant answers
	// control.
	ConfigTimeout time.Duration
	// VariantCacheSize bounds the (flag, user) answers Variant reuses for
	// VariantTTL (default 10,000); past it the least recently used is
	// forgotten and evaluated again when asked, which costs a hash.
	VariantCacheSize int
	// DisableExposures stops Variant from sending $exposure events
	// (experiments then count no one).
	DisableExposures bool
}

// Client sends events to Strata in the background. It is safe for
// concurrent use; Close it to send what is queued.
type Client struct {
	opt   Options
	mu    sync.Mutex
	queue ring
	wake  chan struct{}
	// turn is held by whoever takes and sends a batch, the background
	// sender or Flush, so that Flush returns only once every event queued
	// before it was sent, the batch under way included.
	turn    chan struct{}
	done    chan struct{}
	stopped chan struct{}
	closing atomic.Bool
	dropped atomic.Int64
	sent    atomic.Int64
	failed  atomic.Int64
	// sleep waits between retries; tests shorten it.
	sleep func(ctx context.Context, d time.Duration) error

	// flagMu guards fs, the flags' configuration and caches (flags.go);
	// configReads counts the requests for the configuration.
	flagMu      sync.Mutex
	fs          flagState
	configReads atomic.Int64
	// now is the clock of the flags' caches; tests move it.
	now func() time.Time
}

// wireEvent is an event as /e takes it.
type wireEvent struct {
	EventName  string         `json:"event_name"`
	DistinctID string         `json:"distinct_id"`
	Timestamp  string         `json:"timestamp"`
	UUID       string         `json:"uuid"`
	URL        string         `json:"url,omitempty"`
	Referrer   string         `json:"referrer,omitempty"`
	UserAgent  string         `json:"user_agent,omitempty"`
	Properties map[string]any `json:"properties,omitempty"`
}

// New starts a client.
func New(opt Options) *Client {
	if opt.BatchSize <= 0 || opt.BatchSize > 500 {
		opt.BatchSize = 100
	}
	if opt.FlushInterval <= 0 {
		opt.FlushInterval = time.Second
	}
	if opt.MaxQueue <= 0 {
		opt.MaxQueue = 10_000
	}
	if opt.MaxRetries <= 0 {
		opt.MaxRetries = 5
	}
	if opt.HTTPClient == nil {
		opt.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if opt.BotDistinctID == "" {
		opt.BotDistinctID = "$server_bot"
	}
	if opt.ConfigTimeout <= 0 {
		opt.ConfigTimeout = 5 * time.Second
	}
	if opt.VariantCacheSize <= 0 {
		opt.VariantCacheSize = 10_000
	}
	opt.Host = strings.TrimRight(opt.Host, "/")
	c := &Client{opt: opt, queue: ring{buf: make([]wireEvent, opt.MaxQueue)},
		wake: make(chan struct{}, 1), turn: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{}), sleep: sleepCtx,
		fs: flagState{variants: newLRU(opt.VariantCacheSize), exposed: newLRU(maxExposed), cohorts: newLRU(opt.VariantCacheSize)}, now: time.Now}
	go c.run()
	return c
}

// Capture queues an event and returns at once. When the queue is full the
// oldest event is dropped.
func (c *Client) Capture(e Event) {
	if c.closing.Load() {
		c.dropped.Add(1)
		return
	}
	ts := e.Timestamp
	if ts.IsZero() {
		ts = time.Now()
	}
	w := wireEvent{EventName: e.Name, DistinctID: e.DistinctID, Timestamp: ts.UTC().Format(time.RFC3339Nano), UUID: newUUID(),
		URL: e.URL, Referrer: e.Referrer, UserAgent: e.UserAgent, Properties: e.Properties}
	c.mu.Lock()
	if c.queue.push(w) {
		c.dropped.Add(1)
	}
	full := c.queue.n >= c.opt.BatchSize
	c.mu.Unlock()
	if full {
		c.poke()
	}
}

// Dropped is how many events were dropped because the queue was full or
// the client closed; Sent how many Strata accepted or rejected for good;
// Failed how many were given up after their retries.
func (c *Client) Dropped() int64 { return c.dropped.Load() }
func (c *Client) Sent() int64    { return c.sent.Load() }
func (c *Client) Failed() int64  { return c.failed.Load() }

func (c *Client) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Flush sends what is queued now and returns when it was sent, given up
// or ctx ended.
func (c *Client) Flush(ctx context.Context) error {
	for {
		// The turn waits for a batch the background sender is sending:
		// events queued before the call may be in it.
		select {
		case c.turn <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		batch := c.take()
		if len(batch) == 0 {
			<-c.turn
			return nil
		}
		err := c.send(ctx, batch)
		<-c.turn
		if err != nil {
			return err
		}
	}
}

// Close stops taking events, sends what is queued (until ctx ends) and
// stops the background sender.
func (c *Client) Close(ctx context.Context) error {
	if c.closing.Swap(true) {
		return nil
	}
	close(c.done)
	<-c.stopped
	return c.Flush(ctx)
}

// run sends a batch when one is full or FlushInterval has passed.
func (c *Client) run() {
	defer close(c.stopped)
	t := time.NewTicker(c.opt.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		case <-c.wake:
		}
		for {
			select {
			case c.turn <- struct{}{}:
			case <-c.done:
				return
			}
			batch := c.take()
			if len(batch) == 0 {
				<-c.turn
				break
			}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-c.done:
					cancel()
				case <-ctx.Done():
				}
			}()
			err := c.send(ctx, batch)
			cancel()
			if err != nil && errors.Is(err, context.Canceled) {
				c.requeue(batch)
				<-c.turn
				return
			}
			<-c.turn
		}
	}
}

// take removes up to BatchSize events from the queue's head.
func (c *Client) take() []wireEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue.pop(c.opt.BatchSize)
}

// requeue puts a batch back at the head of the queue; what does not fit
// beside the newer events is dropped from the batch's oldest.
func (c *Client) requeue(batch []wireEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(batch) - 1; i >= 0; i-- {
		if !c.queue.unshift(batch[i]) {
			c.dropped.Add(int64(i + 1))
			return
		}
	}
}

// ring is the queue: a fixed circle of MaxQueue events, the oldest at
// head, so that taking a batch and dropping the oldest cost nothing that
// grows with the queue.
type ring struct {
	buf     []wireEvent
	head, n int
}

// push appends e, dropping the oldest event when the ring is full, and
// reports whether it dropped one.
func (r *ring) push(e wireEvent) (dropped bool) {
	if r.n == len(r.buf) {
		r.buf[r.head] = wireEvent{}
		r.head = (r.head + 1) % len(r.buf)
		r.n--
		dropped = true
	}
	r.buf[(r.head+r.n)%len(r.buf)] = e
	r.n++
	return dropped
}

// unshift puts e before the oldest event, unless the ring is full.
func (r *ring) unshift(e wireEvent) bool {
	if r.n == len(r.buf) {
		return false
	}
	r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
	r.buf[r.head] = e
	r.n++
	return true
}

// pop removes and returns up to max events from the head.
func (r *ring) pop(max int) []wireEvent {
	k := min(r.n, max)
	if k == 0 {
		return nil
	}
	out := make([]wireEvent, k)
	for i := range out {
		out[i] = r.buf[r.head]
		r.buf[r.head] = wireEvent{}
		r.head = (r.head + 1) % len(r.buf)
	}
	r.n -= k
	return out
}

// errRetry marks an answer worth another attempt, after wait (0: the
// backoff's).
type errRetry struct {
	status int
	wait   time.Duration
}

func (e *errRetry) Error() string { return "strata: ingest answered " + strconv.Itoa(e.status) }

// send posts one batch, retrying on 429, 5xx and network errors with
// exponential backoff and jitter (or Retry-After). A batch refused for
// good (another 4xx) is counted as sent: retrying cannot help it.
func (c *Client) send(ctx context.Context, batch []wireEvent) error {
	body, err := json.Marshal(map[string]any{"batch": batch, "sent_at": time.Now().UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return err
	}
	backoff := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := c.post(ctx, body)
		if err == nil {
			c.sent.Add(int64(len(batch)))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var retry *errRetry
		transient := errors.As(err, &retry) || !isPermanent(err)
		if !transient {
			c.sent.Add(int64(len(batch)))
			return nil
		}
		if attempt >= c.opt.MaxRetries {
			c.failed.Add(int64(len(batch)))
			return nil
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		if retry != nil && retry.wait > 0 {
			wait = retry.wait
		}
		if err := c.sleep(ctx, wait); err != nil {
			return err
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// errPermanent is a refusal no retry changes (a 4xx but 429).
type errPermanent struct{ status int }

func (e *errPermanent) Error() string {
	return "strata: ingest refused the batch: " + strconv.Itoa(e.status)
}

func isPermanent(err error) bool {
	var p *errPermanent
	return errors.As(err, &p)
}

func (c *Client) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.opt.Host+"/e", bytes.NewReader(body))
	if err != nil {
		return &errPermanent{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", c.opt.APIKey)
	resp, err := c.opt.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		wait := time.Duration(0)
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			wait = min(time.Duration(s)*time.Second, time.Minute)
		}
		return &errRetry{status: resp.StatusCode, wait: wait}
	}
	return &errPermanent{status: resp.StatusCode}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newUUID is a random (version 4) UUID: ingest deduplicates a retried
// batch by its events' uuids.
func newUUID() string {
	var b [16]byte
	crand.Read(b[:]) // never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// Middleware reports the page fetches of AI bots and passes every request
// on to next unchanged and at once.
func (c *Client) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ua := r.UserAgent(); ua != "" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			if _, ok := table().classify(ua); ok {
				c.Capture(Event{Name: "$pageview", DistinctID: c.opt.BotDistinctID, URL: requestURL(r),
					Referrer: r.Referer(), UserAgent: ua, Properties: map[string]any{"$server_captured": "true"}})
			}
		}
		next.ServeHTTP(w, r)
	})
}

// requestURL is the URL the bot fetched, as the site's visitors see it.
func requestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return fmt.Sprintf("%s://%s%s", scheme, r.Host, r.URL.RequestURI())
}
