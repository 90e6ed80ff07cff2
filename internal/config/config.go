// Package config is Strata's typed configuration: defaults in one place,
// flags that default from STRATA_* environment variables, and Validate for
// the rules that span fields. A Config is a value passed to constructors;
// nothing reads it from a global.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"strata/internal/mail"
)

// Config is everything `strata serve` can be told.
type Config struct {
	// Addr is the HTTP listen address (STRATA_ADDR).
	Addr string
	// DataDir holds the embedded database and the admin socket
	// (STRATA_DATA).
	DataDir string
	// BackupDir, when set, is where POST /api/v1/admin/backups writes its
	// backups, each into a new directory under it (STRATA_BACKUP_DIR).
	// Unset, the API takes none: a request never names a path of its own
	// (docs/operations.md, "Backup and restore").
	BackupDir string
	// EventsURL, when set, stores events in ClickHouse instead of the
	// embedded database: clickhouse://host:9000/db[?cluster=NAME]
	// (STRATA_EVENTS_URL).
	EventsURL string
	// MetaURL, when set, keeps workspaces, products, credentials and saved
	// queries in PostgreSQL instead of the embedded database:
	// postgres://user:pass@host:5432/db (STRATA_META_URL). Several nodes
	// share one ClickHouse and one PostgreSQL.
	MetaURL string
	// LogLevel is debug, info, warn or error (STRATA_LOG_LEVEL).
	LogLevel string
	// LogFormat is text or json (STRATA_LOG_FORMAT).
	LogFormat string

	// RateLimitPerMinute is the default ingest budget per key; a key's own
	// override wins (STRATA_RATE_LIMIT).
	RateLimitPerMinute int
	// AnnotationRateLimit is how many annotation writes (create, delete,
	// bulk delete) each credential may make per minute, and all of a
	// workspace's keys and tokens together (STRATA_ANNOTATION_RATE_LIMIT;
	// docs/annotations.md).
	AnnotationRateLimit int
	// ShareRateLimit is how many requests (the page and its reads) each
	// shared link, and each client address on the share paths, may make
	// per minute on each node; SharePasswordRateLimit how many password
	// checks (STRATA_SHARE_RATE_LIMIT, STRATA_SHARE_PASSWORD_RATE_LIMIT);
	// SharedLinkLimit how many links that are not revoked a product may
	// have (STRATA_SHARED_LINK_LIMIT). docs/dashboard.md, "Shared links".
	ShareRateLimit         int
	SharePasswordRateLimit int
	SharedLinkLimit        int
	// GoalLimit is how many goals each product may have
	// (STRATA_GOAL_LIMIT): every goal is one more count in the Overview's
	// goals query, which reads them all at once (docs/queries.md,
	// "Goals"), so the cap bounds that query's width. At most MaxGoalLimit.
	GoalLimit int
	// SourcemapRateLimit is how many sourcemap uploads each credential may
	// make per minute on each node (STRATA_SOURCEMAP_RATE_LIMIT); an API
	// key's uploads count in its ingest budget too (docs/errors.md,
	// "Limits of an upload").
	SourcemapRateLimit int
	// SourcemapQuotaCount and SourcemapQuotaBytes bound what each
	// product's sourcemaps may hold together: uploads, and bytes of maps
	// and minified files (STRATA_SOURCEMAP_QUOTA_COUNT,
	// STRATA_SOURCEMAP_QUOTA_BYTES). Zero lifts the bound.
	SourcemapQuotaCount int
	SourcemapQuotaBytes ByteSize
	// PersonsPerProduct caps the person profiles each product gets from
	// its events (STRATA_PERSONS_PER_PRODUCT); zero lifts the cap
	// (docs/security.md, "Person profiles written from events").
	PersonsPerProduct int
	// ImportMaxBytes is the largest export an import through the API
	// takes (docs/import.md, "Through the API"); the file is written
	// under the data directory while it is imported.
	ImportMaxBytes ByteSize
	// ErrorAliasLimit is how many aliases of error groups each product
	// may keep: groups merged by hand, and de-minified fingerprints kept
	// in the group their bug had before its sourcemap arrived
	// (STRATA_ERROR_ALIAS_LIMIT; docs/errors.md, "One bug, one group").
	// Every list of groups reads them all. Zero lifts the bound.
	ErrorAliasLimit int
	// QueryConcurrency is how many queries may read events at once on this
	// node (STRATA_QUERY_CONCURRENCY). DuckDB spreads each query over every
	// core, so more at once answers none sooner and only adds their memory
	// together; the default is the number of cores.
	QueryConcurrency int
	// QueryQueue is how many more queries may wait for a slot, in arrival
	// order (STRATA_QUERY_QUEUE); beyond it a query is refused at once
	// with 503 server_busy.
	QueryQueue int
	// QueryWait is the longest a query waits in the queue before it is
	// refused with 503 server_busy (STRATA_QUERY_WAIT).
	QueryWait time.Duration
	// QueryRateLimit is how many queries each credential (query token or
	// dashboard user; API keys may not query) may send per minute on each
	// node (STRATA_QUERY_RATE_LIMIT). One Overview load is about fifteen
	// queries, and a user clicking through its filters loads it every few
	// seconds: 600 lets them, while the query slots bound the cost.
	QueryRateLimit int
	// LiveCache is how long a count of visitors now is reused for every
	// request of the same product and environment (STRATA_LIVE_CACHE;
	// docs/queries.md, "Live visitors"): however many dashboards are open,
	// each product costs at most one count per LiveCache.
	LiveCache time.Duration
	// KeyCacheTTL is how long a key lookup is trusted before the store is
	// asked again; it bounds how long a change made on another node takes.
	KeyCacheTTL time.Duration
	// Spool puts the write-ahead spool in front of DuckDB (STRATA_SPOOL).
	// Without it, 202 waits for a DuckDB commit: higher peak throughput,
	// but checkpoints stall requests for hundreds of milliseconds.
	Spool bool
	// CommitLinger is how long a small commit group waits for more
	// requests (see ingest.WriterOptions.Linger). Zero by default: with the
	// spool, the writer commits as soon as it is free and the requests
	// that arrive during a commit share the next one, which is worth more
	// than waiting (docs/benchmarks.md, "Commit at once"); without the
	// spool, a DuckDB commit's fixed cost of about a millisecond makes a
	// linger of 2ms pay.
	CommitLinger time.Duration
	// DedupCapacity caps the uuids remembered for deduplication.
	DedupCapacity int
	// DuckDBMemoryLimit caps the embedded database's buffer pool
	// (STRATA_DUCKDB_MEMORY): cached blocks, rows not yet checkpointed and
	// queries' working memory. The process uses more than this; what, and
	// the peak with the defaults, is in docs/security.md. The default is
	// sized from the machine's memory (DuckDBMemoryFor, memory.go).
	DuckDBMemoryLimit string
	// DuckDBCheckpoint is the WAL size that triggers a DuckDB checkpoint
	// (STRATA_DUCKDB_CHECKPOINT).
	DuckDBCheckpoint string
	// MaxBodyMemory bounds the memory all request bodies being read or
	// handled may hold together (STRATA_MAX_BODY_MEMORY); past it requests
	// with a body get 503 server_busy (docs/security.md).
	MaxBodyMemory ByteSize
	// MinFreeDisk is the free space the data directory's filesystem must
	// keep (STRATA_MIN_FREE_DISK): below it, ingest answers 503
	// storage_full instead of acknowledging events, and /readyz says not
	// ready, so that what was accepted can still be moved into the
	// database and checkpointed (docs/ingest.md, "A full disk"). Zero
	// turns the check off.
	MinFreeDisk ByteSize
	// MinFreeInodes is how many free inodes (files that can still be
	// created) the data directory's filesystem must keep
	// (STRATA_MIN_FREE_INODES): below it the server refuses events and
	// pauses its database writes exactly as below MinFreeDisk, since a
	// filesystem out of inodes fails every new file (DuckDB's write-ahead
	// log, a spool segment) however many bytes it has. Filesystems that
	// report no inode count (btrfs) are not checked. Zero turns the check
	// off.
	MinFreeInodes int
	// ReadTimeout bounds the time a request may take to arrive, its
	// headers and body together, from its first byte (a connection's first
	// request: from the connection's opening) (STRATA_READ_TIMEOUT).
	ReadTimeout time.Duration
	// ShutdownTimeout bounds the graceful drain on SIGTERM.
	ShutdownTimeout time.Duration
	// DebugAddr, when set, serves Go's pprof profiles there (keep it on
	// loopback); used to find where ingest spends its time.
	DebugAddr string
	// MetricsAddr, when set, serves the Prometheus metrics at /metrics
	// there, and nothing else (STRATA_METRICS_ADDR; keep it on loopback
	// or a private network). MetricsToken, when set, serves them on the
	// public listener too, at /metrics to Authorization: Bearer
	// <token> only (STRATA_METRICS_TOKEN; docs/operations.md,
	// "Monitoring").
	MetricsAddr  string
	MetricsToken string
	// AccessLog is off, info or debug: whether each request gets a log
	// line, and at which level (STRATA_ACCESS_LOG). AccessLogSample logs
	// one in that many of the answered requests to the SDK's hot paths
	// (POST /e, the active messages); refusals and failures are always
	// logged (STRATA_ACCESS_LOG_SAMPLE; docs/operations.md, "Logs").
	AccessLog       string
	AccessLogSample int
	// AllowedHosts, when not empty, are the only host names the server
	// answers to (STRATA_ALLOWED_HOSTS, comma-separated): a request whose
	// Host header names another is refused before routing, which shuts out
	// DNS rebinding (docs/security.md). Names are lower case, without
	// brackets around IPv6 addresses; ports are not compared.
	AllowedHosts []string
	// ErrorTracking shows the dashboard's Errors page. It is read from
	// NEXT_PUBLIC_FEATURE_ERROR_TRACKING, the name the product spec gives
	// the dashboard's feature flag, and is on only when that is "true".
	ErrorTracking bool
	// SampleRatioInterval is how often the sample-ratio check of running
	// experiments runs (STRATA_SRM_INTERVAL); one node of a cluster runs
	// each round (docs/experiments.md).
	SampleRatioInterval time.Duration
	// AlertInterval is how often the error alert job runs
	// (STRATA_ALERT_INTERVAL); one node of a cluster runs each round
	// (docs/errors.md, "Alerts").
	AlertInterval time.Duration
	// Replay lets browser SDKs record sessions (STRATA_REPLAY; the SDK
	// config's replay, docs/replay.md). ReplayRetention is how long a
	// session is kept after its last chunk, ReplayMaxBytes how much every
	// product's sessions may take together (0: no cap), both enforced by
	// a job every ReplayInterval that deletes the oldest sessions first.
	// ReplayMaxSessionBytes is how much one session may store (0: no
	// cap): ingest refuses a chunk past it (replay_session_full).
	// ReplayMaxSessions is how many sessions one product may keep (0: no
	// cap): ingest refuses a chunk that would start one more
	// (replay_quota_full), and the job keeps each product a tenth under
	// it, so that recording goes on.
	Replay                bool
	ReplayRetention       time.Duration
	ReplayMaxBytes        ByteSize
	ReplayMaxSessionBytes ByteSize
	ReplayMaxSessions     int
	ReplayInterval        time.Duration
	// RetentionInterval is how often the retention job deletes the events
	// and error occurrences past each product's periods
	// (STRATA_RETENTION_INTERVAL; docs/privacy.md, "Retention").
	RetentionInterval time.Duration
	// AlertWebhookAllow lists the addresses alert webhooks may be
	// delivered to although the webhook rules refuse them
	// (STRATA_ALERT_WEBHOOK_ALLOW, comma-separated addresses or CIDR
	// prefixes): a receiver on a link-local network, or 100.100.100.200,
	// 192.0.0.192 or fd00:ec2::254 where no cloud metadata service
	// answers there (analytics.WebhookPolicy, docs/errors.md).
	AlertWebhookAllow Prefixes
	// GeoIPDB is a MaxMind-format database file of the operator's own,
	// such as GeoLite2-City.mmdb, used instead of the embedded DB-IP
	// country database; with one, events get regions and cities too
	// (STRATA_GEOIP_DB; docs/ingest.md, "Geography").
	GeoIPDB string
	// TrustedProxies are the addresses whose X-Forwarded-For header says
	// where an event came from (STRATA_TRUSTED_PROXIES, comma-separated
	// addresses or CIDR prefixes); from any other peer the header is
	// ignored, so that a client cannot choose its country (geo.ClientAddr).
	TrustedProxies Prefixes
	// PublicURL is the address people reach the dashboard at
	// (STRATA_PUBLIC_URL), which the links in alerts start with; empty,
	// they are paths on the server.
	PublicURL string
	// SMTPURL, when set, is the mail server invite links are e-mailed
	// through (STRATA_SMTP_URL, smtp://user:password@host:587 or
	// smtps://…), from SMTPFrom (STRATA_SMTP_FROM); empty, an invite's
	// link is only shown to the admin who made it (internal/mail).
	SMTPURL  string
	SMTPFrom string
}

