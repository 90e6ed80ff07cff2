// Package httpapi is Strata's HTTP surface: one route table, one file per
// resource, and errors turned into statuses in one place (errors.go).
// Handlers return errors; the wrap adapter writes them.
package httpapi

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"strata/internal/admin"
	"strata/internal/alerts"
	"strata/internal/analytics"
	"strata/internal/annotations"
	"strata/internal/auth"
	"strata/internal/boards"
	"strata/internal/buildinfo"
	"strata/internal/cohorts"
	"strata/internal/errtrack"
	"strata/internal/experiment"
	"strata/internal/goals"
	"strata/internal/importer"
	"strata/internal/ingest"
	"strata/internal/messages"
	"strata/internal/metrics"
	"strata/internal/privacy"
	"strata/internal/query"
	"strata/internal/ratelimit"
	"strata/internal/replay"
	"strata/internal/sharing"
)

// Server holds what the handlers need. Every field is set by the app
// package; none is read from a global.
type Server struct {
	Keys             *auth.Keyring
	Limiter          *ratelimit.Limiter
	DefaultRateLimit int
	Pipeline         *ingest.Pipeline
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// of an ingest request (geo.ClientAddr); empty, the header is ignored.
	TrustedProxies []netip.Prefix
	Writer         *ingest.Writer
	Queries        *query.Engine
	Saved          analytics.SavedQueryStore
	// FlagOps reads, creates, changes and deletes flags, under the rules
	// of the experiments on them (flags.go); configs holds the SDK
	// configuration built from them (sdkconfig.go).
	FlagOps *experiment.Flags
	// ExperimentOps reads and changes experiments, with their flags when
	// a change writes both (experiments.go).
	ExperimentOps *experiment.Service
	configs       configCache
	// CampaignOps reads the products' message campaigns (campaigns.go),
	// and creates and changes them with their flags and experiments;
	// Messages answers the SDK's message paths from memory (messages.go).
	CampaignOps *messages.Campaigns
	Messages    *messages.Engine
	// SurveyOps stores survey responses and reads a campaign's a page at
	// a time, under the query admission, for the results and the export.
	SurveyOps *messages.Surveys
	// Sourcemaps keeps the releases' sourcemaps (sourcemaps.go), which
	// uploads store through Pipeline.Exceptions.
	// SourcemapLimiter holds the upload budgets, one bucket per
	// credential, of SourcemapRateLimit uploads a minute on this node; an
	// API key's uploads take from its ingest bucket (Limiter) too
	// (sourcemaps.go, admitUpload).
	Sourcemaps         analytics.SourcemapStore
	SourcemapLimiter   *ratelimit.Limiter
	SourcemapRateLimit int
	// ErrorGroupOps assembles the error groups, sets their statuses, and
	// merges and unmerges them (errorgroups.go).
	ErrorGroupOps *errtrack.Groups
	// Groups keeps the products' group profiles, which the SDK sends
	// (groups.go).
	Groups analytics.GroupStore
	// People keeps the products' person profiles (people.go);
	// PersonCounts counts the events of a page of them.
	People       analytics.PersonStore
	PersonCounts analytics.PersonCountStore
	// Privacy deletes and exports persons' data and keeps the audit log
	// (persons.go).
	Privacy *privacy.Service
	// Imports stores the batches of an import through the API
	// (imports.go), which writes the uploaded export under ImportDir, at
	// most ImportMaxBytes; importing says one runs.
	Imports        *importer.Target
	ImportDir      string
	ImportMaxBytes int64
	importing      atomic.Bool
	// ReplayOps stores the recorded sessions' chunks at ingest, under the
	// caps and the disk's admission, and reads and deletes sessions
	// (replays.go); Replay says whether SDKs may record (the SDK config's
	// replay).
	ReplayOps *replay.Service
	Replay    bool
	// ReplayRetention is the server-wide replay period, the default and
	// ceiling of the products' own (retention.go).
	ReplayRetention time.Duration
	// Alerts keeps the products' alert webhooks and the alerts sent;
	// AlertSender makes the test delivery; PublicURL starts the
	// dashboard links in alerts (alerts.go).
	Alerts      analytics.AlertStore
	AlertSender *alerts.Sender
	PublicURL   string
	// QueryLimiter holds the query budgets, one bucket per credential, of
	// QueryRateLimit queries a minute (query.go, allowQuery).
	QueryLimiter   *ratelimit.Limiter
	QueryRateLimit int
	// Products resolves a credential's product to its workspace, and
	// AnnotationOps runs the operations on that workspace's chart
	// annotations.
	Products      ProductStore
	AnnotationOps *annotations.Service
	// AnnotationLimiter holds the workspaces' shared annotation write
	// budgets, one bucket per workspace id, which the API credentials'
	// writes are charged to; AnnotationCredentialLimiter holds one bucket
	// per credential (key, token or dashboard user), which every write is
	// charged to. Each bucket holds AnnotationRateLimit writes a minute
	// (annotations.go, allowAnnotationWrite).
	AnnotationLimiter           *ratelimit.Limiter
	AnnotationCredentialLimiter *ratelimit.Limiter
	AnnotationRateLimit         int
	// SharedLinks creates, lists, revokes and opens the products' shared
	// links; Share holds the budgets of the public share paths
	// (share.go).
	SharedLinks *sharing.Service
	Share       ShareLimits
	// Boards keeps the products' dashboards and runs their tiles
	// (boards.go).
	Boards *boards.Service
	// Goals adds, lists and deletes the products' goals and reports their
	// conversions (goals.go).
	Goals *goals.Service
	// Cohorts keeps the products' cohorts and their members (cohorts.go).
	Cohorts *cohorts.Service
	// Targets holds the members of the cohorts flags target, for
	// /api/v1/config's answer to an identified user; nil leaves cohort
	// conditions unknown (docs/flags.md, "Cohorts").
	Targets *cohorts.Targets
	// Accounts signs dashboard users in and out; Admin manages products,
	// keys and tokens for the dashboard's settings pages; Pages serves the
	// dashboard itself, whose Errors page is shown when ErrorTracking is
	// set (session.go, products.go, pages.go).
	Accounts *auth.Accounts
	Admin    *admin.Service
	// Mailer, when set, e-mails invite links (--smtp-url); without it
	// the link is only shown to the admin who made the invite.
	Mailer InviteMailer
	// BackupDir is where POST /api/v1/admin/backups writes; empty, it
	// takes none (backups.go).
	BackupDir     string
	Pages         Pages
	ErrorTracking bool
	// GeoAttribution is set when ingest locates clients with the DB-IP
	// database the binary embeds, whose licence asks for a credit where
	// countries are shown: the dashboard config says so (session.go).
	GeoAttribution bool
	// Bodies is the memory budget every request body is read under
	// (body.go).
	Bodies *BodyBudget
	// AllowedHosts, when not empty, are the only host names the server
	// answers to; every other Host is refused before routing (hosts.go).
	AllowedHosts []string
	// Ready returns nil while the server takes traffic, else an error
	// that says why not; Build is the running build, which
	// GET /api/v1/version answers (health.go).
	Ready func() error
	Build buildinfo.Info
	Now   func() time.Time
	Log   *slog.Logger
	// Metrics counts requests, ingest outcomes and query latencies; nil
	// counts nothing. With MetricsToken set, the public listener serves
	// them at GET /metrics to that bearer token (access.go); else only the
	// metrics address does (app.go).
	Metrics      *metrics.Metrics
	MetricsToken string
	// Access says which requests get an access line (access.go).
	Access AccessLog
}

