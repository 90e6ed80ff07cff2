package e2e

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"strata/internal/experiment"
	"strata/internal/flags"
)

// results is GET /api/v1/experiments/{id}/results as the test reads it.
type results struct {
	Arms []struct {
		Variant string
		Exposed int64
	}
	Holdout, MultipleArms int64
	EnoughData            bool
	RecommendedPerArm     *int64
	Metrics               []struct {
		Event   string
		Primary bool
		Arms    []struct {
			Variant             string
			Exposed, Converted  int64
			Rate                float64
			AbsoluteUplift      *experiment.Estimate
			RelativeUplift      *experiment.Estimate
			PValue              *float64
			ChanceToBeatControl *float64
		}
	}
	Timeline []struct {
		Date               string
		Variant            string
		Exposed, Converted int64
	}
	SampleRatio *struct {
		PValue   float64
		Mismatch bool
		Arms     []struct {
			Variant            string
			Exposed            int64
			Observed, Expected float64
		}
	}
}

// TestExperimentResults runs an experiment over HTTP as an SDK would feed
// it: users assigned by the Go assignment of the served configuration send
// their $exposure (holdout users say so), some convert after it (by
// converted = 1 and by a named secondary event), some converted only
// before it, a few were exposed to both arms. The results endpoint must
// give the counts the test keeps itself, the statistics of those counts,
// and nothing to another product or to an API key.
func TestExperimentResults(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	// The events below are up to 15 minutes old, and results read from the
	// start day: a start date an hour back keeps them inside the window when
	// the test runs just after midnight (UTC).
	now := time.Now().UTC()
	res := annCall(t, s, a.Token, "POST", "/api/v1/experiments", map[string]any{"name": "Checkout copy", "holdout": 10,
		"secondaryEvents": []string{"signup"}, "startDate": now.Add(-time.Hour).Format("2006-01-02")})
	var e experimentWire
	json.Unmarshal(res.Body, &e)
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	base := "/api/v1/experiments/" + strconv.FormatInt(e.ID, 10)
	if r := annCall(t, s, a.Token, "POST", base+"/start", nil); r.Status != 200 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	_, cfg := sdkConfigFlags(t, s, a.Live, "")
	if len(cfg) != 1 {
		t.Fatalf("config: %+v", cfg)
	}

	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	exposed, converted, signedUp := map[string]int64{}, map[string]int64{}, map[string]int64{}
	var held, mixed int64
	var batch []map[string]any
	flush := func() {
		if len(batch) > 0 {
			if r := postEvents(t, s, a.Live, batch...); r.Status != 202 {
				t.Fatalf("ingest: %d %s", r.Status, r.Body)
			}
			batch = nil
		}
	}
	exposure := func(id, variant string, ts string) map[string]any {
		return map[string]any{"event_name": "$exposure", "distinct_id": id, "timestamp": ts,
			"properties": map[string]any{"flag": e.FlagKey, "experiment_id": e.ID, "variant": variant}}
	}
	for i := range 900 {
		id := "user_" + strconv.Itoa(i)
		as, _ := flags.Assign(&cfg[0], id, nil, nil)
		variant := as.Variant
		if as.Holdout {
			variant = "holdout"
		}
		batch = append(batch, exposure(id, variant, at(-10*time.Minute)))
		switch {
		case variant == "holdout":
			held++
		case i%50 == 0:
			// Exposed to both arms: counted apart, conversions ignored.
			other := map[string]string{"control": "treatment", "treatment": "control"}[variant]
			batch = append(batch, exposure(id, other, at(-9*time.Minute)),
				map[string]any{"event_name": "purchase", "distinct_id": id, "timestamp": at(-time.Minute), "properties": map[string]any{"converted": 1}})
			mixed++
		default:
			exposed[variant]++
			// Treatment converts more: every third user against every fifth.
			every := map[string]int{"control": 5, "treatment": 3}[variant]
			if i%every == 0 {
				batch = append(batch, map[string]any{"event_name": "purchase", "distinct_id": id, "timestamp": at(-5 * time.Minute),
					"properties": map[string]any{"converted": 1}})
				converted[variant]++
			} else if i%7 == 0 {
				// Converted only before the exposure: does not count.
				batch = append(batch, map[string]any{"event_name": "purchase", "distinct_id": id, "timestamp": at(-15 * time.Minute),
					"properties": map[string]any{"converted": 1}})
			}
			if i%4 == 0 {
				batch = append(batch, map[string]any{"event_name": "signup", "distinct_id": id, "timestamp": at(-2 * time.Minute)})
				signedUp[variant]++
			}
		}
		if len(batch) > 400 {
			flush()
		}
	}
	flush()

	res = annCall(t, s, a.Token, "GET", base+"/results", nil)
	if res.Status != 200 {
		t.Fatalf("results: %d %s", res.Status, res.Body)
	}
	var r results
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Holdout != held || r.MultipleArms != mixed || len(r.Arms) != 2 || r.Arms[0].Variant != "control" ||
		r.Arms[0].Exposed != exposed["control"] || r.Arms[1].Exposed != exposed["treatment"] || !r.EnoughData {
		t.Fatalf("exposures: %s\nwant holdout %d, mixed %d, arms %v", res.Body, held, mixed, exposed)
	}
	if len(r.Metrics) != 2 || !r.Metrics[0].Primary || r.Metrics[0].Event != "" || r.Metrics[1].Event != "signup" {
		t.Fatalf("metrics: %s", res.Body)
	}
	for m, want := range []map[string]int64{converted, signedUp} {
		arms := r.Metrics[m].Arms
		for i, v := range []string{"control", "treatment"} {
			if arms[i].Variant != v || arms[i].Exposed != exposed[v] || arms[i].Converted != want[v] ||
				math.Abs(arms[i].Rate-float64(want[v])/float64(exposed[v])) > 1e-12 {
				t.Errorf("metric %d arm %s: %+v, want %d of %d", m, v, arms[i], want[v], exposed[v])
			}
		}
		if arms[0].PValue != nil || arms[0].AbsoluteUplift != nil {
			t.Errorf("metric %d: control compared with itself: %+v", m, arms[0])
		}
		cmp := experiment.Compare(want["control"], exposed["control"], want["treatment"], exposed["treatment"])
		tr := arms[1]
		if tr.PValue == nil || math.Abs(*tr.PValue-cmp.PValue) > 1e-12 || tr.AbsoluteUplift == nil || *tr.AbsoluteUplift != cmp.Absolute ||
			tr.ChanceToBeatControl == nil || math.Abs(*tr.ChanceToBeatControl-cmp.ChanceToBeat) > 1e-12 {
			t.Errorf("metric %d treatment statistics: %+v, want %+v", m, tr, cmp)
		}
	}
	// 20 % against 33 %: with about 400 users an arm, clearly apart.
	if p := r.Metrics[0].Arms[1].PValue; p == nil || *p > 0.01 || *r.Metrics[0].Arms[1].ChanceToBeatControl < 0.99 {
		t.Errorf("primary metric: treatment should beat control clearly: %s", res.Body)
	}
	// The timeline ends with every arm's totals.
	last := map[string][2]int64{}
	for _, p := range r.Timeline {
		last[p.Variant] = [2]int64{p.Exposed, p.Converted}
	}
	for _, v := range []string{"control", "treatment"} {
		if last[v] != [2]int64{exposed[v], converted[v]} {
			t.Errorf("timeline of %s ends at %v, want %d exposed, %d converted", v, last[v], exposed[v], converted[v])
		}
	}

	// Nobody else reads it.
	wantError(t, annCall(t, s, b.Token, "GET", base+"/results", nil), 404, "experiment_not_found", "")
	wantError(t, annCall(t, s, a.Live, "GET", base+"/results", nil), 403, "key_not_allowed", "")
	if cors := do(t, "GET", s.URL+base+"/results", nil, map[string]string{"Authorization": "Bearer " + a.Token, "Origin": "https://shop.example"}).Header.Get("Access-Control-Allow-Origin"); cors != "" {
		t.Errorf("results are CORS-open: %q", cors)
	}
}

