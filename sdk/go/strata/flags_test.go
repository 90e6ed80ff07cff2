package strata

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// vectors is testdata/assignment.json, a copy of the vectors every Strata
// implementation reproduces (the server module's internal/sdkgo tests fail
// when the copy differs from sdk/browser/test/assignment.json).
type vectors struct {
	Hash []struct {
		Input    string `json:"input"`
		Murmur32 uint32 `json:"murmur3_32"`
	} `json:"hash"`
	Bucket []struct {
		Salt       string `json:"salt"`
		FlagKey    string `json:"flagKey"`
		DistinctID string `json:"distinctId"`
		Bucket     int    `json:"bucket"`
	} `json:"bucket"`
	Assign []struct {
		Flag       string `json:"flag"`
		DistinctID string `json:"distinctId"`
		Variant    string `json:"variant"`
	} `json:"assign"`
	Flags     []*flagConfig `json:"flags"`
	Targeting []struct {
		Flag       string          `json:"flag"`
		DistinctID string          `json:"distinctId"`
		Properties map[string]any  `json:"properties"`
		Cohorts    map[string]bool `json:"cohorts"`
		Variant    string          `json:"variant"`
		Exposed    string          `json:"exposed"`
	} `json:"targeting"`
}

func readVectors(t *testing.T) vectors {
	t.Helper()
	raw, err := os.ReadFile("testdata/assignment.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAssignmentVectors reproduces every hash, bucket and assignment of the
// shared vectors, the last both through assign and through Variant against
// a server answering the vectors' flags as its configuration.
func TestAssignmentVectors(t *testing.T) {
	v := readVectors(t)
	for _, h := range v.Hash {
		if got := murmur3(h.Input); got != h.Murmur32 {
			t.Errorf("murmur3(%q) = %d, want %d", h.Input, got, h.Murmur32)
		}
	}
	for _, b := range v.Bucket {
		if got := bucket(b.Salt, b.FlagKey, b.DistinctID); got != b.Bucket {
			t.Errorf("bucket(%s, %s, %q) = %d, want %d", b.Salt, b.FlagKey, b.DistinctID, got, b.Bucket)
		}
	}
	byKey := map[string]*flagConfig{}
	for _, f := range v.Flags {
		byKey[f.Key] = f
	}
	cfg, _ := json.Marshal(map[string]any{"flags": v.Flags})
	srv := newFlagServer(t, cfg)
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour, DisableExposures: true})
	covered := map[string]bool{}
	for _, a := range v.Assign {
		got, ok := assign(byKey[a.Flag], a.DistinctID, nil, nil)
		if !ok {
			got.variant = "control"
		}
		if got.variant != a.Variant {
			t.Errorf("assign(%s, %q) = %s, want %s", a.Flag, a.DistinctID, got.variant, a.Variant)
		}
		if got := c.Variant(context.Background(), a.Flag, a.DistinctID); got != a.Variant {
			t.Errorf("Variant(%s, %q) = %s, want %s", a.Flag, a.DistinctID, got, a.Variant)
		}
		covered[a.Flag] = true
	}
	withCohorts := 0
	for _, a := range v.Targeting {
		got, ok := assign(byKey[a.Flag], a.DistinctID, a.Properties, a.Cohorts)
		if !ok {
			got = assignment{variant: "control"}
		}
		if got.variant != a.Variant || got.exposed != a.Exposed {
			t.Errorf("assign(%s, %q, %v, %v) = %s exposing %q, want %s exposing %q", a.Flag, a.DistinctID, a.Properties, a.Cohorts, got.variant, got.exposed, a.Variant, a.Exposed)
		}
		client := c
		if needsCohorts(byKey[a.Flag]) {
			// The user's cohorts come with the configuration for the user:
			// a server and a client of the vector's own.
			withCohorts++
			userCfg, _ := json.Marshal(map[string]any{"flags": v.Flags, "cohorts": a.Cohorts})
			client, _ = newTestClient(t, newFlagServer(t, userCfg).URL, Options{FlushInterval: time.Hour, DisableExposures: true})
		}
		if got := client.VariantWithProperties(context.Background(), a.Flag, a.DistinctID, a.Properties); got != a.Variant {
			t.Errorf("VariantWithProperties(%s, %q, %v) with cohorts %v = %s, want %s", a.Flag, a.DistinctID, a.Properties, a.Cohorts, got, a.Variant)
		}
		covered[a.Flag] = true
	}
	if withCohorts < 15 {
		t.Errorf("only %d targeting vectors have cohort conditions", withCohorts)
	}
	if len(covered) != len(byKey) {
		t.Errorf("the vectors assign %d of %d flags", len(covered), len(byKey))
	}
	n := len(v.Hash) + len(v.Bucket) + len(v.Assign) + len(v.Targeting)
	if len(v.Hash) == 0 || len(v.Bucket) == 0 || len(v.Assign) == 0 || len(v.Targeting) == 0 {
		t.Fatalf("vectors missing: %d hash, %d bucket, %d assign, %d targeting", len(v.Hash), len(v.Bucket), len(v.Assign), len(v.Targeting))
	}
	t.Logf("%d vectors reproduced (%d hash, %d bucket, %d assign, %d targeting)", n, len(v.Hash), len(v.Bucket), len(v.Assign), len(v.Targeting))
}

