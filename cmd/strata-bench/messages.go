package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"strata/internal/config"
	"strata/internal/store/duckdb"
)

// The in-app messages benchmark of issue 22: GET /api/v1/messages/active of
// a product with 100 active campaigns and the cap state of 1 M users (two
// campaigns each), each request for a random one of them, so
// that most miss the server's memory and read the state store: at full
// speed (wrk) and at a fixed 1,000 requests/s.

const (
	benchCampaigns = 100
	benchMsgUsers  = 1_000_000
)

func runMessagesBench(bin string, keep bool) error {
	dataDir, cleanup, err := benchDataDir("strata-mbench-", keep)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Printf("# In-app messages benchmark\n\n")
	srv, err := startServer(bin, dataDir)
	if err != nil {
		return err
	}
	key := srv.key
	ids, err := createBenchCampaigns(bin, dataDir, srv)
	srv.stop()
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := loadMessageStates(dataDir, ids); err != nil {
		return fmt.Errorf("loading the cap state: %w", err)
	}
	fmt.Printf("%d campaigns active; the cap state of %d users (two campaigns each) loaded in %.1f s\n",
		len(ids), benchMsgUsers, time.Since(t0).Seconds())

	if srv, err = startServer(bin, dataDir); err != nil {
		return err
	}
	defer srv.stop()
	path := "/api/v1/messages/active?api_key=" + key + "&path=/app/settings&identified=1&traits=%7B%22plan%22%3A%22pro%22%7D&distinct_id=user_"
	resp, err := http.Get(srv.url + path + "42")
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var ans struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(body, &ans); err != nil || resp.StatusCode != 200 || len(ans.Messages) == 0 {
		return fmt.Errorf("active: %d %s", resp.StatusCode, body)
	}
	fmt.Printf("a user's answer: %d campaigns, %d bytes\n", len(ans.Messages), len(body))

	// wrk picks a random user of the million for every request.
	script := filepath.Join(dataDir, "users.lua")
	lua := fmt.Sprintf("math.randomseed(%d)\nrequest = function()\n  return wrk.format(\"GET\", %q .. math.random(0, %d))\nend\n",
		time.Now().UnixNano()%1e9, path, benchMsgUsers-1)
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		return err
	}
	if _, _, err := runWrk(64, 3*time.Second, "-s", script, srv.url+path+"0"); err != nil { // warm up
		return err
	}
	rps, p99, err := runWrk(64, 10*time.Second, "-s", script, srv.url+path+"0")
	if err != nil {
		return err
	}
	p50f, p99f, maxf, err := fixedRateFunc(func(int) string {
		return srv.url + path + fmt.Sprint(rand.IntN(benchMsgUsers))
	}, 1000, 10*time.Second)
	if err != nil {
		return err
	}
	fmt.Printf("\n| measure | target | result |\n|---|---|---|\n")
	fmt.Printf("| /api/v1/messages/active, 100 campaigns, 1 M users, random user a request, wrk -c64 10 s (p99) | ≥ 5,000 requests/s | %.0f requests/s (%.1f ms) |\n", rps, p99)
	fmt.Printf("| the same at a fixed 1,000 requests/s, 10 s: p50 / p99 / max | p99 ≤ 10 ms | %.2f / %.2f / %.2f ms |\n", p50f, p99f, maxf)
	return nil
}

// createBenchCampaigns turns auto-render on and creates the active
// campaigns over the API: a mix of paths, audiences, caps, step kinds and,
// every tenth, two variants.
func createBenchCampaigns(bin, dataDir string, srv *server) ([]int64, error) {
	tok, err := token(bin, dataDir)
	if err != nil {
		return nil, err
	}
	if err := apiCall(srv, tok, "PUT", "/api/v1/messages/settings", map[string]any{"autoRender": true}, nil); err != nil {
		return nil, err
	}
	paths := []string{"", "^/app", "^/app/(settings|billing)$", "^/pricing$", "checkout", "^/docs/[a-z-]+$"}
	var ids []int64
	for i := range benchCampaigns {
		steps := []map[string]any{
			{"kind": "modal", "title": fmt.Sprintf("Tour %d", i), "body": "Welcome to **Strata**. See [the docs](https://example.com/docs).", "bodyFormat": "markdown",
				"cta": map[string]any{"label": "Start", "url": "/start"}},
			{"kind": "tooltip", "title": "Here", "body": "Your reports live here.", "selector": "#nav .reports"},
			{"kind": "survey", "question": map[string]any{"id": "nps", "type": "nps", "prompt": "How likely are you to recommend us?"}},
		}
		variants := []map[string]any{{"key": "control", "weight": 100, "steps": steps}}
		if i%10 == 0 {
			variants = []map[string]any{{"key": "control", "weight": 50, "steps": steps}, {"key": "short", "weight": 50, "steps": steps[:1]}}
		}
		audience := map[string]any{"identified": i%2 == 0, "percentage": 50 + i%51, "conditions": []map[string]any{}}
		if i%3 == 0 {
			audience["conditions"] = []map[string]any{{"trait": "plan", "op": "eq", "value": "pro"}}
		}
		caps := []map[string]any{{"kind": "once"}, {"kind": "times", "count": 3}, {"kind": "per_day", "count": 2}}
		var c struct{ ID int64 }
		if err := apiCall(srv, tok, "POST", "/api/v1/campaigns", map[string]any{
			"name": fmt.Sprintf("Campaign %d", i), "status": "active", "trigger": map[string]any{"event": "$pageview"},
			"pathRegex": paths[i%len(paths)], "audience": audience, "cap": caps[i%len(caps)], "variants": variants}, &c); err != nil {
			return nil, err
		}
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// loadMessageStates writes each of the million users' row straight into
// the embedded store: one impression of each of two campaigns, one user in
// five having ended one of them.
func loadMessageStates(dataDir string, ids []int64) error {
	ctx := context.Background()
	st, err := duckdb.Open(ctx, dataDir, duckdb.Options{MemoryLimit: config.Default().DuckDBMemoryLimit})
	if err != nil {
		return err
	}
	defer st.Close()
	day := time.Now().UTC().Unix() / 86400
	_, err = st.DB().ExecContext(ctx, `INSERT INTO message_users
		SELECT '1/user_' || i, 1, 'user_' || i,
		       '[{"c":' || ($1::BIGINT + i % $2) || ',"i":1,"d":' || $3::BIGINT || ',"di":1,"v":"control"},' ||
		       '{"c":' || ($1::BIGINT + (i + 37) % $2) || ',"i":1,"d":' || $3::BIGINT || ',"di":1,' ||
		       CASE WHEN i % 5 = 0 THEN '"e":"message_dismiss",' ELSE '' END || '"v":"control"}]',
		       now()::TIMESTAMP
		FROM range($4) t(i)`, ids[0], len(ids), day, benchMsgUsers)
	return err
}
