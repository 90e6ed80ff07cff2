package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLoad(t *testing.T) {
	c, err := Load(nil, env(nil))
	if err != nil || !reflect.DeepEqual(c, Default()) {
		t.Fatalf("no flags, no env: %+v, %v; want the defaults", c, err)
	}
	c, err = Load(nil, env(map[string]string{"STRATA_ADDR": "127.0.0.1:9999", "STRATA_DATA": "/srv/strata", "STRATA_RATE_LIMIT": "50", "STRATA_SPOOL": "false"}))
	if err != nil || c.Addr != "127.0.0.1:9999" || c.DataDir != "/srv/strata" || c.RateLimitPerMinute != 50 || c.Spool {
		t.Fatalf("env: %+v, %v", c, err)
	}
	// Flags win over the environment.
	c, err = Load([]string{"--addr", "127.0.0.1:1", "--commit-linger", "3ms"}, env(map[string]string{"STRATA_ADDR": "127.0.0.1:9999"}))
	if err != nil || c.Addr != "127.0.0.1:1" || c.CommitLinger != 3*time.Millisecond {
		t.Fatalf("flags: %+v, %v", c, err)
	}
	c, err = Load([]string{"--meta", "postgres://u@127.0.0.1:5432/strata"}, env(map[string]string{"STRATA_EVENTS_URL": "clickhouse://127.0.0.1:9000/strata"}))
	if err != nil || c.EventsURL != "clickhouse://127.0.0.1:9000/strata" || c.MetaURL != "postgres://u@127.0.0.1:5432/strata" {
		t.Fatalf("store URLs: %+v, %v", c, err)
	}
	if c.AnnotationRateLimit != 60 {
		t.Errorf("annotation rate limit %d, want the default 60", c.AnnotationRateLimit)
	}
	c, err = Load([]string{"--annotation-rate-limit", "5"}, env(map[string]string{"STRATA_ANNOTATION_RATE_LIMIT": "30"}))
	if err != nil || c.AnnotationRateLimit != 5 {
		t.Fatalf("--annotation-rate-limit over the env: %+v, %v", c, err)
	}
	c, err = Load(nil, env(map[string]string{"STRATA_ANNOTATION_RATE_LIMIT": "30"}))
	if err != nil || c.AnnotationRateLimit != 30 {
		t.Fatalf("STRATA_ANNOTATION_RATE_LIMIT: %+v, %v", c, err)
	}
	if d := Default(); d.ShareRateLimit != 600 || d.SharePasswordRateLimit != 10 || d.SharedLinkLimit != 50 {
		t.Errorf("share limits %d %d %d, want the defaults 600 10 50", d.ShareRateLimit, d.SharePasswordRateLimit, d.SharedLinkLimit)
	}
	c, err = Load([]string{"--share-rate-limit", "7", "--shared-link-limit", "2"},
		env(map[string]string{"STRATA_SHARE_RATE_LIMIT": "30", "STRATA_SHARE_PASSWORD_RATE_LIMIT": "4"}))
	if err != nil || c.ShareRateLimit != 7 || c.SharePasswordRateLimit != 4 || c.SharedLinkLimit != 2 {
		t.Fatalf("share limits from flags and env: %+v, %v", c, err)
	}
	if d := Default(); d.GoalLimit != 20 {
		t.Errorf("goal limit %d, want the default 20", d.GoalLimit)
	}
	if c, err = Load([]string{"--goal-limit", "3"}, env(map[string]string{"STRATA_GOAL_LIMIT": "30"})); err != nil || c.GoalLimit != 3 {
		t.Fatalf("--goal-limit over STRATA_GOAL_LIMIT: %d, %v", c.GoalLimit, err)
	}
	if c, err = Load(nil, env(map[string]string{"STRATA_GOAL_LIMIT": "30"})); err != nil || c.GoalLimit != 30 {
		t.Fatalf("STRATA_GOAL_LIMIT: %d, %v", c.GoalLimit, err)
	}
	if d := Default(); d.ErrorAliasLimit != 1000 {
		t.Errorf("error alias limit %d, want the default 1000", d.ErrorAliasLimit)
	}
	c, err = Load([]string{"--error-alias-limit", "5"}, env(map[string]string{"STRATA_ERROR_ALIAS_LIMIT": "30"}))
	if err != nil || c.ErrorAliasLimit != 5 {
		t.Fatalf("--error-alias-limit over the env: %+v, %v", c, err)
	}
	if c, err = Load(nil, env(map[string]string{"STRATA_ERROR_ALIAS_LIMIT": "30"})); err != nil || c.ErrorAliasLimit != 30 {
		t.Fatalf("STRATA_ERROR_ALIAS_LIMIT: %+v, %v", c, err)
	}
	if _, err := Load([]string{"--error-alias-limit", "-1"}, env(nil)); err == nil {
		t.Error("a negative --error-alias-limit was taken")
	}
	if d := Default(); d.SourcemapRateLimit != 60 || d.SourcemapQuotaCount != 1000 || d.SourcemapQuotaBytes != 1<<30 {
		t.Errorf("sourcemap defaults: %d a minute, %d uploads, %v", d.SourcemapRateLimit, d.SourcemapQuotaCount, d.SourcemapQuotaBytes)
	}
	c, err = Load([]string{"--sourcemap-rate-limit", "5", "--sourcemap-quota-bytes", "0"}, env(map[string]string{
		"STRATA_SOURCEMAP_RATE_LIMIT": "30", "STRATA_SOURCEMAP_QUOTA_COUNT": "7", "STRATA_SOURCEMAP_QUOTA_BYTES": "2GB"}))
	if err != nil || c.SourcemapRateLimit != 5 || c.SourcemapQuotaCount != 7 || c.SourcemapQuotaBytes != 0 {
		t.Fatalf("sourcemap limits, flags over env: %+v, %v", c, err)
	}
	if d := Default(); d.PersonsPerProduct != 10_000_000 {
		t.Errorf("persons per product by default: %d", d.PersonsPerProduct)
	}
	if c, err := Load(nil, env(map[string]string{"STRATA_PERSONS_PER_PRODUCT": "0"})); err != nil || c.PersonsPerProduct != 0 {
		t.Errorf("no persons cap from the environment: %+v, %v", c.PersonsPerProduct, err)
	}
	if d := Default(); d.MinFreeDisk != 256<<20 {
		t.Errorf("default min free disk %v; want 256MB", d.MinFreeDisk)
	}
	c2, err := Load([]string{"--min-free-disk", "0"}, env(map[string]string{"STRATA_MIN_FREE_DISK": "1GB"}))
	if err != nil || c2.MinFreeDisk != 0 {
		t.Errorf("--min-free-disk 0 over the env: %v, %v", c2.MinFreeDisk, err)
	}
	if c2, err = Load(nil, env(map[string]string{"STRATA_MIN_FREE_DISK": "1GB"})); err != nil || c2.MinFreeDisk != 1<<30 {
		t.Errorf("STRATA_MIN_FREE_DISK: %v, %v", c2.MinFreeDisk, err)
	}
	if d := Default(); d.MinFreeInodes != 10_000 {
		t.Errorf("default min free inodes %d; want 10000", d.MinFreeInodes)
	}
	if c2, err = Load([]string{"--min-free-inodes", "0"}, env(map[string]string{"STRATA_MIN_FREE_INODES": "500"})); err != nil || c2.MinFreeInodes != 0 {
		t.Errorf("--min-free-inodes 0 over the env: %v, %v", c2.MinFreeInodes, err)
	}
	if c2, err = Load(nil, env(map[string]string{"STRATA_MIN_FREE_INODES": "500"})); err != nil || c2.MinFreeInodes != 500 {
		t.Errorf("STRATA_MIN_FREE_INODES: %v, %v", c2.MinFreeInodes, err)
	}
	if c.MaxBodyMemory != 64<<20 || c.ReadTimeout != 30*time.Second {
		t.Errorf("defaults: max body memory %v, read timeout %v; want 64MB and 30s", c.MaxBodyMemory, c.ReadTimeout)
	}
	c, err = Load([]string{"--max-body-memory", "2MB", "--read-timeout", "1s"}, env(map[string]string{"STRATA_MAX_BODY_MEMORY": "1GB", "STRATA_READ_TIMEOUT": "5s"}))
	if err != nil || c.MaxBodyMemory != 2<<20 || c.ReadTimeout != time.Second {
		t.Fatalf("--max-body-memory and --read-timeout over the env: %+v, %v", c, err)
	}
	c, err = Load(nil, env(map[string]string{"STRATA_MAX_BODY_MEMORY": "1GB", "STRATA_READ_TIMEOUT": "5s"}))
	if err != nil || c.MaxBodyMemory != 1<<30 || c.ReadTimeout != 5*time.Second {
		t.Fatalf("STRATA_MAX_BODY_MEMORY and STRATA_READ_TIMEOUT: %+v, %v", c, err)
	}
	c, err = Load([]string{"--query-concurrency", "3", "--query-wait", "2s"}, env(map[string]string{
		"STRATA_QUERY_CONCURRENCY": "8", "STRATA_QUERY_QUEUE": "5", "STRATA_QUERY_WAIT": "30s", "STRATA_QUERY_RATE_LIMIT": "40"}))
	if err != nil || c.QueryConcurrency != 3 || c.QueryQueue != 5 || c.QueryWait != 2*time.Second || c.QueryRateLimit != 40 {
		t.Fatalf("query admission and rate limit, flags over env: %+v, %v", c, err)
	}
	if d := Default(); d.QueryConcurrency < 1 || d.QueryQueue != 64 || d.QueryWait != 10*time.Second || d.QueryRateLimit != 600 {
		t.Errorf("query defaults: %+v", d)
	}
	if c2, err = Load(nil, env(map[string]string{"STRATA_LIVE_CACHE": "5s"})); err != nil || c2.LiveCache != 5*time.Second || Default().LiveCache != 3*time.Second {
		t.Errorf("STRATA_LIVE_CACHE: %v, %v (default %v)", c2.LiveCache, err, Default().LiveCache)
	}
	for _, bad := range []string{"500ms", "2m"} {
		if _, err := Load([]string{"--live-cache", bad}, env(nil)); err == nil || !strings.Contains(err.Error(), "live-cache") {
			t.Errorf("--live-cache %s: %v, want refused", bad, err)
		}
	}
	if d := Default(); d.ReplayMaxSessionBytes != 50<<20 {
		t.Errorf("default replay session cap %v; want 50MB", d.ReplayMaxSessionBytes)
	}
	if c2, err = Load([]string{"--replay-max-session-bytes", "0"}, env(map[string]string{"STRATA_REPLAY_MAX_SESSION_BYTES": "2MB"})); err != nil || c2.ReplayMaxSessionBytes != 0 {
		t.Errorf("--replay-max-session-bytes 0 over the env: %v, %v", c2.ReplayMaxSessionBytes, err)
	}
	if c2, err = Load(nil, env(map[string]string{"STRATA_REPLAY_MAX_SESSION_BYTES": "2MB"})); err != nil || c2.ReplayMaxSessionBytes != 2<<20 {
		t.Errorf("STRATA_REPLAY_MAX_SESSION_BYTES: %v, %v", c2.ReplayMaxSessionBytes, err)
	}
	if d := Default(); d.ReplayMaxSessions != 100_000 {
		t.Errorf("default replay sessions cap %v; want 100,000", d.ReplayMaxSessions)
	}
	if c2, err = Load([]string{"--replay-max-sessions", "0"}, env(map[string]string{"STRATA_REPLAY_MAX_SESSIONS": "500"})); err != nil || c2.ReplayMaxSessions != 0 {
		t.Errorf("--replay-max-sessions 0 over the env: %v, %v", c2.ReplayMaxSessions, err)
	}
	if c2, err = Load(nil, env(map[string]string{"STRATA_REPLAY_MAX_SESSIONS": "500"})); err != nil || c2.ReplayMaxSessions != 500 {
		t.Errorf("STRATA_REPLAY_MAX_SESSIONS: %v, %v", c2.ReplayMaxSessions, err)
	}
	if _, err = Load([]string{"--replay-max-sessions", "-1"}, env(nil)); err == nil || !strings.Contains(err.Error(), "replay-max-sessions") {
		t.Errorf("--replay-max-sessions -1: %v", err)
	}
	if c2, err = Load([]string{"--replay-max-sessions", "10"}, env(nil)); err != nil || c2.ReplayMaxSessions != 10 {
		t.Errorf("--replay-max-sessions 10, the least: %v, %v", c2.ReplayMaxSessions, err)
	}
	if c.ShutdownTimeout != 20*time.Second {
		t.Errorf("shutdown timeout %v", c.ShutdownTimeout)
	}
}

