package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"strata/internal/admin"
	"strata/internal/analytics"
	"strata/internal/buildinfo"
	"strata/internal/enrich/bots"
	"strata/internal/experiment"
	"strata/internal/httpapi"
	"strata/internal/store/duckdb"
)

// run runs one command with an empty environment and returns what it
// printed and its exit code.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	env := Env{Stdout: &o, Stderr: &e, Lookup: func(string) (string, bool) { return "", false }}
	code = Main(context.Background(), args, env)
	return o.String(), e.String(), code
}

// runIn returns a function that runs a command on the data directory dir
// and returns what it printed, failing the test unless it exits 0.
func runIn(t *testing.T, dir string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, errOut, code := run(t, append(args, "--data", dir)...)
		if code != 0 {
			t.Fatalf("strata %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return out
	}
}

func TestVersion(t *testing.T) {
	want := "strata " + buildinfo.Read().String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := run(t, args...)
		if code != 0 || out != want || errOut != "" {
			t.Errorf("strata %s: exit %d, stdout %q, stderr %q; want 0 and %q", args[0], code, out, errOut, want)
		}
	}
	if _, errOut, code := run(t, "version", "--data", "x"); code != 2 || !strings.Contains(errOut, "version takes no arguments") {
		t.Errorf("version with arguments: exit %d, %q", code, errOut)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"keys", "--help"}, {"tokens", "list", "-h"}, {"products", "help"}} {
		out, errOut, code := run(t, append(args, "--data", filepath.Join(t.TempDir(), "data"))...)
		if code != 0 || out != usage || errOut != "" {
			t.Errorf("strata %s: exit %d, stdout %q, stderr %q; want the usage on stdout and 0", strings.Join(args, " "), code, out, errOut)
		}
	}
	for _, line := range []string{"products list [--json]", "tokens list --product ID [--json]", "version", "serve"} {
		if !strings.Contains(usage, "  "+line) {
			t.Errorf("the usage does not list %q", line)
		}
	}
	if out, errOut, code := run(t); code != 2 || out != "" || errOut != usage {
		t.Errorf("no command: exit %d, stdout %q, stderr %q; want the usage on stderr and 2", code, out, errOut)
	}
}

// TestServeHelp checks that `serve --help` prints the serve flags once, on
// stdout, and exits 0 without starting anything.
func TestServeHelp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, flag := range []string{"--help", "-h", "-help"} {
		out, errOut, code := run(t, "serve", flag, "--data", dir)
		if code != 0 || errOut != "" {
			t.Fatalf("serve %s: exit %d, stderr %q", flag, code, errOut)
		}
		if !strings.HasPrefix(out, serveUsage) {
			t.Errorf("serve %s does not start with its usage: %q", flag, out)
		}
		for _, name := range []string{"addr", "data", "events", "meta", "allowed-hosts", "duckdb-memory", "srm-interval", "alert-interval", "alert-webhook-allow", "public-url", "debug-addr"} {
			if n := strings.Count(out, "\n  -"+name+" "); n != 1 {
				t.Errorf("serve %s prints -%s %d times; want once:\n%s", flag, name, n, out)
			}
		}
		if strings.Contains(out, "commands:") {
			t.Errorf("serve %s prints the general usage too", flag)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("serve --help created the data directory (%v)", err)
	}

	out, errOut, code := run(t, "serve", "--no-such-flag", "--data", dir)
	if code != 2 || out != "" || strings.Count(errOut, "-no-such-flag") != 1 || !strings.Contains(errOut, usage) {
		t.Errorf("serve with an unknown flag: exit %d, stdout %q, stderr %q; want the error once, the usage, and 2", code, out, errOut)
	}
}

// TestUnknownCommandTouchesNothing checks that a mistyped management
// command is refused before the data directory is created or opened.
func TestUnknownCommandTouchesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	for _, args := range [][]string{{"keys", "lsit"}, {"tokens", "delete"}, {"products", "--name", "x"}} {
		if _, errOut, code := run(t, append(args, "--data", dir)...); code != 2 || !strings.Contains(errOut, "unknown command") {
			t.Errorf("strata %s: exit %d, %q", strings.Join(args, " "), code, errOut)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("an unknown command created the data directory (%v)", err)
	}
}

