package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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

// run runs the strata binary with exactly args (no --data added) and
// returns its output and exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "STRATA_DATA=", "STRATA_ADDR=")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("strata %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// TestCLIVersion checks that `strata version`, `strata --version`, the
// "listening" log line and GET /api/v1/version name the same build, and
// that its version is the repository's VERSION file, the one the npm
// packages and the WordPress plugin are released under.
func TestCLIVersion(t *testing.T) {
	line, errOut, code := run(t, "version")
	if code != 0 || errOut != "" || !strings.HasPrefix(line, "strata ") || strings.Count(line, "\n") != 1 {
		t.Fatalf("strata version: exit %d, stdout %q, stderr %q; want one line", code, line, errOut)
	}
	release, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if want := "strata " + strings.TrimSpace(string(release)) + " "; !strings.HasPrefix(line, want) {
		t.Errorf("strata version %q does not start with %q, the VERSION file's", line, want)
	}
	if !strings.HasSuffix(line, " "+runtime.Version()+"\n") {
		t.Errorf("strata version %q does not end with the Go version %s", line, runtime.Version())
	}
	if again, _, code := run(t, "--version"); code != 0 || again != line {
		t.Errorf("strata --version: exit %d, %q; want %q", code, again, line)
	}
	build := strings.TrimSuffix(strings.TrimPrefix(line, "strata "), "\n")

	s := startServer(t, t.TempDir())
	var logged struct{ Version string }
	for _, l := range strings.Split(s.Logs(), "\n") {
		if strings.Contains(l, `"msg":"listening"`) {
			json.Unmarshal([]byte(l), &logged)
		}
	}
	if logged.Version != build {
		t.Errorf("the listening line's version is %q; want %q:\n%s", logged.Version, build, s.Logs())
	}

	r := do(t, "GET", s.URL+"/api/v1/version", nil, map[string]string{"Origin": "https://elsewhere.example"})
	var v struct {
		Version    string  `json:"version"`
		Commit     *string `json:"commit"`
		CommitTime *string `json:"commitTime"`
		Modified   *bool   `json:"modified"`
		Go         string  `json:"go"`
	}
	if err := json.Unmarshal(r.Body, &v); err != nil || r.Status != 200 {
		t.Fatalf("GET /api/v1/version without a credential: %d %s", r.Status, r.Body)
	}
	if v.Version != strings.TrimSpace(string(release)) || v.Commit == nil || v.CommitTime == nil || v.Modified == nil || v.Go != runtime.Version() ||
		!strings.HasPrefix(build, v.Version+" ") {
		t.Errorf("GET /api/v1/version: %s; the CLI says %q", r.Body, build)
	}
	if *v.Commit != "" && !strings.Contains(build, (*v.Commit)[:12]) {
		t.Errorf("commit %s is not in %q", *v.Commit, build)
	}
	if h := r.Header.Get("Access-Control-Allow-Origin"); h != "" {
		t.Errorf("GET /api/v1/version sends Access-Control-Allow-Origin %q; it is not an SDK path", h)
	}
}

// TestCLIHelp checks the help of the binary: `serve --help` prints the
// serve flags once and exits 0 without starting; `help`, `--help` and a
// command's --help print the usage and exit 0; no command is a usage
// error.
func TestCLIHelp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	out, errOut, code := run(t, "serve", "--help", "--data", dir)
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: strata serve") {
		t.Fatalf("serve --help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, flag := range []string{"addr", "data", "events", "meta", "rate-limit", "allowed-hosts", "debug-addr"} {
		if n := strings.Count(out, "\n  -"+flag+" "); n != 1 {
			t.Errorf("serve --help lists -%s %d times; want once", flag, n)
		}
	}
	// The switch the spec names, read from the environment only, is how
	// error tracking is turned on: the help must say so.
	if !strings.Contains(out, "\n  NEXT_PUBLIC_FEATURE_ERROR_TRACKING=true\n") || !strings.Contains(out, "/errors") {
		t.Errorf("serve --help does not name NEXT_PUBLIC_FEATURE_ERROR_TRACKING and what it turns on:\n%s", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("serve --help created its data directory (%v)", err)
	}
	usage, _, code := run(t, "help")
	if code != 0 || !strings.Contains(usage, "products list [--json]") || !strings.Contains(usage, "tokens list --product ID [--json]") ||
		!strings.Contains(usage, "  version") {
		t.Errorf("help: exit %d, %q", code, usage)
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"tokens", "--help"}, {"keys", "list", "--help"}} {
		if out, errOut, code := run(t, args...); code != 0 || out != usage || errOut != "" {
			t.Errorf("strata %s: exit %d, stdout %q, stderr %q; want the usage and 0", strings.Join(args, " "), code, out, errOut)
		}
	}
	if out, errOut, code := run(t); code != 2 || out != "" || errOut != usage {
		t.Errorf("strata without a command: exit %d, stdout %q, stderr %q; want the usage on stderr and 2", code, out, errOut)
	}
}

