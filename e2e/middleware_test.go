package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-analytics/strata/sdk/go/strata"
)

// The user agents the middleware tests send: three AI bots as they
// announce themselves, and a browser.
var middlewareAgents = []struct{ bot, ua string }{
	{"GPTBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"},
	{"ClaudeBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)"},
	{"PerplexityBot", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)"},
	{"", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"},
}

// siteWith serves a small site behind the Go middleware on loopback.
func siteWith(t *testing.T, c *strata.Client) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: c.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<h1>Pricing</h1>")
	}))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func fetchAs(t *testing.T, url, ua string) time.Duration {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Referer", "https://chatgpt.com/")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "<h1>Pricing</h1>" {
		t.Fatalf("site answered %d %q", resp.StatusCode, body)
	}
	return time.Since(start)
}

// TestGoMiddleware runs the Go SDK's middleware in a real net/http server
// in front of the real binary: the three bots' fetches show in the
// Acquisition panel's query with one hit each and the page they fetched,
// the browser's does not; with Strata stopped, the site answers as fast.
func TestGoMiddleware(t *testing.T) {
	s := startServer(t, t.TempDir())
	tn := newTenant(t, s, "Site")
	c := strata.New(strata.Options{APIKey: tn.Live, Host: s.URL, FlushInterval: 50 * time.Millisecond})
	site := siteWith(t, c)
	for _, a := range middlewareAgents {
		fetchAs(t, site+"/pricing?ref=ai", a.ua)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Bots []struct {
			Name          string
			CategoryLabel string
			Hits          int
		}
		TopPages []struct {
			URL  string
			Hits int
		}
	}
	waitFor(t, 10*time.Second, "the bots' hits", func() bool {
		r := do(t, "GET", s.URL+"/api/v1/query/bots", nil, map[string]string{"Authorization": "Bearer " + tn.Token})
		json.Unmarshal(r.Body, &res)
		return len(res.Bots) >= 3
	})
	var names []string
	for _, b := range res.Bots {
		names = append(names, b.Name)
		if b.Hits != 1 || b.CategoryLabel != "AI crawler (training/index)" {
			t.Errorf("%+v", b)
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "ClaudeBot,GPTBot,PerplexityBot" || len(res.TopPages) != 1 ||
		!strings.HasSuffix(res.TopPages[0].URL, "/pricing?ref=ai") || res.TopPages[0].Hits != 3 {
		t.Fatalf("bots %v, pages %+v", names, res.TopPages)
	}
	if c.Sent() != 3 || c.Dropped() != 0 {
		t.Errorf("sent %d, dropped %d", c.Sent(), c.Dropped())
	}

	// Strata stopped: the site answers as fast, bots and humans alike.
	s.Stop()
	down := strata.New(strata.Options{APIKey: tn.Live, Host: s.URL, FlushInterval: 10 * time.Millisecond})
	site = siteWith(t, down)
	for range 20 {
		for _, a := range middlewareAgents {
			// A stopped Strata must cost a request nothing it waits for; the
			// bound is loose for a busy machine, far below a connect timeout.
			if d := fetchAs(t, site+"/", a.ua); d > 500*time.Millisecond {
				t.Errorf("%s with Strata down: %v", a.bot, d)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	down.Close(ctx)
}