// TestListCommands runs products list and tokens list on a data directory
// no server holds (the store opened directly), then with an admin socket
// in it (the commands go through the socket), and checks that both print
// the same, and never a token's secret.
func TestListCommands(t *testing.T) {
	dir := t.TempDir()
	cli := runIn(t, dir)
	cli("products", "create", "--name", "Web shop")
	tok := strings.TrimSpace(cli("tokens", "create", "--product", "2"))
	cli("tokens", "create", "--product", "2")

	check := func(how string) {
		t.Helper()
		var products []analytics.Product
		if err := json.Unmarshal([]byte(cli("products", "list", "--json")), &products); err != nil {
			t.Fatal(err)
		}
		if len(products) != 2 || products[0].Name != "Default" || products[1].Name != "Web shop" || products[1].ID != 2 || products[1].WorkspaceID == 0 ||
			products[1].TimeZone != "UTC" {
			t.Errorf("%s: products list --json: %+v", how, products)
		}
		table := cli("products", "list")
		if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") ||
			!strings.Contains(lines[0], "TIME ZONE") || !strings.Contains(lines[2], "Web shop") || !strings.Contains(lines[2], "UTC") {
			t.Errorf("%s: products list:\n%s", how, table)
		}

		raw := cli("tokens", "list", "--product", "2", "--json")
		var tokens []analytics.QueryToken
		if err := json.Unmarshal([]byte(raw), &tokens); err != nil {
			t.Fatal(err)
		}
		if len(tokens) != 2 || !strings.HasPrefix(tok, tokens[0].Prefix) || len(tokens[0].Prefix) >= len(tok) ||
			tokens[0].Status != analytics.KeyActive || tokens[0].ProductID != 2 || tokens[0].CreatedAt.IsZero() || tokens[0].LastUsedAt != nil {
			t.Errorf("%s: tokens list --json: %+v", how, tokens)
		}
		table = cli("tokens", "list", "--product", "2")
		lines := strings.Split(strings.TrimSpace(table), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], tokens[0].Prefix+"…") ||
			!strings.Contains(lines[1], "active") || !strings.HasSuffix(lines[1], "never") {
			t.Errorf("%s: tokens list:\n%s", how, table)
		}
		for _, out := range []string{raw, table} {
			if strings.Contains(out, tok) || strings.Contains(out, "hash") {
				t.Errorf("%s: tokens list shows a secret:\n%s", how, out)
			}
		}
		if out := cli("tokens", "list", "--product", "1", "--json"); out != "[]\n" {
			t.Errorf("%s: a product without tokens: %q", how, out)
		}
		if _, errOut, code := run(t, "tokens", "list", "--product", "99", "--data", dir); code != 1 || !strings.Contains(errOut, "no product 99") {
			t.Errorf("%s: tokens of a missing product: exit %d, %q", how, code, errOut)
		}
		if _, errOut, code := run(t, "tokens", "list", "--data", dir); code != 2 || !strings.Contains(errOut, "needs --product") {
			t.Errorf("%s: tokens list without --product: exit %d, %q", how, code, errOut)
		}
	}
	check("directly")

	// Now as a server holds the directory: its admin socket answers.
	paths := serveAdminSocket(t, dir)
	check("over the socket")
	for _, p := range []string{"GET /products", "GET /tokens"} {
		if !paths.has(p) {
			t.Errorf("%s never reached the admin socket; got %v", p, paths.list())
		}
	}
}

// requestLog records the requests an admin socket served.
type requestLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paths = append(l.paths, p)
}

func (l *requestLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.paths...)
}

func (l *requestLog) has(p string) bool {
	for _, got := range l.list() {
		if got == p {
			return true
		}
	}
	return false
}

// serveAdminSocket opens dir's store and serves the admin socket on it, as
// a running server does, until the test ends.
func serveAdminSocket(t *testing.T, dir string) *requestLog {
	t.Helper()
	st, err := duckdb.Open(context.Background(), dir, duckdb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, admin.SocketName))
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	log := &requestLog{}
	svc := &admin.Service{Meta: st, Flags: &experiment.Flags{Store: st}, Experiments: &experiment.Service{Store: st},
		FlagsChanged: func(productID int64) { log.add(fmt.Sprintf("flags changed %d", productID)) }}
	h := httpapi.AdminHandler(svc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.Method + " " + r.URL.Path)
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Close()
		st.Close()
	})
	return log
}

// TestBotsList prints the embedded allowlist: its version and review date,
// then every bot, and the same as JSON.
func TestBotsList(t *testing.T) {
	c := bots.Default()
	out, errOut, code := run(t, "bots", "list")
	head := fmt.Sprintf("AI-bot allowlist version %d, reviewed %s: %d bots\n", c.Version(), c.Reviewed(), len(c.Bots()))
	if code != 0 || errOut != "" || !strings.HasPrefix(out, head) || !strings.Contains(out, "GPTBot") ||
		!strings.Contains(out, "AI assistant (live fetch)") || strings.Count(out, "\n") != len(c.Bots())+3 {
		t.Errorf("bots list: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	out, _, code = run(t, "bots", "list", "--json")
	var got struct {
		Version  int
		Reviewed string
		Bots     []bots.Bot
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Version != c.Version() || got.Reviewed != c.Reviewed() || len(got.Bots) != len(c.Bots()) {
		t.Errorf("bots list --json: exit %d, %v, %s", code, err, out)
	}
	for _, args := range [][]string{{"bots"}, {"bots", "show"}, {"bots", "list", "extra"}} {
		if _, _, code := run(t, args...); code != 2 {
			t.Errorf("strata %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}
