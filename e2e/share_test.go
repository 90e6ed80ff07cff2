package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// shareFixture is a server with two products of one owner, A and B, each
// with page views (A 3, B 5) and A with a custom event that carries an
// email property.
type shareFixture struct {
	s      *server
	owner  *browser
	a, b   int64
	dir    string
	secret string
}

func newShareFixture(t *testing.T, args ...string) *shareFixture {
	t.Helper()
	f := &shareFixture{dir: t.TempDir()}
	f.s = startServer(t, f.dir, args...)
	f.owner = setupOwner(t, f.s)
	product := func(name string, pageviews int) int64 {
		r := f.owner.do(t, "POST", "/api/v1/products", map[string]string{"name": name})
		if r.Status != 201 {
			t.Fatalf("create product: %d %s", r.Status, r.Body)
		}
		id := int64(r.JSON(t)["id"].(float64))
		key, _ := f.owner.do(t, "POST", "/api/v1/products/"+jsonNumber(id)+"/keys", map[string]string{"env": "live"}).JSON(t)["secret"].(string)
		var batch []map[string]any
		for i := range pageviews {
			batch = append(batch, ev("$pageview", name+"-visitor", "url", "https://"+name+".example/page"+jsonNumber(int64(i))))
		}
		batch = append(batch, ev("signup", name+"-visitor", "properties", map[string]any{"email": "someone@" + name + ".example"}))
		if r := postEvents(t, f.s, key, batch...); r.Status != 202 {
			t.Fatalf("ingest: %d %s", r.Status, r.Body)
		}
		return id
	}
	f.a, f.b = product("a", 3), product("b", 5)
	return f
}

