// Package metrics holds the server's Prometheus metrics and serves them in
// the text exposition format (docs/operations.md, "Monitoring").
//
// The request paths only touch what is cheap: a counter resolved when the
// server starts (an atomic add) or a histogram's observation (two atomic
// adds). Every label takes its values from a list fixed by the code (an
// outcome, a rejection code, a query kind, a route pattern of the route
// table), never from what a client sends, so that the number of series is
// bounded whatever the traffic. What other parts already count (a limiter's
// refusals, a cache's hits, the spool's backlog) is read at scrape time
// through the functions the app registers (GaugeFunc, CounterFunc).
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"strata/internal/ingest"
)

// Ingest request outcomes, the values of strata_ingest_requests_total's
// outcome label.
const (
	OutcomeAccepted        = "accepted"        // every event accepted
	OutcomePartial         = "partial"         // some events accepted, some rejected
	OutcomeRejected        = "rejected"        // no event accepted: the batch or every event invalid (400)
	OutcomeUnauthenticated = "unauthenticated" // no key, or an unknown or disabled one (401)
	OutcomeRateLimited     = "rate_limited"    // the key's budget is spent (429)
	OutcomeTooLarge        = "too_large"       // the body is over the limit (413)
	OutcomeUnavailable     = "unavailable"     // the disk is nearly full, the server busy or stopping (503)
	OutcomeError           = "error"           // any other failure
)

// ingestOutcomes are the outcomes in the order of the counters' array.
var ingestOutcomes = []string{OutcomeAccepted, OutcomePartial, OutcomeRejected, OutcomeUnauthenticated,
	OutcomeRateLimited, OutcomeTooLarge, OutcomeUnavailable, OutcomeError}

// QueryKinds are the kinds of strata_query_duration_seconds, one for each
// route of the API that reads events (QueryKindOf).
var QueryKinds = []string{"trend", "funnel", "retention", "sessions", "goals", "live", "bots", "event_names",
	"user_events", "saved", "experiment_results", "errors", "survey", "shared"}

// Metrics is the server's registry and the metrics the request paths
// update. The zero value is not usable; a nil *Metrics is, and counts
// nothing (tests that build a server without metrics).
type Metrics struct {
	reg *prometheus.Registry

	ingestRequests map[string]prometheus.Counter
	eventsAccepted prometheus.Counter
	eventsRejected map[ingest.RejectReason]prometheus.Counter

	commitEvents   prometheus.Histogram
	commitSeconds  prometheus.Histogram
	commitFailures prometheus.Counter

	httpRequests  *prometheus.CounterVec
	queryDuration map[string]prometheus.Observer

	webhooks    map[string]prometheus.Counter
	replayBytes prometheus.Counter
}

// New returns the metrics with the Go runtime's and the process's
// collectors registered.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_ingest_requests_total",
		Help: "Requests to POST /e by outcome."}, []string{"outcome"})
	m.ingestRequests = map[string]prometheus.Counter{}
	for _, o := range ingestOutcomes {
		m.ingestRequests[o] = requests.WithLabelValues(o)
	}
	events := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_ingest_events_total",
		Help: "Events received on POST /e by outcome: accepted (stored, or a duplicate acknowledged) or rejected."}, []string{"outcome"})
	m.eventsAccepted = events.WithLabelValues("accepted")
	eventsRejected := events.WithLabelValues("rejected")
	rejections := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_ingest_rejections_total",
		Help: "Events rejected at ingest by reason (the per-event rejection code)."}, []string{"reason"})
	m.eventsRejected = map[ingest.RejectReason]prometheus.Counter{}
	for _, r := range ingest.RejectReasons {
		m.eventsRejected[r] = rejections.WithLabelValues(string(r))
	}
	// A reason added without a counter still counts among the events.
	m.eventsRejected[""] = eventsRejected

	m.commitEvents = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strata_commit_events",
		Help:    "Events per group commit of the ingest writer.",
		Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}})
	m.commitSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "strata_commit_duration_seconds",
		Help:    "How long a group commit of the ingest writer took, from the store's call to its answer.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2, 5}})
	m.commitFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_commit_failures_total",
		Help: "Group commits that failed (each fails every request of its group with 503)."})

	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_http_requests_total",
		Help: "HTTP requests by route (the route table's pattern) and status class (2xx, 3xx, 4xx, 5xx)."},
		[]string{"route", "code"})
	queries := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strata_query_duration_seconds",
		Help:    "How long the API's event queries took by kind, admission wait included, failed ones too.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"kind"})
	m.queryDuration = map[string]prometheus.Observer{}
	for _, k := range QueryKinds {
		m.queryDuration[k] = queries.WithLabelValues(k)
	}

	webhooks := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strata_webhook_deliveries_total",
		Help: "Alert webhook delivery attempts by outcome: delivered (2xx), retry (no answer, 408, 429, 5xx) or failed."},
		[]string{"outcome"})
	m.webhooks = map[string]prometheus.Counter{}
	for _, o := range []string{"delivered", "retry", "failed"} {
		m.webhooks[o] = webhooks.WithLabelValues(o)
	}
	m.replayBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "strata_replay_stored_bytes_total",
		Help: "Bytes of session replay chunks stored since the server started."})

	reg.MustRegister(requests, events, rejections, m.commitEvents, m.commitSeconds, m.commitFailures,
		m.httpRequests, queries, webhooks, m.replayBytes)
	return m
}