// MinReplayMaxSessions is the least --replay-max-sessions other than 0
// (no cap): the retention job frees a tenth of the cap, at least one
// session, when a product reaches it, and a cap under 10 would have it
// delete every session kept, the one being recorded too.
const MinReplayMaxSessions = 10

// MaxGoalLimit is the most goals --goal-limit may allow a product.
const MaxGoalLimit = 100

// Default returns the configuration `make run` uses.
func Default() Config {
	return Config{
		Addr:                   "127.0.0.1:8080",
		DataDir:                "./data",
		LogLevel:               "info",
		LogFormat:              "text",
		AccessLog:              "info",
		AccessLogSample:        100,
		RateLimitPerMinute:     1000,
		AnnotationRateLimit:    60,
		ShareRateLimit:         600,
		SharePasswordRateLimit: 10,
		SharedLinkLimit:        50,
		GoalLimit:              20,
		SourcemapRateLimit:     60,
		SourcemapQuotaCount:    1000,
		ErrorAliasLimit:        1000,
		SourcemapQuotaBytes:    1 << 30,
		PersonsPerProduct:      10_000_000,
		ImportMaxBytes:         256 << 20,
		QueryConcurrency:       runtime.NumCPU(),
		QueryQueue:             64,
		QueryWait:              10 * time.Second,
		QueryRateLimit:         600,
		LiveCache:              3 * time.Second,
		SampleRatioInterval:    5 * time.Minute,
		AlertInterval:          time.Minute,
		Replay:                 true,
		ReplayRetention:        30 * 24 * time.Hour,
		ReplayMaxBytes:         10 << 30,
		// What the embedded store's index may hold per product for its
		// sessions, whatever floods it: about 55 MB at 500-550 bytes a
		// session of one chunk (docs/replay.md, "Limits"). 10 GB
		// (ReplayMaxBytes) of sessions of 100 KB, a minute of recording
		// each, are as many, so that on real traffic the byte cap is
		// reached first.
		ReplayMaxSessions: 100_000,
		// A recorded session sends a gzip'd chunk every 5 s: 6.7 MB an hour
		// of the replay benchmark's storefront used without a pause, 8 MB
		// on its page that changes ten times a second (docs/replay.md,
		// "Limits"). 50 MB is six such hours, and bounds what one session
		// can cost the store and the player.
		ReplayMaxSessionBytes: 50 << 20,
		ReplayInterval:        10 * time.Minute,
		RetentionInterval:     time.Hour,
		KeyCacheTTL:           10 * time.Second,
		DedupCapacity:         4_000_000,
		CommitLinger:          0,
		Spool:                 true,
		DuckDBMemoryLimit:     machineDuckDBMemory(),
		DuckDBCheckpoint:      "128MB",
		MaxBodyMemory:         64 << 20,
		MinFreeDisk:           256 << 20,
		MinFreeInodes:         10_000,
		ReadTimeout:           30 * time.Second,
		ShutdownTimeout:       20 * time.Second,
	}
}

