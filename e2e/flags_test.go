package e2e

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"strata/internal/flags"
)

// flag is a flag as the API answers it.
type flag struct {
	ID       int64   `json:"id"`
	Key      string  `json:"key"`
	Name     string  `json:"name"`
	Enabled  bool    `json:"enabled"`
	Rollout  float64 `json:"rollout"`
	Variants []struct {
		Key     string          `json:"key"`
		Weight  float64         `json:"weight"`
		Payload json.RawMessage `json:"payload"`
	} `json:"variants"`
}

// sdkConfigFlags reads GET /api/v1/config with an API key.
func sdkConfigFlags(t *testing.T, s *server, key, etag string) (response, []flags.Flag) {
	t.Helper()
	h := map[string]string{"Origin": "https://shop.example"}
	if etag != "" {
		h["If-None-Match"] = etag
	}
	r := do(t, "GET", s.URL+"/api/v1/config?api_key="+key+"&distinct_id=u1", nil, h)
	var cfg struct {
		Flags []flags.Flag `json:"flags"`
	}
	if r.Status == 200 {
		if err := json.Unmarshal(r.Body, &cfg); err != nil {
			t.Fatalf("config %s: %v", r.Body, err)
		}
	}
	return r, cfg.Flags
}

// TestFlags drives the flag API over HTTP: create with defaults and the
// key made from the name, every validation rule named by its field, a
// taken key, updates that keep the key, the audit trail, tenant isolation,
// API keys refused, and GET /api/v1/config serving the flags with an ETag,
// a 304, and a change visible at once on the node that made it.
func TestFlags(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")

	res := annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{
		"name": "Pricing copy test", "enabled": true, "rollout": 50,
		"variants": []map[string]any{{"key": "control", "weight": 50}, {"key": "treatment", "weight": 50, "payload": map[string]any{"headline": "Start free"}}},
	})
	if res.Status != 201 {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var f flag
	json.Unmarshal(res.Body, &f)
	if f.Key != "pricing_copy_test" || !f.Enabled || f.Rollout != 50 || len(f.Variants) != 2 || string(f.Variants[1].Payload) != `{"headline":"Start free"}` {
		t.Errorf("created %s", res.Body)
	}
	res = annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"key": "dark-mode", "name": "Dark mode"})
	var dark flag
	json.Unmarshal(res.Body, &dark)
	if res.Status != 201 || dark.Enabled || dark.Rollout != 100 || dark.Variants == nil || len(dark.Variants) != 0 {
		t.Errorf("defaults: %d %s", res.Status, res.Body)
	}

	// Bad input: 400 naming the field, 409 for a taken key; nothing stored.
	for _, c := range []struct {
		name  string
		body  any
		field string
	}{
		{"weights sum to 90", map[string]any{"name": "W", "variants": []map[string]any{{"key": "a", "weight": 40}, {"key": "b", "weight": 50}}}, "variants"},
		{"five arms", map[string]any{"name": "W", "variants": []map[string]any{{"key": "a", "weight": 20}, {"key": "b", "weight": 20}, {"key": "c", "weight": 20}, {"key": "d", "weight": 20}, {"key": "e", "weight": 20}}}, "variants"},
		{"rollout 101", map[string]any{"name": "W", "rollout": 101}, "rollout"},
		{"malformed key", map[string]any{"name": "W", "key": "Bad Key"}, "key"},
		{"duplicate arm", map[string]any{"name": "W", "variants": []map[string]any{{"key": "a", "weight": 50}, {"key": "a", "weight": 50}}}, "variants[1].key"},
		{"no name", map[string]any{"key": "w"}, "name"},
		{"unknown field", map[string]any{"name": "W", "salt": "x"}, "salt"},
		{"rollout a string", `{"name":"W","rollout":"50"}`, "rollout"},
	} {
		wantError(t, annCall(t, s, a.Token, "POST", "/api/v1/flags", c.body), 400, "invalid_request", c.field)
	}
	wantError(t, annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{"name": "Pricing copy test"}), 409, "flag_key_taken", "")

	var list struct{ Items []flag }
	json.Unmarshal(annCall(t, s, a.Token, "GET", "/api/v1/flags", nil).Body, &list)
	if len(list.Items) != 2 || list.Items[0].ID != f.ID || list.Items[1].ID != dark.ID {
		t.Errorf("list after bad input: %+v", list.Items)
	}

	// Tenant isolation: B neither sees nor changes A's flags; B may reuse the key.
	path := "/api/v1/flags/" + strconv.FormatInt(f.ID, 10)
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		wantError(t, annCall(t, s, b.Token, m, path, map[string]any{"rollout": 0}), 404, "flag_not_found", "")
	}
	wantError(t, annCall(t, s, b.Token, "GET", path+"/changes", nil), 404, "flag_not_found", "")
	if res := annCall(t, s, b.Token, "POST", "/api/v1/flags", map[string]any{"name": "Pricing copy test"}); res.Status != 201 {
		t.Errorf("the same key in another product: %d %s", res.Status, res.Body)
	}
	// An API key is public: it neither reads nor writes flags.
	wantError(t, annCall(t, s, a.Live, "GET", "/api/v1/flags", nil), 403, "key_not_allowed", "")
	wantError(t, annCall(t, s, a.Live, "POST", "/api/v1/flags", map[string]any{"name": "X"}), 403, "key_not_allowed", "")
	if r := annCall(t, s, "", "GET", "/api/v1/flags", nil); r.Status != 401 {
		t.Errorf("no credential: %d", r.Status)
	}

	// The SDK's configuration serves the flags, with an ETag and a 304.
	r, cfg := sdkConfigFlags(t, s, a.Live, "")
	etag := r.Header.Get("ETag")
	if r.Status != 200 || etag == "" || len(cfg) != 2 || cfg[0].Key != "pricing_copy_test" || cfg[0].Rollout != 50 ||
		len(cfg[0].Variants) != 2 || cfg[0].Experiment != nil || cfg[1].Key != "dark-mode" || cfg[1].Enabled {
		t.Fatalf("config: %d %q %s", r.Status, etag, r.Body)
	}
	if r, _ := sdkConfigFlags(t, s, a.Live, etag); r.Status != 304 || len(r.Body) != 0 {
		t.Errorf("a repeated config request with its ETag: %d %s", r.Status, r.Body)
	}
	if _, cfgB := sdkConfigFlags(t, s, b.Live, ""); len(cfgB) != 1 || cfgB[0].Key != "pricing_copy_test" || cfgB[0].Enabled {
		t.Errorf("product B's config: %+v", cfgB)
	}

	// An update keeps the key, is served at once, and is audited.
	wantError(t, annCall(t, s, a.Token, "PUT", path, map[string]any{"key": "renamed"}), 400, "invalid_request", "key")
	res = annCall(t, s, a.Token, "PUT", path, map[string]any{"key": "pricing_copy_test", "rollout": 100, "enabled": false})
	json.Unmarshal(res.Body, &f)
	if res.Status != 200 || f.Rollout != 100 || f.Enabled || f.Key != "pricing_copy_test" || len(f.Variants) != 2 {
		t.Errorf("update: %d %s", res.Status, res.Body)
	}
	r, cfg = sdkConfigFlags(t, s, a.Live, etag)
	if r.Status != 200 || r.Header.Get("ETag") == etag || cfg[0].Rollout != 100 || cfg[0].Enabled {
		t.Errorf("config after the update: %d %s", r.Status, r.Body)
	}
	var trail struct {
		Items []struct {
			Action, Actor string
			Changes       []struct {
				Field    string
				From, To any
			}
			At time.Time
		}
	}
	json.Unmarshal(annCall(t, s, a.Token, "GET", path+"/changes", nil).Body, &trail)
	if len(trail.Items) != 2 || trail.Items[0].Action != "updated" || trail.Items[1].Action != "created" ||
		len(trail.Items[0].Changes) != 2 || trail.Items[0].Changes[0].Field != "enabled" || trail.Items[0].Changes[1].Field != "rollout" ||
		trail.Items[0].Changes[1].From != float64(50) || trail.Items[0].Actor[:10] != "token st_t" {
		t.Errorf("trail: %+v", trail.Items)
	}

	// Delete: gone from the API and the configuration; the trail stays.
	if r := annCall(t, s, a.Token, "DELETE", path, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	wantError(t, annCall(t, s, a.Token, "GET", path, nil), 404, "flag_not_found", "")
	if _, cfg := sdkConfigFlags(t, s, a.Live, ""); len(cfg) != 1 || cfg[0].Key != "dark-mode" {
		t.Errorf("config after the delete: %+v", cfg)
	}
	json.Unmarshal(annCall(t, s, a.Token, "GET", path+"/changes", nil).Body, &trail)
	if len(trail.Items) != 3 || trail.Items[0].Action != "deleted" {
		t.Errorf("trail after the delete: %+v", trail.Items)
	}
	wantError(t, annCall(t, s, a.Token, "GET", "/api/v1/flags/abc", nil), 404, "flag_not_found", "")
}

