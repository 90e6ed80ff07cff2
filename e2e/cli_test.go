package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata/internal/store/duckdb"
)

var (
	liveKeyRE = regexp.MustCompile(`^st_live_[0-9A-Za-z]{32}$`)
	testKeyRE = regexp.MustCompile(`^st_test_[0-9A-Za-z]{32}$`)
	tokenRE   = regexp.MustCompile(`^st_tok_[0-9A-Za-z]{40}$`)
)

// TestCLIWithoutServer runs the management commands on a data directory no
// server holds, then the same directory under a server, where they go
// through the admin socket and take effect at once.
func TestCLIWithoutServer(t *testing.T) {
	dir := t.TempDir()

	out, errOut, code := cliResult(dir, "products", "create", "--name", "Shop")
	if code != 0 {
		t.Fatalf("products create: %d %s", code, errOut)
	}
	var p struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Name != "Shop" || p.ID < 1 {
		t.Fatalf("products create printed %q", out)
	}
	if !strings.Contains(errOut, "st_live_") {
		t.Errorf("first use of an empty directory should hand out the default product's key: %q", errOut)
	}
	pid := strconv.FormatInt(p.ID, 10)

	live := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", pid))
	if !liveKeyRE.MatchString(live) {
		t.Fatalf("keys create printed %q", live)
	}
	test := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", pid, "--test"))
	if !testKeyRE.MatchString(test) {
		t.Fatalf("keys create --test printed %q", test)
	}
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", pid))
	if !tokenRE.MatchString(tok) {
		t.Fatalf("tokens create printed %q", tok)
	}
	var keys []struct {
		ID     int64
		Prefix string
		Env    string
		Status string
	}
	list := cli(t, dir, "keys", "list", "--product", pid, "--json")
	if err := json.Unmarshal([]byte(list), &keys); err != nil || len(keys) != 2 {
		t.Fatalf("keys list --json: %q", list)
	}
	if strings.Contains(list, live) || strings.Contains(list, test) {
		t.Error("keys list shows a key's plaintext")
	}
	if !strings.HasPrefix(live, keys[0].Prefix) || keys[0].Env != "live" || keys[1].Env != "test" || keys[0].Status != "active" {
		t.Errorf("keys list: %+v", keys)
	}
	if _, errOut, code := cliResult(dir, "keys", "create", "--product", "999"); code == 0 || !strings.Contains(errOut, "no product 999") {
		t.Errorf("key for a missing product: exit %d, %q", code, errOut)
	}
	if _, errOut, code := cliResult(dir, "keys", "create"); code != 2 || !strings.Contains(errOut, "--product") {
		t.Errorf("keys create without --product: exit %d, %q", code, errOut)
	}

	// Now under a running server: the CLI reaches it through the socket.
	s := startServer(t, dir)
	if s.BootstrapKey != "" {
		t.Error("a second start must not create another default key")
	}
	if r := postEvents(t, s, live, ev("e", "u")); r.Status != 202 {
		t.Fatalf("key created offline: %d", r.Status)
	}
	fresh := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", pid))
	steps := []struct {
		cmd    []string
		status int
	}{
		{nil, 202},
		{[]string{"keys", "disable", fresh}, 403},
		{[]string{"keys", "enable", fresh}, 202},
		{[]string{"keys", "revoke", fresh}, 401},
	}
	for _, st := range steps {
		if st.cmd != nil {
			cli(t, dir, st.cmd...)
		}
		if r := postEvents(t, s, fresh, ev("e", "u")); r.Status != st.status {
			t.Errorf("after %v: status %d, want %d", st.cmd, r.Status, st.status)
		}
	}
	if _, errOut, code := cliResult(dir, "keys", "enable", fresh); code != 1 || !strings.Contains(errOut, "revoked") {
		t.Errorf("enabling a revoked key: exit %d, %q", code, errOut)
	}
	// A key can be named by its id too.
	id := strconv.FormatInt(keys[1].ID, 10)
	if out := cli(t, dir, "keys", "disable", id); !strings.Contains(out, "disabled") {
		t.Errorf("disable by id printed %q", out)
	}
	s.Stop()

	// Keys and tokens are stored as SHA-256 only.
	db := openStore(t, dir)
	for _, secret := range []string{live, test, fresh} {
		sum := sha256.Sum256([]byte(secret))
		if n := count(t, db, `SELECT count(*) FROM api_keys WHERE hash = $1`, sum[:]); n != 1 {
			t.Errorf("key %s…: %d rows with its hash", secret[:12], n)
		}
		if n := count(t, db, `SELECT count(*) FROM api_keys WHERE prefix = $1 OR CAST(hash AS VARCHAR) LIKE $2`, secret, "%"+secret[8:]+"%"); n != 0 {
			t.Errorf("key %s… stored in plaintext", secret[:12])
		}
	}
	sum := sha256.Sum256([]byte(tok))
	if n := count(t, db, `SELECT count(*) FROM query_tokens WHERE hash = $1 AND length(prefix) < 20`, sum[:]); n != 1 {
		t.Errorf("token rows with its hash: %d", n)
	}
	if n := count(t, db, `SELECT count(*) FROM schema_migrations`); n < 2 {
		t.Errorf("schema_migrations has %d rows", n)
	}
}

// TestCLIWaitsForAStartingServer holds the database the way a starting
// server does before its admin socket is up (it first replays its spool and
// restores its deduplication window), and checks that a command waits for
// the directory rather than failing, then completes once it is free.
func TestCLIWaitsForAStartingServer(t *testing.T) {
	dir := t.TempDir()
	cli(t, dir, "products", "create", "--name", "Shop") // creates and bootstraps the database
	holder, err := duckdb.Open(context.Background(), dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		out, errOut string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, errOut, code := cliResult(dir, "tokens", "create", "--product", "1")
		done <- result{out, errOut, code}
	}()
	select {
	case r := <-done:
		holder.Close()
		t.Fatalf("the command did not wait for the held directory: exit %d, %q %q", r.code, r.out, r.errOut)
	case <-time.After(1500 * time.Millisecond):
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 0 || !tokenRE.MatchString(strings.TrimSpace(r.out)) {
			t.Fatalf("after the directory was freed: exit %d, %q %q", r.code, r.out, r.errOut)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command was still waiting 20 s after the directory was freed")
	}
}