// Prefixes is a list of IP prefixes, written comma-separated as CIDR
// prefixes (fd00:ec2::/64) or single addresses (100.100.100.200, taken
// as /32 or /128).
type Prefixes []netip.Prefix

// String writes the list as Set reads it.
func (p Prefixes) String() string {
	out := make([]string, len(p))
	for i, x := range p {
		out[i] = x.String()
	}
	return strings.Join(out, ",")
}

// Set parses a comma-separated list, for flag.Value; it replaces the
// list, so that a flag given replaces what the environment set.
func (p *Prefixes) Set(v string) error {
	var out Prefixes
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if prefix, err := netip.ParsePrefix(item); err == nil {
			out = append(out, prefix.Masked())
			continue
		}
		ip, err := netip.ParseAddr(item)
		if err != nil {
			return fmt.Errorf("%q is neither an IP address nor a CIDR prefix such as 169.254.10.0/24", item)
		}
		out = append(out, netip.PrefixFrom(ip.WithZone(""), ip.BitLen()))
	}
	*p = out
	return nil
}

// ByteSize is an amount of memory, written as a whole number of bytes or
// with a unit: 512KB, 64MB, 1GB. The units are binary (1MB = 1,048,576
// bytes), and KiB, MiB and GiB are accepted as well.
type ByteSize int64

