package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// logLine is one JSON line of the server's log.
type logLine map[string]any

// logLines parses the server's log, one JSON object a line.
func logLines(t *testing.T, s *server) []logLine {
	t.Helper()
	var lines []logLine
	sc := bufio.NewScanner(strings.NewReader(s.Logs()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("a log line is not JSON: %q", sc.Text())
		}
		lines = append(lines, l)
	}
	return lines
}

// accessLines are the log's access lines with the given request id.
func withRequestID(lines []logLine, id string) (access, other []logLine) {
	for _, l := range lines {
		if l["request_id"] != id {
			continue
		}
		if l["msg"] == "request" {
			access = append(access, l)
		} else {
			other = append(other, l)
		}
	}
	return access, other
}

// TestAccessLogAndRequestID starts the server with the JSON log and checks
// docs/operations.md, "Logs": one access line per request with its method,
// route (the pattern, not the path), status, duration, bytes and, on
// ingest, product; a valid X-Request-Id is echoed and logged, an invalid
// one replaced by a fresh id; the line a 5xx logs carries the request's id;
// and no key, token, cookie, query string or client address is in the log.
func TestAccessLogAndRequestID(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--access-log-sample", "1")
	first := s
	key := s.BootstrapKey
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", strconv.FormatInt(s.ProductID, 10)))

	type sent struct {
		id     string // X-Request-Id sent, "" for none
		echoed string
		method string
		route  string
		status int
	}
	var all []sent
	send := func(method, path string, body []byte, h map[string]string, route string) sent {
		t.Helper()
		r := do(t, method, s.URL+path, body, h)
		got := sent{id: h["X-Request-Id"], echoed: r.Header.Get("X-Request-Id"), method: method, route: route, status: r.Status}
		if got.echoed == "" {
			t.Errorf("%s %s: no X-Request-Id in the answer", method, path)
		}
		all = append(all, got)
		return got
	}
	events, _ := json.Marshal(map[string]any{"batch": []map[string]any{ev("signup", "u1")}})
	jsonKey := map[string]string{"Content-Type": "application/json", "X-API-Key": key, "X-Request-Id": "trace-4bf92f3577b34da6"}
	if r := send("POST", "/e", events, jsonKey, "POST /e"); r.echoed != "trace-4bf92f3577b34da6" || r.status != 202 {
		t.Errorf("ingest with a request id: %d, echoed %q", r.status, r.echoed)
	}
	// A beacon's key in the query string, a session cookie: neither may
	// reach the log.
	beacon := send("POST", "/e?api_key="+key, events, map[string]string{"Content-Type": "text/plain", "Cookie": "strata_session=cookie-secret-value",
		"X-Request-Id": "has spaces and \"quotes\""}, "POST /e")
	if beacon.echoed == beacon.id || len(beacon.echoed) != 32 {
		t.Errorf("an invalid X-Request-Id was echoed as %q; want a fresh 32-character id", beacon.echoed)
	}
	long := strings.Repeat("a", 129)
	if r := send("GET", "/api/v1/version", nil, map[string]string{"X-Request-Id": long}, "GET /api/v1/version"); r.echoed == long {
		t.Error("an X-Request-Id over 128 characters was echoed")
	}
	trend, _ := json.Marshal(map[string]any{"series": []map[string]any{{"event": "signup"}}})
	send("POST", "/api/v1/query/trend", trend, map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}, "POST /api/v1/query/trend")
	send("GET", "/api/v1/queries/12345", nil, map[string]string{"Authorization": "Bearer " + token}, "GET /api/v1/queries/{id}")
	send("GET", "/share/not-a-real-secret-0123456789", nil, nil, "GET /share/{secret}")
	s.Stop()

	// Restarted with a free-space floor above what the disk has, ingest
	// answers 503 storage_full, which the server logs.
	s = startServer(t, dir, "--min-free-disk", "1000000GB")
	failed := send("POST", "/e", events, map[string]string{"Content-Type": "application/json", "X-API-Key": key, "X-Request-Id": "req-5xx-1"}, "POST /e")
	if failed.status != 503 {
		t.Fatalf("ingest above the floor: %d; want 503", failed.status)
	}
	s.Stop()
	lines := append(logLines(t, first), logLines(t, s)...)

	// Sampled: 1 in 4 of the answered ingest requests has a line, which
	// says so; every refused one has its line.
	sampled := startServer(t, dir, "--access-log-sample", "4")
	for range 8 {
		if r := postEvents(t, sampled, key, ev("sampled", "u2")); r.Status != 202 {
			t.Fatalf("ingest: %d %s", r.Status, r.Body)
		}
	}
	for range 2 {
		if r := postEvents(t, sampled, "st_live_00000000000000000000000000000000", ev("sampled", "u2")); r.Status != 401 {
			t.Fatalf("ingest with an unknown key: %d %s", r.Status, r.Body)
		}
	}
	sampled.Stop()
	var answered, refused int
	for _, l := range logLines(t, sampled) {
		switch {
		case l["msg"] != "request":
		case l["status"] == float64(202) && l["sample"] == float64(4):
			answered++
		case l["status"] == float64(401) && l["sample"] == nil:
			refused++
		default:
			t.Errorf("unexpected access line %v", l)
		}
	}
	if answered != 2 || refused != 2 {
		t.Errorf("with --access-log-sample 4: %d lines of 8 answered ingest requests (want 2), %d of 2 refused (want 2)", answered, refused)
	}

	accessLines := 0
	for _, l := range lines {
		if l["msg"] == "request" {
			accessLines++
		}
	}
	if accessLines != len(all) {
		t.Errorf("%d access lines for %d requests", accessLines, len(all))
	}
	for _, r := range all {
		access, _ := withRequestID(lines, r.echoed)
		if len(access) != 1 {
			t.Errorf("%s %s (%s): %d access lines with its id; want 1", r.method, r.route, r.echoed, len(access))
			continue
		}
		l := access[0]
		if l["method"] != r.method || l["route"] != r.route || l["status"] != float64(r.status) {
			t.Errorf("access line %v; want method %s, route %q, status %d", l, r.method, r.route, r.status)
		}
		for _, f := range []string{"duration_ms", "bytes_in", "bytes_out"} {
			if _, ok := l[f].(float64); !ok {
				t.Errorf("access line %v: no number %s", l, f)
			}
		}
		if r.route == "POST /e" && l["product"] != float64(first.ProductID) {
			t.Errorf("ingest access line %v: product is not %d", l, first.ProductID)
		}
	}
	_, caused := withRequestID(lines, "req-5xx-1")
	if len(caused) != 1 || caused[0]["status"] != float64(503) || caused[0]["route"] != "POST /e" {
		t.Errorf("the 503's lines with its request id besides the access line: %v; want its \"request refused\" line", caused)
	}

	// Nothing secret: the key only on the bootstrap line that hands it to
	// the owner, no token, cookie, query string, shared-link path or
	// client address on any line a request caused.
	for _, l := range lines {
		raw, _ := json.Marshal(l)
		text := string(raw)
		if strings.Contains(text, key) && l["api_key"] != key {
			t.Errorf("the API key is in a log line: %s", text)
		}
		for _, secret := range []string{token, "cookie-secret-value", "api_key=", "not-a-real-secret"} {
			if strings.Contains(text, secret) {
				t.Errorf("%q is in a log line: %s", secret, text)
			}
		}
		if strings.Contains(text, "127.0.0.1") && l["msg"] != "listening" && !strings.HasPrefix(fmt.Sprint(l["msg"]), "first-run setup") {
			t.Errorf("an address is in a log line: %s", text)
		}
	}
}

