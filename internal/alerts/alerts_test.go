package alerts

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/analytics"
)

// TestSign checks the signature against crypto/hmac computed here, and
// Verify against it: a changed body, another secret and a bad header fail.
func TestSign(t *testing.T) {
	secret, body := "st_whsec_test", []byte(`{"kind":"new","fingerprint":"ab"}`)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if got := Sign(secret, body); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	// A fixed vector, so that the scheme cannot drift unnoticed
	// (docs/errors.md shows how a receiver computes it).
	if got := Sign("key", []byte("The quick brown fox jumps over the lazy dog")); got != "sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8" {
		t.Errorf("Sign of the RFC example = %s", got)
	}
	if !Verify(secret, body, want) {
		t.Error("Verify refused the right signature")
	}
	for _, c := range []struct {
		secret string
		body   string
		sig    string
	}{
		{secret, `{"kind":"new","fingerprint":"ac"}`, want},
		{"st_whsec_other", string(body), want},
		{secret, string(body), strings.TrimPrefix(want, "sha256=")},
		{secret, string(body), "sha256=zz"},
		{secret, string(body), ""},
	} {
		if Verify(c.secret, []byte(c.body), c.sig) {
			t.Errorf("Verify(%q, %q, %q) accepted", c.secret, c.body, c.sig)
		}
	}
	s1, s2 := NewSecret(), NewSecret()
	if s1 == s2 || !strings.HasPrefix(s1, SecretPrefix) || len(s1) != len(SecretPrefix)+43 || ShownSecret(s1) != s1[:len(SecretPrefix)+4] {
		t.Errorf("NewSecret: %q %q", s1, s2)
	}
}

// TestSpike holds the spike rule: above factor × the 7-day hourly average
// (history / 168, quiet hours counting as zero) and at least the minimum.
func TestSpike(t *testing.T) {
	for _, c := range []struct {
		count, history int64
		factor         float64
		min            int64
		spike          bool
		average        float64
	}{
		{50, 168, 5, 10, true, 1},      // 50 > 5 × 1
		{5, 168, 5, 10, false, 1},      // 5 is not above 5 × 1, and under the minimum
		{10, 168 * 2, 5, 10, false, 2}, // 10 is not above 5 × 2
		{11, 168 * 2, 5, 10, true, 2},  // 11 is
		{9, 0, 5, 10, false, 0},        // no history, under the minimum: one error does not alert
		{10, 0, 5, 10, true, 0},        // no history, at the minimum
		{1000, 168 * 300, 5, 10, false, 300},
		{1501, 168 * 300, 5, 10, true, 300},
		{15, 84, 1.5, 1, true, 0.5},
		{100, 1, 5, 200, false, 0.006}, // under a high minimum
	} {
		spike, avg := Spike(c.count, c.history, c.factor, c.min)
		if spike != c.spike || avg != c.average {
			t.Errorf("Spike(%d, %d, %v, %d) = %v, %v; want %v, %v", c.count, c.history, c.factor, c.min, spike, avg, c.spike, c.average)
		}
	}
}

// receiver is a webhook receiver on 127.0.0.1 that answers with the
// statuses given, in order (the last one after that), and keeps what it
// received.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []received
}

type received struct {
	body      []byte
	signature string
	timestamp string
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{body, req.Header.Get(SignatureHeader), req.Header.Get(TimestampHeader)})
		status := r.statuses[min(len(r.got)-1, len(r.statuses)-1)]
		r.mu.Unlock()
		if status == http.StatusFound {
			http.Redirect(w, req, "/elsewhere", status)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte("secret internal answer"))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func fastSender() *Sender {
	s := NewSender(analytics.WebhookPolicy{})
	s.Backoff = time.Millisecond
	return s
}

