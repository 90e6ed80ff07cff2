package e2e

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeExample is one curl command of the README's quick start and the
// answer the README shows for it (the "# …" line after it).
type readmeExample struct {
	command, answer string
}

// readmeCurls returns the quick start's curl examples, in order.
func readmeCurls(t *testing.T) []readmeExample {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeExample
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		lines := strings.Split(strings.TrimSpace(block[1]), "\n")
		if !strings.HasPrefix(lines[0], "curl ") {
			continue
		}
		var ex readmeExample
		for _, l := range lines {
			if a, ok := strings.CutPrefix(l, "# "); ok {
				ex.answer = a
			} else {
				ex.command += l + "\n"
			}
		}
		out = append(out, ex)
	}
	return out
}

// TestReadmeQuickStart runs the README's quick-start curl commands, as
// written, against a fresh server (its address, key and token put in for
// the README's placeholders), and checks that each answers exactly what the
// README shows and that the page view shows where the README says: on the
// Overview, as a visitor, a page view and a top page.
func TestReadmeQuickStart(t *testing.T) {
	examples := readmeCurls(t)
	if len(examples) != 2 {
		t.Fatalf("the README's quick start has %d curl examples, want 2 (an event, then a funnel)", len(examples))
	}
	s := startServer(t, t.TempDir())
	if s.BootstrapKey == "" {
		t.Fatal("the first start logged no key")
	}
	token := strings.TrimSpace(cli(t, s.dataDir, s.manage("tokens", "create", "--product", "1")...))
	fill := strings.NewReplacer("http://127.0.0.1:8080", s.URL, "st_live_…", s.BootstrapKey, "st_tok_…", token)
	// The event is stamped when it arrives: from the day the examples
	// start to the day they end holds it, should midnight come between.
	from := time.Now().UTC().Format(time.DateOnly)
	for i, ex := range examples {
		if !strings.Contains(ex.command, "http://127.0.0.1:8080/") {
			t.Fatalf("example %d does not call the quick start's address: %s", i, ex.command)
		}
		cmd := exec.Command("sh", "-c", fill.Replace(ex.command))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("example %d: %v: %s", i, err, errOut.String())
		}
		if got := strings.TrimSpace(out.String()); got != ex.answer {
			t.Errorf("example %d answered\n%s\nthe README shows\n%s", i, got, ex.answer)
		}
	}

	// The Overview's cards and Top pages read these queries.
	today := time.Now().UTC().Format(time.DateOnly)
	trend := func(math string) float64 {
		res := annCall(t, s, token, "POST", "/api/v1/query/trend", map[string]any{"dateFrom": from, "dateTo": today, "interval": "day",
			"series": []map[string]any{{"event": "$pageview", "math": math}}})
		var r struct {
			Series []struct{ Data []struct{ Value float64 } }
		}
		json.Unmarshal(res.Body, &r)
		total := 0.0
		for _, l := range r.Series {
			for _, p := range l.Data {
				total += p.Value
			}
		}
		return total
	}
	if v, p := trend("unique_users"), trend("total"); v != 1 || p != 1 {
		t.Errorf("the Overview would show %v visitors and %v page views, the README says 1 and 1", v, p)
	}
	res := annCall(t, s, token, "POST", "/api/v1/query/trend", map[string]any{"dateFrom": from, "dateTo": today, "interval": "day",
		"series": []map[string]any{{"event": "$pageview"}}, "breakdown": "path"})
	if !strings.Contains(string(res.Body), `"breakdownValue":"/pricing"`) {
		t.Errorf("/pricing is not a top page: %s", res.Body)
	}
}

// TestFirstStartOnABusyPort starts a server on an empty data directory at
// an address already taken: it must fail before it creates the first
// product, so that the next start, on a free address, creates it and shows
// its key (once it listens), with the way to make another.
func TestFirstStartOnABusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := filepath.Join(t.TempDir(), "data")
	_, stderr, code := cliResult(dir, "serve", "--addr", busy.Addr().String())
	if code == 0 || !strings.Contains(stderr, "listening on "+busy.Addr().String()) {
		t.Fatalf("serve on a busy port: exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "st_live_") {
		t.Errorf("the failed start showed a key: %s", stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the failed start created the data directory: %v", err)
	}
	s := startServer(t, dir)
	if s.BootstrapKey == "" {
		t.Fatal("the next start showed no key")
	}
	logs := s.Logs()
	keyAt, listenAt := strings.Index(logs, s.BootstrapKey), strings.Index(logs, `"msg":"listening"`)
	if keyAt < 0 || listenAt < 0 || keyAt > listenAt || !strings.Contains(logs, "strata keys create --product 1") {
		t.Errorf("the key is not logged just before listening, with how to make another:\n%s", logs)
	}
}

// TestMakeRunTakesTheAddress checks what `make run` would run (make -n:
// nothing is built or started) with STRATA_ADDR and STRATA_DATA set on
// the command line and in the environment, and without them.
func TestMakeRunTakesTheAddress(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	for _, c := range []struct {
		args, env []string
		want      string
	}{
		{nil, nil, "serve --addr 127.0.0.1:8080 --data ./data"},
		{[]string{"STRATA_ADDR=127.0.0.1:9123", "STRATA_DATA=/srv/strata"}, nil, "serve --addr 127.0.0.1:9123 --data /srv/strata"},
		{nil, []string{"STRATA_ADDR=127.0.0.1:9124", "STRATA_DATA=/srv/other"}, "serve --addr 127.0.0.1:9124 --data /srv/other"},
	} {
		cmd := exec.Command("make", append([]string{"-n", "run"}, c.args...)...)
		cmd.Dir = ".."
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "STRATA_ADDR=") && !strings.HasPrefix(kv, "STRATA_DATA=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, c.env...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("make -n run %v with %v: %v, want %q in:\n%s", c.args, c.env, err, c.want, out)
		}
	}
}