// freeAddr is a loopback address with a port free at the time of asking.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrape reads a metrics page: each sample by its series as the text
// format prints it (name{label="value",…}, labels in name order).
func scrape(t *testing.T, url string, header map[string]string) (int, map[string]float64) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// Not the suite's contract-checking client: /metrics is the
	// Prometheus format, not the API's.
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	samples := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			samples[line[:i]] = v
		}
	}
	return resp.StatusCode, samples
}

// metricName finds the names of the metrics a dashboard or a rule uses:
// Strata's own, and the Go and process collectors' the docs name whole.
var metricName = regexp.MustCompile(`\b(?:strata|go_memstats|process)_[a-z_]+[a-z]\b`)

// TestMetrics drives the server and watches its metrics move
// (docs/operations.md, "Monitoring"): served on --metrics-addr only, not on
// the public address unless --metrics-token is set, and then to that
// bearer token only.
func TestMetrics(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	s := startServer(t, dir, "--metrics-addr", addr, "--rate-limit", "8")
	url := "http://" + addr + "/metrics"
	token := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", strconv.FormatInt(s.ProductID, 10)))
	_, before := scrape(t, url, nil)
	for _, series := range []string{"go_goroutines", "process_resident_memory_bytes", "strata_data_disk_free_bytes",
		"strata_data_disk_size_bytes", "strata_spool_backlog_events", "strata_spool_backlog_bytes", "strata_query_queue_length",
		`strata_query_refused_total`, `strata_rate_limited_total{limiter="query"}`, `strata_replay_stored_bytes_total`,
		`strata_webhook_deliveries_total{outcome="delivered"}`, `strata_cache_requests_total{cache="sourcemaps",result="hit"}`} {
		if _, ok := before[series]; !ok {
			t.Errorf("no %s in the metrics", series)
		}
	}
	if before["strata_data_disk_free_bytes"] <= 0 || before["strata_data_disk_size_bytes"] < before["strata_data_disk_free_bytes"] {
		t.Errorf("disk free %v of %v", before["strata_data_disk_free_bytes"], before["strata_data_disk_size_bytes"])
	}

	if r := postEvents(t, s, s.BootstrapKey, ev("a", "u1"), ev("b", "u1")); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	if r := postEvents(t, s, s.BootstrapKey, ev("a", "u1"), map[string]any{"distinct_id": "u1"}); r.Status != 202 {
		t.Fatalf("ingest in part: %d %s", r.Status, r.Body)
	}
	if r := postEvents(t, s, s.BootstrapKey, map[string]any{"event_name": "x"}); r.Status != 400 {
		t.Fatalf("ingest of an invalid event: %d %s", r.Status, r.Body)
	}
	if r := postEvents(t, s, "st_live_00000000000000000000000000000000", ev("a", "u1")); r.Status != 401 {
		t.Fatalf("ingest with an unknown key: %d %s", r.Status, r.Body)
	}
	// A replay chunk's data counts among the replay bytes stored.
	chunk := rrwebChunk(rand.New(rand.NewPCG(1, 2)), time.Now().UnixMilli(), 2000)
	if r := postEvents(t, s, s.BootstrapKey, chunkEvent("u3", "metrics-session", "w", 0, chunk)); r.Status != 202 {
		t.Fatalf("replay chunk: %d %s", r.Status, r.Body)
	}
	// Alert webhooks: a test delivery to a receiver, and one to a port
	// where nothing listens (worth a retry).
	rcv := newAlertReceiver(t)
	bearer := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
	for _, target := range []string{rcv.URL + "/hook", "http://127.0.0.1:1/nothing"} {
		body, _ := json.Marshal(map[string]any{"url": target})
		if r := do(t, "PUT", s.URL+"/api/v1/alerts/webhook", body, bearer); r.Status != 201 && r.Status != 200 {
			t.Fatalf("PUT webhook: %d %s", r.Status, r.Body)
		}
		if r := do(t, "POST", s.URL+"/api/v1/alerts/webhook/test", nil, bearer); r.Status != 200 {
			t.Fatalf("test delivery: %d %s", r.Status, r.Body)
		}
	}
	for i := 0; ; i++ {
		r := postEvents(t, s, s.BootstrapKey, ev("c", "u2"))
		if r.Status == 429 {
			break
		}
		if i > 10 {
			t.Fatal("ingest was never rate limited")
		}
	}
	trend, _ := json.Marshal(map[string]any{"series": []map[string]any{{"event": "a"}}})
	if r := do(t, "POST", s.URL+"/api/v1/query/trend", trend, map[string]string{"Authorization": "Bearer " + token}); r.Status != 200 {
		t.Fatalf("trend: %d %s", r.Status, r.Body)
	}
	for range 2 {
		if r := do(t, "GET", s.URL+"/api/v1/config?api_key="+s.BootstrapKey, nil, nil); r.Status != 200 {
			t.Fatalf("sdk config: %d %s", r.Status, r.Body)
		}
	}
	for range 2 {
		if r, _ := active(t, s, s.BootstrapKey, "u1", "/", nil); r.Status != 200 {
			t.Fatalf("active messages: %d %s", r.Status, r.Body)
		}
	}
	_, after := scrape(t, url, nil)
	// The Grafana dashboard and the alert rules of docs/operations.md use
	// only metrics the server serves.
	names := map[string]bool{}
	for series := range after {
		name, _, _ := strings.Cut(series, "{")
		names[name] = true
		// A histogram is named without the suffixes of its series.
		if base, ok := strings.CutSuffix(name, "_count"); ok {
			names[base] = true
		}
	}
	for _, file := range []string{"../deploy/grafana/strata.json", "../docs/operations.md"} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range metricName.FindAllString(string(text), -1) {
			if !names[name] {
				t.Errorf("%s uses %s, which the server does not serve", file, name)
			}
		}
	}
	moved := func(series string, least float64) {
		t.Helper()
		if d := after[series] - before[series]; d < least {
			t.Errorf("%s moved by %v; want at least %v", series, d, least)
		}
	}
	moved(`strata_ingest_requests_total{outcome="accepted"}`, 1)
	moved(`strata_ingest_requests_total{outcome="partial"}`, 1)
	moved(`strata_ingest_requests_total{outcome="rejected"}`, 1)
	moved(`strata_ingest_requests_total{outcome="unauthenticated"}`, 1)
	moved(`strata_ingest_requests_total{outcome="rate_limited"}`, 1)
	moved(`strata_ingest_events_total{outcome="accepted"}`, 3)
	moved(`strata_ingest_events_total{outcome="rejected"}`, 2)
	moved(`strata_ingest_rejections_total{reason="missing_event_name"}`, 1)
	moved(`strata_ingest_rejections_total{reason="missing_distinct_id"}`, 1)
	moved(`strata_commit_events_count`, 1)
	moved(`strata_commit_events_sum`, 3)
	moved(`strata_commit_duration_seconds_count`, 1)
	moved(`strata_http_requests_total{code="2xx",route="POST /e"}`, 2)
	moved(`strata_http_requests_total{code="4xx",route="POST /e"}`, 3)
	moved(`strata_http_requests_total{code="2xx",route="POST /api/v1/query/trend"}`, 1)
	moved(`strata_query_duration_seconds_count{kind="trend"}`, 1)
	moved(`strata_rate_limited_total{limiter="ingest"}`, 1)
	moved(`strata_cache_requests_total{cache="api_keys",result="hit"}`, 1)
	moved(`strata_cache_requests_total{cache="api_keys",result="miss"}`, 1)
	moved(`strata_cache_requests_total{cache="sdk_config",result="miss"}`, 1)
	moved(`strata_cache_requests_total{cache="sdk_config",result="hit"}`, 1)
	moved(`strata_cache_requests_total{cache="messages",result="miss"}`, 1)
	moved(`strata_cache_requests_total{cache="messages",result="hit"}`, 1)
	moved(`strata_replay_stored_bytes_total`, float64(len(chunk)))
	moved(`strata_webhook_deliveries_total{outcome="delivered"}`, 1)
	moved(`strata_webhook_deliveries_total{outcome="retry"}`, 1)

	// Without a metrics token the public address does not serve them.
	if code, public := scrape(t, s.URL+"/metrics", nil); len(public) > 0 && public["go_goroutines"] > 0 || code == 200 {
		t.Errorf("the public address served /metrics (%d) without --metrics-token", code)
	}
	s.Stop()

	const metricsToken = "0123456789abcdef0123456789abcdef-metrics"
	s = startServer(t, dir, "--metrics-token", metricsToken)
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer " + token}, {"Authorization": metricsToken}} {
		if code, m := scrape(t, s.URL+"/metrics", h); code != 401 || len(m) > 0 {
			t.Errorf("GET /metrics with %v: %d and %d samples; want 401", h, code, len(m))
		}
	}
	code, m := scrape(t, s.URL+"/metrics", map[string]string{"Authorization": "Bearer " + metricsToken})
	if _, ok := m["strata_commit_failures_total"]; code != 200 || !ok {
		t.Errorf("GET /metrics with the metrics token: %d, %d samples", code, len(m))
	}
}