// String writes the size in the largest unit that divides it.
func (b ByteSize) String() string {
	for _, u := range byteUnits {
		if b >= u.size && b%u.size == 0 {
			return strconv.FormatInt(int64(b/u.size), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// Set parses a size, for flag.Value.
func (b *ByteSize) Set(v string) error {
	n, err := parseByteSize(v)
	if err != nil {
		return err
	}
	*b = n
	return nil
}

var byteUnits = []struct {
	name string
	size ByteSize
}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}}

func parseByteSize(v string) (ByteSize, error) {
	s := strings.ToUpper(strings.TrimSpace(v))
	s = strings.Replace(s, "IB", "B", 1)
	mult := ByteSize(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(s, u.name); ok {
			s, mult = strings.TrimSpace(num), u.size
			break
		}
	}
	s = strings.TrimSuffix(s, "B")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > int64(1<<62)/int64(mult) {
		return 0, fmt.Errorf("%q is not a size such as 64MB", v)
	}
	return ByteSize(n) * mult, nil
}

// Load parses `strata serve` flags over defaults taken from the environment
// (lookup is os.LookupEnv outside tests). It writes nothing: on -h or
// --help it returns flag.ErrHelp, and the caller prints PrintFlags.
func Load(args []string, lookup func(string) (string, bool)) (Config, error) {
	c := Default()
	fs, hosts, envErr := flagSet(&c, lookup)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if envErr != nil {
		return c, envErr
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	c.AllowedHosts = ParseHosts(*hosts)
	return c, c.Validate()
}

// PrintFlags writes every flag of `strata serve` to w, one after another
// with its description and its default, the defaults as lookup's
// environment sets them.
func PrintFlags(w io.Writer, lookup func(string) (string, bool)) {
	c := Default()
	fs, _, _ := flagSet(&c, lookup)
	fs.SetOutput(w)
	fs.PrintDefaults()
	io.WriteString(w, envSwitches)
}

// envSwitches is the help's footer: the settings read only from the
// environment, which no flag above names. NEXT_PUBLIC_FEATURE_ERROR_TRACKING
// keeps the name the product spec gives it (a dashboard build switch there);
// here the server reads it when it starts.
const envSwitches = `
Environment switches (no flag):
  NEXT_PUBLIC_FEATURE_ERROR_TRACKING=true
    	error tracking on: the dashboard's Errors pages (/errors), and "errorTracking": true
    	in GET /api/v1/config, which turns error capture on in browser SDKs whose init
    	leaves errorTracking unset (docs/errors.md, "Turning it on"); any other value: off
`

// flagSet defines the flags of `strata serve` on c, each defaulting from
// c or its STRATA_… variable. hosts receives --allowed-hosts, which Load
// parses; envErr is the first environment variable that did not parse.
func flagSet(c *Config, lookup func(string) (string, bool)) (fs *flag.FlagSet, hosts *string, envErr error) {
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	env := func(name, def string) string {
		if v, ok := lookup(name); ok && v != "" {
			return v
		}
		return def
	}
	// fail keeps the first variable that did not parse.
	fail := func(err error) {
		if envErr == nil {
			envErr = err
		}
	}
	envInt := func(name string, def int) int {
		v, ok := lookup(name)
		if !ok || v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			fail(fmt.Errorf("%s: %q is not a whole number", name, v))
		}
		return n
	}
	envDuration := func(name string, def time.Duration) time.Duration {
		v, ok := lookup(name)
		if !ok || v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			fail(fmt.Errorf("%s: %q is not a duration such as 10s", name, v))
		}
		return d
	}
	// envValue sets into, a flag's value (a size, a list of prefixes),
	// from the variable name when it is set, before the flag is defined
	// with it as its default: the flag, when given, sets it again.
	envValue := func(name string, into flag.Value) {
		if v, ok := lookup(name); ok && v != "" {
			if err := into.Set(v); err != nil {
				fail(fmt.Errorf("%s: %w", name, err))
			}
		}
	}
	fs.StringVar(&c.Addr, "addr", env("STRATA_ADDR", c.Addr), "HTTP listen address (env STRATA_ADDR)")
	fs.StringVar(&c.DataDir, "data", env("STRATA_DATA", c.DataDir), "data directory (env STRATA_DATA)")
	fs.StringVar(&c.BackupDir, "backup-dir", env("STRATA_BACKUP_DIR", ""), "directory the backup API writes its backups under; empty: the API takes none (env STRATA_BACKUP_DIR)")
	fs.StringVar(&c.EventsURL, "events", env("STRATA_EVENTS_URL", ""), "ClickHouse events store, clickhouse://host:9000/db[?cluster=NAME]; empty: embedded (env STRATA_EVENTS_URL)")
	fs.StringVar(&c.MetaURL, "meta", env("STRATA_META_URL", ""), "PostgreSQL metadata store, postgres://user:pass@host:5432/db; empty: embedded (env STRATA_META_URL)")
	fs.StringVar(&c.LogLevel, "log-level", env("STRATA_LOG_LEVEL", c.LogLevel), "debug, info, warn or error (env STRATA_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env("STRATA_LOG_FORMAT", c.LogFormat), "text or json (env STRATA_LOG_FORMAT)")
	fs.IntVar(&c.RateLimitPerMinute, "rate-limit", envInt("STRATA_RATE_LIMIT", c.RateLimitPerMinute), "default ingest requests per key per minute (env STRATA_RATE_LIMIT)")
	fs.IntVar(&c.AnnotationRateLimit, "annotation-rate-limit", envInt("STRATA_ANNOTATION_RATE_LIMIT", c.AnnotationRateLimit), "annotation writes per minute per credential, and per workspace for its keys and tokens (env STRATA_ANNOTATION_RATE_LIMIT)")
	fs.IntVar(&c.ShareRateLimit, "share-rate-limit", envInt("STRATA_SHARE_RATE_LIMIT", c.ShareRateLimit), "requests per minute through each shared link, and from each client address on the share paths, on each node (env STRATA_SHARE_RATE_LIMIT)")
	fs.IntVar(&c.SharePasswordRateLimit, "share-password-rate-limit", envInt("STRATA_SHARE_PASSWORD_RATE_LIMIT", c.SharePasswordRateLimit), "password checks per minute on each shared link, and from each client address, on each node (env STRATA_SHARE_PASSWORD_RATE_LIMIT)")
	fs.IntVar(&c.SharedLinkLimit, "shared-link-limit", envInt("STRATA_SHARED_LINK_LIMIT", c.SharedLinkLimit), "shared links (not revoked) each product may have; past it creating one is refused (shared_links_full) (env STRATA_SHARED_LINK_LIMIT)")
	fs.IntVar(&c.GoalLimit, "goal-limit", envInt("STRATA_GOAL_LIMIT", c.GoalLimit), "goals each product may have, at most 100; past it creating one is refused (goals_full) (env STRATA_GOAL_LIMIT)")
	fs.IntVar(&c.SourcemapRateLimit, "sourcemap-rate-limit", envInt("STRATA_SOURCEMAP_RATE_LIMIT", c.SourcemapRateLimit), "sourcemap uploads per minute per credential, on each node (env STRATA_SOURCEMAP_RATE_LIMIT)")
	fs.IntVar(&c.ErrorAliasLimit, "error-alias-limit", envInt("STRATA_ERROR_ALIAS_LIMIT", c.ErrorAliasLimit), "aliases of error groups each product may keep (groups merged into others by hand or when a sourcemap arrived after the errors); past it merges are refused (error_aliases_full); 0: no cap (env STRATA_ERROR_ALIAS_LIMIT)")
	fs.IntVar(&c.PersonsPerProduct, "persons-per-product", envInt("STRATA_PERSONS_PER_PRODUCT", c.PersonsPerProduct), "person profiles each product may have; its events from further distinct ids are stored without one; 0: no cap (env STRATA_PERSONS_PER_PRODUCT)")
	fs.IntVar(&c.SourcemapQuotaCount, "sourcemap-quota-count", envInt("STRATA_SOURCEMAP_QUOTA_COUNT", c.SourcemapQuotaCount), "sourcemap uploads each product may keep; 0: no cap (env STRATA_SOURCEMAP_QUOTA_COUNT)")
	fs.IntVar(&c.QueryConcurrency, "query-concurrency", envInt("STRATA_QUERY_CONCURRENCY", c.QueryConcurrency), "queries that may read events at once (env STRATA_QUERY_CONCURRENCY)")
	fs.IntVar(&c.QueryQueue, "query-queue", envInt("STRATA_QUERY_QUEUE", c.QueryQueue), "queries that may wait for a slot; more are refused with 503 (env STRATA_QUERY_QUEUE)")
	fs.DurationVar(&c.SampleRatioInterval, "srm-interval", envDuration("STRATA_SRM_INTERVAL", c.SampleRatioInterval), "how often running experiments get the sample-ratio check (env STRATA_SRM_INTERVAL)")
	fs.DurationVar(&c.AlertInterval, "alert-interval", envDuration("STRATA_ALERT_INTERVAL", c.AlertInterval), "how often the error alert job looks for new and spiking error groups (env STRATA_ALERT_INTERVAL)")
	envValue("STRATA_ALERT_WEBHOOK_ALLOW", &c.AlertWebhookAllow)
	fs.Var(&c.AlertWebhookAllow, "alert-webhook-allow", "comma-separated addresses or CIDR prefixes alert webhooks may be delivered to although they are refused by default (link-local, cloud metadata services such as 100.100.100.200); empty: none (env STRATA_ALERT_WEBHOOK_ALLOW)")
	fs.StringVar(&c.GeoIPDB, "geoip-db", env("STRATA_GEOIP_DB", ""), "a MaxMind-format database such as GeoLite2-City.mmdb, for events' country, region and city; empty: the embedded country database, IP Geolocation by DB-IP (https://db-ip.com, CC BY 4.0) (env STRATA_GEOIP_DB)")
	envValue("STRATA_TRUSTED_PROXIES", &c.TrustedProxies)
	fs.Var(&c.TrustedProxies, "trusted-proxies", "comma-separated addresses or CIDR prefixes of the reverse proxies in front of the server, e.g. 127.0.0.1/32,10.0.0.0/8: from them, the right-most X-Forwarded-For address that is not one of them is the client whose country events get; empty: the header is ignored (env STRATA_TRUSTED_PROXIES)")
	fs.StringVar(&c.SMTPURL, "smtp-url", env("STRATA_SMTP_URL", ""), "the mail server invite links are e-mailed through, smtp://user:password@host:587 or smtps://… (env STRATA_SMTP_URL); empty, links are only shown")
	fs.StringVar(&c.SMTPFrom, "smtp-from", env("STRATA_SMTP_FROM", ""), "the address invite e-mails are sent from, needed with --smtp-url (env STRATA_SMTP_FROM)")
	fs.StringVar(&c.PublicURL, "public-url", env("STRATA_PUBLIC_URL", ""), "the dashboard's public address, e.g. https://analytics.example.com, which links in alerts start with (env STRATA_PUBLIC_URL)")
	fs.DurationVar(&c.QueryWait, "query-wait", envDuration("STRATA_QUERY_WAIT", c.QueryWait), "longest a query waits for a slot before 503 (env STRATA_QUERY_WAIT)")
	fs.IntVar(&c.QueryRateLimit, "query-rate-limit", envInt("STRATA_QUERY_RATE_LIMIT", c.QueryRateLimit), "queries per credential per minute, on each node (env STRATA_QUERY_RATE_LIMIT)")
	fs.DurationVar(&c.LiveCache, "live-cache", envDuration("STRATA_LIVE_CACHE", c.LiveCache), "how long a count of visitors now is reused for a product's every request, between 1s and 1m (env STRATA_LIVE_CACHE)")
	fs.DurationVar(&c.KeyCacheTTL, "key-cache-ttl", c.KeyCacheTTL, "how long a key lookup is cached")
	fs.BoolVar(&c.Spool, "spool", env("STRATA_SPOOL", "true") != "false", "commit ingest to a write-ahead spool in front of DuckDB (env STRATA_SPOOL)")
	fs.DurationVar(&c.CommitLinger, "commit-linger", c.CommitLinger, "how long a small commit group waits for more requests")
	fs.IntVar(&c.DedupCapacity, "dedup-capacity", c.DedupCapacity, "uuids remembered for deduplication")
	fs.StringVar(&c.DuckDBMemoryLimit, "duckdb-memory", env("STRATA_DUCKDB_MEMORY", c.DuckDBMemoryLimit), "DuckDB buffer pool, shared by cached data, unflushed rows and queries; not the process's size; default a quarter of the machine's memory (or cgroup limit) less 1GB, between 192MB and 16GB (env STRATA_DUCKDB_MEMORY)")
	fs.StringVar(&c.DuckDBCheckpoint, "duckdb-checkpoint", env("STRATA_DUCKDB_CHECKPOINT", c.DuckDBCheckpoint), "DuckDB WAL size that triggers a checkpoint (env STRATA_DUCKDB_CHECKPOINT)")
	envValue("STRATA_MAX_BODY_MEMORY", &c.MaxBodyMemory)
	fs.Var(&c.MaxBodyMemory, "max-body-memory", "memory all request bodies in flight may hold together, e.g. 64MB (env STRATA_MAX_BODY_MEMORY)")
	envValue("STRATA_MIN_FREE_DISK", &c.MinFreeDisk)
	fs.Var(&c.MinFreeDisk, "min-free-disk", "free space the data directory must keep; below it ingest answers 503 storage_full; 0 turns the check off (env STRATA_MIN_FREE_DISK)")
	fs.IntVar(&c.MinFreeInodes, "min-free-inodes", envInt("STRATA_MIN_FREE_INODES", c.MinFreeInodes), "free inodes the data directory's filesystem must keep; below it ingest answers 503 storage_full; 0 turns the check off (env STRATA_MIN_FREE_INODES)")
	envValue("STRATA_SOURCEMAP_QUOTA_BYTES", &c.SourcemapQuotaBytes)
	envValue("STRATA_IMPORT_MAX_BYTES", &c.ImportMaxBytes)
	fs.Var(&c.ImportMaxBytes, "import-max-bytes", "the largest export an import through the API takes, e.g. 256MB; larger ones are imported with strata import (env STRATA_IMPORT_MAX_BYTES)")
	fs.Var(&c.SourcemapQuotaBytes, "sourcemap-quota-bytes", "what each product's sourcemaps and minified files may take together, e.g. 1GB; 0: no cap (env STRATA_SOURCEMAP_QUOTA_BYTES)")
	fs.BoolVar(&c.Replay, "replay", env("STRATA_REPLAY", "true") != "false", "let browser SDKs record sessions (replayEnabled); false refuses $snapshot events (env STRATA_REPLAY)")
	fs.DurationVar(&c.ReplayRetention, "replay-retention", envDuration("STRATA_REPLAY_RETENTION", c.ReplayRetention), "how long a recorded session is kept after its last chunk (env STRATA_REPLAY_RETENTION)")
	envValue("STRATA_REPLAY_MAX_BYTES", &c.ReplayMaxBytes)
	fs.Var(&c.ReplayMaxBytes, "replay-max-bytes", "what each product's recorded sessions may take together, e.g. 10GB; the oldest are deleted beyond it; 0: no cap (env STRATA_REPLAY_MAX_BYTES)")
	envValue("STRATA_REPLAY_MAX_SESSION_BYTES", &c.ReplayMaxSessionBytes)
	fs.Var(&c.ReplayMaxSessionBytes, "replay-max-session-bytes", "what one recorded session may store, e.g. 50MB (each chunk counts its data and 512 bytes); its later chunks are refused (replay_session_full); 0: no cap (env STRATA_REPLAY_MAX_SESSION_BYTES)")
	fs.IntVar(&c.ReplayMaxSessions, "replay-max-sessions", envInt("STRATA_REPLAY_MAX_SESSIONS", c.ReplayMaxSessions), "how many recorded sessions each product may keep; a chunk that would start one more is refused (replay_quota_full), and the retention job deletes the oldest to keep a tenth of it free; 0: no cap, else at least 10 (env STRATA_REPLAY_MAX_SESSIONS)")
	fs.DurationVar(&c.ReplayInterval, "replay-interval", c.ReplayInterval, "how often the replay retention job runs")
	fs.DurationVar(&c.RetentionInterval, "retention-interval", envDuration("STRATA_RETENTION_INTERVAL", c.RetentionInterval), "how often the retention job deletes events past each product's retention period (env STRATA_RETENTION_INTERVAL)")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", envDuration("STRATA_READ_TIMEOUT", c.ReadTimeout), "time a request's headers and body may take to arrive (env STRATA_READ_TIMEOUT)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "graceful shutdown limit")
	hosts = new(string)
	fs.StringVar(hosts, "allowed-hosts", env("STRATA_ALLOWED_HOSTS", ""), "comma-separated host names the server answers to, e.g. analytics.example.com,127.0.0.1; ports are not compared; empty: any (env STRATA_ALLOWED_HOSTS)")
	fs.StringVar(&c.DebugAddr, "debug-addr", env("STRATA_DEBUG_ADDR", ""), "serve pprof on this address, e.g. 127.0.0.1:6060 (env STRATA_DEBUG_ADDR)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("STRATA_METRICS_ADDR", ""), "serve Prometheus metrics at /metrics on this address only, e.g. 127.0.0.1:9464; empty: off (env STRATA_METRICS_ADDR)")
	fs.StringVar(&c.MetricsToken, "metrics-token", env("STRATA_METRICS_TOKEN", ""), "also serve /metrics on the public address, to Authorization: Bearer <this token> only; at least 32 characters; empty: not public (env STRATA_METRICS_TOKEN)")
	fs.StringVar(&c.AccessLog, "access-log", env("STRATA_ACCESS_LOG", c.AccessLog), "a log line per request: off, info or debug (the level it is logged at) (env STRATA_ACCESS_LOG)")
	fs.IntVar(&c.AccessLogSample, "access-log-sample", envInt("STRATA_ACCESS_LOG_SAMPLE", c.AccessLogSample), "log 1 in N of the answered requests to POST /e and the active messages (1: every one); refusals and failures are always logged (env STRATA_ACCESS_LOG_SAMPLE)")
	c.ErrorTracking = env("NEXT_PUBLIC_FEATURE_ERROR_TRACKING", "") == "true"
	return fs, hosts, envErr
}

// Validate checks the rules a single flag cannot.
func (c Config) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("addr %q: %w", c.Addr, err))
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data directory must be set"))
	}
	if c.BackupDir != "" && !filepath.IsAbs(c.BackupDir) {
		errs = append(errs, errors.New("backup-dir must be an absolute path"))
	}
	if c.EventsURL != "" && !strings.HasPrefix(c.EventsURL, "clickhouse://") {
		errs = append(errs, errors.New("events: want a clickhouse:// URL"))
	}
	if c.MetaURL != "" && !strings.HasPrefix(c.MetaURL, "postgres://") && !strings.HasPrefix(c.MetaURL, "postgresql://") {
		errs = append(errs, errors.New("meta: want a postgres:// URL"))
	}
	if c.RateLimitPerMinute < 1 {
		errs = append(errs, errors.New("rate-limit must be at least 1"))
	}
	if c.AnnotationRateLimit < 1 {
		errs = append(errs, errors.New("annotation-rate-limit must be at least 1"))
	}
	if c.ShareRateLimit < 1 {
		errs = append(errs, errors.New("share-rate-limit must be at least 1"))
	}
	if c.SharePasswordRateLimit < 1 {
		errs = append(errs, errors.New("share-password-rate-limit must be at least 1"))
	}
	if c.SharedLinkLimit < 1 {
		errs = append(errs, errors.New("shared-link-limit must be at least 1"))
	}
	if c.GoalLimit < 1 || c.GoalLimit > MaxGoalLimit {
		errs = append(errs, fmt.Errorf("goal-limit must be from 1 to %d: every goal is a column of the Overview's goals query", MaxGoalLimit))
	}
	if c.SourcemapRateLimit < 1 {
		errs = append(errs, errors.New("sourcemap-rate-limit must be at least 1"))
	}
	if c.ErrorAliasLimit < 0 {
		errs = append(errs, errors.New("error-alias-limit must not be negative (0: no cap)"))
	}
	if c.PersonsPerProduct < 0 {
		errs = append(errs, errors.New("persons-per-product must not be negative (0: no cap)"))
	}
	if c.SourcemapQuotaCount < 0 {
		errs = append(errs, errors.New("sourcemap-quota-count must not be negative (0: no cap)"))
	}
	if c.MaxBodyMemory < 1<<20 {
		errs = append(errs, fmt.Errorf("max-body-memory %v: must be at least 1MB, the largest API body", c.MaxBodyMemory))
	}
	if c.MinFreeInodes < 0 {
		errs = append(errs, errors.New("min-free-inodes must not be negative"))
	}
	if c.ReadTimeout < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("read-timeout %v: must be at least 100ms", c.ReadTimeout))
	}
	if c.QueryConcurrency < 1 {
		errs = append(errs, errors.New("query-concurrency must be at least 1"))
	}
	if c.QueryQueue < 0 {
		errs = append(errs, errors.New("query-queue must not be negative"))
	}
	if c.QueryWait <= 0 {
		errs = append(errs, errors.New("query-wait must be positive"))
	}
	if c.SampleRatioInterval < time.Second {
		errs = append(errs, fmt.Errorf("srm-interval %v: must be at least 1s", c.SampleRatioInterval))
	}
	if c.ReplayRetention < time.Hour {
		errs = append(errs, fmt.Errorf("replay-retention %v: must be at least 1h", c.ReplayRetention))
	}
	if c.ReplayMaxSessionBytes != 0 && c.ReplayMaxSessionBytes < 64<<10 {
		errs = append(errs, fmt.Errorf("replay-max-session-bytes %v: must be 0 (no cap) or at least 64KB", c.ReplayMaxSessionBytes))
	}
	if c.ReplayMaxSessions < 0 || (c.ReplayMaxSessions > 0 && c.ReplayMaxSessions < MinReplayMaxSessions) {
		// The retention job deletes a tenth of the cap (at least one
		// session) when a product reaches it: under 10, that is every
		// session kept, the one being recorded among them.
		errs = append(errs, fmt.Errorf("replay-max-sessions %d: must be 0 (no cap) or at least %d", c.ReplayMaxSessions, MinReplayMaxSessions))
	}
	if c.ReplayInterval < time.Second {
		errs = append(errs, fmt.Errorf("replay-interval %v: must be at least 1s", c.ReplayInterval))
	}
	if c.RetentionInterval < time.Second {
		errs = append(errs, fmt.Errorf("retention-interval %v: must be at least 1s", c.RetentionInterval))
	}
	if c.AlertInterval < time.Second {
		errs = append(errs, fmt.Errorf("alert-interval %v: must be at least 1s", c.AlertInterval))
	}
	if c.SMTPURL != "" {
		if _, err := mail.New(c.SMTPURL, c.SMTPFrom); err != nil {
			errs = append(errs, err)
		}
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("public-url %q: must be an http or https URL such as https://analytics.example.com", c.PublicURL))
		}
	}
	if c.LiveCache < time.Second || c.LiveCache > time.Minute {
		// Under a second, the cache would no longer spare the store
		// the Overview's requests; over a minute, the Overview, which
		// asks every ten seconds, would show the same count for six
		// refreshes and more.
		errs = append(errs, fmt.Errorf("live-cache %v: must be between 1s and 1m", c.LiveCache))
	}
	if c.QueryRateLimit < 1 {
		errs = append(errs, errors.New("query-rate-limit must be at least 1"))
	}
	if c.DedupCapacity < 1000 {
		errs = append(errs, errors.New("dedup-capacity must be at least 1000"))
	}
	if _, err := c.Level(); err != nil {
		errs = append(errs, err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("log-format %q: want text or json", c.LogFormat))
	}
	if _, _, err := c.AccessLogLevel(); err != nil {
		errs = append(errs, err)
	}
	if c.AccessLogSample < 1 {
		errs = append(errs, errors.New("access-log-sample must be at least 1"))
	}
	// The token is compared with what a scraper sends; a short one could
	// be guessed through the public listener.
	if c.MetricsToken != "" && len(c.MetricsToken) < MinMetricsToken {
		errs = append(errs, fmt.Errorf("metrics-token must be at least %d characters (e.g. openssl rand -hex 32)", MinMetricsToken))
	}
	for _, h := range c.AllowedHosts {
		if err := checkHost(h); err != nil {
			errs = append(errs, fmt.Errorf("allowed-hosts %q: %w", h, err))
		}
	}
	return errors.Join(errs...)
}

