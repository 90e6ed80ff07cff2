package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"strata/internal/flags"
)

// chromiumPath is the headless browser the browser-driven tests use.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the test needs Chromium (CHROMIUM=%s): %v", p, err)
	}
	return p
}

// startChromium opens url in a headless Chromium with a profile of its
// own. The test ends it, and the renderers it started, by its own PID (its
// process group) when it ends.
func startChromium(t *testing.T, url string) {
	t.Helper()
	cmd := exec.Command(chromiumPath(t), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--user-data-dir="+t.TempDir(), url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
}

// rolloutPage is one page of the partial-rollout test: it loads the SDK
// the server serves, and for each of its users (reset, then identify, as
// at a login) asks getVariant of every flag, then reports what it got to
// the test's site and goes on to the next page. Its fetch drops the
// $exposure events of one flag's treatment users: a split broken on the
// way, which the check must catch.
const rolloutPage = `<!doctype html><html><head><meta charset="utf-8"><title>Rollout</title>
<script>
  const broken = %q;
  const realFetch = window.fetch;
  window.fetch = function (url, init) {
    if (String(url).endsWith("/e") && init && typeof init.body == "string") {
      const b = JSON.parse(init.body);
      b.batch = b.batch.filter((e) => !(e.event_name == "$exposure" && e.properties.flag == broken && e.properties.variant == "treatment"));
      init = { ...init, body: JSON.stringify(b) };
    }
    return realFetch.call(this, url, init);
  };
  // Every batch goes by fetch, through the filter above.
  navigator.sendBeacon = () => false;
</script>
<script src="%s/sdk/v1/sdk.min.js"></script>
<script>strata.init({ apiKey: %q })</script>
</head><body><script>
(async () => {
  const flags = %s, from = %d, to = %d;
  const queued = () => (JSON.parse(localStorage.getItem("strata_queue") || "[]")).length;
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const answers = [];
  try {
    for (let i = from; i < to; i++) {
      strata.reset();
      const id = "user_" + i;
      strata.identify(id);
      const got = {};
      for (const f of flags) got[f] = await strata.flags.getVariant(f);
      answers.push({ id, got });
      // The SDK keeps at most 1,000 unsent events: let it send.
      while (queued() > 300) await sleep(50);
    }
    while (queued() > 0) await sleep(100);
  } catch (e) {
    answers.push({ id: "", error: String(e) });
  }
  await realFetch("/done", { method: "POST", body: JSON.stringify(answers) });
  // A new page starts a new session: the exposures remembered so far go.
  sessionStorage.clear();
  if (%q) location.href = %q;
})();
</script></body></html>`

// TestPartialRolloutExperiments runs experiments on flags rolled out to
// 10, 50 and 80 % (arms 50/50, and one of three arms at 50 %), each with a
// 10 % holdout, checked every second, and feeds them what the real
// browser SDK sends: 1,600 distinct users in headless Chromium asking
// getVariant of every flag. Users outside the rollout get control but are
// exposed as excluded, so every experiment is still running after 30
// checks, and its results count in each arm exactly the users the SDK put
// there. A fifth experiment, whose treatment users' exposures are lost on
// the way, is paused by the same check.
func TestPartialRolloutExperiments(t *testing.T) {
	s := startServer(t, t.TempDir(), "--srm-interval", "1s", "--rate-limit", "1000000", "--query-rate-limit", "100000")
	a := newTenant(t, s, "Shop")
	startDate := time.Now().UTC().Add(-time.Hour).Format("2006-01-02")

	// Arms may not take the names of the users who are in no arm.
	for _, name := range []string{"holdout", "excluded"} {
		res := annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"key": "reserved_" + name, "name": "Reserved",
			"enabled": true, "rollout": 100, "variants": []map[string]any{{"key": "control", "weight": 50}, {"key": name, "weight": 50}}})
		wantError(t, res, 400, "invalid_request", "variants[1].key")
	}

	type setup struct {
		key     string
		rollout float64
		arms    []map[string]any
	}
	fifty := []map[string]any{{"key": "control", "weight": 50}, {"key": "treatment", "weight": 50}}
	setups := []setup{
		{"rollout_10", 10, fifty},
		{"rollout_50", 50, fifty},
		{"rollout_80", 80, fifty},
		{"three_arms_50", 50, []map[string]any{{"key": "control", "weight": 34}, {"key": "b", "weight": 33}, {"key": "c", "weight": 33}}},
		{"broken_50", 50, fifty},
	}
	const broken = "broken_50"
	ids := map[string]int64{}
	var keys []string
	for _, c := range setups {
		var f flag
		res := annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"key": c.key, "name": c.key, "enabled": true,
			"rollout": c.rollout, "variants": c.arms})
		if json.Unmarshal(res.Body, &f); res.Status != 201 {
			t.Fatalf("flag %s: %d %s", c.key, res.Status, res.Body)
		}
		var e experimentWire
		res = annCall(t, s, a.Token, "POST", "/api/v1/experiments", map[string]any{"name": "Test " + c.key, "flagId": f.ID,
			"holdout": 10, "startDate": startDate})
		if json.Unmarshal(res.Body, &e); res.Status != 201 {
			t.Fatalf("experiment %s: %d %s", c.key, res.Status, res.Body)
		}
		if r := annCall(t, s, a.Token, "POST", "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10)+"/start", nil); r.Status != 200 {
			t.Fatalf("start %s: %d %s", c.key, r.Status, r.Body)
		}
		ids[c.key] = e.ID
		keys = append(keys, c.key)
	}
	_, served := sdkConfigFlags(t, s, a.Live, "")
	config := map[string]*flags.Flag{}
	for i := range served {
		config[served[i].Key] = &served[i]
	}

	// The site: pages of 200 users each, and /done, where each page
	// reports what getVariant gave its users.
	const users, perPage = 1600, 200
	type answer struct {
		ID    string
		Got   map[string]string
		Error string
	}
	var mu sync.Mutex
	var answers []answer
	pages := make(chan int, users/perPage)
	keysJSON, _ := json.Marshal(keys)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/done":
			var got []answer
			body, _ := io.ReadAll(r.Body)
			json.Unmarshal(body, &got)
			mu.Lock()
			answers = append(answers, got...)
			mu.Unlock()
			pages <- len(got)
		case strings.HasPrefix(r.URL.Path, "/page/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/page/"))
			next := ""
			if (n+1)*perPage < users {
				next = "/page/" + strconv.Itoa(n+1)
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, rolloutPage, broken, s.URL, a.Live, keysJSON, n*perPage, (n+1)*perPage, next, next)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	// Checks are counted by the stored check's time, which changes at
	// every check of an experiment with at least 100 exposures; the
	// experiments are read more often than they are checked.
	type seen struct {
		status, reason string
		checks         map[string]bool
		last           *results
	}
	watched := map[string]*seen{}
	for _, k := range keys {
		watched[k] = &seen{checks: map[string]bool{}}
	}
	poll := func() {
		for _, k := range keys {
			var x struct {
				Status      string
				PauseReason string
				SampleRatio json.RawMessage
			}
			res := annCall(t, s, a.Token, "GET", "/api/v1/experiments/"+strconv.FormatInt(ids[k], 10), nil)
			json.Unmarshal(res.Body, &x)
			w := watched[k]
			w.status, w.reason = x.Status, x.PauseReason
			var r results
			var at struct {
				CheckedAt string `json:"checkedAt"`
			}
			if json.Unmarshal(x.SampleRatio, &at) == nil && at.CheckedAt != "" {
				w.checks[at.CheckedAt] = true
				json.Unmarshal([]byte(`{"sampleRatio":`+string(x.SampleRatio)+`}`), &r)
				w.last = &r
			}
			if k != broken && x.Status != "running" {
				t.Fatalf("%s is %s (%s) after %d checks: %s", k, x.Status, x.PauseReason, len(w.checks), x.SampleRatio)
			}
		}
	}

	startChromium(t, site.URL+"/page/0")
	start := time.Now()
	deadline := time.After(5 * time.Minute)
	for done := 0; done < users/perPage; {
		select {
		case <-pages:
			done++
		case <-time.After(300 * time.Millisecond):
			poll()
		case <-deadline:
			t.Fatalf("the pages reported %d of %d users in 5 minutes", len(answers), users)
		}
	}
	t.Logf("%d users asked %d flags in Chromium in %v", len(answers), len(keys), time.Since(start).Round(time.Second))

	// Each user got what the Go assignment of the served configuration
	// gives (the browser SDK and the server agree), and is expected in the
	// results under what the SDK exposed: the arm, holdout or excluded.
	want := map[string]map[string]int64{}
	for _, k := range keys {
		want[k] = map[string]int64{}
	}
	if len(answers) != users {
		t.Fatalf("%d answers, want %d", len(answers), users)
	}
	for _, ans := range answers {
		if ans.Error != "" {
			t.Fatalf("a page failed: %s", ans.Error)
		}
		for _, k := range keys {
			if k == broken {
				continue // paused on the way, so later users got control
			}
			as, _ := flags.Assign(config[k], ans.ID, nil, nil)
			if ans.Got[k] != as.Variant {
				t.Fatalf("%s: the SDK gave %s %q, the Go assignment %q", k, ans.ID, ans.Got[k], as.Variant)
			}
			want[k][as.Exposed()]++
		}
	}

	// Every healthy experiment stays running over 30 checks; the broken
	// one is paused.
	checkDeadline := time.Now().Add(3 * time.Minute) // a busy machine checks less often
	for {
		poll()
		enough := true
		for _, k := range keys {
			if k != broken && len(watched[k].checks) < 30 {
				enough = false
			}
		}
		if enough && watched[broken].status == "paused" {
			break
		}
		if time.Now().After(checkDeadline) {
			for _, k := range keys {
				t.Errorf("%s: %s after %d checks", k, watched[k].status, len(watched[k].checks))
			}
			t.FailNow()
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, k := range keys {
		w := watched[k]
		t.Logf("%s (rollout %v): %s after %d checks, last p = %.3g", k, config[k].Rollout, w.status, len(w.checks), w.last.SampleRatio.PValue)
	}
	if w := watched[broken]; w.reason != "sample_ratio_mismatch" || w.last == nil || !w.last.SampleRatio.Mismatch {
		t.Errorf("the broken experiment: %s (%s)", w.status, w.reason)
	}

	// The results count the users the SDK put in each arm, and those it
	// left out of every arm apart.
	for _, k := range keys {
		if k == broken {
			continue
		}
		var r struct {
			results
			Excluded int64
		}
		res := annCall(t, s, a.Token, "GET", "/api/v1/experiments/"+strconv.FormatInt(ids[k], 10)+"/results", nil)
		if json.Unmarshal(res.Body, &r); res.Status != 200 {
			t.Fatalf("results %s: %d %s", k, res.Status, res.Body)
		}
		got := map[string]int64{"holdout": r.Holdout, "excluded": r.Excluded}
		for _, arm := range r.Arms {
			got[arm.Variant] = arm.Exposed
		}
		if fmt.Sprint(got) != fmt.Sprint(want[k]) || r.MultipleArms != 0 {
			t.Errorf("%s: results %v (%d of several arms), the SDK gave %v", k, got, r.MultipleArms, want[k])
		} else {
			t.Logf("%s: %v", k, got)
		}
	}
}