// TestDeliver: retries with backoff on 500 until 2xx; no retry on 400; a
// redirect is not followed; at most Attempts tries; a refused address is
// never connected to; every attempt is signed, with its timestamp.
func TestDeliver(t *testing.T) {
	ctx := context.Background()
	body := func(at time.Time) []byte { return []byte(`{"t":` + strconv.FormatInt(at.Unix(), 10) + `}`) }
	for _, c := range []struct {
		name      string
		statuses  []int
		delivered bool
		attempts  int
		err       string
	}{
		{"ok", []int{204}, true, 1, ""},
		{"retried", []int{500, 503, 200}, true, 3, ""},
		{"rate limited", []int{429, 200}, true, 2, ""},
		{"refused", []int{400, 200}, false, 1, "HTTP 400"},
		{"redirect", []int{302, 200}, false, 1, "HTTP 302: the receiver redirected"},
		{"down", []int{500}, false, 5, "HTTP 500"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rcv := newReceiver(t, c.statuses...)
			var seen []int
			r, n := fastSender().Deliver(ctx, rcv.URL+"/hook", "sec", body, func(n int, r Result) { seen = append(seen, n) })
			if r.Delivered != c.delivered || n != c.attempts || len(seen) != n || !strings.HasPrefix(r.Error, c.err) {
				t.Errorf("Deliver = %+v after %d (%v); want delivered %v after %d, error %q", r, n, seen, c.delivered, c.attempts, c.err)
			}
			got := rcv.received()
			if len(got) != c.attempts {
				t.Fatalf("the receiver got %d requests, want %d", len(got), c.attempts)
			}
			for _, g := range got {
				if !Verify("sec", g.body, g.signature) || !strings.Contains(string(g.body), g.timestamp) {
					t.Errorf("attempt %q signed %q, timestamp %q", g.body, g.signature, g.timestamp)
				}
			}
			if strings.Contains(r.Error, "secret internal answer") {
				t.Error("the receiver's answer body was reported")
			}
		})
	}
	// Link-local addresses are refused at connect time, never retried.
	r, n := fastSender().Deliver(ctx, "http://169.254.169.254/latest", "sec", body, nil)
	if r.Delivered || n != 1 || !strings.Contains(r.Error, "link-local") {
		t.Errorf("link-local: %+v after %d", r, n)
	}
}

// resolver answers every lookup of any host with the next of its answers
// (the last one again once they run out), and counts the lookups.
type resolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	calls   int
}

func (r *resolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return a, nil
}

func addrs(ips ...string) []netip.Addr {
	out := make([]netip.Addr, len(ips))
	for i, ip := range ips {
		out[i] = netip.MustParseAddr(ip)
	}
	return out
}

// TestDeliverRefusesAddresses: webhooks on the addresses the policy
// refuses, written in the URL or resolved from a host name, are refused
// before any connection is made (the error is the refusal, not a failed
// connection), once, without a retry; IPv4 addresses hidden in IPv6 ones
// and the metadata services that are not link-local included. What the
// operator allows is delivered to.
func TestDeliverRefusesAddresses(t *testing.T) {
	ctx := context.Background()
	body := func(time.Time) []byte { return []byte("{}") }
	for _, target := range []string{
		"http://[64:ff9b::a9fe:a9fe]/", "http://[::169.254.169.254]/", "http://[2002:a9fe:a9fe::]/",
		"http://[2001:0:4136:e378:8000:63bf:5601:5601]/", "http://[::ffff:169.254.169.254]/",
		"http://[fd00:ec2::254]/latest/meta-data/", "http://100.100.100.200/latest/meta-data/", "http://192.0.0.192/opc/v2/instance/",
	} {
		r, n := fastSender().Deliver(ctx, target, "sec", body, nil)
		if r.Delivered || n != 1 || !strings.Contains(r.Error, "which is never a receiver") {
			t.Errorf("%s: %+v after %d attempts; want refused once, unconnected", target, r, n)
		}
	}
	// A host name that resolves to one of them, alone or among others
	// (here the receiver itself): every answer is checked.
	rcv := newReceiver(t, 204)
	port := rcv.URL[strings.LastIndexByte(rcv.URL, ':')+1:]
	for _, answer := range [][]netip.Addr{
		addrs("64:ff9b::a9fe:a9fe"), addrs("127.0.0.1", "169.254.169.254"), addrs("::1", "100.100.100.200"),
	} {
		s := newSender(analytics.WebhookPolicy{}, &resolver{answers: [][]netip.Addr{answer}})
		r, n := s.Deliver(ctx, "http://hooks.example.test:"+port+"/hook", "sec", body, nil)
		if r.Delivered || n != 1 || !strings.Contains(r.Error, "which is never a receiver") {
			t.Errorf("a host resolving to %v: %+v after %d attempts; want refused", answer, r, n)
		}
	}
	if got := rcv.received(); len(got) != 0 {
		t.Fatalf("the receiver got %d deliveries", len(got))
	}
	// The operator's allowance: a receiver whose name resolves to an
	// address in an allowed prefix is delivered to. (The loopback
	// receiver stands for it: the refused address is in the answer too,
	// and the connection is made to the one that answers.)
	allow := analytics.WebhookPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}
	s := newSender(allow, &resolver{answers: [][]netip.Addr{addrs("127.0.0.1", "169.254.169.254")}})
	if r, _ := s.Deliver(ctx, "http://hooks.example.test:"+port+"/hook", "sec", body, nil); !r.Delivered {
		t.Errorf("allowed: %+v", r)
	}
	// The dialer's last check, on the socket's own address.
	d := &dialer{}
	if err := d.control("tcp6", "[64:ff9b::a9fe:a9fe]:80", nil); err == nil {
		t.Error("control let a connection to 64:ff9b::a9fe:a9fe through")
	}
	if err := d.control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Errorf("control refused 127.0.0.1: %v", err)
	}
}