// flagServer answers GET /api/v1/config with its config (an ETag with it,
// and 304 to If-None-Match of it) and stores POST /e batches.
type flagServer struct {
	*httptest.Server
	ingest  ingestStub
	mu      sync.Mutex
	config  []byte
	etag    string
	status  int           // when not 0, the config answer's status
	delay   time.Duration // how long the config answer waits
	reads   atomic.Int64  // config requests
	notMod  atomic.Int64  // of which 304
	lastKey atomic.Value
}

func newFlagServer(t testing.TB, config []byte) *flagServer {
	s := &flagServer{}
	s.setConfig(config)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/e" {
			s.ingest.ServeHTTP(w, r)
			return
		}
		s.reads.Add(1)
		s.lastKey.Store(r.URL.Query().Get("api_key"))
		s.mu.Lock()
		body, etag, status, delay := s.config, s.etag, s.status, s.delay
		s.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		if r.Header.Get("If-None-Match") == etag {
			s.notMod.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *flagServer) setConfig(config []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.config, s.etag = config, fmt.Sprintf(`"%d"`, murmur3(string(config)))
}

func (s *flagServer) set(status int, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.delay = status, delay
}

// clock is a time tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func withClock(c *Client) *clock {
	k := &clock{t: time.Unix(1_800_000_000, 0)}
	c.now = k.now
	return k
}
func configOf(flags ...string) []byte {
	return []byte(`{"flags":[` + join(flags) + `],"replay":false}`)
}
func join(parts []string) (out string) {
	for i, p := range parts {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}

// An experiment's flag: 50 % rollout, arms a/b at 50/50, 10 % holdout.
const experimentFlag = `{"key":"exp","enabled":true,"rollout":50,"variants":[{"key":"a","weight":50},{"key":"b","weight":50}],"experiment":{"id":7,"status":"running","holdout":0.1}}`

// TestVariantExposures: each user's answer is the rule's, and the user's
// one $exposure names the arm, or holdout or excluded for a user in no
// arm, with the running experiment's id; a flag without an experiment
// exposes experiment_id null, a missing flag nothing.
func TestVariantExposures(t *testing.T) {
	srv := newFlagServer(t, configOf(experimentFlag, `{"key":"onoff","enabled":true,"rollout":100,"variants":[],"experiment":null}`))
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour})
	ctx := context.Background()
	want := map[string]string{}
	got := map[string]string{}
	for i := range 400 {
		id := fmt.Sprintf("user_%d", i)
		for range 3 { // asked three times, exposed once
			got[id] = c.Variant(ctx, "exp", id)
		}
		switch {
		case bucket("holdout", "exp", id) < 1000:
			want[id] = exposeHoldout
		case bucket("rollout", "exp", id) >= 5000:
			want[id] = exposeExcluded
		case bucket("variant", "exp", id) < 5000:
			want[id] = "a"
		default:
			want[id] = "b"
		}
		if arm := want[id]; (arm == "a" || arm == "b") != (got[id] == arm) || (arm != "a" && arm != "b" && got[id] != "control") {
			t.Fatalf("%s: Variant %s, the rule says %s", id, got[id], arm)
		}
	}
	if c.Variant(ctx, "onoff", "user_1") != "on" || c.Variant(ctx, "missing", "user_1") != "control" || c.Variant(ctx, "onoff", "") != "on" {
		t.Fatal("an on/off flag, a missing flag or an empty id answered wrong")
	}
	c.Flush(ctx)
	exposed := map[string]string{}
	counts := map[string]int{}
	for _, e := range srv.ingest.events() {
		if e.EventName != "$exposure" {
			t.Fatalf("sent %s", e.EventName)
		}
		p := e.Properties
		if p["flag"] == "onoff" {
			if e.DistinctID != "user_1" || p["variant"] != "on" || p["experiment_id"] != nil {
				t.Errorf("on/off exposure %+v", e)
			}
			continue
		}
		if p["flag"] != "exp" || p["experiment_id"] != float64(7) {
			t.Fatalf("exposure %+v", e)
		}
		if _, dup := exposed[e.DistinctID]; dup {
			t.Fatalf("%s exposed twice", e.DistinctID)
		}
		exposed[e.DistinctID] = p["variant"].(string)
		counts[exposed[e.DistinctID]]++
	}
	if len(exposed) != 400 {
		t.Fatalf("%d users exposed, want 400", len(exposed))
	}
	for id, v := range exposed {
		if want[id] != v {
			t.Errorf("%s exposed %s, want %s", id, v, want[id])
		}
	}
	// Every kind of user occurs: about 40 in the holdout, 180 excluded, 90 in each arm.
	for _, k := range []string{"a", "b", exposeHoldout, exposeExcluded} {
		if counts[k] < 20 {
			t.Errorf("only %d users exposed %s: %v", counts[k], k, counts)
		}
	}
	if k, _ := srv.lastKey.Load().(string); k != "st_live_test" {
		t.Errorf("config read with api_key %q", k)
	}
}

