// Package app wires Strata together and owns its life cycle: Open builds
// every part in dependency order, Run serves until the context ends, and the
// shutdown that follows stops them in reverse order so that nothing answered
// 202 is lost.
package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
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
	"strata/internal/config"
	"strata/internal/cookieless"
	"strata/internal/dashboard"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/geo"
	"strata/internal/enrich/ua"
	"strata/internal/errtrack"
	"strata/internal/experiment"
	"strata/internal/goals"
	"strata/internal/httpapi"
	"strata/internal/importer"
	"strata/internal/ingest"
	"strata/internal/mail"
	"strata/internal/messages"
	"strata/internal/metrics"
	"strata/internal/persons"
	"strata/internal/privacy"
	"strata/internal/query"
	"strata/internal/ratelimit"
	"strata/internal/replay"
	"strata/internal/retention"
	"strata/internal/sharing"
	"strata/internal/store/spool"
)

// openGeo opens the GeoIP database ingest uses: the operator's file when
// path is set (--geoip-db), else the DB-IP country database the binary
// embeds (docs/ingest.md, "Geography").
func openGeo(path string) (*geo.DB, error) {
	if path == "" {
		return geo.Embedded()
	}
	return geo.Open(path)
}

// App is a running Strata server.
type App struct {
	cfg   config.Config
	log   *slog.Logger
	store *storage
	keys  *auth.Keyring
	// limiter holds the ingest rate limits; with a shared metadata store
	// it syncs with the other nodes every second.
	limiter *ratelimit.Limiter
	// annotationLimiter holds the per-workspace annotation write limits,
	// shared the same way.
	annotationLimiter *ratelimit.Limiter
	wr                *ingest.Writer
	// geo is the GeoIP database ingest looks client addresses up in.
	geo   *geo.DB
	ready atomic.Bool
	// metrics are served on --metrics-addr, and on the public listener
	// to --metrics-token.
	metrics *metrics.Metrics

	httpSrv  *fasthttp.Server
	httpLn   net.Listener
	adminSrv *http.Server
	adminLn  net.Listener
	sockPath string
	// checker runs the sample-ratio check of running experiments.
	checker *experiment.Checker
	// alerts sends the products' error alerts to their webhooks.
	alerts *alerts.Job
	// replayJob deletes expired sessions and keeps products under the
	// replay size cap.
	replayJob *replay.Job
	// retentionJob deletes the events and error occurrences past each
	// product's retention periods; nil when the events store cannot.
	retentionJob *retention.Job
	// cohorts computes dynamic cohorts on demand; cohortJob recomputes
	// them every cohorts.RecomputeEvery on the lease holder.
	cohorts   *cohorts.Service
	cohortJob *cohorts.Job
	// privacy deletes and exports persons' data and runs the deletion
	// jobs (docs/privacy.md).
	privacy *privacy.Service
	// bootstrapKey is the live API key the first start of an empty data
	// directory created for product bootstrapProduct, logged by Run once
	// the server listens; "" on every other start.
	bootstrapKey     string
	bootstrapProduct int64
	// setupToken is the first-run setup token while no dashboard owner
	// exists at start, printed by Run once the address is known; "" after.
	setupToken string
}