func TestLoadRejects(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--addr", "nonsense"}, nil, "addr"},
		{[]string{"--rate-limit", "0"}, nil, "rate-limit"},
		{[]string{"--log-level", "loud"}, nil, "log-level"},
		{[]string{"--log-format", "xml"}, nil, "log-format"},
		{[]string{"--data", ""}, nil, "data directory"},
		{[]string{"extra"}, nil, "unexpected"},
		{[]string{"--events", "http://127.0.0.1:8123"}, nil, "events"},
		{nil, map[string]string{"STRATA_META_URL": "mysql://x"}, "meta"},
		{nil, map[string]string{"STRATA_RATE_LIMIT": "many"}, "STRATA_RATE_LIMIT"},
		{[]string{"--annotation-rate-limit", "0"}, nil, "annotation-rate-limit"},
		{nil, map[string]string{"STRATA_ANNOTATION_RATE_LIMIT": "fast"}, "STRATA_ANNOTATION_RATE_LIMIT"},
		{[]string{"--sourcemap-rate-limit", "0"}, nil, "sourcemap-rate-limit"},
		{[]string{"--share-rate-limit", "0"}, nil, "share-rate-limit"},
		{nil, map[string]string{"STRATA_SHARE_PASSWORD_RATE_LIMIT": "0"}, "share-password-rate-limit"},
		{[]string{"--shared-link-limit", "0"}, nil, "shared-link-limit"},
		{[]string{"--goal-limit", "0"}, nil, "goal-limit"},
		{nil, map[string]string{"STRATA_GOAL_LIMIT": "101"}, "goal-limit"},
		{[]string{"--sourcemap-quota-count", "-1"}, nil, "sourcemap-quota-count"},
		{[]string{"--persons-per-product", "-1"}, nil, "persons-per-product"},
		{nil, map[string]string{"STRATA_SOURCEMAP_QUOTA_BYTES": "huge"}, "STRATA_SOURCEMAP_QUOTA_BYTES"},
		{[]string{"--max-body-memory", "lots"}, nil, "max-body-memory"},
		{[]string{"--max-body-memory", "512KB"}, nil, "max-body-memory"},
		{nil, map[string]string{"STRATA_MAX_BODY_MEMORY": "-1MB"}, "STRATA_MAX_BODY_MEMORY"},
		{[]string{"--min-free-disk", "plenty"}, nil, "min-free-disk"},
		{nil, map[string]string{"STRATA_MIN_FREE_DISK": "1.5GB"}, "STRATA_MIN_FREE_DISK"},
		{[]string{"--min-free-inodes", "-1"}, nil, "min-free-inodes"},
		{nil, map[string]string{"STRATA_MIN_FREE_INODES": "some"}, "STRATA_MIN_FREE_INODES"},
		{[]string{"--replay-max-session-bytes", "1KB"}, nil, "replay-max-session-bytes"},
		{nil, map[string]string{"STRATA_REPLAY_MAX_SESSION_BYTES": "big"}, "STRATA_REPLAY_MAX_SESSION_BYTES"},
		{[]string{"--replay-max-sessions", "1"}, nil, "replay-max-sessions 1: must be 0 (no cap) or at least 10"},
		{nil, map[string]string{"STRATA_REPLAY_MAX_SESSIONS": "9"}, "replay-max-sessions 9"},
		{[]string{"--read-timeout", "0s"}, nil, "read-timeout"},
		{nil, map[string]string{"STRATA_READ_TIMEOUT": "soon"}, "STRATA_READ_TIMEOUT"},
		{[]string{"--query-concurrency", "0"}, nil, "query-concurrency"},
		{[]string{"--query-queue", "-1"}, nil, "query-queue"},
		{[]string{"--query-wait", "0s"}, nil, "query-wait"},
		{nil, map[string]string{"STRATA_QUERY_WAIT": "soon"}, "STRATA_QUERY_WAIT"},
		{[]string{"--query-rate-limit", "0"}, nil, "query-rate-limit"},
		{[]string{"--allowed-hosts", "analytics.example.com:443"}, nil, "without a port"},
		{[]string{"--allowed-hosts", "https://analytics.example.com"}, nil, "not a URL"},
		{nil, map[string]string{"STRATA_ALLOWED_HOSTS": "*.example.com"}, "wildcards"},
		{[]string{"--allowed-hosts", "a b.example"}, nil, "allowed-hosts"},
	}
	for _, c := range cases {
		if _, err := Load(c.args, env(c.env)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%v, %v) = %v; want an error about %s", c.args, c.env, err, c.want)
		}
	}
}