// TestSenderPolicyIsTheClients: the policy the API checks webhook URLs
// against (Sender.Policy) is the one the client connects by, refused and
// allowed alike.
func TestSenderPolicyIsTheClients(t *testing.T) {
	rcv := newReceiver(t, 204)
	port := rcv.URL[strings.LastIndexByte(rcv.URL, ':')+1:]
	body := func(time.Time) []byte { return []byte("{}") }
	allow := analytics.WebhookPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("169.254.169.254/32")}}
	for _, p := range []analytics.WebhookPolicy{{}, allow} {
		s := newSender(p, &resolver{answers: [][]netip.Addr{addrs("127.0.0.1", "169.254.169.254")}})
		s.Attempts = 1
		hook := analytics.AlertWebhook{URL: "http://169.254.169.254/hook", SpikeFactor: 5, SpikeMin: 10}
		checked := hook.Validate(s.Policy()) == nil
		r, _ := s.Deliver(context.Background(), "http://hooks.example.test:"+port+"/hook", "sec", body, nil)
		if checked != r.Delivered || checked != (len(p.Allow) > 0) {
			t.Errorf("policy %v: the API's check says %v, the client delivered %v", p.Allow, checked, r.Delivered)
		}
	}
}

// TestDeliverDialsTheCheckedAddress: a name whose DNS answer changes
// between calls (here to the metadata address after the first) is
// resolved once per connection, and the connection is made to the
// address that was checked; then the next connection's answer is checked
// again and refused. No proxy from the environment is used either.
func TestDeliverDialsTheCheckedAddress(t *testing.T) {
	rcv := newReceiver(t, 204)
	port := rcv.URL[strings.LastIndexByte(rcv.URL, ':')+1:]
	res := &resolver{answers: [][]netip.Addr{addrs("127.0.0.1"), addrs("169.254.169.254")}}
	s := newSender(analytics.WebhookPolicy{}, res)
	s.Client.Transport.(*http.Transport).DisableKeepAlives = true
	body := func(time.Time) []byte { return []byte("{}") }
	if r, n := s.Deliver(context.Background(), "http://rebinding.example.test:"+port+"/hook", "sec", body, nil); !r.Delivered || n != 1 {
		t.Fatalf("first delivery: %+v after %d", r, n)
	}
	if res.calls != 1 || len(rcv.received()) != 1 {
		t.Fatalf("%d lookups and %d deliveries for one; want one of each", res.calls, len(rcv.received()))
	}
	r, n := s.Deliver(context.Background(), "http://rebinding.example.test:"+port+"/hook", "sec", body, nil)
	if r.Delivered || n != 1 || !strings.Contains(r.Error, "169.254.169.254, which is never a receiver") || len(rcv.received()) != 1 {
		t.Errorf("after the answer changed: %+v after %d; want refused", r, n)
	}
	if tr := s.Client.Transport.(*http.Transport); tr.Proxy != nil {
		t.Error("the client goes through a proxy; HTTP_PROXY would decide where deliveries connect")
	}
}