// create makes a shared link of product p and returns its secret.
func (f *shareFixture) create(t *testing.T, p int64, name, password string) string {
	t.Helper()
	body := map[string]string{"name": name}
	if password != "" {
		body["password"] = password
	}
	r := f.owner.do(t, "POST", "/api/v1/products/"+jsonNumber(p)+"/shared-links", body)
	if r.Status != 201 {
		t.Fatalf("create a shared link: %d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	secret, _ := m["secret"].(string)
	if url, _ := m["url"].(string); url != f.s.URL+"/share/"+secret {
		t.Errorf("the link's url %q, want %s/share/%s", url, f.s.URL, secret)
	}
	return secret
}

// share sends a request under /share/{secret} as an anonymous browser
// would (its own Origin, an optional cookie).
func (f *shareFixture) share(t *testing.T, method, secret, path string, body any, cookie string) response {
	t.Helper()
	var raw []byte
	if body != nil {
		raw = mustJSON(body)
	}
	h := map[string]string{"Origin": f.s.URL, "Content-Type": "application/json"}
	if cookie != "" {
		h["Cookie"] = cookie
	}
	return do(t, method, f.s.URL+"/share/"+secret+path, raw, h)
}

var pageviewTrend = map[string]any{"series": []map[string]any{{"event": "$pageview", "math": "total"}}, "interval": "day"}

// total sums a trend answer's first line.
func total(t *testing.T, r response) int {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("trend: %d %s", r.Status, r.Body)
	}
	n := 0
	for _, p := range r.JSON(t)["series"].([]any)[0].(map[string]any)["data"].([]any) {
		n += int(p.(map[string]any)["value"].(float64))
	}
	return n
}

// TestSharedLinkView drives a shared link on the real binary: the page
// and the Overview's reads answer for the link's product only (B's id in
// the URL changes nothing, and in the body is refused), the queries are
// held to page views by the shared columns, custom events are not listed,
// a revoke stops the link at once, and neither the secret nor the
// password is stored.
func TestSharedLinkView(t *testing.T) {
	f := newShareFixture(t, "--share-rate-limit", "100000")
	secret := f.create(t, f.a, "Board", "")
	if !regexp.MustCompile(`^st_share_[0-9A-Za-z]{32}$`).MatchString(secret) {
		t.Fatalf("secret %q", secret)
	}
	list := f.owner.do(t, "GET", "/api/v1/products/"+jsonNumber(f.a)+"/shared-links", nil)
	if list.Status != 200 || strings.Contains(string(list.Body), secret) || !strings.Contains(string(list.Body), `"Board"`) {
		t.Errorf("list: %d %s", list.Status, list.Body)
	}
	if r := f.owner.do(t, "GET", "/api/v1/products/"+jsonNumber(f.b)+"/shared-links", nil); strings.Contains(string(r.Body), "Board") {
		t.Errorf("B lists A's link: %s", r.Body)
	}

	page := do(t, "GET", f.s.URL+"/share/"+secret, nil, map[string]string{"Accept": "text/html"})
	if page.Status != 200 || !strings.Contains(string(page.Body), "<div id=\"app\"") && !strings.Contains(string(page.Body), "<script") ||
		page.Header.Get("Cache-Control") != "no-store" || page.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the page: %d %v %.200s", page.Status, page.Header, page.Body)
	}
	info := f.share(t, "GET", secret, "/api/v1/share", nil, "")
	if m := info.JSON(t); info.Status != 200 || int64(m["productId"].(float64)) != f.a || m["productName"] != "a" || m["hasPassword"] != false {
		t.Errorf("info: %d %s", info.Status, info.Body)
	}
	// The view's dates follow the product's zone, so the link says it.
	if m := info.JSON(t); m["timeZone"] != "UTC" {
		t.Errorf("info's zone before one is set: %s", info.Body)
	}
	if r := f.owner.do(t, "PATCH", "/api/v1/products/"+jsonNumber(f.a), map[string]string{"timeZone": "Asia/Tokyo"}); r.Status != 200 {
		t.Fatalf("setting A's zone: %d %s", r.Status, r.Body)
	}
	if r := f.share(t, "GET", secret, "/api/v1/share", nil, ""); r.JSON(t)["timeZone"] != "Asia/Tokyo" {
		t.Errorf("info's zone: %s", r.Body)
	}

	// A's page views, whatever product the URL names.
	if n := total(t, f.share(t, "POST", secret, "/api/v1/query/trend", pageviewTrend, "")); n != 3 {
		t.Errorf("A's page views through the link: %d, want 3", n)
	}
	if n := total(t, f.share(t, "POST", secret, "/api/v1/query/trend?product="+jsonNumber(f.b)+"&env=test", pageviewTrend, "")); n != 3 {
		t.Errorf("with B's id in the URL: %d, want A's 3", n)
	}
	withB := map[string]any{"series": pageviewTrend["series"], "product": f.b}
	if r := f.share(t, "POST", secret, "/api/v1/query/trend", withB, ""); r.Status != 400 {
		t.Errorf("with B's id in the body: %d %s, want 400", r.Status, r.Body)
	}
	// The owner's own session cookie does not widen what the link reads.
	if n := total(t, f.share(t, "POST", secret, "/api/v1/query/trend?product="+jsonNumber(f.b), pageviewTrend, f.owner.cookie)); n != 3 {
		t.Errorf("with the owner's cookie and B's id: %d, want A's 3", n)
	}
	ret := f.share(t, "POST", secret, "/api/v1/query/retention", map[string]any{"startEvent": "$pageview", "period": "month"}, "")
	if ret.Status != 200 {
		t.Errorf("retention: %d %s", ret.Status, ret.Body)
	}
	names := f.share(t, "GET", secret, "/api/v1/query/events", nil, "")
	if names.Status != 200 || !strings.Contains(string(names.Body), `"$pageview"`) || strings.Contains(string(names.Body), "signup") {
		t.Errorf("event names: %d %s, want $pageview alone", names.Status, names.Body)
	}
	if r := f.share(t, "GET", secret, "/api/v1/annotations", nil, ""); r.Status != 200 {
		t.Errorf("annotations: %d %s", r.Status, r.Body)
	}
	if r := f.share(t, "GET", secret, "/api/v1/annotations?queryId=1", nil, ""); r.Status != 403 || r.ErrorCode(t) != "not_shared" {
		t.Errorf("a saved query's annotations: %d %s", r.Status, r.Body)
	}
	for _, q := range []map[string]any{
		{"series": []map[string]any{{"event": "signup"}}},
		{"series": []map[string]any{{"event": "$pageview"}}, "breakdown": "properties.email"},
		{"series": []map[string]any{{"event": "$pageview"}}, "breakdown": "url"},
		{"series": []map[string]any{{"event": "$pageview"}}, "filters": []map[string]any{{"property": "properties.email", "operator": "is_set"}}},
	} {
		if r := f.share(t, "POST", secret, "/api/v1/query/trend", q, ""); r.Status != 403 || r.ErrorCode(t) != "not_shared" {
			t.Errorf("%s: %d %s, want 403 not_shared", mustJSON(q), r.Status, r.Body)
		}
	}
	if r := f.share(t, "POST", secret, "/api/v1/query/retention", map[string]any{"startEvent": "signup"}, ""); r.Status != 403 {
		t.Errorf("a retention of signup: %d %s", r.Status, r.Body)
	}
	unknown := "st_share_" + strings.Repeat("Z", 32)
	if r := f.share(t, "GET", unknown, "/api/v1/share", nil, ""); r.Status != 404 || r.ErrorCode(t) != "shared_link_not_found" {
		t.Errorf("an unknown link: %d %s", r.Status, r.Body)
	}

	// Revoked: refused at once, page and reads, with its own code.
	id := jsonNumber(int64(list.JSON(t)["items"].([]any)[0].(map[string]any)["id"].(float64)))
	if r := f.owner.do(t, "DELETE", "/api/v1/products/"+jsonNumber(f.b)+"/shared-links/"+id, nil); r.Status != 404 {
		t.Errorf("revoking A's link through B: %d %s", r.Status, r.Body)
	}
	if r := f.owner.do(t, "DELETE", "/api/v1/products/"+jsonNumber(f.a)+"/shared-links/"+id, nil); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := f.share(t, "POST", secret, "/api/v1/query/trend", pageviewTrend, ""); r.Status != 404 || r.ErrorCode(t) != "shared_link_revoked" {
		t.Errorf("a read through a revoked link: %d %s", r.Status, r.Body)
	}
	if r := f.share(t, "GET", secret, "/api/v1/share", nil, ""); r.Status != 404 || r.ErrorCode(t) != "shared_link_revoked" {
		t.Errorf("a revoked link's info: %d %s", r.Status, r.Body)
	}
	if r := do(t, "GET", f.s.URL+"/share/"+secret, nil, map[string]string{"Accept": "text/html"}); r.Status != 404 {
		t.Errorf("a revoked link's page: %d", r.Status)
	}
	if r := f.owner.do(t, "GET", "/api/v1/products/"+jsonNumber(f.a)+"/shared-links", nil); strings.Contains(string(r.Body), "Board") {
		t.Errorf("a revoked link is listed: %s", r.Body)
	}

	// Neither the secret nor a link's password is anywhere in the data
	// directory; the secret's SHA-256 is.
	locked := f.create(t, f.a, "Investors", "a password never stored")
	f.s.Stop()
	var all []byte
	filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return nil
	})
	for _, s := range []string{secret, secret[9:], locked[9:], "a password never stored"} {
		if bytes.Contains(all, []byte(s)) {
			t.Errorf("%.14s… is stored in plaintext", s)
		}
	}
	db := openStore(t, f.dir)
	for _, s := range []string{secret, locked} {
		sum := sha256.Sum256([]byte(s))
		if n := count(t, db, `SELECT count(*) FROM shared_links WHERE hash = $1`, sum[:]); n != 1 {
			t.Errorf("rows with the secret's hash: %d", n)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM shared_links WHERE password_hash LIKE '$argon2id$%'`); n != 1 {
		t.Errorf("argon2id password hashes: %d, want 1", n)
	}
}

// rawDo sends a request outside the contract check: the share dispatcher's
// refusals of paths it does not serve are, by design, at paths the
// document does not describe.
func rawDo(t *testing.T, method, url string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSharedLinkRoutes loops over every operation of api/openapi.yaml, so
// that a route added later is covered: under /share/{secret} every one
// but the allowlisted reads is 403 not_shared, and on its own path the
// link's secret is no credential (401 where the operation takes one).
func TestSharedLinkRoutes(t *testing.T) {
	f := newShareFixture(t, "--share-rate-limit", "100000")
	secret := f.create(t, f.a, "Board", "")
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"POST /api/v1/query/trend", "POST /api/v1/query/retention", "POST /api/v1/query/sessions", "POST /api/v1/query/goals", "GET /api/v1/query/live", "GET /api/v1/query/events", "GET /api/v1/annotations"}
	param := regexp.MustCompile(`\{[^}]+\}`)
	checked := 0
	for path, item := range doc.Paths.Map() {
		if strings.HasPrefix(path, "/share/") {
			continue
		}
		for method, op := range item.Operations() {
			concrete := param.ReplaceAllString(path, "1")
			if slices.Contains(allowed, method+" "+path) {
				continue
			}
			status, body := rawDo(t, method, f.s.URL+"/share/"+secret+concrete, map[string]string{"Origin": f.s.URL, "Content-Type": "application/json"})
			if status != 403 || !strings.Contains(body, `"not_shared"`) {
				t.Errorf("%s /share/…%s: %d %.200s, want 403 not_shared", method, concrete, status, body)
			}
			checked++
			if takesBearer(op) {
				status, body := rawDo(t, method, f.s.URL+concrete+"?product="+jsonNumber(f.a),
					map[string]string{"Authorization": "Bearer " + secret, "Origin": f.s.URL, "Content-Type": "application/json"})
				if status != 401 && status != 403 {
					t.Errorf("%s %s with the secret as bearer: %d %.200s, want 401", method, concrete, status, body)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d operations; the document has more", checked)
	}
	// The allowlisted reads take no bearer of a link either.
	for _, route := range allowed {
		method, path, _ := strings.Cut(route, " ")
		if status, body := rawDo(t, method, f.s.URL+path, map[string]string{"Authorization": "Bearer " + secret}); status != 401 {
			t.Errorf("%s with the secret as bearer: %d %.200s", route, status, body)
		}
	}
}

// TestSharedLinkPassword checks a link's password on the real binary: the
// reads are refused until it is entered, a wrong one is refused, the right
// one sets a cookie scoped to the link (HttpOnly, SameSite=Strict) that
// opens its reads and not another link's, and guessing is cut off by the
// password budget (3 a minute here), after which even the right password
// waits; the read budget refuses past its count too.
func TestSharedLinkPassword(t *testing.T) {
	f := newShareFixture(t, "--share-password-rate-limit", "3", "--share-rate-limit", "40")
	secret := f.create(t, f.a, "Investors", "correct horse")
	other := f.create(t, f.a, "Other", "correct horse")
	if r := f.share(t, "POST", secret, "/api/v1/query/trend", pageviewTrend, ""); r.Status != 401 || r.ErrorCode(t) != "shared_link_locked" {
		t.Errorf("before the password: %d %s", r.Status, r.Body)
	}
	if r := f.share(t, "POST", secret, "/api/v1/share/unlock", map[string]string{"password": "wrong horse"}, ""); r.Status != 401 || r.ErrorCode(t) != "wrong_password" {
		t.Errorf("a wrong password: %d %s", r.Status, r.Body)
	}
	r := f.share(t, "POST", secret, "/api/v1/share/unlock", map[string]string{"password": "correct horse"}, "")
	set := r.Header.Get("Set-Cookie")
	if r.Status != 204 || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Strict") || !strings.Contains(set, "Path=/share/"+secret+"/") {
		t.Fatalf("the right password: %d %s %q", r.Status, r.Body, set)
	}
	cookie := strings.Split(set, ";")[0]
	if n := total(t, f.share(t, "POST", secret, "/api/v1/query/trend", pageviewTrend, cookie)); n != 3 {
		t.Errorf("after the password: %d page views, want 3", n)
	}
	if m := f.share(t, "GET", secret, "/api/v1/share", nil, cookie).JSON(t); m["unlocked"] != true {
		t.Errorf("info after the password: %v", m)
	}
	if r := f.share(t, "POST", other, "/api/v1/query/trend", pageviewTrend, cookie); r.Status != 401 {
		t.Errorf("another link with this link's cookie: %d %s", r.Status, r.Body)
	}
	// The third check of the minute is wrong; the fourth, right, waits.
	if r := f.share(t, "POST", secret, "/api/v1/share/unlock", map[string]string{"password": "guess"}, ""); r.Status != 401 {
		t.Errorf("third check: %d %s", r.Status, r.Body)
	}
	r = f.share(t, "POST", secret, "/api/v1/share/unlock", map[string]string{"password": "correct horse"}, "")
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Errorf("past the password budget: %d %s", r.Status, r.Body)
	}
	// The address's budget holds for the other link too.
	if r := f.share(t, "POST", other, "/api/v1/share/unlock", map[string]string{"password": "correct horse"}, ""); r.Status != 429 {
		t.Errorf("another link from the same address: %d %s", r.Status, r.Body)
	}
	// Reads: 40 a minute from this address; the next is refused.
	limited := false
	for range 45 {
		if r := f.share(t, "GET", secret, "/api/v1/share", nil, ""); r.Status == 429 {
			limited = true
			break
		}
	}
	if !limited {
		t.Error("45 reads a minute at a budget of 40 were all answered")
	}
}

// takesBearer reports whether an operation takes a bearer credential.
func takesBearer(op *openapi3.Operation) bool {
	if op.Security == nil {
		return false
	}
	for _, req := range *op.Security {
		if _, ok := req["bearer"]; ok {
			return true
		}
	}
	return false
}

// TestSharedLinkFilters checks that a shared link's view filters as the
// Overview does (docs/dashboard.md, "Filters"): a trend by a shared
// column, the sessions query by the visit's entry and exit page, and
// nothing more (an event property stays 403 not_shared).
func TestSharedLinkFilters(t *testing.T) {
	f := newShareFixture(t, "--share-rate-limit", "100000")
	secret := f.create(t, f.a, "Board", "")
	byPath := map[string]any{"series": pageviewTrend["series"], "interval": "day",
		"filters": []map[string]any{{"property": "path", "operator": "eq", "value": "/page1"}}}
	if n := total(t, f.share(t, "POST", secret, "/api/v1/query/trend", byPath, "")); n != 1 {
		t.Errorf("A's page views of /page1 through the link: %d, want 1", n)
	}
	visits := func(filters []map[string]any) (int, string) {
		t.Helper()
		r := f.share(t, "POST", secret, "/api/v1/query/sessions", map[string]any{"filters": filters}, "")
		if r.Status != 200 {
			t.Fatalf("sessions filtered by %v: %d %s", filters, r.Status, r.Body)
		}
		var a sessionsAnswer
		if err := json.Unmarshal(r.Body, &a); err != nil {
			t.Fatal(err)
		}
		entry := ""
		if len(a.EntryPages) > 0 {
			entry = a.EntryPages[0].Path
		}
		return int(a.Totals.Visits), entry
	}
	all, entry := visits(nil)
	if all != 1 || entry == "" {
		t.Fatalf("A's visits through the link: %d entering by %q, want 1 with an entry page", all, entry)
	}
	page := func(prop, path string) []map[string]any {
		return []map[string]any{{"property": prop, "operator": "eq", "value": path}}
	}
	if n, _ := visits(page("entry_page", entry)); n != 1 {
		t.Errorf("visits entering by %s through the link: %d, want 1", entry, n)
	}
	if n, _ := visits(page("exit_page", "/nowhere")); n != 0 {
		t.Errorf("visits leaving by /nowhere through the link: %d, want 0", n)
	}
	byEmail := map[string]any{"filters": []map[string]any{{"property": "properties.email", "operator": "is_set"}}}
	if r := f.share(t, "POST", secret, "/api/v1/query/sessions", byEmail, ""); r.Status != 403 || r.ErrorCode(t) != "not_shared" {
		t.Errorf("sessions filtered by an event property: %d %s, want 403 not_shared", r.Status, r.Body)
	}
}
