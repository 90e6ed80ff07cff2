package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strata/internal/store/duckdb"
)

// delivery is one request the test receiver got.
type delivery struct {
	Path      string
	Body      []byte
	Signature string
	Timestamp string
	Status    int // what the receiver answered
	At        time.Time
	Payload   struct {
		ID          int64    `json:"id"`
		Kind        string   `json:"kind"`
		Product     int64    `json:"product"`
		Fingerprint string   `json:"fingerprint"`
		Type        string   `json:"type"`
		Message     string   `json:"message"`
		Events      int64    `json:"events"`
		Users       int64    `json:"users"`
		FirstSeen   string   `json:"firstSeen"`
		Hour        string   `json:"hour"`
		Count       int64    `json:"count"`
		Average     *float64 `json:"average"`
		URL         string   `json:"url"`
		Timestamp   int64    `json:"timestamp"`
	}
}

// alertReceiver is a webhook receiver on 127.0.0.1 (httptest binds
// loopback only). It answers 500 to the first delivery of a "new" alert
// and 200 to everything else, and keeps every request.
type alertReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []delivery
	failed bool
}

func newAlertReceiver(t *testing.T) *alertReceiver {
	r := &alertReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		d := delivery{Path: req.URL.Path, Body: body, Signature: req.Header.Get("X-Strata-Signature"),
			Timestamp: req.Header.Get("X-Strata-Timestamp"), Status: 200, At: time.Now()}
		json.Unmarshal(body, &d.Payload)
		r.mu.Lock()
		if d.Payload.Kind == "new" && !r.failed {
			r.failed, d.Status = true, 500
		}
		r.got = append(r.got, d)
		r.mu.Unlock()
		w.WriteHeader(d.Status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *alertReceiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// waitFor polls the receiver until cond holds of its deliveries, or fails
// after limit.
func (r *alertReceiver) waitFor(t *testing.T, what string, limit time.Duration, cond func([]delivery) bool) []delivery {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := r.deliveries()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; deliveries: %s", what, limit, describeDeliveries(got))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func describeDeliveries(ds []delivery) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\n  %s %d %s", d.Path, d.Status, d.Body)
	}
	return b.String()
}

// of returns the deliveries of one kind and fingerprint.
func of(ds []delivery, kind, fp string) []delivery {
	var out []delivery
	for _, d := range ds {
		if d.Payload.Kind == kind && d.Payload.Fingerprint == fp {
			out = append(out, d)
		}
	}
	return out
}