// TestBackoff checks the waits between attempts double from Backoff.
func TestBackoff(t *testing.T) {
	rcv := newReceiver(t, 500)
	s := NewSender(analytics.WebhookPolicy{})
	s.Backoff, s.Attempts = 20*time.Millisecond, 4
	var times []time.Time
	s.Deliver(context.Background(), rcv.URL, "sec", func(time.Time) []byte { return []byte("{}") },
		func(int, Result) { times = append(times, time.Now()) })
	if len(times) != 4 {
		t.Fatalf("%d attempts", len(times))
	}
	for i, want := range []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond} {
		if got := times[i+1].Sub(times[i]); got < want || got > want+200*time.Millisecond {
			t.Errorf("wait %d: %v, want %v", i+1, got, want)
		}
	}
}

// memStore is the metadata the job reads and writes, in memory.
type memStore struct {
	mu     sync.Mutex
	hooks  []analytics.AlertWebhook
	alerts []analytics.Alert
	holder string
	until  time.Time
}

func (m *memStore) AcquireLease(_ context.Context, _, holder string, now, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holder == holder || m.holder == "" || m.until.Before(now) {
		m.holder, m.until = holder, expires
	}
	return m.holder == holder, nil
}
func (m *memStore) EnabledAlertWebhooks(context.Context) ([]analytics.AlertWebhook, error) {
	return m.hooks, nil
}
func (m *memStore) ClaimAlert(_ context.Context, a *analytics.Alert) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, x := range m.alerts {
		if x.ProductID == a.ProductID && x.Fingerprint == a.Fingerprint && x.Kind == a.Kind &&
			(x.Hour == nil) == (a.Hour == nil) && (x.Hour == nil || x.Hour.Equal(*a.Hour)) {
			return false, nil
		}
	}
	a.ID, a.Status = int64(len(m.alerts)+1), analytics.AlertPending
	m.alerts = append(m.alerts, *a)
	return true, nil
}
func (m *memStore) RecordAlertAttempt(_ context.Context, a *analytics.Alert) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.alerts[a.ID-1] = *a
	return nil
}
func (m *memStore) AlertWebhook(context.Context, int64) (analytics.AlertWebhook, error) {
	return analytics.AlertWebhook{}, analytics.ErrNotFound
}
func (m *memStore) CreateAlertWebhook(context.Context, *analytics.AlertWebhook) error { return nil }
func (m *memStore) UpdateAlertWebhook(context.Context, *analytics.AlertWebhook) error { return nil }
func (m *memStore) DeleteAlertWebhook(context.Context, int64) error                   { return nil }
func (m *memStore) ListAlerts(context.Context, int64, int) ([]analytics.Alert, error) {
	return nil, nil
}

// counter answers ErrorActivity from fixed rows: for the new-group query
// (FirstOnly) and for the spike query, and records the queries.
type counter struct {
	fresh, hourly []analytics.ErrorActivityRow
	queries       []analytics.ErrorActivityQuery
}

func (c *counter) ErrorActivity(_ context.Context, q analytics.ErrorActivityQuery) ([]analytics.ErrorActivityRow, error) {
	c.queries = append(c.queries, q)
	if q.FirstOnly {
		return c.fresh, nil
	}
	var out []analytics.ErrorActivityRow
	for _, r := range c.hourly {
		if r.Recent >= q.MinRecent {
			out = append(out, r)
		}
	}
	return out, nil
}