// experimentWire is an experiment as the API answers it.
type experimentWire struct {
	ID              int64
	FlagID          int64
	FlagKey         string
	Name            string
	Holdout         float64
	PrimaryEvent    string
	SecondaryEvents []string
	StartDate       *string
	Status          string
	PauseReason     string
	Winner          string
}

// TestExperiments drives an experiment's life over HTTP: created with its
// flag (key from the name, control and treatment 50/50), started, paused,
// resumed, a winner applied; transitions that are not allowed; a running
// experiment's arms locked; what the SDK configuration says at each step,
// and that the Go assignment of that configuration holds users out and
// splits the rest.
func TestExperiments(t *testing.T) {
	s := startServer(t, t.TempDir())
	a, b := newTenant(t, s, "Shop"), newTenant(t, s, "Blog")
	post := func(cred, path string, body any) (response, experimentWire) {
		t.Helper()
		res := annCall(t, s, cred, "POST", path, body)
		var e experimentWire
		json.Unmarshal(res.Body, &e)
		return res, e
	}
	res, e := post(a.Token, "/api/v1/experiments", map[string]any{"name": "Pricing copy test", "holdout": 10,
		"primaryEvent": "signup_completed", "secondaryEvents": []string{"checkout"}, "startDate": "2026-11-20"})
	if res.Status != 201 || e.Status != "draft" || e.FlagKey != "pricing_copy_test" || e.Holdout != 10 || e.StartDate == nil || *e.StartDate != "2026-11-20T00:00:00Z" {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	var f flag
	json.Unmarshal(annCall(t, s, a.Token, "GET", "/api/v1/flags/"+strconv.FormatInt(e.FlagID, 10), nil).Body, &f)
	if !f.Enabled || f.Rollout != 100 || len(f.Variants) != 2 || f.Variants[0].Key != "control" || f.Variants[1].Weight != 50 {
		t.Errorf("the experiment's flag: %+v", f)
	}
	base := "/api/v1/experiments/" + strconv.FormatInt(e.ID, 10)

	// Bad input and refused transitions.
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"name": "H", "holdout": 26}, "holdout"},
		{map[string]any{"name": "Arms", "variants": []map[string]any{{"key": "a", "weight": 100}}}, "variants"},
		{map[string]any{"name": "Five", "variants": []map[string]any{{"key": "a", "weight": 20}, {"key": "b", "weight": 20}, {"key": "c", "weight": 20}, {"key": "d", "weight": 20}, {"key": "e", "weight": 20}}}, "variants"},
		{map[string]any{"name": "D", "startDate": "20 Nov"}, "startDate"},
		{map[string]any{"name": "Flag and arms", "flagId": e.FlagID, "variants": []map[string]any{{"key": "a", "weight": 50}, {"key": "b", "weight": 50}}}, "variants"},
	} {
		res, _ := post(a.Token, "/api/v1/experiments", c.body)
		wantError(t, res, 400, "invalid_request", c.field)
	}
	res, _ = post(a.Token, "/api/v1/experiments", map[string]any{"name": "Second", "flagId": e.FlagID})
	wantError(t, res, 409, "experiment_exists", "")
	res, _ = post(b.Token, "/api/v1/experiments", map[string]any{"name": "Foreign", "flagId": e.FlagID})
	wantError(t, res, 404, "flag_not_found", "")
	wantError(t, annCall(t, s, b.Token, "GET", base, nil), 404, "experiment_not_found", "")
	res, _ = post(a.Token, base+"/pause", nil)
	wantError(t, res, 409, "invalid_transition", "")
	res, _ = post(a.Token, base+"/apply-winner", map[string]any{"variant": "treatment"})
	wantError(t, res, 409, "invalid_transition", "")

	// Started: the configuration carries the experiment and its holdout.
	if res, e = post(a.Token, base+"/start", nil); res.Status != 200 || e.Status != "running" {
		t.Fatalf("start: %d %s", res.Status, res.Body)
	}
	_, cfg := sdkConfigFlags(t, s, a.Live, "")
	if len(cfg) != 1 || cfg[0].Experiment == nil || cfg[0].Experiment.ID != e.ID || cfg[0].Experiment.Status != "running" || cfg[0].Experiment.Holdout != 0.1 {
		t.Fatalf("config of a running experiment: %+v", cfg)
	}
	held, arms := 0, map[string]int{}
	for i := range 2000 {
		as, _ := flags.Assign(&cfg[0], "user_"+strconv.Itoa(i), nil, nil)
		if as.Holdout {
			held++
		} else {
			arms[as.Variant]++
		}
	}
	if held < 140 || held > 260 || arms["control"] < 800 || arms["treatment"] < 800 {
		t.Errorf("2000 users: %d held out, arms %v; want about 200 and 900 each", held, arms)
	}
	fpath := "/api/v1/flags/" + strconv.FormatInt(e.FlagID, 10)
	wantError(t, annCall(t, s, a.Token, "PUT", fpath, map[string]any{"variants": []map[string]any{{"key": "control", "weight": 40}, {"key": "treatment", "weight": 60}}}), 409, "experiment_running", "")
	wantError(t, annCall(t, s, a.Token, "DELETE", fpath, nil), 409, "experiment_running", "")
	wantError(t, annCall(t, s, a.Token, "PUT", base, map[string]any{"holdout": 5}), 409, "experiment_running", "")
	if r := annCall(t, s, a.Token, "PUT", fpath, map[string]any{"description": "Headline test"}); r.Status != 200 {
		t.Errorf("a change that keeps the split: %d %s", r.Status, r.Body)
	}

	// Paused: everyone gets control from the configuration.
	if res, e = post(a.Token, base+"/pause", nil); res.Status != 200 || e.Status != "paused" || e.PauseReason != "manual" {
		t.Fatalf("pause: %d %s", res.Status, res.Body)
	}
	_, cfg = sdkConfigFlags(t, s, a.Live, "")
	for i := range 200 {
		if as, _ := flags.Assign(&cfg[0], "user_"+strconv.Itoa(i), nil, nil); as.Variant != "control" {
			t.Fatalf("a paused experiment gave %q", as.Variant)
		}
	}
	res, _ = post(a.Token, base+"/start", nil)
	wantError(t, res, 409, "invalid_transition", "")
	if res, e = post(a.Token, base+"/resume", nil); res.Status != 200 || e.Status != "running" || e.PauseReason != "" {
		t.Fatalf("resume: %d %s", res.Status, res.Body)
	}

	// Apply winner: the flag goes to treatment for everyone, audited; the experiment is completed.
	res, _ = post(a.Token, base+"/apply-winner", map[string]any{"variant": "nope"})
	wantError(t, res, 400, "invalid_request", "variant")
	if res, e = post(a.Token, base+"/apply-winner", map[string]any{"variant": "treatment"}); res.Status != 200 || e.Status != "completed" || e.Winner != "treatment" {
		t.Fatalf("apply winner: %d %s", res.Status, res.Body)
	}
	_, cfg = sdkConfigFlags(t, s, a.Live, "")
	if cfg[0].Experiment == nil || cfg[0].Experiment.Status != "completed" || cfg[0].Rollout != 100 {
		t.Fatalf("config after apply winner: %+v", cfg)
	}
	for i := range 200 {
		if as, _ := flags.Assign(&cfg[0], "user_"+strconv.Itoa(i), nil, nil); as.Variant != "treatment" || as.Holdout {
			t.Fatalf("after apply winner a user got %+v", as)
		}
	}
	var trail struct {
		Items []struct{ Action, Actor string }
	}
	json.Unmarshal(annCall(t, s, a.Token, "GET", fpath+"/changes", nil).Body, &trail)
	if len(trail.Items) != 3 || trail.Items[0].Action != "updated" {
		t.Errorf("the flag's trail after apply winner: %+v", trail.Items)
	}
	wantError(t, annCall(t, s, a.Token, "PUT", base, map[string]any{"name": "Renamed"}), 409, "experiment_completed", "")
	// The flag is free for a new experiment.
	if res, _ := post(a.Token, "/api/v1/experiments", map[string]any{"name": "Round two", "flagId": e.FlagID}); res.Status != 201 {
		t.Errorf("a new experiment on the flag: %d %s", res.Status, res.Body)
	}
}

