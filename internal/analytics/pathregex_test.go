package analytics

import (
	"encoding/json"
	"os"
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
}

func TestPathRegexSharedCases(t *testing.T) {
	b, err := os.ReadFile("../../testdata/messages/regex.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases regexCases
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
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
		if _, err := CheckPathRegex(c.Pattern); err == nil {
			t.Errorf("%q (%s) accepted", c.Pattern, c.Why)
		}
	}
}
