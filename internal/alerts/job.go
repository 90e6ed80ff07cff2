package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"strata/internal/analytics"
	"strata/internal/lease"
)

// Payload is the JSON body of a delivery (docs/errors.md, "Alerts").
type Payload struct {
	// ID is the alert's id in the record (GET /api/v1/alerts): the same
	// in every attempt of one alert, so that a receiver can drop a retry
	// of what it already took. 0 for a test delivery.
	ID          int64      `json:"id,omitempty"`
	Kind        string     `json:"kind"`
	Product     int64      `json:"product"`
	Fingerprint string     `json:"fingerprint"`
	Type        string     `json:"type"`
	Message     string     `json:"message"`
	Events      int64      `json:"events"`
	Users       int64      `json:"users"`
	FirstSeen   time.Time  `json:"firstSeen"`
	Hour        *time.Time `json:"hour,omitempty"`
	Count       *int64     `json:"count,omitempty"`
	Average     *float64   `json:"average,omitempty"`
	URL         string     `json:"url"`
	// Timestamp is the attempt's time in Unix seconds, as in the
	// X-Strata-Timestamp header; being in the body, it is signed.
	Timestamp int64 `json:"timestamp,omitempty"`
}

// body is p as sent at time at: with its id and timestamp.
func (p Payload) body(id int64, at time.Time) []byte {
	p.ID, p.Timestamp = id, at.Unix()
	b, _ := json.Marshal(p)
	return b
}

// Store is what the job reads and writes of the metadata store.
type Store interface {
	analytics.AlertStore
	analytics.LeaseStore
}

// Counter reads the error groups' activity: the query engine in the
// server.
type Counter interface {
	ErrorActivity(ctx context.Context, q analytics.ErrorActivityQuery) ([]analytics.ErrorActivityRow, error)
}

// Aliases reads a product's merged error groups: fingerprint → the group
// it counts in.
type Aliases interface {
	ErrorAliases(ctx context.Context, productID int64) (map[string]string, error)
}

// Job sends the error alerts of every product with an enabled webhook
// every Interval, on one node at a time: each round first takes (or
// renews) the lease "error_alerts" for twice the interval, and a node that
// cannot get it skips the round. Each alert is claimed in the metadata
// store before it is sent, so that whatever the lease does (a round that
// outlasts it, a node that takes over) a group alerts once as new and once
// per spike hour.
type Job struct {
	Store   Store
	Counter Counter
	// Aliases are the merged error groups (docs/errors.md, "One bug, one
	// group"), read for each product: a merged group's events count in the
	// group it was merged into, so that it alerts as that group, as the
	// Errors page counts it (errtrack.Groups, which the server passes).
	// nil: none.
	Aliases Aliases
	Sender  *Sender
	Node    string // this node's name in the lease
	// Interval is how often a round runs (--alert-interval).
	Interval time.Duration
	// NewWindow is how far back a group's first event may be for the
	// group to be new: the last hour, or two intervals when that is
	// longer. A window wider than one interval lets a late event or a
	// skipped round not lose the alert; the record keeps it to one.
	NewWindow time.Duration
	// Env is the environment whose errors alert: live.
	Env analytics.Env
	// BaseURL is the dashboard's public address, which the payload's url
	// starts with ("" for a path on the server).
	BaseURL string
	// Parallel is how many deliveries a round makes at once (4 when 0).
	Parallel int
	Log      *slog.Logger
	Now      func() time.Time
}

// leaseName names the job's lease.
const leaseName = "error_alerts"

func (j *Job) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

func (j *Job) newWindow() time.Duration {
	if j.NewWindow > 0 {
		return j.NewWindow
	}
	return max(time.Hour, 2*j.Interval)
}

// Run runs a round every Interval until ctx ends. A round that takes
// longer than the interval (a receiver that is down, being retried) delays
// the next one; ticks are not queued.
func (j *Job) Run(ctx context.Context) {
	lease.Every(ctx, j.Interval, j.Log, "error alerts failed", j.Round)
}

// Round runs one round: if this node holds the lease, it finds, claims and
// delivers the alerts of every enabled webhook. One product's failure
// does not stop the others; the errors are joined.
func (j *Job) Round(ctx context.Context) error {
	now := j.now()
	mine, err := lease.Held(ctx, j.Store, leaseName, j.Node, now, j.Interval)
	if err != nil || !mine {
		return err
	}
	hooks, err := j.Store.EnabledAlertWebhooks(ctx)
	if err != nil {
		return err
	}
	var errs []error
	var claimed []claim
	for _, w := range hooks {
		c, err := j.find(ctx, w, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("product %d: %w", w.ProductID, err))
		}
		claimed = append(claimed, c...)
	}
	j.deliver(ctx, claimed)
	return errors.Join(errs...)
}

// claim is an alert this node claimed, to deliver.
type claim struct {
	hook    analytics.AlertWebhook
	alert   analytics.Alert
	payload Payload
}

