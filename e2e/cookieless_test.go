package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestCookielessMode drives cookieless mode on the real binary behind a
// trusted proxy: an owner turns it on (the SDK config says so at once, the
// audit log records it), events that send the reserved distinct_id are
// stored under a visitor derived per browser and address, the same one
// for every request of one browser, another per address, user agent and
// product; an $identify links the user to the day's visitor; and the
// addresses appear in no column, log line or file of the data directory.
func TestCookielessMode(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--trusted-proxies", "127.0.0.1/32")
	b := setupOwner(t, s)
	product := func(name string) (pid, key string) {
		r := b.do(t, "POST", "/api/v1/products", map[string]string{"name": name})
		if r.Status != 201 {
			t.Fatalf("create product: %d %s", r.Status, r.Body)
		}
		pid = jsonNumber(int64(r.JSON(t)["id"].(float64)))
		key, _ = b.do(t, "POST", "/api/v1/products/"+pid+"/keys", map[string]string{"env": "live"}).JSON(t)["secret"].(string)
		return pid, key
	}
	shop, shopKey := product("Shop")
	_, blogKey := product("Blog")
	settings := "/api/v1/products/" + shop + "/privacy"
	config := func() map[string]any {
		r := do(t, "GET", s.URL+"/api/v1/config?api_key="+shopKey, nil, nil)
		if r.Status != 200 {
			t.Fatalf("config: %d %s", r.Status, r.Body)
		}
		return r.JSON(t)
	}
	off := map[string]any{"cookieless": false, "respectPrivacySignals": false}
	if r := b.do(t, "GET", settings, nil); r.Status != 200 || !reflect.DeepEqual(r.JSON(t), off) {
		t.Errorf("GET privacy of a new product: %d %s", r.Status, r.Body)
	}
	if c := config(); c["cookieless"] != false || c["respectPrivacySignals"] != false {
		t.Errorf("config of a new product: %v", c)
	}
	for _, body := range []any{map[string]any{}, map[string]any{"cookieless": "yes"}, map[string]any{"cookieless": true, "cookies": false}} {
		if r := b.do(t, "PUT", settings, body); r.Status != 400 || r.ErrorCode(t) != "invalid_request" {
			t.Errorf("PUT %v: %d %s; want 400 invalid_request", body, r.Status, r.Body)
		}
	}
	on := map[string]any{"cookieless": true, "respectPrivacySignals": true}
	if r := b.do(t, "PUT", settings, on); r.Status != 200 || !reflect.DeepEqual(r.JSON(t), on) {
		t.Fatalf("PUT privacy: %d %s", r.Status, r.Body)
	}
	if c := config(); c["cookieless"] != true || c["respectPrivacySignals"] != true {
		t.Errorf("config after the change: %v", c)
	}
	if got := b.do(t, "GET", "/api/v1/products/"+shop, nil).JSON(t)["privacy"]; !reflect.DeepEqual(got, on) {
		t.Errorf("the product's privacy: %v", got)
	}
	log := b.do(t, "GET", "/api/v1/products/"+shop+"/audit-log", nil).JSON(t)["items"].([]any)
	if len(log) != 1 || !strings.Contains(log[0].(map[string]any)["summary"].(string), "cookieless on, privacy signals on") {
		t.Errorf("the audit log after one change and three refusals: %v", log)
	}

	const (
		home, office = "198.51.100.23", "203.0.113.99"
		firefox      = "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"
		safari       = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1"
	)
	send := func(key, addr, agent, name string, props map[string]any, distinct string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"batch": []map[string]any{{"event_name": "$pageview", "distinct_id": distinct,
			"url": "https://shop.example/" + name, "properties": props}}})
		if distinct != "$cookieless" {
			body, _ = json.Marshal(map[string]any{"batch": []map[string]any{{"event_name": name, "distinct_id": distinct, "properties": props}}})
		}
		r := do(t, "POST", s.URL+"/e", body, map[string]string{"X-API-Key": key, "Content-Type": "application/json",
			"X-Forwarded-For": addr, "User-Agent": agent})
		if r.Status != 202 || !strings.Contains(string(r.Body), `"accepted":1`) {
			t.Fatalf("POST /e %s from %s: %d %s", name, addr, r.Status, r.Body)
		}
	}
	send(shopKey, home, firefox, "a", nil, "$cookieless")
	send(shopKey, home, firefox, "b", nil, "$cookieless") // a second page load: the same visitor
	send(shopKey, home, safari, "c", nil, "$cookieless")  // another browser at home
	send(shopKey, office, firefox, "d", nil, "$cookieless")
	send(blogKey, home, firefox, "e", nil, "$cookieless") // the first visitor on another product
	send(shopKey, home, firefox, "$identify", map[string]any{"$anon_distinct_id": "$cookieless", "plan": "pro"}, "alice")
	logs := s.Logs()
	s.Stop()

	db := openStore(t, dir)
	ids := map[string]string{}
	rows, err := db.Query(`SELECT url, distinct_id FROM events WHERE event = '$pageview'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var url, id string
		if err := rows.Scan(&url, &id); err != nil {
			t.Fatal(err)
		}
		ids[strings.TrimPrefix(url, "https://shop.example/")] = id
	}
	rows.Close()
	derived := regexp.MustCompile(`^cl_[0-9a-f]{32}$`)
	for page, id := range ids {
		if !derived.MatchString(id) {
			t.Errorf("page %s was stored with distinct_id %q; want a derived visitor", page, id)
		}
	}
	if len(ids) != 5 || ids["a"] != ids["b"] {
		t.Errorf("visitors by page %v; want a and b the same", ids)
	}
	for _, other := range []string{"c", "d", "e"} {
		if ids[other] == ids["a"] {
			t.Errorf("page %s has the first visitor's id %s", other, ids["a"])
		}
	}
	var anon string
	if err := db.QueryRow(`SELECT json_extract_string(properties, '$."$anon_distinct_id"') FROM events WHERE event = '$identify' AND distinct_id = 'alice'`).Scan(&anon); err != nil || anon != ids["a"] {
		t.Errorf("the $identify's $anon_distinct_id = %q, %v; want the day's visitor %s", anon, err, ids["a"])
	}
	if n := count(t, db, `SELECT count(*) FROM events WHERE distinct_id = '$cookieless' OR properties LIKE '%"$cookieless"%'`); n != 0 {
		t.Errorf("%d events were stored with the reserved id", n)
	}
	db.Close()
	for _, addr := range []string{home, office} {
		if strings.Contains(logs, addr) {
			t.Errorf("the log holds the client address %s", addr)
		}
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSocket != 0 {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("reading %s: %v", path, err)
			return nil
		}
		for _, addr := range []string{home, office} {
			if bytes.Contains(raw, []byte(addr)) {
				t.Errorf("%s holds the client address %s", path, addr)
			}
		}
		return nil
	})
}