// TestCLILists checks products list, keys list and tokens list on a data
// directory no server holds, then through a running server's admin socket,
// where a token created over HTTP shows at once; a token's secret is never
// printed.
func TestCLILists(t *testing.T) {
	dir := t.TempDir()
	cli(t, dir, "products", "create", "--name", "Shop")
	key := strings.TrimSpace(cli(t, dir, "keys", "create", "--product", "2"))
	tok := strings.TrimSpace(cli(t, dir, "tokens", "create", "--product", "2"))

	type token struct {
		ID        int64
		ProductID int64
		Prefix    string
		Status    string
		CreatedAt time.Time
	}
	lists := func(how string, tokens int) {
		t.Helper()
		var products []struct {
			ID          int64
			WorkspaceID int64
			Name        string
		}
		if out := cli(t, dir, "products", "list", "--json"); json.Unmarshal([]byte(out), &products) != nil ||
			len(products) != 2 || products[0].Name != "Default" || products[1].Name != "Shop" || products[1].ID != 2 {
			t.Errorf("%s: products list --json: %q", how, out)
		}
		if out := cli(t, dir, "products", "list"); !regexp.MustCompile(`(?m)^2\s+Shop\s+1\s+UTC\s+\d{4}-`).MatchString(out) {
			t.Errorf("%s: products list:\n%s", how, out)
		}
		var keys []struct{ Prefix, Status string }
		if out := cli(t, dir, "keys", "list", "--product", "2", "--json"); json.Unmarshal([]byte(out), &keys) != nil ||
			len(keys) != 1 || !strings.HasPrefix(key, keys[0].Prefix) || strings.Contains(out, key) {
			t.Errorf("%s: keys list --json: %q", how, out)
		}
		raw := cli(t, dir, "tokens", "list", "--product", "2", "--json")
		var list []token
		if err := json.Unmarshal([]byte(raw), &list); err != nil || len(list) != tokens {
			t.Fatalf("%s: tokens list --json: %q; want %d tokens", how, raw, tokens)
		}
		if l := list[0]; l.ProductID != 2 || l.Status != "active" || !strings.HasPrefix(tok, l.Prefix) || len(l.Prefix) > 12 || l.CreatedAt.IsZero() {
			t.Errorf("%s: tokens list --json: %+v", how, l)
		}
		table := cli(t, dir, "tokens", "list", "--product", "2")
		if !regexp.MustCompile(`(?m)^ID\s+PREFIX\s+STATUS\s+CREATED\s+LAST USED$`).MatchString(table) ||
			!strings.Contains(table, list[0].Prefix+"…") || strings.Count(strings.TrimSpace(table), "\n") != tokens {
			t.Errorf("%s: tokens list:\n%s", how, table)
		}
		for _, out := range []string{raw, table} {
			if strings.Contains(out, tok) {
				t.Errorf("%s: tokens list printed a token's secret", how)
			}
		}
	}
	lists("without a server", 1)

	s := startServer(t, dir)
	lists("through the admin socket", 1)
	// The dashboard creates a token; the CLI, through the socket, sees it.
	if created := setupOwner(t, s).do(t, "POST", "/api/v1/products/2/tokens", nil); created.Status != 201 {
		t.Fatalf("creating a token in the dashboard: %d %s", created.Status, created.Body)
	}
	lists("after the dashboard created a token", 2)
	if _, errOut, code := cliResult(dir, "tokens", "list", "--product", "7"); code != 1 || !strings.Contains(errOut, "no product 7") {
		t.Errorf("tokens list of a missing product: exit %d, %q", code, errOut)
	}
}

// TestOpenAPIServed checks GET /api/v1/openapi.yaml on the real binary: the
// contract in this repository, as YAML, without a credential, with an ETag
// that answers 304.
func TestOpenAPIServed(t *testing.T) {
	want, err := os.ReadFile("../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, t.TempDir())
	r := do(t, "GET", s.URL+"/api/v1/openapi.yaml", nil, nil)
	if r.Status != 200 || !bytes.Equal(r.Body, want) {
		t.Fatalf("GET /api/v1/openapi.yaml: %d, %d bytes; want 200 and api/openapi.yaml (%d bytes)", r.Status, len(r.Body), len(want))
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/yaml; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if r := do(t, "GET", s.URL+"/api/v1/openapi.yaml", nil, map[string]string{"If-None-Match": r.Header.Get("ETag")}); r.Status != 304 {
		t.Errorf("revalidation: %d; want 304", r.Status)
	}
}