// ParseHosts splits a comma-separated list of host names into AllowedHosts'
// form: trimmed, lower case, without a trailing dot or the brackets of an
// IPv6 address, empty entries left out. It does not judge the names;
// Validate does.
func ParseHosts(list string) []string {
	var out []string
	for _, h := range strings.Split(list, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			h = h[1 : len(h)-1]
		}
		h = strings.TrimSuffix(h, ".")
		if h != "" {
			out = append(out, h)
		}
	}
	return out
}

// checkHost accepts a host name or an IP address, and explains the usual
// mistakes: a URL, a port, a wildcard.
func checkHost(h string) error {
	if net.ParseIP(h) != nil {
		return nil
	}
	switch {
	case strings.Contains(h, "://"):
		return errors.New("want a host name, not a URL")
	case strings.Contains(h, ":"):
		return errors.New("want a host name without a port; ports are not compared")
	case strings.Contains(h, "*"):
		return errors.New("wildcards are not supported; list each host name")
	}
	for _, r := range h {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '.' || r == '_') {
			return fmt.Errorf("%q is not allowed in a host name", r)
		}
	}
	return nil
}

// MinMetricsToken is the shortest --metrics-token taken.
const MinMetricsToken = 32

// AccessLogLevel returns whether the access log is on and the level its
// lines are logged at.
func (c Config) AccessLogLevel() (on bool, level slog.Level, err error) {
	switch c.AccessLog {
	case "off":
		return false, 0, nil
	case "info":
		return true, slog.LevelInfo, nil
	case "debug":
		return true, slog.LevelDebug, nil
	}
	return false, 0, fmt.Errorf("access-log %q: want off, info or debug", c.AccessLog)
}

// Level returns the slog level named by LogLevel.
func (c Config) Level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return l, fmt.Errorf("log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	return l, nil
}

// Logger builds the process logger on stderr.
func (c Config) Logger() *slog.Logger {
	level, _ := c.Level()
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