// hmacHex is the signature a receiver computes, with crypto/hmac.
func hmacHex(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// exception is a $exception event of group fp at time at ("" for now).
func exception(fp, user string, at time.Time) map[string]any {
	e := map[string]any{"event_name": "$exception", "distinct_id": user, "properties": map[string]any{
		"$exception_fingerprint": fp, "$exception_type": "TypeError", "$exception_message": "cart.items is undefined in " + fp,
		"$exception_stack": "TypeError: x\n    at computeTotal (https://shop.example.com/app.js:1:2)", "$release": "1.0.0",
	}}
	if !at.IsZero() {
		e["timestamp"] = at.UTC().Format(time.RFC3339Nano)
	}
	return e
}

// TestErrorAlerts drives error alerts through the real binary with a
// one-second alert interval and a receiver on 127.0.0.1: the webhook API
// (validation, the secret shown once and rotated, a test delivery), one
// "new" alert for a new group, signed, retried after the receiver's 500,
// and never sent again; one "spike" alert for a group whose last hour is
// far above its week; nothing for a product without a webhook; and the
// record of what was sent.
func TestErrorAlerts(t *testing.T) {
	checkErrorAlerts(t, startServer(t, t.TempDir(), "--alert-interval", "1s"))
}

// TestErrorAlertsOnTwoNodes runs the same checks on two nodes over one
// ClickHouse and one PostgreSQL, both running the alert job every second:
// the lease and the claims keep every alert to one delivery.
func TestErrorAlertsOnTwoNodes(t *testing.T) {
	a, _ := startNodes(t, "--alert-interval", "1s")
	checkErrorAlerts(t, a)
}

// checkErrorAlerts is the alert checks, on server s with the alert job
// running every second.
func checkErrorAlerts(t *testing.T, s *server) {
	rcv := newAlertReceiver(t)
	a, b := newTenant(t, s, "Alerted"), newTenant(t, s, "Quiet")

	// The webhook API.
	put := func(cred string, body any) response {
		t.Helper()
		return annCall(t, s, cred, "PUT", "/api/v1/alerts/webhook", body)
	}
	if res := annCall(t, s, a.Token, "GET", "/api/v1/alerts/webhook", nil); res.Status != 404 || res.ErrorCode(t) != "alert_webhook_not_found" {
		t.Errorf("GET before any webhook: %d %s", res.Status, res.Body)
	}
	for _, bad := range []map[string]any{
		{"url": "ftp://127.0.0.1/x"},
		{"url": "file:///etc/passwd"},
		{"url": "http://user:pw@127.0.0.1/x"},
		{"url": "/relative"},
		{},
		{"url": rcv.URL, "spikeFactor": 1},
		{"url": rcv.URL, "spikeMinCount": 0},
		{"url": rcv.URL, "extra": true},
	} {
		if res := put(a.Token, bad); res.Status != 400 || res.ErrorCode(t) != "invalid_request" {
			t.Errorf("PUT %v: %d %s, want 400 invalid_request", bad, res.Status, res.Body)
		}
	}
	if res := put(a.Live, map[string]any{"url": rcv.URL}); res.Status != 403 || res.ErrorCode(t) != "key_not_allowed" {
		t.Errorf("PUT with the API key: %d %s", res.Status, res.Body)
	}
	res := put(a.Token, map[string]any{"url": rcv.URL + "/a"})
	created := res.JSON(t)
	secret, _ := created["secret"].(string)
	if res.Status != 201 || !strings.HasPrefix(secret, "st_whsec_") || created["enabled"] != true || created["spikeFactor"] != 5.0 ||
		created["spikeMinCount"] != 10.0 || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	got := annCall(t, s, a.Token, "GET", "/api/v1/alerts/webhook", nil).JSON(t)
	if _, shown := got["secret"]; shown || got["secretPrefix"] != secret[:13] || got["url"] != rcv.URL+"/a" {
		t.Errorf("GET shows %v; want no secret, its prefix %q", got, secret[:13])
	}
	// An update keeps the secret; rotateSecret makes a new one, shown once.
	if res := put(a.Token, map[string]any{"spikeFactor": 4.5}); res.Status != 200 || strings.Contains(string(res.Body), `"secret"`) {
		t.Errorf("update: %d %s", res.Status, res.Body)
	}
	res = put(a.Token, map[string]any{"rotateSecret": true, "spikeFactor": 5})
	rotated, _ := res.JSON(t)["secret"].(string)
	if res.Status != 200 || rotated == "" || rotated == secret {
		t.Fatalf("rotate: %d %s", res.Status, res.Body)
	}
	secret = rotated

	// A test delivery, signed with the new secret.
	res = annCall(t, s, a.Token, "POST", "/api/v1/alerts/webhook/test", nil)
	if tr := res.JSON(t); res.Status != 200 || tr["delivered"] != true || tr["status"] != 200.0 {
		t.Fatalf("test delivery: %d %s", res.Status, res.Body)
	}
	test := rcv.waitFor(t, "the test delivery", 5*time.Second, func(ds []delivery) bool { return len(ds) == 1 })[0]
	if test.Payload.Kind != "test" || test.Signature != hmacHex(secret, test.Body) || test.Path != "/a" {
		t.Errorf("test delivery: %s %s signed %s", test.Path, test.Body, test.Signature)
	}
	// A receiver that is not there: the answer says so.
	if res := put(b.Token, map[string]any{"url": "http://127.0.0.1:1/nothing", "enabled": false}); res.Status != 201 {
		t.Fatalf("product b's webhook: %d %s", res.Status, res.Body)
	}
	res = annCall(t, s, b.Token, "POST", "/api/v1/alerts/webhook/test", nil)
	if tr := res.JSON(t); res.Status != 200 || tr["delivered"] != false || tr["status"] != 0.0 || !strings.Contains(tr["error"].(string), "refused") {
		t.Errorf("test delivery to a closed port: %d %s", res.Status, res.Body)
	}
	if res := annCall(t, s, b.Token, "DELETE", "/api/v1/alerts/webhook", nil); res.Status != 204 {
		t.Errorf("delete: %d %s", res.Status, res.Body)
	}
	if res := annCall(t, s, b.Token, "DELETE", "/api/v1/alerts/webhook", nil); res.Status != 404 {
		t.Errorf("second delete: %d %s", res.Status, res.Body)
	}

	// A spike: the last complete hour holds 30 events of a group that had
	// one a day in the week before (an average of 7/168 an hour); sent
	// first, so that the week's events are there when the hour is read.
	// The test keeps away from the top of the hour, when the hour it
	// sends its events into would stop being the last complete one; it
	// looks here, after the servers started, which can take minutes.
	now := time.Now().UTC()
	if now.Minute() >= 58 {
		time.Sleep(now.Truncate(time.Hour).Add(time.Hour + 5*time.Second).Sub(now))
		now = time.Now().UTC()
	}
	hour := now.Truncate(time.Hour).Add(-time.Hour)
	var events []map[string]any
	for d := 1; d <= 7; d++ {
		events = append(events, exception("e2e-spike", "old", hour.Add(time.Duration(-24*d)*time.Hour+20*time.Minute)))
	}
	for i := range 30 {
		events = append(events, exception("e2e-spike", "u"+strconv.Itoa(i%6), hour.Add(time.Duration(i)*time.Minute)))
	}
	// Product b has no webhook now: the same errors alert nothing.
	for _, p := range []tenant{a, b} {
		if res := postEvents(t, s, p.Live, events...); res.Status != 202 {
			t.Fatalf("events: %d %s", res.Status, res.Body)
		}
	}
	// A new group, once now and again in later rounds.
	for _, p := range []tenant{a, b} {
		if res := postEvents(t, s, p.Live, exception("e2e-new", "n1", time.Time{})); res.Status != 202 {
			t.Fatalf("event: %d %s", res.Status, res.Body)
		}
	}

	ds := rcv.waitFor(t, "the new and spike alerts", 30*time.Second, func(ds []delivery) bool {
		return len(of(ds, "spike", "e2e-spike")) >= 1 && len(of(ds, "new", "e2e-new")) >= 2
	})
	newOnes := of(ds, "new", "e2e-new")
	if newOnes[0].Status != 500 || newOnes[1].Status != 200 || newOnes[0].Payload.ID != newOnes[1].Payload.ID ||
		newOnes[1].At.Sub(newOnes[0].At) < 900*time.Millisecond {
		t.Errorf("the new alert was not retried after the 500 with a backoff of a second: %s", describeDeliveries(newOnes))
	}
	for _, d := range ds[1:] {
		if d.Signature != hmacHex(secret, d.Body) {
			t.Errorf("bad signature %s on %s", d.Signature, d.Body)
		}
		if d.Timestamp != strconv.FormatInt(d.Payload.Timestamp, 10) {
			t.Errorf("X-Strata-Timestamp %s, body timestamp %d", d.Timestamp, d.Payload.Timestamp)
		}
		if d.Path != "/a" || d.Payload.Product != a.ID {
			t.Errorf("a delivery for another product: %s %s", d.Path, d.Body)
		}
	}
	n := newOnes[1].Payload
	if n.Type != "TypeError" || n.Message != "cart.items is undefined in e2e-new" || n.Events != 1 || n.Users != 1 ||
		n.URL != "/errors/e2e-new?product="+strconv.FormatInt(a.ID, 10) || n.Hour != "" || n.FirstSeen == "" {
		t.Errorf("new payload: %s", newOnes[1].Body)
	}
	sp := of(ds, "spike", "e2e-spike")[0].Payload
	if sp.Count != 30 || sp.Events != 30 || sp.Users != 6 || sp.Hour != hour.Format(time.RFC3339) || sp.Average == nil || *sp.Average != 0.042 {
		t.Errorf("spike payload: %s", of(ds, "spike", "e2e-spike")[0].Body)
	}
	if len(of(ds, "new", "e2e-spike")) != 0 {
		t.Error("the spiking group, seen all week, alerted as new")
	}

	// More events of both groups, and a few more rounds: nothing again.
	postEvents(t, s, a.Live, exception("e2e-new", "n2", time.Time{}), exception("e2e-spike", "u9", hour.Add(59*time.Minute)))
	time.Sleep(4 * time.Second)
	ds = rcv.deliveries()
	if len(of(ds, "new", "e2e-new")) != 2 || len(of(ds, "spike", "e2e-spike")) != 1 || len(ds) != 4 {
		t.Errorf("alerts sent again, or others: %s", describeDeliveries(ds))
	}

	// The record: two alerts, delivered, the new one after two attempts.
	res = annCall(t, s, a.Token, "GET", "/api/v1/alerts", nil)
	var list struct {
		Items []struct {
			ID          int64
			Kind        string
			Fingerprint string
			Hour        *string
			Status      string
			Attempts    int
			DeliveredAt *string
			LastError   string
		}
	}
	if err := json.Unmarshal(res.Body, &list); err != nil || res.Status != 200 || len(list.Items) != 2 {
		t.Fatalf("GET /api/v1/alerts: %d %s", res.Status, res.Body)
	}
	for _, it := range list.Items {
		if it.Status != "delivered" || it.DeliveredAt == nil || it.LastError != "" {
			t.Errorf("record: %+v", it)
		}
		if it.Kind == "new" && (it.Attempts != 2 || it.Hour != nil || it.ID != newOnes[0].Payload.ID) {
			t.Errorf("new record: %+v", it)
		}
		if it.Kind == "spike" && (it.Attempts != 1 || it.Hour == nil) {
			t.Errorf("spike record: %+v", it)
		}
	}
	if res := annCall(t, s, b.Token, "GET", "/api/v1/alerts", nil); res.Status != 200 || string(res.Body) != "{\"items\":[]}\n" {
		t.Errorf("product b's alerts: %d %s", res.Status, res.Body)
	}
	if res := annCall(t, s, a.Live, "GET", "/api/v1/alerts", nil); res.Status != 403 {
		t.Errorf("alerts with the API key: %d", res.Status)
	}
}

// TestWebhookAddressesRefused checks the addresses a webhook may not
// name, IPv4 addresses hidden in IPv6 ones and the cloud metadata
// services that are not link-local among them: PUT refuses each with 400
// webhook_address_refused; a webhook stored with one anyway (by an
// older server, or by hand) is refused when a delivery connects, before
// any connection is made; and what the operator allows with
// --alert-webhook-allow is accepted.
func TestWebhookAddressesRefused(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	refused := []string{
		"http://[64:ff9b::a9fe:a9fe]/", "http://[::169.254.169.254]/", "http://[2002:a9fe:a9fe::]/",
		"http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]/latest/meta-data/",
		"http://100.100.100.200/latest/meta-data/", "http://192.0.0.192/opc/v2/instance/",
	}
	a := newTenant(t, s, "Hooks")
	for _, u := range refused {
		res := annCall(t, s, a.Token, "PUT", "/api/v1/alerts/webhook", map[string]any{"url": u})
		if res.Status != 400 || res.ErrorCode(t) != "webhook_address_refused" || !strings.Contains(string(res.Body), "never a webhook receiver") {
			t.Errorf("PUT %s: %d %s; want 400 webhook_address_refused", u, res.Status, res.Body)
		}
	}
	if res := annCall(t, s, a.Token, "GET", "/api/v1/alerts/webhook", nil); res.Status != 404 {
		t.Errorf("a refused URL was stored: %d %s", res.Status, res.Body)
	}

	// Webhooks stored with the three URLs: set to a receiver that
	// is allowed, then rewritten in the file while the server is stopped.
	hidden := refused[:3]
	tenants := make([]tenant, len(hidden))
	for i := range hidden {
		tenants[i] = newTenant(t, s, fmt.Sprintf("Stored %d", i))
		if res := annCall(t, s, tenants[i].Token, "PUT", "/api/v1/alerts/webhook", map[string]any{"url": "http://127.0.0.1:1/x", "enabled": false}); res.Status != 201 {
			t.Fatalf("PUT: %d %s", res.Status, res.Body)
		}
	}
	s.Stop()
	st, err := duckdb.Open(context.Background(), dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range hidden {
		if _, err := st.DB().Exec(`UPDATE alert_webhooks SET url = $1 WHERE product_id = $2`, u, tenants[i].ID); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	s = startServer(t, dir, "--alert-webhook-allow", "100.100.100.200,fd00:ec2::/64")
	for i, u := range hidden {
		res := annCall(t, s, tenants[i].Token, "POST", "/api/v1/alerts/webhook/test", nil)
		tr := res.JSON(t)
		msg, _ := tr["error"].(string)
		if res.Status != 200 || tr["delivered"] != false || tr["status"] != 0.0 ||
			!strings.Contains(msg, "which is never a receiver") || !strings.Contains(msg, "169.254.169.254 inside it") {
			t.Errorf("a test delivery to the stored %s: %d %s; want it refused before connecting", u, res.Status, res.Body)
		}
	}

	// What the operator allows, in any of its forms; the rest still not.
	// (Disabled, and never tested: nothing off loopback is dialled.)
	for _, c := range []struct {
		url    string
		status int
	}{
		{"http://100.100.100.200/hook", 201},
		{"http://[64:ff9b::6464:64c8]/hook", 200},
		{"http://[fd00:ec2::254]/hook", 200},
		{"http://192.0.0.192/hook", 400},
		{"http://[64:ff9b::a9fe:a9fe]/", 400},
	} {
		res := annCall(t, s, a.Token, "PUT", "/api/v1/alerts/webhook", map[string]any{"url": c.url, "enabled": false})
		if res.Status != c.status {
			t.Errorf("PUT %s with --alert-webhook-allow: %d %s; want %d", c.url, res.Status, res.Body, c.status)
		}
	}
}