// Open prepares a server: takes its HTTP address, opens storage (applying
// migrations), bootstraps an empty data directory, warms the deduplication
// window and binds the admin socket. Nothing is served until Run.
func Open(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *App, err error) {
	// Every line a request causes, logged with its context, carries the
	// request's id (docs/operations.md, "Logs").
	log = slog.New(httpapi.RequestIDHandler(log.Handler()))
	a := &App{cfg: cfg, log: log, metrics: metrics.New()}
	// The address is taken first: a start that cannot listen (the port is
	// busy) fails before it touches the data directory, so that the first
	// start that does listen is the one that creates the first product and
	// shows its key.
	if a.httpLn, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.Addr, err)
	}
	a.httpLn = httpapi.LingeringListener(a.httpLn)
	defer func() {
		if err != nil {
			a.httpLn.Close()
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	if n, err := tightenDataFiles(cfg.DataDir); err != nil {
		return nil, fmt.Errorf("securing the data directory's files: %w", err)
	} else if n > 0 {
		log.Info("made data files readable by this user only", "files", n)
	}
	defer func() {
		if err != nil {
			a.closeStorage()
		}
	}()

	if a.store, err = openStorage(ctx, cfg, log); err != nil {
		return nil, err
	}
	a.keys = auth.NewKeyring(a.store.meta, cfg.KeyCacheTTL, time.Now)
	svc := &admin.Service{Meta: a.store.meta, Users: a.store.meta, OnChange: a.keys.Invalidate, Backups: a.store.backups()}
	key, product, err := svc.Bootstrap(ctx)
	if err != nil {
		return nil, fmt.Errorf("bootstrapping data directory: %w", err)
	}
	// Run logs the key once the server listens.
	a.bootstrapKey, a.bootstrapProduct = key, product.ID

	// Below the free-space floor ingest is refused (disk.go).
	wopt := ingest.WriterOptions{
		DedupCapacity: cfg.DedupCapacity, Linger: cfg.CommitLinger, Logger: log.With("component", "writer"),
		OnCommit: a.metrics.ObserveCommit,
	}
	if cfg.EventsURL == "" {
		wopt.Admit = a.store.guard.AdmitIngest
	}
	a.wr = ingest.NewWriter(a.store.events, wopt)
	if n, err := a.wr.LoadRecent(ctx); err != nil {
		return nil, fmt.Errorf("loading recent uuids: %w", err)
	} else if n > 0 {
		log.Info("deduplication window restored", "uuids", n)
	}

	a.limiter = ratelimit.New(time.Now)
	a.annotationLimiter = ratelimit.New(time.Now)
	pages, err := dashboard.New(cfg.ErrorTracking)
	if err != nil {
		return nil, err
	}
	accounts := auth.NewAccounts(a.store.meta, 0, time.Now)
	// Invite links are e-mailed where --smtp-url is set (a nil
	// interface, not a nil *mail.Mailer, when it is not).
	var mailer httpapi.InviteMailer
	if cfg.SMTPURL != "" {
		m, err := mail.New(cfg.SMTPURL, cfg.SMTPFrom)
		if err != nil {
			return nil, err
		}
		mailer = m
	}
	if done, err := accounts.SetupDone(ctx); err != nil {
		return nil, fmt.Errorf("checking for a dashboard owner: %w", err)
	} else if !done {
		// Each node holds its own token, in memory: with several nodes on
		// one PostgreSQL, setup works on the node whose log was read.
		a.setupToken = accounts.IssueSetupToken()
	}
	// Every query that reads events waits for a slot (docs/queries.md,
	// "Admission and rate limits").
	// Alerts are sent by a job off every request path, and by the test
	// delivery a product owner asks for (docs/errors.md, "Alerts").
	alertSender := alerts.NewSender(analytics.WebhookPolicy{Allow: cfg.AlertWebhookAllow})
	alertSender.OnResult = func(r alerts.Result) { a.metrics.WebhookDelivery(r.Delivered, r.Retry) }
	// Ingest locates each request's client in the GeoIP database
	// (docs/ingest.md, "Geography"); the log names it, and the
	// attribution its licence asks for.
	if a.geo, err = openGeo(cfg.GeoIPDB); err != nil {
		return nil, err
	}
	log.Info("geoip database", "database", a.geo.Name, "attribution", a.geo.Attribution, "trusted_proxies", cfg.TrustedProxies.String())
	// Sourcemap uploads are stored within each product's quota, and
	// parsed at ingest into a cache of sourcemapCacheBytes (docs/errors.md).
	exceptions := errtrack.NewProcessor(a.store.meta, sourcemapCacheBytes)
	exceptions.Quota = analytics.SourcemapAmount{Count: int64(cfg.SourcemapQuotaCount), Bytes: int64(cfg.SourcemapQuotaBytes)}
	exceptions.Aliases, exceptions.Groups, exceptions.AliasLimit = a.store.meta, a.store.queries, cfg.ErrorAliasLimit
	engine := &query.Engine{Store: a.store.queries, Sync: a.store.sync, Now: time.Now,
		Admission: query.NewAdmission(cfg.QueryConcurrency, cfg.QueryQueue, cfg.QueryWait), Live: query.NewLive(cfg.LiveCache),
		Cohorts: a.store.meta, PersonSets: &cohorts.PersonSets{Persons: a.store.meta, Events: a.store.queries.(analytics.CohortMemberStore), Now: time.Now}}
	// The error groups' operations, which the API and the alerts job
	// share; a merge or an unmerge made here makes ingest's alias cache
	// forget the product.
	errorGroups := &errtrack.Groups{Events: engine, Statuses: a.store.meta, Aliases: a.store.meta,
		AliasLimit: cfg.ErrorAliasLimit, Cache: exceptions, Now: time.Now}
	// The flag and experiment services, which the API and the CLI's
	// commands through the admin socket share.
	svc.Flags = &experiment.Flags{Store: a.store.meta, Cohorts: a.store.meta}
	svc.Experiments = &experiment.Service{Store: a.store.meta, Now: time.Now}
	// Cohorts: definitions in the metadata store, members beside the
	// events (docs/queries.md, "Cohorts").
	a.cohorts = &cohorts.Service{Meta: a.store.meta, Events: a.store.queries.(analytics.CohortMemberStore),
		MaxCohorts: analytics.MaxCohorts, Now: time.Now, Log: log.With("component", "cohorts")}
	// The members of the cohorts flags and message audiences target, held
	// in memory for the SDK configuration and the message engine
	// (docs/flags.md, "Cohorts").
	targets := &cohorts.Targets{Meta: a.store.meta, Events: a.cohorts.Events, Now: time.Now, Log: log.With("component", "cohorts")}
	// The privacy operations: every kind of data a person leaves, in the
	// order a deletion removes them (docs/privacy.md). The events go
	// first, after the spool has loaded what was acknowledged before.
	events := privacy.Events{Store: a.store.queries.(analytics.PersonEventStore), Sync: a.store.sync}
	a.privacy = privacy.New(a.store.meta, log.With("component", "privacy"),
		events, privacy.Groups{Events: events}, privacy.Replays{Store: a.store.replays},
		privacy.SurveyResponses{Store: a.store.meta}, privacy.MessageStates{Store: a.store.meta},
		privacy.CohortMemberships{Members: a.cohorts.Events, Cohorts: a.store.meta, Forget: targets.Forget})
	a.privacy.Profiles, a.privacy.Flush = a.store.meta, a.store.persons.Flush
	api := &httpapi.Server{
		Privacy:          a.privacy,
		Keys:             a.keys,
		Limiter:          a.limiter,
		DefaultRateLimit: cfg.RateLimitPerMinute,
		Pipeline: &ingest.Pipeline{UA: ua.NewParser(50000, bots.Default()),
			Exceptions: exceptions, Geo: a.geo, Visitors: &cookieless.Visitors{Salts: a.store.meta}},
		TrustedProxies:  cfg.TrustedProxies,
		Writer:          a.wr,
		Queries:         engine,
		Saved:           a.store.meta,
		FlagOps:         svc.Flags,
		ExperimentOps:   svc.Experiments,
		CampaignOps:     &messages.Campaigns{Store: a.store.meta, Cohorts: a.store.meta, Now: time.Now},
		SurveyOps:       &messages.Surveys{Store: a.store.meta, Read: engine.ReadMeta},
		Sourcemaps:      a.store.meta,
		ErrorGroupOps:   errorGroups,
		Groups:          a.store.meta,
		People:          a.store.meta,
		PersonCounts:    a.store.queries.(analytics.PersonCountStore),
		Replay:          cfg.Replay,
		ReplayRetention: cfg.ReplayRetention,
		Alerts:          a.store.meta,
		AlertSender:     alertSender,
		PublicURL:       cfg.PublicURL,
		Bodies:          httpapi.NewBodyBudget(int64(cfg.MaxBodyMemory), log.With("component", "http")),
		Ready:           a.readiness,
		Build:           buildinfo.Read(),
		Now:             time.Now,
		Log:             log.With("component", "http"),

		// Chunks are stored within what one recorded session may store
		// and how many sessions a product may keep (docs/replay.md,
		// "Limits"), while the disk has room.
		ReplayOps: &replay.Service{Store: a.store.replays, Admit: a.store.guard.AdmitIngest,
			Limits:   analytics.ReplayLimits{SessionBytes: int64(cfg.ReplayMaxSessionBytes), Sessions: cfg.ReplayMaxSessions},
			OnStored: a.metrics.ReplayStored},

		// Query budgets are per credential and per node: unlike ingest's,
		// they are not shared through the metadata store.
		QueryLimiter:   ratelimit.New(time.Now),
		QueryRateLimit: cfg.QueryRateLimit,

		// Annotation write budgets: per workspace, shared across nodes
		// with a shared metadata store like ingest's (Run), and per
		// credential, kept by each node.
		Products:                    a.store.meta,
		AnnotationOps:               &annotations.Service{Store: a.store.meta},
		AnnotationLimiter:           a.annotationLimiter,
		AnnotationCredentialLimiter: ratelimit.New(time.Now),
		AnnotationRateLimit:         cfg.AnnotationRateLimit,

		// Shared links: the public view's budgets, per link and per
		// client address, on each node (docs/dashboard.md, "Shared
		// links").
		SharedLinks: &sharing.Service{Store: a.store.meta, Max: cfg.SharedLinkLimit, Now: time.Now},
		// Dashboards, at most boards.MaxBoardsPerProduct a product and
		// boards.MaxTilesPerBoard tiles a board (docs/dashboard.md,
		// "Dashboards").
		Boards: &boards.Service{Store: a.store.meta, Saved: a.store.meta, Queries: engine,
			MaxBoards: boards.MaxBoardsPerProduct, MaxTiles: boards.MaxTilesPerBoard, Now: time.Now},
		// Goals, at most --goal-limit a product, reported through the
		// query engine (docs/queries.md, "Goals").
		Goals: &goals.Service{Store: a.store.meta, Queries: engine, Max: cfg.GoalLimit, Now: time.Now},
		// Cohorts, at most analytics.MaxCohorts a product, their members in
		// the event store (docs/queries.md, "Cohorts").
		Cohorts: a.cohorts,
		Targets: targets,
		Share: httpapi.ShareLimits{
			Reads: ratelimit.New(time.Now), ReadAddrs: ratelimit.New(time.Now), ReadsPerMinute: cfg.ShareRateLimit,
			Passwords: ratelimit.New(time.Now), PasswordAddrs: ratelimit.New(time.Now), PasswordsPerMinute: cfg.SharePasswordRateLimit,
		},

		// Sourcemap upload budgets: per credential on each node, and an
		// API key's uploads in its ingest budget, shared like ingest's.
		SourcemapLimiter:   ratelimit.New(time.Now),
		SourcemapRateLimit: cfg.SourcemapRateLimit,

		// The dashboard: sessions in the metadata store, settings through
		// the same admin service as the CLI, pages from the embedded app.
		Accounts:      accounts,
		Admin:         svc,
		Mailer:        mailer,
		BackupDir:     cfg.BackupDir,
		Pages:         pages,
		ErrorTracking: cfg.ErrorTracking,
		// The embedded DB-IP database's licence asks for a credit
		// wherever its countries are shown; an operator's own has none.
		GeoAttribution: a.geo.Attribution != "",
		AllowedHosts:   cfg.AllowedHosts,

		// Metrics and the access log (docs/operations.md, "Monitoring"
		// and "Logs").
		Metrics:      a.metrics,
		MetricsToken: cfg.MetricsToken,
	}
	// Imports through the API and `strata import` into this server:
	// their batches take the path of POST /e's events (the pipeline, the
	// writer), after the events the store holds already are left out
	// (docs/import.md).
	stored, _ := a.store.queries.(analytics.ImportStore)
	imports := &importer.Target{Pipeline: api.Pipeline, Stored: stored, Sync: a.store.sync, Write: a.wr.Write, Now: time.Now}
	api.Imports, api.ImportDir, api.ImportMaxBytes = imports, filepath.Join(cfg.DataDir, "imports", "uploads"), int64(cfg.ImportMaxBytes)
	api.Access.On, api.Access.Level, _ = cfg.AccessLogLevel()
	api.Access.Sample = cfg.AccessLogSample
	// A change the CLI makes through the socket is served at once, as the
	// API's are.
	svc.FlagsChanged = api.FlagsChanged
	// In-app messages are answered from memory (docs/messages.md); a
	// campaign's variant is its flag's assignment.
	api.Messages = messages.New(a.store.meta, api.FlagsByKey, 0, time.Now, log.With("component", "messages"))
	api.Messages.Cohorts = targets
	// What the parts count themselves, read at each scrape
	// (docs/operations.md, "Monitoring").
	registerMetrics(a.metrics, cfg.DataDir, a.store.spool, engine.Admission,
		[]namedLimiter{
			{"ingest", a.limiter}, {"query", api.QueryLimiter}, {"sourcemap", api.SourcemapLimiter},
			{"annotation_workspace", a.annotationLimiter}, {"annotation_credential", api.AnnotationCredentialLimiter},
			{"share_read_link", api.Share.Reads}, {"share_read_addr", api.Share.ReadAddrs},
			{"share_password_link", api.Share.Passwords}, {"share_password_addr", api.Share.PasswordAddrs},
		},
		[]countedCache{
			{"api_keys", a.keys.Stats}, {"sdk_config", api.ConfigCacheStats}, {"sourcemaps", exceptions.Maps.Stats},
			{"messages", api.Messages.CacheStats},
		})
	// The sample-ratio check pauses a running experiment whose split is
	// broken; each node competes for the lease of every round, so one of
	// them runs it (docs/experiments.md).
	a.checker = &experiment.Checker{Store: a.store.meta, Counter: engine, Node: nodeName(), Interval: cfg.SampleRatioInterval,
		Env: analytics.EnvLive, Paused: api.FlagsChanged, Log: log.With("component", "experiments"), Now: time.Now}
	// The error alert job, like the check, runs on the lease holder of
	// each round; it reads through the engine (read-your-writes, an
	// admission slot) and never touches ingest.
	a.alerts = &alerts.Job{Store: a.store.meta, Counter: engine, Aliases: errorGroups, Sender: alertSender, Node: nodeName(), Interval: cfg.AlertInterval,
		Env: analytics.EnvLive, BaseURL: cfg.PublicURL, Log: log.With("component", "alerts"), Now: time.Now}
	// Replay retention, like the alerts, runs on the lease holder of each
	// round (docs/replay.md, "Retention").
	a.replayJob = &replay.Job{Store: a.store.replays, Leases: a.store.meta, Node: nodeName(), Interval: cfg.ReplayInterval,
		Retention: cfg.ReplayRetention, MaxBytes: int64(cfg.ReplayMaxBytes), MaxSessions: cfg.ReplayMaxSessions,
		Products: a.store.meta, Now: time.Now, Log: log.With("component", "replay")}
	// Event retention, too (docs/privacy.md, "Retention"); like the other
	// writes it waits while the disk is nearly full.
	if events, ok := a.store.queries.(analytics.RetentionStore); ok {
		a.retentionJob = &retention.Job{Products: a.store.meta, Events: events, Leases: a.store.meta, Node: nodeName(),
			Interval: cfg.RetentionInterval, Admit: a.store.guard.Admit, Now: time.Now, Log: log.With("component", "retention")}
	}
	a.cohortJob = &cohorts.Job{Service: a.cohorts, Leases: a.store.meta, Node: nodeName(), Interval: time.Minute,
		Admit: a.store.guard.Admit}
	// The HTTP server is fasthttp (docs/architecture.md): /e is served on
	// it directly, every other path through net/http handlers.
	a.httpSrv = &fasthttp.Server{
		Handler:      api.Handler(),
		ErrorHandler: api.RequestError,
		// Bodies are streamed: the handlers read them, after looking at
		// the headers, under each path's limit and the server's body
		// budget (httpapi/body.go). Before the handler runs, fasthttp
		// reads min(MaxRequestBodySize, 8 KB) of a body, and for a body
		// declared longer than MaxRequestBodySize still calls the
		// handler, with a stream; so the least size, one byte, makes
		// every handler run as soon as the headers and the body's first
		// byte are in, whatever the body's length. What a handler leaves
		// unread, fasthttp drains (up to 256 KB) or closes the
		// connection over.
		StreamRequestBody:  true,
		MaxRequestBodySize: 1,
		ReadBufferSize:     httpapi.MaxHeaderBytes,
		// From a request's first byte to its body's last; a body that
		// stalls is cut off with 408 and the connection closed.
		ReadTimeout:                  cfg.ReadTimeout,
		IdleTimeout:                  120 * time.Second,
		NoDefaultServerHeader:        true,
		NoDefaultContentType:         true,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		Logger:                       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// With the embedded database open, no other server owns this
	// directory, so a socket file left here is stale. Without it (events
	// and metadata both remote) the socket is the only sign of another
	// server: each node needs its own data directory.
	if a.store.embedded == nil {
		if _, err := admin.Dial(ctx, cfg.DataDir); err == nil {
			return nil, fmt.Errorf("another server is using data directory %s; give each node its own", cfg.DataDir)
		}
	}
	a.sockPath = filepath.Join(cfg.DataDir, admin.SocketName)
	// `strata import` into this server: its batches take the path of
	// POST /e's events (the pipeline, the writer), after the events the
	// store holds already are left out (docs/import.md).
	a.adminSrv = &http.Server{Handler: httpapi.AdminHandler(svc, log.With("component", "admin"),
		func(m *http.ServeMux) {
			// `strata persons rebuild`: profiles from the stored events,
			// capped as the updater caps them (docs/ingest.md).
			history, _ := a.store.queries.(analytics.PersonHistoryStore)
			rebuild := func(ctx context.Context, productID int64) (persons.RebuildReport, error) {
				if history == nil {
					return persons.RebuildReport{}, errors.New("this event store cannot rebuild person profiles")
				}
				return persons.Rebuild(ctx, history, a.store.meta, productID,
					persons.Options{MaxPersons: int64(cfg.PersonsPerProduct), Logger: log.With("component", "persons")})
			}
			httpapi.AdminPersonRoutes(m, a.privacy, rebuild, log.With("component", "admin"))
		},
		func(m *http.ServeMux) {
			httpapi.AdminImportRoutes(m, imports, a.store.meta, log.With("component", "admin"))
		}),
		ReadHeaderTimeout: 10 * time.Second}
	if err := a.listenAdmin(); spool.NoSpace(err) {
		// A socket is a file: with no inode free it cannot be made. The
		// management commands wait for it; the server does not (Run
		// tries again each second).
		log.Warn("no room on the disk for the admin socket; management commands work once files are deleted", "err", err)
	} else if err != nil {
		return nil, err
	}
	return a, nil
}

// listenAdmin binds the admin socket, replacing a stale one.
func (a *App) listenAdmin() error {
	os.Remove(a.sockPath)
	ln, err := net.Listen("unix", a.sockPath)
	if err != nil {
		return fmt.Errorf("listening on admin socket: %w", err)
	}
	if err := os.Chmod(a.sockPath, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("securing admin socket: %w", err)
	}
	a.adminLn = ln
	return nil
}

// tightenDataFiles takes the group's and others' permissions off the
// regular files in dir and in its subdirectories one level down (the
// spool), and returns how many it changed. The server creates its files
// 0600 (cli's umask), but older versions left strata.duckdb and its .wal
// 0644, readable by every user of the machine. Symbolic links are not
// followed.
func tightenDataFiles(dir string) (int, error) {
	changed := 0
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir() && depth == 0:
				if err := walk(path, depth+1); err != nil {
					return err
				}
			case e.Type().IsRegular():
				info, err := e.Info()
				if err != nil {
					return err
				}
				if perm := info.Mode().Perm(); perm&0o077 != 0 {
					if err := os.Chmod(path, perm&^0o077); err != nil {
						return err
					}
					changed++
				}
			}
		}
		return nil
	}
	return changed, walk(dir, 0)
}