// Handler returns the server's request handler, for fasthttp. /e, which
// takes every tracked event, and the active message list, asked for on
// every page view that shows messages, are served on fasthttp directly
// (ingest.go, messages.go);
// every other path goes through fasthttpadaptor to the net/http route
// table, where the dashboard and query handlers keep net/http's API, after
// its body has been read under the body budget (serveAdapted). The server
// must stream request bodies (fasthttp's StreamRequestBody): the handlers
// read them. The allowed-hosts check comes first, here, so that it covers
// both.
func (s *Server) Handler() fasthttp.RequestHandler {
	fast := fastRoutes{}
	fast.handle("POST /e", s.countIngest(s.handleIngest))
	fast.handle("OPTIONS /e", fastPreflight("POST, OPTIONS"))
	fast.handle("GET /api/v1/messages/active", s.handleActiveMessages)
	fast.handle("OPTIONS /api/v1/messages/active", fastPreflight("GET, OPTIONS"))
	rest := detachContext(recordRoute(s.routes()))
	hosts := newHostSet(s.AllowedHosts)
	return s.observe(func(ctx *fasthttp.RequestCtx) {
		if hosts != nil && !hosts.allows(ctx.Host()) {
			refuseHost(ctx)
			return
		}
		if s.MetricsToken != "" && s.Metrics != nil && string(ctx.Path()) == metricsPath {
			s.serveMetrics(ctx)
			return
		}
		if !fast.serve(ctx, s.Log) {
			s.serveAdapted(ctx, rest)
		}
	})
}