// Handler serves the metrics in the text exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// GaugeFunc registers a gauge whose value f reads at each scrape. f must be
// cheap and safe to call from any goroutine.
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// CounterFunc registers a counter whose value f reads at each scrape, with
// constant labels (a limiter's or a cache's name).
func (m *Metrics) CounterFunc(name, help string, labels map[string]string, f func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels}, f))
}

// IngestRequest counts a request to POST /e with its outcome.
func (m *Metrics) IngestRequest(outcome string) {
	if m == nil {
		return
	}
	c, ok := m.ingestRequests[outcome]
	if !ok {
		c = m.ingestRequests[OutcomeError]
	}
	c.Inc()
}

// IngestEvents counts the events of one request: accepted, and rejected by
// reason.
func (m *Metrics) IngestEvents(accepted int, rejected []ingest.Rejection) {
	if m == nil {
		return
	}
	if accepted > 0 {
		m.eventsAccepted.Add(float64(accepted))
	}
	for _, r := range rejected {
		if c, ok := m.eventsRejected[r.Code]; ok {
			c.Inc()
		}
		m.eventsRejected[""].Inc()
	}
}

// ObserveCommit records one group commit of the ingest writer: how many
// events it carried, how long the store took and whether it failed.
func (m *Metrics) ObserveCommit(events int, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.commitEvents.Observe(float64(events))
	m.commitSeconds.Observe(took.Seconds())
	if err != nil {
		m.commitFailures.Inc()
	}
}

// statusClasses are the code label's values, by status / 100.
var statusClasses = [...]string{"1xx", "1xx", "2xx", "3xx", "4xx", "5xx"}

// HTTPRequest counts a request to route (a pattern of the route table, or
// "" when none matched) that was answered with status, and observes a
// query's duration when route reads events.
func (m *Metrics) HTTPRequest(route string, status int, took time.Duration) {
	if m == nil {
		return
	}
	class := "5xx"
	if i := status / 100; i >= 0 && i < len(statusClasses) {
		class = statusClasses[i]
	}
	if route == "" {
		route = "unmatched"
	}
	m.httpRequests.WithLabelValues(route, class).Inc()
	if kind := QueryKindOf(route); kind != "" {
		m.queryDuration[kind].Observe(took.Seconds())
	}
}

// queryRoutes maps the routes that read events to their query kind.
var queryRoutes = map[string]string{
	"POST /api/v1/query/trend":              "trend",
	"POST /api/v1/query/funnel":             "funnel",
	"POST /api/v1/query/retention":          "retention",
	"POST /api/v1/query/sessions":           "sessions",
	"POST /api/v1/query/goals":              "goals",
	"GET /api/v1/query/live":                "live",
	"GET /api/v1/query/bots":                "bots",
	"GET /api/v1/query/events":              "event_names",
	"GET /api/v1/users/{distinctId}/events": "user_events",
	"POST /api/v1/queries/{id}/run":         "saved",
	"GET /api/v1/experiments/{id}/results":  "experiment_results",
	"GET /api/v1/errors":                    "errors",
	"GET /api/v1/errors/{fingerprint}":      "errors",
	"GET /api/v1/campaigns/{id}/survey":     "survey",
	"GET /api/v1/campaigns/{id}/survey.csv": "survey",
	"/share/{secret}/":                      "shared",
}

// QueryKindOf is the query kind of a route, "" for a route that does not
// read events.
func QueryKindOf(route string) string { return queryRoutes[route] }

// QueryRoutes are the route patterns that have a query kind, for the test
// that holds them equal to the route table's.
func QueryRoutes() []string {
	routes := make([]string, 0, len(queryRoutes))
	for r := range queryRoutes {
		routes = append(routes, r)
	}
	return routes
}

// WebhookDelivery counts one alert webhook attempt.
func (m *Metrics) WebhookDelivery(delivered, retry bool) {
	if m == nil {
		return
	}
	switch {
	case delivered:
		m.webhooks["delivered"].Inc()
	case retry:
		m.webhooks["retry"].Inc()
	default:
		m.webhooks["failed"].Inc()
	}
}

// ReplayStored counts the bytes of replay chunks stored.
func (m *Metrics) ReplayStored(bytes int64) {
	if m == nil || bytes <= 0 {
		return
	}
	m.replayBytes.Add(float64(bytes))
}