// TestVariantCaching: concurrent first calls share one config request;
// the configuration is reused for 5 minutes, then read again with its
// ETag (304: nothing changed) in the background; a user's answer is
// reused for 60 s, so a change reaches a user within both; a changed
// experiment exposes the user again.
func TestVariantCaching(t *testing.T) {
	srv := newFlagServer(t, configOf(`{"key":"f","enabled":true,"rollout":100,"variants":[],"experiment":null}`))
	srv.set(0, 100*time.Millisecond) // so that the first calls overlap
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour})
	clk := withClock(c)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := c.Variant(ctx, "f", fmt.Sprintf("u%d", i%5)); v != "on" {
				t.Errorf("Variant = %s", v)
			}
		}()
	}
	wg.Wait()
	if n := srv.reads.Load(); n != 1 {
		t.Fatalf("50 concurrent first calls made %d config requests, want 1", n)
	}
	srv.set(0, 0)
	clk.add(ConfigTTL - time.Second)
	for i := range 1000 {
		c.Variant(ctx, "f", fmt.Sprintf("v%d", i))
	}
	if n := srv.reads.Load(); n != 1 {
		t.Fatalf("%d config requests within 5 minutes, want 1", n)
	}
	clk.add(time.Second)
	c.Variant(ctx, "f", "w1") // answers from memory and reads again behind
	waitFor(t, func() bool { return srv.reads.Load() == 2 && c.configReads.Load() == 2 })
	if srv.notMod.Load() != 1 {
		t.Fatalf("the second read was not answered 304 to its ETag")
	}

	// The flag turns into an experiment: a user asked 30 s ago keeps the
	// answer until it is 60 s old; a new user gets the new rule at once.
	clk.add(ConfigTTL - 30*time.Second)
	c.Variant(ctx, "f", "old") // cached at this time
	srv.setConfig(configOf(`{"key":"f","enabled":true,"rollout":100,"variants":[{"key":"x","weight":100}],"experiment":{"id":3,"status":"running","holdout":0}}`))
	clk.add(30 * time.Second)
	if err := c.LoadFlags(ctx); err != nil {
		t.Fatal(err)
	}
	if v := c.Variant(ctx, "f", "old"); v != "on" {
		t.Errorf("a 30 s old answer was not reused: %s", v)
	}
	if v := c.Variant(ctx, "f", "new"); v != "x" {
		t.Errorf("a new user got %s, want x", v)
	}
	clk.add(30 * time.Second)
	if v := c.Variant(ctx, "f", "old"); v != "x" {
		t.Errorf("a 60 s old answer was reused: %s", v)
	}
	c.Flush(ctx)
	var old []map[string]any
	for _, e := range srv.ingest.events() {
		if e.DistinctID == "old" {
			old = append(old, e.Properties)
		}
	}
	if len(old) != 2 || old[0]["variant"] != "on" || old[0]["experiment_id"] != nil || old[1]["variant"] != "x" || old[1]["experiment_id"] != float64(3) {
		t.Errorf("exposures of a user whose flag became an experiment: %v", old)
	}
}

