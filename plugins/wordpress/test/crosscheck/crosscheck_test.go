// Package crosscheck checks that the WordPress plugin's PHP classifier
// (plugins/wordpress/includes) answers exactly as the server's Go classifier
// (internal/enrich/bots) on many generated user agents: the plugin forwards
// what it takes for an AI bot, and ingest must agree, or bot fetches are
// lost or people's counted as bots.
//
// It needs the php command. Without it the test skips, unless
// STRATA_REQUIRE_PHP is set (`make test-wordpress` sets it).
package crosscheck

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"strata/internal/enrich/bots"
)

// pieces are what generated user agents are made of: every separator of
// the rule, bytes that look like separators but are not, non-ASCII and
// invalid UTF-8, and text around tokens.
var pieces = []string{
	" ", "\t", ";", "(", ")", ",", "/", "/1.0", "/", "\n", "\r", "\x00", "+", "-", "_", ".", ":",
	"\u00a0", "é", "\u212a", "\xff", "\xe2", "\xe2\x80", "Mozilla/5.0", "compatible", "like Gecko",
	"https://openai.com/gptbot", "Bot", "bot", "x", "",
}

// userAgents returns n user agents built from allowlist tokens (in random
// case, sometimes cut or extended) and pieces, from a fixed seed.
func userAgents(n int) []string {
	tokens := make([]string, 0, 64)
	for _, b := range bots.Default().Bots() {
		tokens = append(tokens, b.Token)
	}
	r := rand.New(rand.NewPCG(23, 5))
	out := make([]string, 0, n)
	for len(out) < n {
		var sb strings.Builder
		for k := r.IntN(8); k >= 0; k-- {
			if r.IntN(3) == 0 {
				tok := []byte(tokens[r.IntN(len(tokens))])
				for i := range tok {
					if r.IntN(2) == 0 && 'a' <= tok[i] && tok[i] <= 'z' {
						tok[i] -= 'a' - 'A'
					} else if r.IntN(2) == 0 && 'A' <= tok[i] && tok[i] <= 'Z' {
						tok[i] += 'a' - 'A'
					}
				}
				switch r.IntN(6) {
				case 0:
					tok = tok[:r.IntN(len(tok)+1)]
				case 1:
					tok = append(tok, pieces[r.IntN(len(pieces))]...)
				}
				sb.Write(tok)
			} else {
				sb.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		out = append(out, sb.String())
	}
	return out
}

func TestPHPClassifierMatchesGo(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		if os.Getenv("STRATA_REQUIRE_PHP") != "" {
			t.Fatal("php not found; run scripts/install-wordpress-deps.sh")
		}
		t.Skip("php not found; `make test-wordpress` installs it")
	}
	uas := userAgents(20000)
	// The server's own table, and a product just over the 64-byte buffer
	// the Go classifier lower-cases into.
	table, err := os.ReadFile("../../../../internal/enrich/bots/testdata/user_agents.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(table), "\n") {
		if _, ua, ok := strings.Cut(line, "\t"); ok {
			uas = append(uas, ua)
		}
	}
	uas = append(uas, strings.Repeat("a", 65), "GPTBot"+strings.Repeat("x", 64))

	var in bytes.Buffer
	for _, ua := range uas {
		in.WriteString(hex.EncodeToString([]byte(ua)) + "\n")
	}
	file := filepath.Join(t.TempDir(), "uas.hex")
	if err := os.WriteFile(file, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(php, "classify.php", file).Output()
	if err != nil {
		t.Fatalf("php classify.php: %v", err)
	}

	sc := bufio.NewScanner(bytes.NewReader(out))
	c := bots.Default()
	found, failures, lines := 0, 0, 0
	for i := 0; sc.Scan(); i++ {
		lines++
		if i >= len(uas) {
			t.Fatalf("php printed more lines than the %d user agents", len(uas))
		}
		want := "-"
		if b, ok := c.Classify(uas[i]); ok {
			want = b.Name
			found++
		}
		if got := sc.Text(); got != want && failures < 20 {
			failures++
			t.Errorf("%q: PHP says %s, Go says %s", uas[i], got, want)
		}
	}
	if lines != len(uas) {
		t.Fatalf("php printed %d lines for %d user agents", lines, len(uas))
	}
	// Enough of both answers for the comparison to mean something.
	if found < len(uas)/10 || found > len(uas)*9/10 {
		t.Errorf("%d of %d generated user agents are bots; the generator needs a better mix", found, len(uas))
	}
	t.Logf("%d user agents, %d bots: PHP and Go agree", len(uas), found)
}