// fastRoutes are the routes served on fasthttp directly, by path and then
// method. They are public SDK paths, so every answer carries the CORS
// headers, and a path called with another method answers 405.
type fastRoutes map[string]map[string]fastRoute

// fastRoute is a fast route's handler and its pattern, which the access
// log and the metrics name it by.
type fastRoute struct {
	pattern string
	h       fastHandlerFunc
}

// fastHandlerFunc is handlerFunc for fasthttp: it returns its error, which
// the route table answers.
type fastHandlerFunc func(ctx *fasthttp.RequestCtx) error

func (f fastRoutes) handle(pattern string, h fastHandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	if f[path] == nil {
		f[path] = map[string]fastRoute{}
	}
	f[path][method] = fastRoute{pattern: pattern, h: h}
}

// serve answers ctx if its path is one of f's, and reports whether it was.
func (f fastRoutes) serve(ctx *fasthttp.RequestCtx, log *slog.Logger) bool {
	methods, ok := f[string(ctx.Path())]
	if !ok {
		return false
	}
	setFastCORS(&ctx.Response.Header)
	route, ok := methods[string(ctx.Method())]
	if !ok {
		allow := slices.Sorted(maps.Keys(methods))
		ctx.Response.Header.Set("Allow", strings.Join(allow, ", "))
		writeFastJSON(ctx, fasthttp.StatusMethodNotAllowed, marshalLine(errorBody(analytics.Errorf(0, "method_not_allowed",
			"The method %s is not allowed here; use %s.", ctx.Method(), strings.Join(allow, ", ")))))
		return true
	}
	if req := requestOf(ctx); req != nil {
		req.route = route.pattern
	}
	if err := route.h(ctx); err != nil {
		writeFastError(ctx, log, err)
	}
	return true
}

// fastPreflight is preflight for fasthttp.
func fastPreflight(methods string) fastHandlerFunc {
	return func(ctx *fasthttp.RequestCtx) error {
		setPreflightHeaders(methods, ctx.Response.Header.Set)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}
}

// detachContext gives requests a context that does not end when the
// server starts shutting down, which is when fasthttp's does: requests in
// flight are drained, not cut off. (fasthttp does not watch a connection
// while its handler runs, so a client going away does not end it either.)
func detachContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
	})
}