// TestVariantStrataDown: with Strata unreachable, failing or too slow,
// Variant answers control within ConfigTimeout and caches nothing: once
// the server answers (after the 5 s pause between attempts), the arm.
func TestVariantStrataDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()
	c, _ := newTestClient(t, closed, Options{FlushInterval: time.Hour})
	if v := c.Variant(context.Background(), "f", "u"); v != "control" {
		t.Fatalf("nothing listening: %s", v)
	}
	if c.LoadFlags(context.Background()) == nil {
		t.Fatal("LoadFlags with nothing listening returned no error")
	}

	srv := newFlagServer(t, configOf(`{"key":"f","enabled":true,"rollout":100,"variants":[],"experiment":null}`))
	srv.set(http.StatusServiceUnavailable, 0)
	back, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour, ConfigTimeout: 300 * time.Millisecond})
	clk := withClock(back)
	ctx := context.Background()
	if v := back.Variant(ctx, "f", "u"); v != "control" {
		t.Fatalf("503: %s", v)
	}
	srv.set(0, 0)
	if v := back.Variant(ctx, "f", "u"); v != "control" || srv.reads.Load() != 1 {
		t.Fatalf("asked again at once after a failure: %s, %d reads", v, srv.reads.Load())
	}
	clk.add(configRetry)
	if v := back.Variant(ctx, "f", "u"); v != "on" {
		t.Fatalf("control was cached: %s after the server came back", v)
	}

	// Too slow: the answer is control, after the timeout, not the delay.
	slow := newFlagServer(t, configOf(`{"key":"f","enabled":true,"rollout":100,"variants":[],"experiment":null}`))
	slow.set(0, 5*time.Second)
	c, _ = newTestClient(t, slow.URL, Options{FlushInterval: time.Hour, ConfigTimeout: 300 * time.Millisecond})
	start := time.Now()
	if v := c.Variant(ctx, "f", "u"); v != "control" {
		t.Fatalf("slow server: %s", v)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Variant waited %v for a slow server (timeout 300 ms)", d)
	}
	// A caller's own deadline ends its wait too.
	c2, _ := newTestClient(t, slow.URL, Options{FlushInterval: time.Hour, ConfigTimeout: time.Second})
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	if v := c2.Variant(short, "f", "u"); v != "control" || time.Since(start) > time.Second {
		t.Fatalf("ctx ended: %s after %v", v, time.Since(start))
	}

	// Once read, the configuration outlives a server that goes away: a
	// read fails behind the answers, which still follow the last good one.
	srv.set(http.StatusServiceUnavailable, 0)
	clk.add(ConfigTTL)
	reads := back.configReads.Load()
	if v := back.Variant(ctx, "f", "y1"); v != "on" {
		t.Fatalf("the last good configuration was not used: %s", v)
	}
	waitFor(t, func() bool { return back.configReads.Load() == reads+1 })
	if v := back.Variant(ctx, "f", "y2"); v != "on" || back.LoadFlags(ctx) == nil {
		t.Fatalf("after a failed read: %s, or LoadFlags said nothing", v)
	}
}

// TestConfigTooLarge: an answer over 4 MiB is refused, not held.
func TestConfigTooLarge(t *testing.T) {
	big := configOf(`{"key":"f","enabled":true,"rollout":100,"variants":[],"experiment":null,"description":"` + strings.Repeat("x", maxConfigBytes) + `"}`)
	srv := newFlagServer(t, big)
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour})
	if v := c.Variant(context.Background(), "f", "u"); v != "control" {
		t.Fatalf("a %d-byte configuration was used: %s", len(big), v)
	}
	if err := c.LoadFlags(context.Background()); err == nil || !strings.Contains(err.Error(), "over 4194304 bytes") {
		t.Fatalf("LoadFlags: %v", err)
	}
	srv.setConfig(big[:0:0])
	srv.setConfig(configOf(`{"key":"f","enabled":true,"rollout":100,"variants":[],"experiment":null}`))
	if err := c.LoadFlags(context.Background()); err != nil || c.Variant(context.Background(), "f", "u") != "on" {
		t.Fatalf("a small configuration after a big one: %v", err)
	}
}