// TestErrorTrackingFlag checks that the dashboard's Errors page is on only
// when NEXT_PUBLIC_FEATURE_ERROR_TRACKING is exactly "true".
func TestErrorTrackingFlag(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"NEXT_PUBLIC_FEATURE_ERROR_TRACKING": "true"}, true},
		{map[string]string{"NEXT_PUBLIC_FEATURE_ERROR_TRACKING": "false"}, false},
		{map[string]string{"NEXT_PUBLIC_FEATURE_ERROR_TRACKING": "1"}, false},
		{map[string]string{"NEXT_PUBLIC_FEATURE_ERROR_TRACKING": ""}, false},
	} {
		c2, err := Load(nil, env(c.env))
		if err != nil || c2.ErrorTracking != c.want {
			t.Errorf("env %v: ErrorTracking = %v, %v; want %v", c.env, c2.ErrorTracking, err, c.want)
		}
	}
}

// TestByteSize checks the sizes --max-body-memory takes and how they print.
func TestByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ByteSize
		out  string
	}{
		{"64MB", 64 << 20, "64MB"},
		{"64MiB", 64 << 20, "64MB"},
		{"64mb", 64 << 20, "64MB"},
		{"512KB", 512 << 10, "512KB"},
		{"1GB", 1 << 30, "1GB"},
		{"1536KB", 1536 << 10, "1536KB"},
		{"1048576", 1 << 20, "1MB"},
		{"1000", 1000, "1000"},
		{"10B", 10, "10"},
	} {
		var b ByteSize
		if err := b.Set(c.in); err != nil || b != c.want || b.String() != c.out {
			t.Errorf("%q: %d (%v) printed %q; want %d printed %q", c.in, b, err, b.String(), c.want, c.out)
		}
	}
	for _, bad := range []string{"", "MB", "1.5MB", "-1", "lots", "1TB", "99999999999GB"} {
		var b ByteSize
		if err := b.Set(bad); err == nil {
			t.Errorf("%q parsed as %d", bad, b)
		}
	}
}