// Addr is the bound HTTP address, useful when the configured port was 0.
func (a *App) Addr() net.Addr { return a.httpLn.Addr() }

// Run serves until ctx ends or a listener fails, then shuts down gracefully:
// it stops taking requests, lets in-flight ones finish (their events are
// committed before they are answered), drains the writer and closes storage.
func (a *App) Run(ctx context.Context) error {
	errc := make(chan error, 2)
	if a.cfg.DebugAddr != "" {
		// Bound before the public listener serves, so the debug address
		// answers as soon as the public one does.
		if ln, err := net.Listen("tcp", a.cfg.DebugAddr); err != nil {
			a.log.Warn("debug server not started", "err", err)
		} else {
			go a.serveDebug(ln)
		}
	}
	if a.cfg.MetricsAddr != "" {
		// Bound, like the debug address, before the public listener
		// serves; a metrics address that cannot be bound is worth a
		// warning, not a server that does not start.
		if ln, err := net.Listen("tcp", a.cfg.MetricsAddr); err != nil {
			a.log.Warn("metrics server not started", "err", err)
		} else {
			go serveMetrics(ln, a.metrics, a.log)
		}
	}
	go func() { errc <- a.httpSrv.Serve(a.httpLn) }()
	serveAdmin := func() {
		ln := a.adminLn
		go func() { errc <- a.adminSrv.Serve(ln) }()
	}
	if a.adminLn != nil {
		serveAdmin()
	}
	checks, stopChecks := context.WithCancel(ctx)
	defer stopChecks()
	go a.checker.Run(checks)
	go a.replayJob.Run(checks)
	// The alert job is stopped, and its deliveries in flight recorded,
	// before storage closes.
	alertJobs, stopAlerts := context.WithCancel(ctx)
	alertsDone := make(chan struct{})
	go func() {
		defer close(alertsDone)
		a.alerts.Run(alertJobs)
	}()
	// So is the job that keeps visits for the sessions query, and the
	// one that deletes events past their retention.
	visitJobs, stopVisits := context.WithCancel(ctx)
	visitsDone := make(chan struct{})
	go func() {
		defer close(visitsDone)
		a.keepVisits(visitJobs)
	}()
	retentionDone := make(chan struct{})
	go func() {
		defer close(retentionDone)
		if a.retentionJob != nil {
			a.retentionJob.Run(visitJobs)
		}
	}()
	// The deletion jobs, resumed from where a stop left them.
	cohortsDone := make(chan struct{})
	go func() {
		defer close(cohortsDone)
		a.cohortJob.Run(visitJobs)
	}()
	privacyJobs, stopPrivacy := context.WithCancel(ctx)
	privacyDone := make(chan struct{})
	go func() {
		defer close(privacyDone)
		a.privacy.Run(privacyJobs)
	}()
	a.ready.Store(true)
	if a.bootstrapKey != "" {
		// The one time a secret is logged: the first start of an empty data
		// directory must hand its owner a working key, and there is no one
		// else to hand it to yet. It is stored only as a hash.
		a.log.Info("created workspace \"Default\" with product \"Default\"; its live API key is shown only now"+
			" (to make another: strata keys create --product "+strconv.FormatInt(a.bootstrapProduct, 10)+", or the dashboard's Settings)",
			"product", a.bootstrapProduct, "api_key", a.bootstrapKey)
		a.bootstrapKey = ""
	}
	if a.setupToken != "" {
		// The second secret logged on a first start (after the bootstrap
		// key): whoever can read this log may create the owner, which a
		// web page that reached the server by DNS rebinding cannot. It
		// comes just before "listening", which is what scripts wait for.
		a.log.Info("first-run setup: open this address to create the owner",
			"url", setupURL(a.httpLn.Addr(), a.setupToken), "setup_token", a.setupToken)
	}
	a.log.Info("listening", "addr", a.httpLn.Addr().String(), "data", a.cfg.DataDir, "storage", describeStorage(a.cfg),
		"version", buildinfo.Read().String())

	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	idle := time.NewTicker(time.Second)
	defer idle.Stop()
	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-errc:
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				runErr = fmt.Errorf("serving: %w", err)
			}
			break loop
		case <-tick.C:
			// On a full disk the times wait in memory for room.
			if err := a.keys.FlushLastUsed(ctx); err != nil && !analytics.IsStorageFull(err) {
				a.log.Warn("recording key use failed", "err", err)
			}
		case <-idle.C:
			if a.adminLn == nil {
				// The disk had no room for the admin socket at start.
				if err := a.listenAdmin(); err == nil {
					a.log.Info("admin socket listening")
					serveAdmin()
				}
			}
			if a.cfg.MetaURL != "" {
				if err := a.limiter.Sync(ctx, a.store.meta, "key"); err != nil {
					a.log.Warn("sharing rate-limit usage failed", "err", err)
				}
				if err := a.annotationLimiter.Sync(ctx, a.store.meta, "workspace"); err != nil {
					a.log.Warn("sharing annotation rate-limit usage failed", "err", err)
				}
			}
			// A failed write broke the embedded database: reopen it once
			// the disk has room.
			a.store.guard.recover(ctx)
			// Spilled files may grow by what is free above the floor.
			a.store.guard.limitSpill(ctx)
			// Ingest has been quiet for a while: fold the log into the
			// file so that queries read compressed rows with zone maps.
			// It runs here, between other chores, so that it never
			// overlaps the shutdown that closes the store.
			if a.store.embedded == nil || a.store.spool == nil || a.store.guard.Admit() != nil {
				// A checkpoint on a nearly full disk could meet its
				// end; it waits for room like every other write.
				continue
			}
			start := time.Now()
			if did, err := a.store.embedded.CheckpointIfIdle(ctx, 2*time.Second); err != nil {
				a.log.Debug("idle checkpoint skipped", "err", err)
			} else if did {
				a.log.Info("idle checkpoint", "took", time.Since(start).Round(time.Millisecond))
			}
		}
	}
	stopAlerts()
	<-alertsDone
	stopVisits()
	<-visitsDone
	<-retentionDone
	<-cohortsDone
	a.cohorts.Close()
	stopPrivacy()
	<-privacyDone
	return errors.Join(runErr, a.shutdown())
}