// find applies both rules to one product and claims the alerts they give.
func (j *Job) find(ctx context.Context, w analytics.AlertWebhook, now time.Time) ([]claim, error) {
	var out []claim
	var errs []error
	var aliases map[string]string
	if j.Aliases != nil {
		var err error
		if aliases, err = j.Aliases.ErrorAliases(ctx, w.ProductID); err != nil {
			return nil, err
		}
	}
	// New groups: a first event in the window, none in the week before it.
	recent := now.Add(-j.newWindow())
	rows, err := j.Counter.ErrorActivity(ctx, analytics.ErrorActivityQuery{
		EventRange: analytics.EventRange{ProductID: w.ProductID, Env: j.Env, From: recent.Add(-HistoryHours * time.Hour), To: now},
		Recent:     recent, MinRecent: 1, FirstOnly: true, Aliases: aliases})
	if err != nil {
		errs = append(errs, err)
	}
	for _, r := range rows {
		p := j.payload(w, analytics.AlertNew, r)
		c, ok, err := j.claim(ctx, w, analytics.AlertNew, nil, p)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			out = append(out, c)
		}
	}
	// Spikes of the last complete hour against the seven days before it.
	hour := now.UTC().Truncate(time.Hour).Add(-time.Hour)
	rows, err = j.Counter.ErrorActivity(ctx, analytics.ErrorActivityQuery{
		EventRange: analytics.EventRange{ProductID: w.ProductID, Env: j.Env, From: hour.Add(-HistoryHours * time.Hour), To: hour.Add(time.Hour)},
		Recent:     hour, MinRecent: w.SpikeMin, Aliases: aliases})
	if err != nil {
		errs = append(errs, err)
	}
	for _, r := range rows {
		spike, avg := Spike(r.Recent, r.History, w.SpikeFactor, w.SpikeMin)
		if !spike {
			continue
		}
		p := j.payload(w, analytics.AlertSpike, r)
		p.Hour, p.Count, p.Average = &hour, &r.Recent, &avg
		c, ok, err := j.claim(ctx, w, analytics.AlertSpike, &hour, p)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			out = append(out, c)
		}
	}
	return out, errors.Join(errs...)
}

// payload is the body of an alert of kind about group r.
func (j *Job) payload(w analytics.AlertWebhook, kind analytics.AlertKind, r analytics.ErrorActivityRow) Payload {
	return Payload{Kind: string(kind), Product: w.ProductID, Fingerprint: r.Fingerprint, Type: r.Type, Message: r.Message,
		Events: r.Recent, Users: r.Users, FirstSeen: r.FirstSeen, URL: DashboardURL(j.BaseURL, w.ProductID, r.Fingerprint)}
}

// DashboardURL is the address of a group's page in the dashboard.
func DashboardURL(base string, product int64, fingerprint string) string {
	return strings.TrimSuffix(base, "/") + "/errors/" + url.PathEscape(fingerprint) + "?product=" + strconv.FormatInt(product, 10)
}

// claim records an alert; ok reports whether this node claimed it.
func (j *Job) claim(ctx context.Context, w analytics.AlertWebhook, kind analytics.AlertKind, hour *time.Time, p Payload) (claim, bool, error) {
	stored, err := json.Marshal(p)
	if err != nil {
		return claim{}, false, err
	}
	a := analytics.Alert{ProductID: w.ProductID, Fingerprint: p.Fingerprint, Kind: kind, Hour: hour, Payload: stored}
	ok, err := j.Store.ClaimAlert(ctx, &a)
	return claim{hook: w, alert: a, payload: p}, ok, err
}

// deliver sends the claimed alerts, Parallel at a time, and records how
// each went after every attempt.
func (j *Job) deliver(ctx context.Context, claimed []claim) {
	parallel := j.Parallel
	if parallel < 1 {
		parallel = 4
	}
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, c := range claimed {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			j.deliverOne(ctx, c)
		}()
	}
	wg.Wait()
}

func (j *Job) deliverOne(ctx context.Context, c claim) {
	a := c.alert
	record := func() {
		// The record is written even when the round's context ended
		// (shutdown): the attempt was made.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := j.Store.RecordAlertAttempt(rctx, &a); err != nil {
			j.Log.Error("recording an alert's delivery failed", "alert", a.ID, "err", err)
		}
	}
	r, n := j.Sender.Deliver(ctx, c.hook.URL, c.hook.Secret, func(at time.Time) []byte { return c.payload.body(a.ID, at) },
		func(n int, r Result) {
			a.Attempts, a.LastError = n, r.Error
			if r.Delivered {
				at := j.now().UTC()
				a.Status, a.DeliveredAt = analytics.AlertDelivered, &at
				return // recorded below
			}
			if r.Retry && n < j.Sender.attempts() {
				record()
			}
		})
	if !r.Delivered {
		a.Status = analytics.AlertFailed
		if r.Retry && n < j.Sender.attempts() {
			a.LastError = "stopped before every attempt was made: " + r.Error
		}
	}
	record()
	level := slog.LevelInfo
	if !r.Delivered {
		level = slog.LevelWarn
	}
	j.Log.Log(ctx, level, "error alert", "product", a.ProductID, "kind", a.Kind, "fingerprint", a.Fingerprint,
		"status", a.Status, "attempts", n, "err", a.LastError)
}

// attempts is the number of tries a delivery gets.
func (s *Sender) attempts() int {
	if s.Attempts < 1 {
		return analytics.MaxAlertAttempts
	}
	return s.Attempts
}

// TestKind is the kind of a test delivery.
const TestKind = "test"

// SendTest makes one signed test delivery to w, of kind "test", and
// answers how it went: what POST /api/v1/alerts/webhook/test reports.
func (s *Sender) SendTest(ctx context.Context, w analytics.AlertWebhook, baseURL string) Result {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	at := now().UTC()
	p := Payload{Kind: TestKind, Product: w.ProductID, Fingerprint: "test", Type: "Error",
		Message: "A test alert from Strata: the webhook works.", FirstSeen: at.Truncate(time.Second),
		URL: DashboardURL(baseURL, w.ProductID, "test")}
	return s.Send(ctx, w.URL, w.Secret, p.body(0, at), at)
}