// BenchmarkVariant is what a call costs once the configuration and the
// user's answer are in memory (the common case), and for a new user each
// time (an evaluation, a cache entry and an exposure queued).
func BenchmarkVariant(b *testing.B) {
	srv := newFlagServer(b, configOf(experimentFlag))
	c := New(Options{APIKey: "k", Host: srv.URL, FlushInterval: time.Hour, MaxQueue: 1000})
	defer c.Close(context.Background())
	ctx := context.Background()
	c.Variant(ctx, "exp", "u")
	b.Run("cached", func(b *testing.B) {
		for range b.N {
			c.Variant(ctx, "exp", "u")
		}
	})
	b.Run("new-user", func(b *testing.B) {
		for i := range b.N {
			c.Variant(ctx, "exp", "n"+strconv.Itoa(i))
		}
	})
}

// TestCacheBounds: the answers and exposures a client remembers stay
// within their bounds however many users it sees.
func TestCacheBounds(t *testing.T) {
	srv := newFlagServer(t, configOf(experimentFlag))
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour, VariantCacheSize: 100, MaxQueue: 10})
	for i := range 5000 {
		c.Variant(context.Background(), "exp", fmt.Sprintf("u%d", i))
	}
	c.flagMu.Lock()
	n := c.fs.variants.len()
	c.flagMu.Unlock()
	if n != 100 {
		t.Errorf("%d answers kept, want the bound, 100", n)
	}
	l := newLRU(3)
	for _, k := range []string{"a", "b", "c"} {
		l.put(k, k)
	}
	l.get("a") // now the most recently used
	l.put("d", "d")
	if l.len() != 3 || l.get("b") != nil || l.get("a") != "a" || l.get("d") != "d" {
		t.Errorf("lru kept the wrong entries")
	}
	if c.fs.exposed.max != maxExposed {
		t.Errorf("exposures bound %d", c.fs.exposed.max)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestVariantWithProperties checks that the variant cache keeps the
// answers of one user with different properties apart, and that the
// exposure names the variant for the properties given.
func TestVariantWithProperties(t *testing.T) {
	srv := newFlagServer(t, configOf(`{"key":"pro","enabled":true,"rollout":100,"variants":[],"experiment":null,
		"conditions":[{"type":"trait","trait":"plan","op":"eq","value":"pro"}]}`))
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour})
	ctx := context.Background()
	if got := c.Variant(ctx, "pro", "ana"); got != "control" {
		t.Errorf("no properties: %s", got)
	}
	if got := c.VariantWithProperties(ctx, "pro", "ana", map[string]any{"plan": "pro"}); got != "on" {
		t.Errorf("plan pro: %s", got)
	}
	if got := c.VariantWithProperties(ctx, "pro", "ana", map[string]any{"plan": "free"}); got != "control" {
		t.Errorf("plan free: %s", got)
	}
	c.Flush(ctx)
	var variants []string
	for _, e := range srv.ingest.events() {
		variants = append(variants, e.Properties["variant"].(string))
	}
	if strings.Join(variants, ",") != "excluded,on" {
		t.Errorf("exposures %v, want excluded then on", variants)
	}
}

// TestVariantReadsCohorts checks that a flag with a cohort condition reads
// the user's memberships from the configuration for that user, once per
// VariantTTL, and that a failed read answers control without keeping it.
func TestVariantReadsCohorts(t *testing.T) {
	cfg := []byte(`{"flags":[{"key":"paying","enabled":true,"rollout":100,"variants":[],"experiment":null,
		"conditions":[{"type":"cohort","cohortId":7,"op":"in","value":""}]},
		{"key":"plain","enabled":true,"rollout":100,"variants":[],"experiment":null}],"cohorts":{"7":true}}`)
	srv := newFlagServer(t, cfg)
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour, DisableExposures: true})
	ctx := context.Background()
	if got := c.Variant(ctx, "plain", "ann"); got != "on" || srv.reads.Load() != 1 {
		t.Fatalf("a flag without cohorts: %s after %d reads, want on after 1", got, srv.reads.Load())
	}
	for range 3 {
		if got := c.Variant(ctx, "paying", "ann"); got != "on" {
			t.Fatalf("a member: %s", got)
		}
	}
	if n := srv.reads.Load(); n != 2 {
		t.Errorf("%d reads, want the configuration's and ann's", n)
	}
	srv.set(http.StatusServiceUnavailable, 0)
	if got := c.Variant(ctx, "paying", "bob"); got != "control" {
		t.Errorf("bob, whose cohorts could not be read: %s", got)
	}
	srv.set(0, 0)
	if got := c.Variant(ctx, "paying", "bob"); got != "on" {
		t.Errorf("bob, read again: %s", got)
	}
}
