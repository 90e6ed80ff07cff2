package analytics

import (
	"regexp"
	"testing"
)

// TestPathPattern checks the page goal's wildcard: '*' matches any run of
// characters, '/' and none included, the pattern matches the whole path,
// and every other character, a regular expression's metacharacters
// included, matches only itself.
func TestPathPattern(t *testing.T) {
	for _, c := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"/pricing", []string{"/pricing"}, []string{"/pricing/", "/pricing/team", "/x/pricing", "/Pricing", ""}},
		{"/blog/*", []string{"/blog/", "/blog/a", "/blog/a/b"}, []string{"/blog", "/blogs/a", "/x/blog/a"}},
		{"/blog*", []string{"/blog", "/blogs", "/blog/a/b"}, []string{"/x/blog"}},
		{"*", []string{"/", "/a/b?c", "x"}, nil},
		{"/*/a*", []string{"/x/a", "/x/y/ab", "//a"}, []string{"/a", "/x/b"}},
		{"/a.b", []string{"/a.b"}, []string{"/aXb", "/a.bc"}},
		{"/(x)+[y]$", []string{"/(x)+[y]$"}, []string{"/xx[y]", "/x"}},
		{"/café/*", []string{"/café/", "/café/menü"}, []string{"/cafe/"}},
		{"/line*end", []string{"/line\nend"}, nil},
	} {
		re := regexp.MustCompile(PathPattern(c.pattern))
		for _, p := range c.match {
			if !re.MatchString(p) {
				t.Errorf("%q does not match %q (%s)", c.pattern, p, re)
			}
		}
		for _, p := range c.miss {
			if re.MatchString(p) {
				t.Errorf("%q matches %q (%s)", c.pattern, p, re)
			}
		}
	}
}
