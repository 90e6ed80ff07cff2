package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata/internal/query/querytest"
	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// startNodes starts two `strata serve` processes on one real ClickHouse and
// one real PostgreSQL, each with its own data directory, as a cluster of
// stateless nodes behind a balancer would run.
func startNodes(t *testing.T, extra ...string) (a, b *server) {
	t.Helper()
	chtest.Skip(t)
	ch := chtest.Shared(t)
	meta := pgtest.Start(t)
	events := ch.URL(fmt.Sprintf("strata_e2e_%d", time.Now().UnixNano()), "")
	args := append([]string{"--events", events, "--meta", meta}, extra...)
	// The first node bootstraps the empty metadata store; the second finds
	// it set up.
	a = startServer(t, t.TempDir(), args...)
	b = startServer(t, t.TempDir(), args...)
	if a.BootstrapKey == "" || b.BootstrapKey != "" {
		t.Fatalf("bootstrap: first node key %q, second node key %q; want one key, from the first", a.BootstrapKey, b.BootstrapKey)
	}
	return a, b
}

// TestTwoNodesGiveTheSameAnswers ingests each dataset half through one node
// and half through the other, then asks both nodes every query: each answer
// must be the reference's, the same as the embedded store gives.
func TestTwoNodesGiveTheSameAnswers(t *testing.T) {
	a, b := startNodes(t)
	for seed := int64(1); seed <= 12; seed++ {
		ds := querytest.Generate(seed)
		tn := newTenant(t, a, fmt.Sprintf("seed %d", seed))
		var odd, even []querytest.Event
		for i, e := range ds.Events {
			if i%2 == 0 {
				even = append(even, e)
			} else {
				odd = append(odd, e)
			}
		}
		stored := append(ingestDataset(t, a, tn, even), ingestDataset(t, b, tn, odd)...)
		checkAnswers(t, a, tn, seed, ds, stored)
		checkAnswers(t, b, tn, seed, ds, stored)
	}
}

// TestKeyChangesReachEveryNode creates and revokes a key with the CLI
// against the shared PostgreSQL and checks that both nodes follow within
// the key cache TTL.
func TestKeyChangesReachEveryNode(t *testing.T) {
	const ttl = time.Second
	a, b := startNodes(t, "--key-cache-ttl", ttl.String())
	pid := strconv.FormatInt(a.ProductID, 10)
	key := strings.TrimSpace(cli(t, a.dataDir, a.manage("keys", "create", "--product", pid)...))
	for _, s := range []*server{a, b} {
		if r := postEvents(t, s, key, ev("e", "u")); r.Status != http.StatusAccepted {
			t.Fatalf("new key on %s: %d %s", s.URL, r.Status, r.Body)
		}
	}
	cli(t, b.dataDir, b.manage("keys", "revoke", key)...)
	revoked := time.Now()
	for _, s := range []*server{a, b} {
		for {
			r := postEvents(t, s, key, ev("e", "u"))
			if r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
				break
			}
			if r.Status != http.StatusAccepted {
				t.Fatalf("revoked key on %s: %d %s", s.URL, r.Status, r.Body)
			}
			// The documented bound is the TTL; allow for a slow machine.
			if time.Since(revoked) > ttl+3*time.Second {
				t.Fatalf("%s still accepts a key revoked %s ago (key cache TTL %s)", s.URL, time.Since(revoked), ttl)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestRateLimitHoldsAcrossNodes sends one key's requests to two nodes in
// turn. Each node alone would admit its whole budget; sharing usage, the
// two together admit the key's budget plus at most what the other node
// admits within two sync intervals (docs/deploy.md).
func TestRateLimitHoldsAcrossNodes(t *testing.T) {
	const perMinute = 60
	a, b := startNodes(t)
	pid := strconv.FormatInt(a.ProductID, 10)
	key := strings.TrimSpace(cli(t, a.dataDir, a.manage("keys", "create", "--product", pid, "--rate-limit", strconv.Itoa(perMinute))...))
	// Both nodes meet the key and sync once, so neither starts from an
	// unsynced bucket (the bound's once-per-node burst).
	postEvents(t, a, key, ev("e", "u"))
	postEvents(t, b, key, ev("e", "u"))
	time.Sleep(2500 * time.Millisecond)

	// Requests per second over both nodes, and for how long: enough that
	// unshared buckets would admit 2·(60+6) = 132 of the 180 requests.
	const rate, seconds = 30, 6
	admitted, refused := 2, 0
	start := time.Now()
	for i := 0; i < rate*seconds; i++ {
		s := a
		if i%2 == 1 {
			s = b
		}
		switch r := postEvents(t, s, key, ev("e", "u")); r.Status {
		case http.StatusAccepted:
			admitted++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("request %d: %d %s", i, r.Status, r.Body)
		}
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second / rate)))
	}
	elapsed := time.Since(start)
	// Refill over the run, plus two sync intervals (one second each) of
	// the other node's half of the traffic, plus slack for a sync delayed
	// on a busy machine.
	bound := perMinute + int(elapsed.Seconds()*perMinute/60) + 2*rate/2 + 10
	t.Logf("admitted %d, refused %d in %s (bound %d; unshared limits would admit about %d)",
		admitted, refused, elapsed.Round(time.Millisecond), bound, 2*(perMinute+seconds))
	if admitted > bound {
		t.Errorf("two nodes admitted %d requests of a %d/min key; the shared bound is %d", admitted, perMinute, bound)
	}
	if admitted < perMinute {
		t.Errorf("only %d requests admitted; the key's budget is %d", admitted, perMinute)
	}
}