// TestRound runs rounds of the job with a fake store and counter: a new
// group and a spike alert once each however many rounds and nodes run, a
// group under its spike rule does not, the queries read the windows the
// rules name, and a second node without the lease does nothing.
func TestRound(t *testing.T) {
	rcv := newReceiver(t, 200)
	now := time.Date(2026, 11, 24, 10, 17, 0, 0, time.UTC)
	store := &memStore{hooks: []analytics.AlertWebhook{{ProductID: 7, URL: rcv.URL + "/hook", Enabled: true, SpikeFactor: 5, SpikeMin: 10, Secret: "sec"}}}
	first := now.Add(-30 * time.Second)
	cnt := &counter{
		fresh: []analytics.ErrorActivityRow{{Fingerprint: "new1", Type: "TypeError", Message: "x is undefined", Recent: 1, Users: 1, FirstSeen: first}},
		hourly: []analytics.ErrorActivityRow{
			{Fingerprint: "hot", Type: "RangeError", Message: "m", Recent: 60, Users: 12, History: 168, FirstSeen: first.AddDate(0, 0, -6)},
			{Fingerprint: "warm", Recent: 40, Users: 3, History: 168 * 10},
			{Fingerprint: "cold", Recent: 3, History: 0},
		},
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	job := func(node string) *Job {
		return &Job{Store: store, Counter: cnt, Sender: fastSender(), Node: node, Interval: time.Second, Env: analytics.EnvLive,
			BaseURL: "https://analytics.example.com/", Log: log, Now: func() time.Time { return now }}
	}
	a, b := job("a"), job("b")
	for range 3 {
		for _, j := range []*Job{a, b} {
			if err := j.Round(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := rcv.received()
	if len(got) != 2 {
		t.Fatalf("%d deliveries, want 2 (new1 as new, hot as a spike): %q", len(got), got)
	}
	var payloads []map[string]any
	for _, g := range got {
		if !Verify("sec", g.body, g.signature) {
			t.Errorf("bad signature on %s", g.body)
		}
		var p map[string]any
		json.Unmarshal(g.body, &p)
		payloads = append(payloads, p)
	}
	byKind := map[string]map[string]any{}
	for _, p := range payloads {
		byKind[p["kind"].(string)] = p
	}
	n := byKind["new"]
	if n["fingerprint"] != "new1" || n["type"] != "TypeError" || n["events"] != 1.0 || n["product"] != 7.0 ||
		n["url"] != "https://analytics.example.com/errors/new1?product=7" || n["hour"] != nil || n["firstSeen"] != "2026-11-24T10:16:30Z" {
		t.Errorf("new payload: %v", n)
	}
	s := byKind["spike"]
	if s["fingerprint"] != "hot" || s["count"] != 60.0 || s["average"] != 1.0 || s["hour"] != "2026-11-24T09:00:00Z" || s["users"] != 12.0 {
		t.Errorf("spike payload: %v", s)
	}
	for _, al := range store.alerts {
		if al.Status != analytics.AlertDelivered || al.Attempts != 1 || al.DeliveredAt == nil {
			t.Errorf("record: %+v", al)
		}
	}
	// The windows: new groups over the last hour with the week before as
	// history; spikes over 09:00–10:00 with the 7 days before.
	q := cnt.queries[0]
	if !q.FirstOnly || !q.Recent.Equal(now.Add(-time.Hour)) || !q.From.Equal(q.Recent.Add(-168*time.Hour)) || !q.To.Equal(now) || q.Env != analytics.EnvLive {
		t.Errorf("new-group query: %+v", q)
	}
	q = cnt.queries[1]
	hour := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	if q.FirstOnly || !q.Recent.Equal(hour) || !q.To.Equal(hour.Add(time.Hour)) || !q.From.Equal(hour.Add(-168*time.Hour)) || q.MinRecent != 10 {
		t.Errorf("spike query: %+v", q)
	}
	if len(cnt.queries) != 6 {
		t.Errorf("%d queries in 6 rounds of two nodes; node b, without the lease, should have made none", len(cnt.queries))
	}
}

// TestRecordsRetries checks that a delivery that fails and then succeeds
// records its attempts and its last error, and that one that never
// succeeds is failed.
func TestRecordsRetries(t *testing.T) {
	for _, c := range []struct {
		statuses []int
		status   string
		attempts int
		lastErr  string
	}{
		{[]int{500, 200}, analytics.AlertDelivered, 2, ""},
		{[]int{500}, analytics.AlertFailed, 5, "HTTP 500"},
		{[]int{410}, analytics.AlertFailed, 1, "HTTP 410"},
	} {
		rcv := newReceiver(t, c.statuses...)
		store := &memStore{hooks: []analytics.AlertWebhook{{ProductID: 1, URL: rcv.URL, Enabled: true, SpikeFactor: 5, SpikeMin: 10, Secret: "s"}}}
		j := &Job{Store: store, Counter: &counter{fresh: []analytics.ErrorActivityRow{{Fingerprint: "f", Recent: 1}}}, Sender: fastSender(),
			Node: "a", Interval: time.Second, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		if err := j.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
		al := store.alerts[0]
		if al.Status != c.status || al.Attempts != c.attempts || al.LastError != c.lastErr || (al.DeliveredAt != nil) != (c.status == analytics.AlertDelivered) {
			t.Errorf("statuses %v: record %+v", c.statuses, al)
		}
	}
}
