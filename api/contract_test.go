// Package api holds the HTTP contract, openapi.yaml. Its test keeps the
// contract and the code from drifting apart.
package api

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codePatterns find the error and rejection codes the server can send.
var codePatterns = []*regexp.Regexp{
	regexp.MustCompile(`reject\("([a-z_]+)"`),
	regexp.MustCompile(`Errorf\([^,]+, "([a-z_]+)"`),
	regexp.MustCompile(`Code:\s+"([a-z_]+)"`),
	regexp.MustCompile(`reject\("missing_"\+field`), // expands below
}

// TestEveryCodeIsDocumented reads the ingest and HTTP sources and checks
// that every code they can answer with appears in openapi.yaml.
func TestEveryCodeIsDocumented(t *testing.T) {
	spec, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, dir := range []string{"../internal/ingest", "../internal/httpapi", "../internal/auth"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	codes := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, re := range codePatterns[:3] {
			for _, m := range re.FindAllSubmatch(src, -1) {
				codes[string(m[1])] = true
			}
		}
		if codePatterns[3].Match(src) {
			// requiredString builds missing_/invalid_ codes from field names.
			for _, field := range []string{"event_name", "distinct_id"} {
				codes["missing_"+field], codes["invalid_"+field] = true, true
			}
		}
	}
	if len(codes) < 25 {
		t.Fatalf("found only %d codes in the sources; the patterns are stale", len(codes))
	}
	for code := range codes {
		if code == "internal" || code == "not_found" || code == "invalid_request" {
			continue // generic codes of routes not in this contract yet
		}
		if !strings.Contains(string(spec), code) {
			t.Errorf("code %q is sent by the server but not documented in openapi.yaml", code)
		}
	}
}