// TestAnnotationLimitHoldsAcrossNodes does the same for the per-workspace
// annotation write limit, which the nodes share the same way.
func TestAnnotationLimitHoldsAcrossNodes(t *testing.T) {
	const perMinute = 20
	a, b := startNodes(t, "--annotation-rate-limit", strconv.Itoa(perMinute))
	tn := newTenant(t, a, "annotations")
	post := func(s *server, i int) int {
		body, _ := json.Marshal(map[string]any{"label": fmt.Sprintf("note %d", i), "date": "2026-11-20T10:00:00Z",
			"color": "sky", "scope": "workspace"})
		return do(t, "POST", s.URL+"/api/v1/annotations", body, map[string]string{
			"Authorization": "Bearer " + tn.Token, "Content-Type": "application/json"}).Status
	}
	post(a, -1)
	post(b, -2)
	time.Sleep(2500 * time.Millisecond)
	// Unshared, the two nodes would allow 2·(20+2) = 44 of these 48.
	const rate, seconds = 8, 6
	admitted := 2
	start := time.Now()
	for i := 0; i < rate*seconds; i++ {
		s := a
		if i%2 == 1 {
			s = b
		}
		switch st := post(s, i); st {
		case http.StatusCreated:
			admitted++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("annotation %d: status %d", i, st)
		}
		time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Second / rate)))
	}
	bound := perMinute + int(time.Since(start).Seconds()*perMinute/60) + 2*rate/2 + 4
	t.Logf("admitted %d annotation writes (bound %d)", admitted, bound)
	if admitted > bound || admitted < perMinute {
		t.Errorf("two nodes admitted %d writes for a %d/min workspace; want %d to %d", admitted, perMinute, perMinute, bound)
	}
}

// TestFlagChangesReachEveryNode changes a flag through one node and checks
// that the other node's SDK configuration serves the change within 5
// seconds (docs/flags.md: each node reads a product's flags again after 2).
func TestFlagChangesReachEveryNode(t *testing.T) {
	a, b := startNodes(t)
	tn := newTenant(t, a, "Flags")
	// Both nodes cache the product's configuration first.
	for _, s := range []*server{a, b} {
		if r, cfg := sdkConfigFlags(t, s, tn.Live, ""); r.Status != 200 || len(cfg) != 0 {
			t.Fatalf("config on %s: %d %s", s.URL, r.Status, r.Body)
		}
	}
	res := annCall(t, a, tn.Token, "POST", "/api/v1/flags", map[string]any{"name": "Dark mode", "enabled": true, "rollout": 25})
	if res.Status != 201 {
		t.Fatalf("create on the first node: %d %s", res.Status, res.Body)
	}
	changed := time.Now()
	if _, cfg := sdkConfigFlags(t, a, tn.Live, ""); len(cfg) != 1 {
		t.Errorf("the node that made the change does not serve it at once: %+v", cfg)
	}
	for {
		if _, cfg := sdkConfigFlags(t, b, tn.Live, ""); len(cfg) == 1 && cfg[0].Key == "dark_mode" && cfg[0].Rollout == 25 {
			break
		}
		if time.Since(changed) > 5*time.Second {
			t.Fatalf("the second node does not serve a flag created %s ago", time.Since(changed))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
