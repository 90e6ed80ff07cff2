// Package sdkgo checks, from the server's module, what the Go SDK's own
// module (sdk/go) must keep in step with the server: its copies of the
// AI-bot allowlist, of the server's classification cases and of the shared
// assignment vectors, and that it depends on the standard library alone.
// The SDK cannot run these itself: it may not reach outside its module.
package sdkgo

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"strata/internal/enrich/bots"
	"strata/internal/flags"

	"github.com/strata-analytics/strata/sdk/go/strata"
)

const root = "../.."

// TestCopiesMatch fails when one of the SDK's copies differs from its
// original; `go generate ./...` in sdk/go (sdk/go/strata/sync.sh) copies
// them again.
func TestCopiesMatch(t *testing.T) {
	for _, c := range []struct{ original, copy string }{
		{"internal/enrich/bots/ai_bots.json", "sdk/go/strata/ai_bots.json"},
		{"internal/enrich/bots/testdata/user_agents.tsv", "sdk/go/strata/testdata/user_agents.tsv"},
		{"sdk/browser/test/assignment.json", "sdk/go/strata/testdata/assignment.json"},
	} {
		want, err := os.ReadFile(filepath.Join(root, c.original))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, c.copy))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s: run go generate ./... in sdk/go", c.copy, c.original)
		}
	}
}

// TestStandardLibraryOnly lists every package the SDK's module builds
// with, its tests included, and fails on any that is not the standard
// library's or the SDK's own: a Go program that imports the SDK must pull
// nothing else, least of all the server's DuckDB, ClickHouse or fasthttp.
func TestStandardLibraryOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{if not .Standard}}{{.ImportPath}}|{{with .Module}}{{.Path}}{{end}}{{end}}", "./...")
	cmd.Dir = filepath.Join(root, "sdk/go")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/strata-analytics/strata/sdk/go"
	own := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, mod, _ := strings.Cut(line, "|")
		if mod != module {
			t.Errorf("the Go SDK depends on %s (module %q)", pkg, mod)
			continue
		}
		own++
	}
	if own == 0 {
		t.Fatalf("go list named none of the SDK's packages:\n%s", out)
	}
}

// TestClassifiesAsTheServer runs the server's classifier and the SDK's on
// the server's cases and on variations of them: they must agree on every
// one, bot or not, and on the bot.
func TestClassifiesAsTheServer(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "internal/enrich/bots/testdata/user_agents.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var agents []string
	for _, line := range strings.Split(string(raw), "\n") {
		if _, ua, ok := strings.Cut(line, "\t"); ok && !strings.HasPrefix(line, "#") {
			agents = append(agents, ua, strings.ToUpper(ua), ua+"; x", "("+ua+")")
		}
	}
	for _, b := range bots.Default().Bots() {
		agents = append(agents, b.Token, b.Token+"/1.0", "Not"+b.Token, "x/"+b.Token)
	}
	for _, ua := range agents {
		want, wok := bots.Default().Classify(ua)
		got, gok := strata.ClassifyBot(ua)
		if wok != gok || got.Name != want.Name || got.Operator != want.Operator || got.Category != want.Category ||
			(gok && got.CategoryLabel != bots.CategoryLabel(want.Category)) {
			t.Errorf("%q: the SDK says %+v %v, the server %+v %v", ua, got, gok, want, wok)
		}
	}
	if len(agents) < 200 {
		t.Fatalf("only %d user agents compared", len(agents))
	}
}

// TestAssignsAsTheServer evaluates flags of every shape for many users in
// the SDK (through its exported Variant, against the server's
// configuration encoding) and in the server's internal/flags, which the
// experiment results follow: every user must be in the same arm.
func TestAssignsAsTheServer(t *testing.T) {
	list := []flags.Flag{
		{Key: "exp", Enabled: true, Rollout: 33.33, Variants: []flags.Variant{{Key: "a", Weight: 33.33}, {Key: "b", Weight: 33.33}, {Key: "c", Weight: 33.34}},
			Experiment: &flags.Experiment{ID: 9, Status: "running", Holdout: 0.15}},
		{Key: "onoff", Enabled: true, Rollout: 12.5},
		{Key: "paused", Enabled: true, Rollout: 100, Variants: []flags.Variant{{Key: "x", Weight: 50}, {Key: "y", Weight: 50}},
			Experiment: &flags.Experiment{ID: 2, Status: "paused", Holdout: 0.1}},
		{Key: "off", Enabled: false, Rollout: 100},
		{Key: "targeted", Enabled: true, Rollout: 80, Variants: []flags.Variant{{Key: "a", Weight: 50}, {Key: "b", Weight: 50}},
			Experiment: &flags.Experiment{ID: 3, Status: "running", Holdout: 0.1},
			Conditions: []flags.Condition{{Type: "trait", Trait: "plan", Op: "neq", Value: "free"}, {Type: "trait", Trait: "seats", Op: "gt", Value: "5"},
				{Type: "trait", Trait: "email", Op: "contains", Value: "@ACME"}}},
	}
	srv := serveConfig(t, list)
	c := strata.New(strata.Options{APIKey: "st_live_x", Host: srv, DisableExposures: true})
	defer c.Close(t.Context())
	for i := range 2000 {
		id := fmt.Sprintf("user-%d-é", i)
		// Properties that pass or fail each condition of the targeted flag.
		props := map[string]any{"seats": float64(i % 11), "email": fmt.Sprintf("u%d@%s.com", i, []string{"acme", "other"}[i%2])}
		if i%3 > 0 {
			props["plan"] = []string{"", "free", "pro"}[i%3]
		}
		for _, f := range append(list, flags.Flag{Key: "missing"}) {
			want := "control"
			if a, ok := flags.Assign(findFlag(list, f.Key), id, props, nil); ok {
				want = a.Variant
			}
			if got := c.VariantWithProperties(t.Context(), f.Key, id, props); got != want {
				t.Fatalf("%s for %s with %v: the SDK says %s, the server %s", f.Key, id, props, got, want)
			}
		}
	}
}
