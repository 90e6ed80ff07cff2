package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strata/internal/flags"

	"github.com/strata-analytics/strata/sdk/go/strata"
)

// countingProxy forwards everything to target on a loopback port and
// counts the configuration requests that pass.
func countingProxy(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	// A batch the client abandons as it closes (it keeps the events and
	// sends them itself) is no failure worth a line in the test's output.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	configs := &atomic.Int64{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/config" {
			configs.Add(1)
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), configs
}

// TestGoSDKFlags runs a Go backend's experiment on the real binary: the
// Go SDK evaluates a flag with a running experiment (rollout 50 %, arms
// 50/50, holdout 10 %) for 600 users from many goroutines, through a
// counting proxy. One configuration request serves them all; the
// exposures it queues arrive, and the experiment's results count, per arm,
// exactly the users Variant put in that arm, the holdout users as holdout,
// and the users outside the rollout nowhere.
func TestGoSDKFlags(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "Backend")
	res := annCall(t, s, tn.Token, "POST", "/api/v1/flags", map[string]any{"key": "checkout_flow", "name": "Checkout flow",
		"enabled": true, "rollout": 50, "variants": []map[string]any{{"key": "control", "weight": 50}, {"key": "treatment", "weight": 50}}})
	if res.Status != 201 {
		t.Fatalf("create flag: %d %s", res.Status, res.Body)
	}
	var flag struct{ ID int64 }
	json.Unmarshal(res.Body, &flag)
	now := time.Now().UTC()
	res = annCall(t, s, tn.Token, "POST", "/api/v1/experiments", map[string]any{"name": "Checkout flow", "flagId": flag.ID, "holdout": 10,
		"startDate": now.Add(-time.Hour).Format("2006-01-02")})
	if res.Status != 201 {
		t.Fatalf("create experiment: %d %s", res.Status, res.Body)
	}
	var e experimentWire
	json.Unmarshal(res.Body, &e)
	base := "/api/v1/experiments/" + strconv.FormatInt(e.ID, 10)
	if r := annCall(t, s, tn.Token, "POST", base+"/start", nil); r.Status != 200 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}

	host, configs := countingProxy(t, s.URL)
	c := strata.New(strata.Options{APIKey: tn.Live, Host: host, FlushInterval: 100 * time.Millisecond})
	const users = 600
	got := make([]string, users)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < users; i += 8 {
				id := fmt.Sprintf("customer_%d", i)
				got[i] = c.Variant(context.Background(), "checkout_flow", id)
				if again := c.Variant(context.Background(), "checkout_flow", id); again != got[i] {
					t.Errorf("%s: %s, then %s", id, got[i], again)
				}
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := configs.Load(); n != 1 {
		t.Errorf("%d configuration requests for %d users asked twice each, want 1", n, users)
	}

	// What the test expects, from what Variant returned and the server's
	// own rule for who is in the holdout or outside the rollout.
	_, cfg := sdkConfigFlags(t, s, tn.Live, "")
	if len(cfg) != 1 || cfg[0].Experiment == nil || cfg[0].Experiment.Status != "running" {
		t.Fatalf("config: %+v", cfg)
	}
	arms := map[string]int64{}
	var held, excluded int64
	for i, v := range got {
		id := fmt.Sprintf("customer_%d", i)
		a, _ := flags.Assign(&cfg[0], id, nil, nil)
		switch {
		case a.Holdout:
			held++
		case flags.Bucket("rollout", "checkout_flow", id) >= 5000:
			excluded++
		default:
			arms[v]++
		}
		if (a.Holdout || flags.Bucket("rollout", "checkout_flow", id) >= 5000) && v != "control" {
			t.Errorf("%s got %s outside the experiment", id, v)
		}
	}
	if held < 30 || excluded < 200 || arms["control"] < 80 || arms["treatment"] < 80 || held+excluded+arms["control"]+arms["treatment"] != users {
		t.Fatalf("unexpected split: %d holdout, %d excluded, arms %v", held, excluded, arms)
	}
	if c.Sent() != users || c.Dropped() != 0 || c.Failed() != 0 {
		t.Errorf("exposures: %d sent, %d dropped, %d failed; want %d sent", c.Sent(), c.Dropped(), c.Failed(), users)
	}

	var r results
	waitFor(t, 15*time.Second, "the exposures in the results", func() bool {
		res := annCall(t, s, tn.Token, "GET", base+"/results", nil)
		json.Unmarshal(res.Body, &r)
		return res.Status == 200 && r.Holdout == held && len(r.Arms) == 2 && r.Arms[0].Exposed+r.Arms[1].Exposed >= arms["control"]+arms["treatment"]
	})
	if len(r.Arms) != 2 || r.Arms[0].Variant != "control" || r.Arms[0].Exposed != arms["control"] ||
		r.Arms[1].Variant != "treatment" || r.Arms[1].Exposed != arms["treatment"] || r.Holdout != held || r.MultipleArms != 0 {
		t.Fatalf("results %+v, holdout %d; want control %d, treatment %d, holdout %d", r.Arms, r.Holdout, arms["control"], arms["treatment"], held)
	}
	t.Logf("%d users: control %d, treatment %d, holdout %d, excluded %d; %d configuration request(s)",
		users, arms["control"], arms["treatment"], held, excluded, configs.Load())
}