// setupURL is the dashboard address that carries the setup token. A server
// listening on every interface is reached at 127.0.0.1 from its own
// machine; the token works under any name the server answers to.
func setupURL(addr net.Addr, token string) string {
	host := addr.String()
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
	}
	return "http://" + host + "/?setup_token=" + url.QueryEscape(token)
}

// readiness is /readyz: nil while the server takes traffic, else why not
// (starting or stopping, the disk nearly full, storage being reopened).
func (a *App) readiness() error {
	if !a.ready.Load() {
		return errNotReady
	}
	if a.cfg.EventsURL == "" {
		// Ready while events are acknowledged: a store being reopened
		// after a write ran out of memory still takes them (disk.go).
		return a.store.guard.AdmitIngest()
	}
	return a.store.embeddedBroken()
}

var errNotReady = &analytics.Error{Kind: analytics.KindUnavailable, Code: "unavailable",
	Message: "The server is starting or shutting down.", RetryAfter: time.Second}

// serveDebug exposes net/http/pprof on the debug address only, never on
// the public listener.
func (a *App) serveDebug(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	if a.store.embedded != nil {
		mux.HandleFunc("/debug/duckdb/memory", a.duckdbMemory)
	}
	a.log.Info("debug server listening", "addr", a.cfg.DebugAddr)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		a.log.Warn("debug server stopped", "err", err)
	}
}

