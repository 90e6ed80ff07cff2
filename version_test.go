package strata

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// TestOneVersion checks that everything released from this repository says
// the VERSION file's version: the binary (Version, which internal/buildinfo
// reports), both npm packages (package.json, its lock file, and the
// VERSION constant each SDK sends as $lib_version), and the WordPress
// plugin (its header, its constant and readme.txt's Stable tag). A release
// bumps VERSION and this test lists every file still to change.
func TestOneVersion(t *testing.T) {
	want := Version()
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(want) {
		t.Fatalf("VERSION is %q; want MAJOR.MINOR.PATCH", want)
	}
	for _, sdk := range []string{"sdk/browser", "sdk/node"} {
		var pkg struct{ Version string }
		readJSON(t, sdk+"/package.json", &pkg)
		if pkg.Version != want {
			t.Errorf("%s/package.json has version %q; VERSION says %s", sdk, pkg.Version, want)
		}
		var lock struct {
			Version  string
			Packages map[string]struct{ Version string }
		}
		readJSON(t, sdk+"/package-lock.json", &lock)
		if lock.Version != want || lock.Packages[""].Version != want {
			t.Errorf("%s/package-lock.json has version %q and %q; VERSION says %s (npm install --package-lock-only updates it)",
				sdk, lock.Version, lock.Packages[""].Version, want)
		}
	}
	for file, pattern := range map[string]string{
		"sdk/browser/src/client.ts":              `(?m)^export const VERSION = "([^"]*)";`,
		"sdk/node/src/version.ts":                `(?m)^export const VERSION = "([^"]*)";`,
		"plugins/wordpress/strata-analytics.php": `(?m)^ \* Version:\s*(\S+)\s*$`,
		"plugins/wordpress/readme.txt":           `(?m)^Stable tag:\s*(\S+)\s*$`,
	} {
		checkMatch(t, file, pattern, want)
	}
	checkMatch(t, "plugins/wordpress/strata-analytics.php", `define\( 'STRATA_ANALYTICS_VERSION', '([^']*)' \);`, want)
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// checkMatch finds pattern's first group in file exactly once and compares
// it with want.
func checkMatch(t *testing.T, file, pattern, want string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(pattern).FindAllSubmatch(b, -1)
	if len(m) != 1 {
		t.Errorf("%s: %d matches of %s; want one", file, len(m), pattern)
		return
	}
	if got := string(m[0][1]); got != want {
		t.Errorf("%s says version %q; VERSION says %s", file, got, want)
	}
}