// TestAllowedHosts checks that --allowed-hosts and STRATA_ALLOWED_HOSTS give
// the host names in one spelling, and that none means no check.
func TestAllowedHosts(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{nil, nil, nil},
		{nil, map[string]string{"STRATA_ALLOWED_HOSTS": " , "}, nil},
		{nil, map[string]string{"STRATA_ALLOWED_HOSTS": "Analytics.Example.com, 127.0.0.1"}, []string{"analytics.example.com", "127.0.0.1"}},
		{[]string{"--allowed-hosts", "localhost,[::1],analytics.example.com."}, map[string]string{"STRATA_ALLOWED_HOSTS": "other.example"},
			[]string{"localhost", "::1", "analytics.example.com"}},
	} {
		got, err := Load(c.args, env(c.env))
		if err != nil || !slices.Equal(got.AllowedHosts, c.want) {
			t.Errorf("Load(%v, %v): allowed hosts %q, %v; want %q", c.args, c.env, got.AllowedHosts, err, c.want)
		}
	}
}

// TestAlertFlags checks --alert-interval (one minute by default, at least
// a second, from STRATA_ALERT_INTERVAL) and --public-url (an http(s) URL).
func TestAlertFlags(t *testing.T) {
	if d := Default(); d.AlertInterval != time.Minute || d.PublicURL != "" {
		t.Errorf("defaults: %v %q", d.AlertInterval, d.PublicURL)
	}
	c, err := Load(nil, env(map[string]string{"STRATA_ALERT_INTERVAL": "1s", "STRATA_PUBLIC_URL": "https://analytics.example.com"}))
	if err != nil || c.AlertInterval != time.Second || c.PublicURL != "https://analytics.example.com" {
		t.Errorf("env: %v %q %v", c.AlertInterval, c.PublicURL, err)
	}
	if c, err = Load([]string{"--alert-interval", "2m"}, env(map[string]string{"STRATA_ALERT_INTERVAL": "1s"})); err != nil || c.AlertInterval != 2*time.Minute {
		t.Errorf("the flag over the env: %v %v", c.AlertInterval, err)
	}
	for _, args := range [][]string{{"--alert-interval", "500ms"}, {"--public-url", "analytics.example.com"}, {"--public-url", "ftp://x"}} {
		if _, err := Load(args, env(nil)); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestAlertWebhookAllow checks --alert-webhook-allow: empty by default,
// addresses and prefixes from STRATA_ALERT_WEBHOOK_ALLOW, the flag over
// the environment, and anything else refused.
func TestAlertWebhookAllow(t *testing.T) {
	if d := Default(); len(d.AlertWebhookAllow) != 0 {
		t.Errorf("default: %v", d.AlertWebhookAllow)
	}
	c, err := Load(nil, env(map[string]string{"STRATA_ALERT_WEBHOOK_ALLOW": "100.100.100.200, fd00:ec2::/64,169.254.10.7/24,fe80::1%eth0"}))
	if err != nil || c.AlertWebhookAllow.String() != "100.100.100.200/32,fd00:ec2::/64,169.254.10.0/24,fe80::1/128" {
		t.Errorf("env: %v, %v", c.AlertWebhookAllow, err)
	}
	c, err = Load([]string{"--alert-webhook-allow", "192.0.0.192"}, env(map[string]string{"STRATA_ALERT_WEBHOOK_ALLOW": "100.100.100.200"}))
	if err != nil || c.AlertWebhookAllow.String() != "192.0.0.192/32" {
		t.Errorf("the flag over the env: %v, %v", c.AlertWebhookAllow, err)
	}
	if _, err := Load([]string{"--alert-webhook-allow", "metadata.internal"}, env(nil)); err == nil {
		t.Error("a host name accepted")
	}
	if _, err := Load(nil, env(map[string]string{"STRATA_ALERT_WEBHOOK_ALLOW": "10.0.0.0/33"})); err == nil || !strings.HasPrefix(err.Error(), "STRATA_ALERT_WEBHOOK_ALLOW: ") {
		t.Errorf("a bad prefix in the environment: %v", err)
	}
}

// TestGeoIP checks --geoip-db and --trusted-proxies: none by default (the
// embedded database, X-Forwarded-For ignored), each from its STRATA_
// variable, the flag over the environment, a bad prefix refused.
func TestGeoIP(t *testing.T) {
	if d := Default(); d.GeoIPDB != "" || len(d.TrustedProxies) != 0 {
		t.Errorf("default: %q, %v", d.GeoIPDB, d.TrustedProxies)
	}
	c, err := Load(nil, env(map[string]string{"STRATA_GEOIP_DB": "/var/lib/GeoLite2-City.mmdb", "STRATA_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8"}))
	if err != nil || c.GeoIPDB != "/var/lib/GeoLite2-City.mmdb" || c.TrustedProxies.String() != "127.0.0.1/32,10.0.0.0/8" {
		t.Errorf("env: %q, %v, %v", c.GeoIPDB, c.TrustedProxies, err)
	}
	c, err = Load([]string{"--geoip-db", "city.mmdb", "--trusted-proxies", "::1"}, env(map[string]string{"STRATA_GEOIP_DB": "x", "STRATA_TRUSTED_PROXIES": "10.0.0.0/8"}))
	if err != nil || c.GeoIPDB != "city.mmdb" || c.TrustedProxies.String() != "::1/128" {
		t.Errorf("the flags over the env: %q, %v, %v", c.GeoIPDB, c.TrustedProxies, err)
	}
	if _, err := Load(nil, env(map[string]string{"STRATA_TRUSTED_PROXIES": "proxy.internal"})); err == nil || !strings.HasPrefix(err.Error(), "STRATA_TRUSTED_PROXIES: ") {
		t.Errorf("a host name in the environment: %v", err)
	}
}

// TestLoadNamesTheFirstBadVariable sets three variables that do not parse,
// a number, a size and a list of prefixes: the error names the first of
// them, as the flags list them, and not the last.
func TestLoadNamesTheFirstBadVariable(t *testing.T) {
	_, err := Load(nil, env(map[string]string{"STRATA_RATE_LIMIT": "many", "STRATA_ALERT_WEBHOOK_ALLOW": "10.0.0.0/33", "STRATA_MAX_BODY_MEMORY": "lots"}))
	if err == nil || !strings.HasPrefix(err.Error(), "STRATA_RATE_LIMIT: ") {
		t.Errorf("three bad variables: %v; want STRATA_RATE_LIMIT's error", err)
	}
	_, err = Load(nil, env(map[string]string{"STRATA_ALERT_WEBHOOK_ALLOW": "10.0.0.0/33", "STRATA_MAX_BODY_MEMORY": "lots"}))
	if err == nil || !strings.HasPrefix(err.Error(), "STRATA_ALERT_WEBHOOK_ALLOW: ") {
		t.Errorf("two bad variables: %v; want STRATA_ALERT_WEBHOOK_ALLOW's error", err)
	}
}

// TestSMTPFlags checks --smtp-url and --smtp-from: off by default, read
// from STRATA_SMTP_URL and STRATA_SMTP_FROM, and a URL that is not
// smtp:// or smtps://, or a URL without a sender, refused at start.
func TestSMTPFlags(t *testing.T) {
	if d := Default(); d.SMTPURL != "" || d.SMTPFrom != "" {
		t.Errorf("defaults: %q %q", d.SMTPURL, d.SMTPFrom)
	}
	c, err := Load(nil, env(map[string]string{"STRATA_SMTP_URL": "smtp://u:p@mail.example.com:587", "STRATA_SMTP_FROM": "strata@example.com"}))
	if err != nil || c.SMTPURL != "smtp://u:p@mail.example.com:587" || c.SMTPFrom != "strata@example.com" {
		t.Errorf("env: %q %q %v", c.SMTPURL, c.SMTPFrom, err)
	}
	for _, args := range [][]string{
		{"--smtp-url", "http://mail.example.com", "--smtp-from", "strata@example.com"},
		{"--smtp-url", "smtp://mail.example.com"},
		{"--smtp-url", "smtp://mail.example.com", "--smtp-from", "x\r\nBcc: y@example.com"},
	} {
		if _, err := Load(args, env(nil)); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestRetentionInterval checks --retention-interval: an hour by default,
// from STRATA_RETENTION_INTERVAL, the flag over the env, at least a
// second.
func TestRetentionInterval(t *testing.T) {
	if d := Default(); d.RetentionInterval != time.Hour {
		t.Errorf("default: %v", d.RetentionInterval)
	}
	c, err := Load(nil, env(map[string]string{"STRATA_RETENTION_INTERVAL": "5s"}))
	if err != nil || c.RetentionInterval != 5*time.Second {
		t.Errorf("env: %v %v", c.RetentionInterval, err)
	}
	if c, err = Load([]string{"--retention-interval", "2m"}, env(map[string]string{"STRATA_RETENTION_INTERVAL": "5s"})); err != nil || c.RetentionInterval != 2*time.Minute {
		t.Errorf("the flag over the env: %v %v", c.RetentionInterval, err)
	}
	if _, err := Load([]string{"--retention-interval", "500ms"}, env(nil)); err == nil {
		t.Error("--retention-interval 500ms accepted")
	}
}