// TestSDKConfigGzip reads GET /api/v1/config as a browser does (Accept-Encoding
// with gzip) and as a client that takes no encoding: the same configuration,
// compressed for the first, each encoding with its own ETag and a 304 for it,
// Vary naming the header, and gzip refused by q=0 sent plain.
func TestSDKConfigGzip(t *testing.T) {
	s := startServer(t, t.TempDir())
	a := newTenant(t, s, "Shop")
	for i := range 30 {
		res := annCall(t, s, a.Token, "POST", "/api/v1/flags", map[string]any{
			"name": fmt.Sprintf("Flag %d", i), "enabled": true, "rollout": 50,
			"conditions": []map[string]any{{"trait": "plan", "op": "eq", "value": "pro"}},
		})
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
	}
	// No transparent decompression: the test sees the bytes sent.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(encoding, etag string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+"/api/v1/config?api_key="+a.Live+"&distinct_id=u1", nil)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	plain, plainBody := get("", "")
	if plain.StatusCode != 200 || plain.Header.Get("Content-Encoding") != "" || plain.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("plain: %d %v", plain.StatusCode, plain.Header)
	}
	var cfg struct{ Flags []json.RawMessage }
	if err := json.Unmarshal(plainBody, &cfg); err != nil || len(cfg.Flags) != 30 {
		t.Fatalf("plain body: %d flags, %v", len(cfg.Flags), err)
	}
	zipped, zippedBody := get("gzip, deflate, br", "")
	if zipped.StatusCode != 200 || zipped.Header.Get("Content-Encoding") != "gzip" || zipped.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip: %d %v", zipped.StatusCode, zipped.Header)
	}
	if n, _ := strconv.Atoi(zipped.Header.Get("Content-Length")); n != len(zippedBody) || len(zippedBody) >= len(plainBody)/4 {
		t.Errorf("gzip body %d bytes (Content-Length %q) for %d plain", len(zippedBody), zipped.Header.Get("Content-Length"), len(plainBody))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zippedBody))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plainBody) {
		t.Fatalf("gzip body unzips to %d bytes (%v), want the plain %d", len(unzipped), err, len(plainBody))
	}
	pe, ze := plain.Header.Get("ETag"), zipped.Header.Get("ETag")
	if pe == "" || ze == "" || pe == ze {
		t.Fatalf("ETags plain %q, gzip %q: each encoding needs its own", pe, ze)
	}
	if r, _ := get("gzip", ze); r.StatusCode != 304 || r.Header.Get("Content-Encoding") != "" {
		t.Errorf("gzip with its ETag: %d %v", r.StatusCode, r.Header)
	}
	if r, _ := get("", pe); r.StatusCode != 304 {
		t.Errorf("plain with its ETag: %d", r.StatusCode)
	}
	if r, _ := get("gzip", pe); r.StatusCode != 200 {
		t.Errorf("gzip with the plain ETag: %d, want the gzip body", r.StatusCode)
	}
	if r, b := get("gzip;q=0, identity", ""); r.StatusCode != 200 || r.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, plainBody) {
		t.Errorf("gzip;q=0: %d %v", r.StatusCode, r.Header)
	}
}