// duckdbMemory reports DuckDB's own account of its memory, by tag, in MB:
// with the Go runtime's figures from /debug/pprof/heap?debug=1 it tells
// which part of the server's RSS is whose.
func (a *App) duckdbMemory(w http.ResponseWriter, r *http.Request) {
	rows, err := a.store.embedded.DB().QueryContext(r.Context(),
		`SELECT tag, memory_usage_bytes, temporary_storage_bytes FROM duckdb_memory() ORDER BY memory_usage_bytes DESC`)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var tag string
		var mem, tmp int64
		if err := rows.Scan(&tag, &mem, &tmp); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if mem > 0 || tmp > 0 {
			fmt.Fprintf(w, "%s %d MB (temporary storage %d MB)\n", tag, mem>>20, tmp>>20)
		}
	}
}

func (a *App) shutdown() error {
	a.ready.Store(false)
	a.log.Info("shutting down")
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	var errs []error
	if err := a.httpSrv.ShutdownWithContext(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping http: %w", err))
	}
	if err := a.adminSrv.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stopping admin socket: %w", err))
	}
	if err := a.closeStorage(); err != nil {
		errs = append(errs, err)
	}
	a.log.Info("stopped")
	return errors.Join(errs...)
}

// closeStorage drains the writer, records key use and closes the store.
func (a *App) closeStorage() error {
	var errs []error
	if a.wr != nil {
		a.wr.Close()
	}
	if err := a.geo.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the geoip database: %w", err))
	}
	a.geo = nil
	if a.keys != nil {
		if err := a.keys.FlushLastUsed(context.Background()); analytics.IsStorageFull(err) {
			// When keys were last used is worth less than a clean stop
			// on a full disk.
			a.log.Warn("the disk is full: key use since the last record (every 30 s) is not saved")
		} else if err != nil {
			errs = append(errs, fmt.Errorf("recording key use: %w", err))
		}
	}
	if a.store != nil {
		if err := a.store.close(); err != nil { // the spool loads what it holds first
			errs = append(errs, err)
		}
	}
	a.store = nil
	if a.sockPath != "" {
		os.Remove(a.sockPath)
	}
	return errors.Join(errs...)
}

// sourcemapCacheBytes bounds the parsed sourcemaps each node keeps in
// memory to de-minify stacks at ingest, by what they hold parsed
// (sourcemap.Map.Size): with the one map being parsed, at most
// sourcemap.MaxSize, their memory is bounded (docs/errors.md, "Limits of a
// map").
const sourcemapCacheBytes = 128 << 20

// nodeName names this process among the nodes of a cluster, for the
// leases of one-node jobs: the host name, the process id and a random
// suffix, so that a restarted process is a new holder.
func nodeName() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%x", host, os.Getpid(), b)
}