// routes is the net/http route table: every path but those of fastRoutes.
// CORS headers are sent on the public SDK paths only (/e, /api/v1/config,
// the message and survey paths of messages.go, the group path
// /api/v1/groups/{type}/{key} and the SDK script); every
// other path is same-origin.
//
// The /api/v1 routes take a query token or a dashboard session. An API key
// is public (the page's visitors all have it), so it is accepted as a
// bearer credential only on the routes wrapped in keysMayWrite: the writes
// a deploy script makes with it (an annotation, a sourcemap upload;
// docs/security.md, "Credentials and what they may do").
// Everywhere else it is 403 key_not_allowed. /api/v1/version and
// /api/v1/openapi.yaml, like the probes, take no credential.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	h := func(f handlerFunc) http.Handler { return wrap(s.Log, f) }

	mux.Handle("POST /api/v1/query/funnel", asViewer(h(s.queryHandler(analytics.QueryFunnel))))
	mux.Handle("POST /api/v1/query/trend", asViewer(h(s.queryHandler(analytics.QueryTrend))))
	mux.Handle("POST /api/v1/query/retention", asViewer(h(s.queryHandler(analytics.QueryRetention))))
	mux.Handle("GET /api/v1/query/bots", asViewer(h(s.handleBots)))
	mux.Handle("GET /api/v1/query/events", asViewer(h(s.handleEventNames)))
	mux.Handle("POST /api/v1/query/sessions", asViewer(h(s.handleSessions)))
	mux.Handle("POST /api/v1/query/paths", asViewer(h(s.handlePaths)))
	mux.Handle("POST /api/v1/query/paths/users", asViewer(h(s.handlePathUsers)))
	mux.Handle("POST /api/v1/query/funnel/users", asViewer(h(s.handleFunnelUsers)))
	mux.Handle("POST /api/v1/query/goals", asViewer(h(s.handleGoalsQuery)))
	mux.Handle("GET /api/v1/query/live", asViewer(h(s.handleLive)))
	mux.Handle("GET /api/v1/queries", asViewer(h(s.handleListSaved)))
	mux.Handle("POST /api/v1/queries", asMember(h(s.handleCreateSaved)))
	mux.Handle("GET /api/v1/queries/{id}", asViewer(h(s.handleGetSaved)))
	mux.Handle("PUT /api/v1/queries/{id}", asMember(h(s.handleUpdateSaved)))
	mux.Handle("DELETE /api/v1/queries/{id}", asAdmin(h(s.handleDeleteSaved)))
	mux.Handle("POST /api/v1/queries/{id}/run", asViewer(h(s.handleRunSaved)))
	mux.Handle("GET /api/v1/boards", asViewer(h(s.handleListBoards)))
	mux.Handle("POST /api/v1/boards", asMember(h(s.handleCreateBoard)))
	mux.Handle("GET /api/v1/boards/{id}", asViewer(h(s.handleGetBoard)))
	mux.Handle("PUT /api/v1/boards/{id}", asMember(h(s.handleUpdateBoard)))
	mux.Handle("DELETE /api/v1/boards/{id}", asAdmin(h(s.handleDeleteBoard)))
	mux.Handle("POST /api/v1/boards/{id}/tiles", asMember(h(s.handleAddTile)))
	mux.Handle("DELETE /api/v1/boards/{id}/tiles/{tileId}", asMember(h(s.handleRemoveTile)))
	mux.Handle("POST /api/v1/boards/{id}/tiles/{tileId}/run", asViewer(h(s.handleRunTile)))

	mux.Handle("GET /api/v1/annotations", asViewer(h(s.handleListAnnotations)))
	mux.Handle("POST /api/v1/annotations", asMember(keysMayWrite(h(s.handleCreateAnnotation))))
	mux.Handle("POST /api/v1/sourcemaps", leastRole(sourcemapUploadRole)(keysMayWrite(h(s.handleUploadSourcemap))))
	mux.Handle("GET /api/v1/sourcemaps", asViewer(h(s.handleListSourcemaps)))
	mux.Handle("DELETE /api/v1/sourcemaps", asAdmin(h(s.handleDeleteSourcemaps)))
	mux.Handle("GET /api/v1/errors", asViewer(h(s.handleListErrorGroups)))
	mux.Handle("GET /api/v1/errors/{fingerprint}", asViewer(h(s.handleGetErrorGroup)))
	mux.Handle("PUT /api/v1/errors/{fingerprint}/status", asMember(h(s.handleSetErrorGroupStatus)))
	mux.Handle("POST /api/v1/errors/merge", asMember(h(s.handleMergeErrorGroups)))
	mux.Handle("POST /api/v1/errors/unmerge", asMember(h(s.handleUnmergeErrorGroups)))
	mux.Handle("GET /api/v1/annotations/export.csv", asViewer(h(s.handleExportAnnotations)))
	mux.Handle("POST /api/v1/annotations/bulk-delete", asAdmin(h(s.handleBulkDeleteAnnotations)))
	mux.Handle("DELETE /api/v1/annotations/{id}", asAdmin(h(s.handleDeleteAnnotation)))

	mux.Handle("GET /api/v1/users/{distinctId}/events", asViewer(h(s.handleUserEvents)))
	mux.Handle("GET /api/v1/persons", asViewer(h(s.handleListPersons)))
	mux.Handle("GET /api/v1/persons/{distinctId}", asViewer(h(s.handleGetPerson)))

	mux.Handle("GET /api/v1/replays", asViewer(h(s.handleListReplays)))
	mux.Handle("DELETE /api/v1/replays", asAdmin(h(s.handleDeleteUserReplays)))
	mux.Handle("GET /api/v1/replays/{sessionId}", asViewer(h(s.handleGetReplay)))
	mux.Handle("DELETE /api/v1/replays/{sessionId}", asAdmin(h(s.handleDeleteReplay)))

	mux.Handle("GET /api/v1/alerts", asViewer(h(s.handleListAlerts)))
	mux.Handle("GET /api/v1/alerts/webhook", asViewer(h(s.handleGetAlertWebhook)))
	mux.Handle("PUT /api/v1/alerts/webhook", asMember(h(s.handlePutAlertWebhook)))
	mux.Handle("DELETE /api/v1/alerts/webhook", asAdmin(h(s.handleDeleteAlertWebhook)))
	mux.Handle("POST /api/v1/alerts/webhook/test", asMember(h(s.handleTestAlertWebhook)))

	mux.Handle("GET /api/v1/flags", asViewer(h(s.handleListFlags)))
	mux.Handle("POST /api/v1/flags", asMember(h(s.handleCreateFlag)))
	mux.Handle("GET /api/v1/flags/{id}", asViewer(h(s.handleGetFlag)))
	mux.Handle("PUT /api/v1/flags/{id}", asMember(h(s.handleUpdateFlag)))
	mux.Handle("DELETE /api/v1/flags/{id}", asAdmin(h(s.handleDeleteFlag)))
	mux.Handle("GET /api/v1/flags/{id}/changes", asViewer(h(s.handleFlagChanges)))

	mux.Handle("GET /api/v1/experiments", asViewer(h(s.handleListExperiments)))
	mux.Handle("POST /api/v1/experiments", asMember(h(s.handleCreateExperiment)))
	mux.Handle("GET /api/v1/experiments/{id}", asViewer(h(s.handleGetExperiment)))
	mux.Handle("PUT /api/v1/experiments/{id}", asMember(h(s.handleUpdateExperiment)))
	mux.Handle("POST /api/v1/experiments/{id}/start", asMember(h(s.experimentAction("start"))))
	mux.Handle("POST /api/v1/experiments/{id}/pause", asMember(h(s.experimentAction("pause"))))
	mux.Handle("POST /api/v1/experiments/{id}/resume", asMember(h(s.experimentAction("resume"))))
	mux.Handle("POST /api/v1/experiments/{id}/apply-winner", asMember(h(s.handleApplyWinner)))
	mux.Handle("GET /api/v1/experiments/{id}/results", asViewer(h(s.handleExperimentResults)))

	mux.Handle("GET /api/v1/campaigns", asViewer(h(s.handleListCampaigns)))
	mux.Handle("POST /api/v1/campaigns", asMember(h(s.handleCreateCampaign)))
	mux.Handle("GET /api/v1/campaigns/{id}", asViewer(h(s.handleGetCampaign)))
	mux.Handle("PUT /api/v1/campaigns/{id}", asMember(h(s.handleUpdateCampaign)))
	mux.Handle("DELETE /api/v1/campaigns/{id}", asAdmin(h(s.handleDeleteCampaign)))
	mux.Handle("GET /api/v1/campaigns/{id}/survey", asViewer(h(s.handleSurveyResults)))
	mux.Handle("GET /api/v1/campaigns/{id}/survey.csv", asViewer(h(s.handleSurveyCSV)))
	mux.Handle("GET /api/v1/messages/settings", asViewer(h(s.handleGetMessageSettings)))
	mux.Handle("PUT /api/v1/messages/settings", asMember(h(s.handlePutMessageSettings)))

	mux.Handle("GET /api/v1/config", publicCORS(h(s.handleSDKConfig)))
	mux.Handle("OPTIONS /api/v1/config", publicCORS(preflight("GET, OPTIONS")))
	mux.Handle("POST /api/v1/messages/{id}/track", publicCORS(h(s.handleTrackMessage)))
	mux.Handle("OPTIONS /api/v1/messages/{id}/track", publicCORS(preflight("POST, OPTIONS")))
	mux.Handle("POST /api/v1/surveys/{id}/respond", publicCORS(h(s.handleSurveyResponse)))
	mux.Handle("OPTIONS /api/v1/surveys/{id}/respond", publicCORS(preflight("POST, OPTIONS")))
	mux.Handle("POST /api/v1/groups/{type}/{key}", publicCORS(h(s.handleUpsertGroup)))
	mux.Handle("OPTIONS /api/v1/groups/{type}/{key}", publicCORS(preflight("POST, OPTIONS")))
	mux.Handle("GET /api/v1/groups", asViewer(h(s.handleListGroups)))

	mux.Handle("GET /sdk/v1/sdk.min.js", serveSDK(sdkScript))
	mux.Handle("GET /sdk/v1/sdk.min.js.map", serveSDK(sdkMap))
	mux.Handle("GET /sdk/v1/messages.min.js", serveSDK(messagesScript))
	mux.Handle("GET /sdk/v1/messages.min.js.map", serveSDK(messagesMap))
	mux.Handle("GET /sdk/v1/replay.min.js", serveSDK(replayScript))
	mux.Handle("GET /sdk/v1/replay.min.js.map", serveSDK(replayMap))

	mux.Handle("GET /api/v1/dashboard/config", h(s.handleDashboardConfig))
	mux.Handle("POST /api/v1/dashboard/setup", h(s.handleSetup))
	mux.Handle("GET /api/v1/session", h(s.handleSession))
	mux.Handle("POST /api/v1/session", h(s.handleLogin))
	mux.Handle("DELETE /api/v1/session", h(s.handleLogout))
	mux.Handle("GET /api/v1/products", asViewer(h(s.handleListProducts)))
	mux.Handle("POST /api/v1/products", asAdmin(h(s.handleCreateProduct)))
	mux.Handle("GET /api/v1/products/{id}", asViewer(h(s.handleGetProduct)))
	mux.Handle("PATCH /api/v1/products/{id}", asMember(h(s.handleUpdateProduct)))
	mux.Handle("GET /api/v1/products/{id}/retention", asAdmin(h(s.handleGetRetention)))
	mux.Handle("PUT /api/v1/products/{id}/retention", asAdmin(h(s.handleSetRetention)))
	mux.Handle("GET /api/v1/products/{id}/privacy", asAdmin(h(s.handleGetPrivacySettings)))
	mux.Handle("PUT /api/v1/products/{id}/privacy", asAdmin(h(s.handleSetPrivacySettings)))
	mux.Handle("GET /api/v1/products/{id}/keys", asAdmin(h(s.handleListKeys)))
	mux.Handle("POST /api/v1/products/{id}/keys", asAdmin(h(s.handleCreateKey)))
	mux.Handle("PATCH /api/v1/products/{id}/keys/{keyId}", asAdmin(h(s.handleSetKeyStatus)))
	mux.Handle("GET /api/v1/products/{id}/tokens", asAdmin(h(s.handleListTokens)))
	mux.Handle("POST /api/v1/products/{id}/tokens", asAdmin(h(s.handleCreateToken)))
	mux.Handle("PATCH /api/v1/products/{id}/tokens/{tokenId}", asAdmin(h(s.handleSetTokenStatus)))
	mux.Handle("GET /api/v1/products/{id}/shared-links", asViewer(h(s.handleListSharedLinks)))
	mux.Handle("POST /api/v1/products/{id}/shared-links", asMember(h(s.handleCreateSharedLink)))
	mux.Handle("DELETE /api/v1/products/{id}/shared-links/{linkId}", asAdmin(h(s.handleRevokeSharedLink)))
	mux.Handle("GET /api/v1/products/{id}/goals", asViewer(h(s.handleListGoals)))
	mux.Handle("POST /api/v1/products/{id}/goals", asMember(h(s.handleCreateGoal)))
	mux.Handle("DELETE /api/v1/products/{id}/goals/{goalId}", asAdmin(h(s.handleDeleteGoal)))
	mux.Handle("GET /api/v1/products/{id}/cohorts", asViewer(h(s.handleListCohorts)))
	mux.Handle("POST /api/v1/products/{id}/cohorts", asMember(h(s.handleCreateCohort)))
	mux.Handle("GET /api/v1/products/{id}/cohorts/{cohortId}", asViewer(h(s.handleGetCohort)))
	mux.Handle("PUT /api/v1/products/{id}/cohorts/{cohortId}", asMember(h(s.handleUpdateCohort)))
	mux.Handle("DELETE /api/v1/products/{id}/cohorts/{cohortId}", asMember(h(s.handleDeleteCohort)))
	mux.Handle("POST /api/v1/products/{id}/cohorts/{cohortId}/compute", asMember(h(s.handleComputeCohort)))
	mux.Handle("GET /api/v1/products/{id}/cohorts/{cohortId}/members", asViewer(h(s.handleCohortMembers)))
	mux.Handle("PUT /api/v1/products/{id}/cohorts/{cohortId}/members", asMember(h(s.handleUploadCohort)))
	mux.Handle("POST /api/v1/products/{id}/persons/deletions", asAdmin(h(s.handleRequestDeletion)))
	mux.Handle("POST /api/v1/products/{id}/imports", asAdmin(h(s.handleImport)))
	mux.Handle("GET /api/v1/products/{id}/persons/deletions/{job}", asAdmin(h(s.handleGetDeletion)))
	mux.Handle("GET /api/v1/products/{id}/persons/export", asAdmin(h(s.handleExportPerson)))
	mux.Handle("GET /api/v1/products/{id}/audit-log", asAdmin(h(s.handleAuditLog)))
	mux.Handle("GET /api/v1/workspaces/{id}/members", asAdmin(h(s.handleListMembers)))
	mux.Handle("PATCH /api/v1/workspaces/{id}/members/{userId}", asAdmin(h(s.handleSetMemberRole)))
	mux.Handle("DELETE /api/v1/workspaces/{id}/members/{userId}", asAdmin(h(s.handleRemoveMember)))
	mux.Handle("GET /api/v1/workspaces/{id}/invites", asAdmin(h(s.handleListInvites)))
	mux.Handle("POST /api/v1/workspaces/{id}/invites", asAdmin(h(s.handleCreateInvite)))
	mux.Handle("DELETE /api/v1/workspaces/{id}/invites/{inviteId}", asAdmin(h(s.handleRevokeInvite)))
	mux.Handle("POST /api/v1/invites/accept", h(s.handleAcceptInvite))
	mux.Handle("PUT /api/v1/session/password", h(s.handleChangePassword))
	// Admin only: a signed-in dashboard user, never a key or a token.
	mux.Handle("POST /api/v1/admin/backups", asAdmin(h(s.handleBackup)))

	// The public view of a shared link, and the only paths that take its
	// secret (share.go).
	mux.Handle("GET /share/{secret}", h(s.handleSharePage))
	mux.Handle("/share/{secret}/", h(s.handleShareAPI))

	mux.Handle("GET /healthz", h(s.handleHealth))
	mux.Handle("GET /readyz", h(s.handleReady))
	mux.Handle("GET /api/v1/version", h(s.handleVersion))
	mux.Handle("GET /api/v1/openapi.yaml", serveSpec(apiSpec))

	// Everything else: the dashboard's pages and assets, or 404.
	mux.Handle("/", h(s.handleFallback))
	return mux
}

// publicCORS opens a path to every origin: the SDK runs on customers'
// sites, and access is gated by the API key, not by origin.
func publicCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Access-Control-Allow-Origin"] = corsAnyOrigin
		h["Access-Control-Expose-Headers"] = corsExposed
		next.ServeHTTP(w, r)
	})
}

var (
	corsAnyOrigin = []string{"*"}
	corsExposed   = []string{"Retry-After"}
)

// sdkAllowHeaders are the request headers a browser may send to the public
// SDK paths.
const sdkAllowHeaders = "Content-Type, Content-Encoding, X-API-Key"

// preflight answers a CORS preflight for methods and lets the browser
// cache it for a day, so that each SDK request is not preceded by an
// OPTIONS.
func preflight(methods string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		setPreflightHeaders(methods, w.Header().Set)
		w.WriteHeader(http.StatusNoContent)
	})
}

// setPreflightHeaders sets the answer headers of a preflight for methods,
// through either stack's header setter.
func setPreflightHeaders(methods string, set func(key, value string)) {
	set("Access-Control-Allow-Methods", methods)
	set("Access-Control-Allow-Headers", sdkAllowHeaders)
	set("Access-Control-Max-Age", "86400")
}
