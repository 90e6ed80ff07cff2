package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestLiveVisitors runs GET /api/v1/query/live on the real binary: each
// product's token sees its own visitors of the last five minutes (a view
// older than that, arriving now in a late batch, and a bot's do not
// count), the test environment is apart, an API key is refused, and the
// count takes nothing from the query budget: with a budget of two queries
// a minute, twenty counts pass and the two queries still do.
func TestLiveVisitors(t *testing.T) {
	s := startServer(t, t.TempDir(), "--query-rate-limit", "2", "--live-cache", "1s")
	shop, blog := newTenant(t, s, "shop"), newTenant(t, s, "blog")
	send := func(key string, ids []string, ago time.Duration, ua string) {
		t.Helper()
		now := time.Now().UTC()
		var batch []map[string]any
		for _, id := range ids {
			batch = append(batch, map[string]any{"event_name": "$pageview", "distinct_id": id, "url": "https://example.com/",
				"timestamp": now.Add(-ago).Format(time.RFC3339Nano)})
		}
		h := map[string]string{"X-API-Key": key, "Content-Type": "application/json"}
		if ua != "" {
			h["User-Agent"] = ua
		}
		r := do(t, "POST", s.URL+"/e", mustJSON(map[string]any{"batch": batch, "sent_at": now.Format(time.RFC3339Nano)}), h)
		if r.Status != http.StatusAccepted {
			t.Fatalf("ingest: %d %s", r.Status, r.Body)
		}
	}
	send(shop.Live, []string{"a", "b", "c"}, time.Minute, "")
	send(shop.Live, []string{"a"}, 4*time.Minute, "")
	send(shop.Live, []string{"late"}, 6*time.Minute, "")
	send(shop.Live, []string{"crawler"}, time.Minute, "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)")
	send(shop.Test, []string{"t1"}, time.Minute, "")
	send(blog.Live, []string{"x", "y"}, 2*time.Minute, "")

	live := func(credential, query string) response {
		t.Helper()
		return do(t, "GET", s.URL+"/api/v1/query/live"+query, nil, map[string]string{"Authorization": "Bearer " + credential})
	}
	visitors := func(credential, query string) int64 {
		t.Helper()
		r := live(credential, query)
		var res struct {
			Visitors      int64     `json:"visitors"`
			WindowSeconds int       `json:"windowSeconds"`
			At            time.Time `json:"at"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &res) != nil || res.WindowSeconds != 300 || time.Since(res.At) > 5*time.Second {
			t.Fatalf("GET /api/v1/query/live%s: %d %s", query, r.Status, r.Body)
		}
		return res.Visitors
	}
	for _, c := range []struct {
		name, token, query string
		want               int64
	}{
		{"shop", shop.Token, "", 3},
		{"shop's test environment", shop.Token, "?env=test", 1},
		{"blog", blog.Token, "", 2},
	} {
		if got := visitors(c.token, c.query); got != c.want {
			t.Errorf("%s: %d visitors now, want %d", c.name, got, c.want)
		}
	}
	for _, key := range []string{shop.Live, shop.Test} {
		wantError(t, live(key, ""), 403, "key_not_allowed", "")
	}
	wantError(t, live(shop.Token, "?env=staging"), 400, "invalid_request", "")

	for i := range 20 {
		if r := live(shop.Token, ""); r.Status != 200 {
			t.Fatalf("count %d of 20 with a budget of 2 queries a minute: %d %s", i+1, r.Status, r.Body)
		}
	}
	funnel := mustJSON(map[string]any{"steps": []string{"a", "b"}})
	for i := range 2 {
		if r := do(t, "POST", s.URL+"/api/v1/query/funnel", funnel, map[string]string{"Authorization": "Bearer " + shop.Token}); r.Status != 200 {
			t.Errorf("query %d of 2 after the counts: %d %s; the counts took from the budget", i+1, r.Status, r.Body)
		}
	}

	// A new visitor shows once the one-second cache has passed.
	send(blog.Live, []string{"z"}, 0, "")
	deadline := time.Now().Add(5 * time.Second)
	for visitors(blog.Token, "") != 3 {
		if time.Now().After(deadline) {
			t.Fatal("a new visitor did not show within 5 s with a one-second cache")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