// TestSampleRatioCheck runs the server's check every second. Traffic
// skewed 55/45 on a 50/50 experiment pauses it at the next check, which
// the configuration then says, so that every user gets control; healthy
// traffic, assigned by the served configuration and sent over several
// checks, keeps its experiment running.
func TestSampleRatioCheck(t *testing.T) {
	s := startServer(t, t.TempDir(), "--srm-interval", "1s")
	a := newTenant(t, s, "Shop")
	start := func(name string) experimentWire {
		var e experimentWire
		res := annCall(t, s, a.Token, "POST", "/api/v1/experiments", map[string]any{"name": name})
		json.Unmarshal(res.Body, &e)
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		if r := annCall(t, s, a.Token, "POST", "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10)+"/start", nil); r.Status != 200 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		return e
	}
	skewed, healthy := start("Skewed"), start("Healthy")
	send := func(e experimentWire, users []string, variant func(string) string) {
		for len(users) > 0 {
			n := min(len(users), 500)
			var batch []map[string]any
			for _, id := range users[:n] {
				batch = append(batch, map[string]any{"event_name": "$exposure", "distinct_id": id,
					"properties": map[string]any{"flag": e.FlagKey, "experiment_id": e.ID, "variant": variant(id)}})
			}
			if r := postEvents(t, s, a.Live, batch...); r.Status != 202 {
				t.Fatalf("ingest: %d %s", r.Status, r.Body)
			}
			users = users[n:]
		}
	}
	users := func(prefix string, from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			out = append(out, prefix+strconv.Itoa(i))
		}
		return out
	}
	// 1,100 control and 900 treatment: χ² = 20, p ≈ 8·10⁻⁶. Every batch
	// of 500 holds 275 and 225, since the check may run between batches:
	// 1,000 users (550/450) are no mismatch yet (p ≈ 0.0016), 1,500 are.
	send(skewed, users("s", 0, 2000), func(id string) string {
		if n, _ := strconv.Atoi(id[1:]); n%20 < 11 {
			return "control"
		}
		return "treatment"
	})
	_, cfg := sdkConfigFlags(t, s, a.Live, "")
	var healthyFlag flags.Flag
	for _, f := range cfg {
		if f.Key == healthy.FlagKey {
			healthyFlag = f
		}
	}
	assigned := func(id string) string { as, _ := flags.Assign(&healthyFlag, id, nil, nil); return as.Variant }
	for round := range 5 {
		send(healthy, users("h", round*400, (round+1)*400), assigned)
		time.Sleep(1200 * time.Millisecond)
	}

	got := func(e experimentWire) (experimentWire, results) {
		var x experimentWire
		var full struct{ SampleRatio json.RawMessage }
		res := annCall(t, s, a.Token, "GET", "/api/v1/experiments/"+strconv.FormatInt(e.ID, 10), nil)
		json.Unmarshal(res.Body, &x)
		json.Unmarshal(res.Body, &full)
		var r results
		json.Unmarshal([]byte(`{"sampleRatio":`+string(full.SampleRatio)+`}`), &r)
		return x, r
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		x, r := got(skewed)
		if x.Status == "paused" {
			// Paused after the third or the fourth batch was stored: k
			// batches are 275k control and 225k treatment.
			var k int64
			if r.SampleRatio != nil {
				k = r.SampleRatio.Arms[0].Exposed / 275
			}
			if x.PauseReason != "sample_ratio_mismatch" || r.SampleRatio == nil || !r.SampleRatio.Mismatch || k < 3 || k > 4 ||
				r.SampleRatio.Arms[0].Exposed != 275*k || r.SampleRatio.Arms[1].Exposed != 225*k ||
				math.Abs(r.SampleRatio.Arms[0].Observed-0.55) > 1e-9 || r.SampleRatio.Arms[1].Expected != 0.5 {
				t.Errorf("the skewed experiment was paused with %+v %+v", x, r.SampleRatio)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the skewed experiment was not paused: %+v", x)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The configuration says paused at once on this node: control for all.
	_, cfg = sdkConfigFlags(t, s, a.Live, "")
	for _, f := range cfg {
		if f.Key != skewed.FlagKey {
			continue
		}
		if f.Experiment == nil || f.Experiment.Status != "paused" {
			t.Fatalf("config of the paused experiment: %+v", f)
		}
		for i := range 200 {
			if as, _ := flags.Assign(&f, "user_"+strconv.Itoa(i), nil, nil); as.Variant != "control" {
				t.Fatalf("a paused experiment gave %q", as.Variant)
			}
		}
	}
	// Every round found it healthy, the last (a check after the last
	// batch, which a slow round may delay) with all 2,000 users.
	for deadline = time.Now().Add(10 * time.Second); ; {
		x, r := got(healthy)
		if x.Status != "running" || r.SampleRatio == nil || r.SampleRatio.Mismatch {
			t.Fatalf("the healthy experiment after rounds of checks: %+v %+v", x, r.SampleRatio)
		}
		if r.SampleRatio.Arms[0].Exposed+r.SampleRatio.Arms[1].Exposed == 2000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no check of the healthy experiment saw its 2,000 users: %+v", r.SampleRatio)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
