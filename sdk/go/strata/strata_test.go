package strata

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestClassifyBotTable runs the server's own classification cases (a copy
// of internal/enrich/bots/testdata, checked by the server module's
// internal/sdkgo tests): the SDK answers as ingest does.
func TestClassifyBotTable(t *testing.T) {
	f, err := os.Open("testdata/user_agents.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		want, ua, _ := strings.Cut(line, "\t")
		b, ok := ClassifyBot(ua)
		if want == "-" && ok || want != "-" && (!ok || b.Name != want) || ok != IsAIBot(ua) {
			t.Errorf("%q: %+v %v, want %s", ua, b, ok, want)
		}
		n++
	}
	if n < 50 {
		t.Fatalf("only %d cases read", n)
	}
	b, _ := ClassifyBot("Mozilla/5.0 (compatible; GPTBot/1.2)")
	if b.Operator != "OpenAI" || b.Category != "ai_crawler" || b.CategoryLabel != "AI crawler (training/index)" {
		t.Errorf("GPTBot: %+v", b)
	}
	for _, ua := range []string{"", strings.Repeat("GPTBot", 200_000), "ГПТБот/1.0 ü 😀", "\x00\xff\xfe"} {
		if _, ok := ClassifyBot(ua); ok {
			t.Errorf("%.40q classified as a bot", ua)
		}
	}
}

// ingestStub answers POST /e with the statuses of answers in turn (then
// 202) and keeps the batches it got.
type ingestStub struct {
	mu      sync.Mutex
	answers []int
	batches [][]wireEvent
	keys    []string
}

func (s *ingestStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct{ Batch []wireEvent }
	json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, r.Header.Get("X-API-Key"))
	status := http.StatusAccepted
	if len(s.answers) > 0 {
		status, s.answers = s.answers[0], s.answers[1:]
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "0")
	}
	w.WriteHeader(status)
	if status == http.StatusAccepted {
		s.batches = append(s.batches, body.Batch)
	}
}

func (s *ingestStub) events() []wireEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []wireEvent
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

func newTestClient(t *testing.T, url string, opt Options) (*Client, *atomic.Int64) {
	opt.APIKey, opt.Host = "st_live_test", url
	c := New(opt)
	waits := &atomic.Int64{}
	c.sleep = func(ctx context.Context, d time.Duration) error { waits.Add(1); return nil }
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, waits
}

// TestRetries: 429 and 5xx are retried and the batch then arrives once
// with the same uuids; another 4xx is not retried; after MaxRetries a
// batch is given up and counted.
func TestRetries(t *testing.T) {
	stub := &ingestStub{answers: []int{429, 503, 500}}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	c, waits := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour})
	c.Capture(Event{Name: "signup", DistinctID: "u1", Properties: map[string]any{"plan": "pro"}})
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := stub.events()
	if len(ev) != 1 || ev[0].EventName != "signup" || ev[0].UUID == "" || waits.Load() != 3 || c.Sent() != 1 || stub.keys[0] != "st_live_test" {
		t.Fatalf("after 429, 503, 500: %+v, %d waits, %d sent", ev, waits.Load(), c.Sent())
	}

	stub.answers = []int{400}
	c.Capture(Event{Name: "bad", DistinctID: "u1"})
	c.Flush(context.Background())
	if len(stub.events()) != 1 || waits.Load() != 3 {
		t.Errorf("a 400 was retried: %d waits", waits.Load())
	}

	stub.answers = []int{500, 500, 500, 500, 500, 500, 500}
	c.Capture(Event{Name: "lost", DistinctID: "u1"})
	c.Flush(context.Background())
	if c.Failed() != 1 || waits.Load() != 3+5 {
		t.Errorf("given up: %d failed after %d waits", c.Failed(), waits.Load())
	}
}

// TestQueueBound: with Strata not answering, the queue keeps the newest
// MaxQueue events and counts the dropped ones; Close then sends them.
func TestQueueBound(t *testing.T) {
	stub := &ingestStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour, MaxQueue: 50, BatchSize: 500})
	for i := range 80 {
		c.Capture(Event{Name: "e", DistinctID: "u", Properties: map[string]any{"i": i}})
	}
	if c.Dropped() != 30 {
		t.Errorf("dropped %d, want 30", c.Dropped())
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := stub.events()
	if len(ev) != 50 || ev[0].Properties["i"].(float64) != 30 || ev[49].Properties["i"].(float64) != 79 {
		t.Fatalf("sent %d events, first %v", len(ev), ev[0].Properties)
	}
	c.Capture(Event{Name: "late", DistinctID: "u"})
	if c.Dropped() != 31 {
		t.Errorf("an event after Close was not counted as dropped")
	}
}

