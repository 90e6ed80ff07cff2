package analytics

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// regexCases are the shared path-regex cases, which the SDK's tests run
// in JavaScript too (docs/messages.md).
type regexCases struct {
	Accepted []struct {
		Pattern string   `json:"pattern"`
		Match   []string `json:"match"`
		NoMatch []string `json:"noMatch"`
	} `json:"accepted"`
	Refused []struct {
		Pattern string `json:"pattern"`
		Why     string `json:"why"`
	} `json:"refused"`
	Sizes []struct {
		Pattern string `json:"pattern"`
		Size    int    `json:"size"`
	} `json:"sizes"`
}

func readRegexCases(t *testing.T) regexCases {
	t.Helper()
	b, err := os.ReadFile("../../testdata/messages/regex.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases regexCases
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestPathRegexSharedCases(t *testing.T) {
	cases := readRegexCases(t)
	if len(cases.Accepted) < 10 || len(cases.Refused) < 10 {
		t.Fatalf("too few cases: %d accepted, %d refused", len(cases.Accepted), len(cases.Refused))
	}
	for _, c := range cases.Accepted {
		re, err := CheckPathRegex(c.Pattern)
		if err != nil {
			t.Errorf("%q refused: %v", c.Pattern, err)
			continue
		}
		for _, p := range c.Match {
			if !re.MatchString(p) {
				t.Errorf("%q does not match %q", c.Pattern, p)
			}
		}
		for _, p := range c.NoMatch {
			if re.MatchString(p) {
				t.Errorf("%q matches %q", c.Pattern, p)
			}
		}
	}
	for _, c := range cases.Refused {
		_, err := CheckPathRegex(c.Pattern)
		if err == nil {
			t.Errorf("%q (%s) accepted", c.Pattern, c.Why)
			continue
		}
		// The size limit, which the SDK's matcher shares, is the reason
		// given, not another rule that happens to refuse the pattern too.
		if strings.HasPrefix(c.Why, "too large") && !strings.Contains(err.Error(), "too large") {
			t.Errorf("%q refused for another reason than its size: %v", c.Pattern, err)
		}
	}
}

// TestPathRegexSize checks the size count of docs/messages.md on the
// shared cases' sizes, which the SDK's tests check on its own count
// (sdk/browser/src/messages/pathregex.ts).
func TestPathRegexSize(t *testing.T) {
	cases := readRegexCases(t)
	if len(cases.Sizes) < 10 {
		t.Fatalf("too few sizes: %d", len(cases.Sizes))
	}
	for _, c := range cases.Sizes {
		size, err := pathRegexSubset(c.Pattern)
		if err != nil || size != c.Size {
			t.Errorf("size of %q = %d, %v; want %d", c.Pattern, size, err, c.Size)
		}
	}
	// Past the limit the count stops just over it, so nested counts
	// cannot overflow.
	if size, err := pathRegexSubset("^/(?:(?:(?:a{999}){999}){999}){999}$"); err != nil || size != MaxPathRegexSize+1 {
		t.Errorf("a huge pattern's size = %d, %v; want %d", size, err, MaxPathRegexSize+1)
	}
}