// TestMiddleware: a bot's GET is queued as a $pageview with its user
// agent, URL and referrer, under the bots' distinct_id; a human's and a
// bot's POST are not; every request reaches the handler.
func TestMiddleware(t *testing.T) {
	stub := &ingestStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour})
	served := 0
	h := c.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++; io.WriteString(w, "page") }))
	for _, req := range []struct{ method, ua string }{
		{"GET", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"},
		{"GET", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"},
		{"POST", "ClaudeBot/1.0"},
		{"GET", ""},
	} {
		r := httptest.NewRequest(req.method, "http://shop.example/pricing?plan=pro", nil)
		r.Header.Set("User-Agent", req.ua)
		r.Header.Set("Referer", "https://chatgpt.com/")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Body.String() != "page" {
			t.Errorf("%s %q: body %q", req.method, req.ua, w.Body)
		}
	}
	c.Flush(context.Background())
	ev := stub.events()
	if served != 4 || len(ev) != 1 || ev[0].EventName != "$pageview" || ev[0].DistinctID != "$server_bot" ||
		ev[0].URL != "http://shop.example/pricing?plan=pro" || ev[0].Referrer != "https://chatgpt.com/" ||
		!strings.Contains(ev[0].UserAgent, "GPTBot") || ev[0].Properties["$server_captured"] != "true" {
		t.Fatalf("served %d, sent %+v", served, ev)
	}
}

// TestMiddlewareStrataDown: with nothing listening at the host, or a host
// that never answers, a bot's request is answered at once.
func TestMiddlewareStrataDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	hang := ln.Addr().String() // accepts into the backlog, never answers
	defer ln.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := closed.Addr().String()
	closed.Close()
	for _, host := range []string{"http://" + hang, "http://" + gone} {
		c := New(Options{APIKey: "k", Host: host, FlushInterval: time.Millisecond, BatchSize: 1})
		h := c.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		start := time.Now()
		for range 200 {
			r := httptest.NewRequest("GET", "http://shop.example/", nil)
			r.Header.Set("User-Agent", "GPTBot/1.2")
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: 200 bot requests took %v", host, d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		c.Close(ctx)
		cancel()
	}
}

// TestRing: the queue keeps order through wrap-around, drops the oldest
// when full, and takes a batch back at its head only while there is room.
func TestRing(t *testing.T) {
	r := ring{buf: make([]wireEvent, 4)}
	ev := func(s string) wireEvent { return wireEvent{EventName: s} }
	names := func(list []wireEvent) string {
		var out []string
		for _, e := range list {
			out = append(out, e.EventName)
		}
		return strings.Join(out, ",")
	}
	for _, s := range []string{"a", "b", "c"} {
		r.push(ev(s))
	}
	if got := names(r.pop(2)); got != "a,b" {
		t.Fatalf("pop %s", got)
	}
	dropped := 0
	for _, s := range []string{"d", "e", "f", "g"} {
		if r.push(ev(s)) {
			dropped++
		}
	}
	if dropped != 1 || r.n != 4 {
		t.Fatalf("dropped %d, holding %d", dropped, r.n)
	}
	if r.unshift(ev("x")) {
		t.Error("unshift into a full ring")
	}
	batch := r.pop(2)
	if !r.unshift(batch[1]) || !r.unshift(batch[0]) {
		t.Fatal("unshift with room")
	}
	if got := names(r.pop(10)); got != "d,e,f,g" {
		t.Errorf("after taking a batch back: %s", got)
	}
	if r.pop(1) != nil {
		t.Error("pop from an empty ring")
	}
}

// TestFlushWaitsForBatchUnderWay: Flush returns once every event queued
// before it was sent, including a batch the background sender had taken
// and was still sending (the build before returned while it was).
func TestFlushWaitsForBatchUnderWay(t *testing.T) {
	stub := &ingestStub{}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 { // the background sender's batch is slow
			time.Sleep(300 * time.Millisecond)
		}
		stub.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, Options{FlushInterval: time.Hour, BatchSize: 10})
	for i := range 10 {
		c.Capture(Event{Name: "e", DistinctID: "u", Properties: map[string]any{"i": i}})
	}
	time.Sleep(50 * time.Millisecond) // the full batch is under way
	c.Capture(Event{Name: "e", DistinctID: "u", Properties: map[string]any{"i": 10}})
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(stub.events()); n != 11 {
		t.Fatalf("Flush returned with %d of 11 events sent", n)
	}
}
