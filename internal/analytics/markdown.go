package analytics

import (
	"regexp"
	"strings"
)

// The safe Markdown subset of message bodies (docs/messages.md): what the
// server stores of a body, the SDK renders with DOM calls only.

var (
	// htmlTag is anything that reads as an HTML tag, comment or
	// declaration: it has no meaning in the subset and is stripped.
	htmlTag = regexp.MustCompile(`<[A-Za-z!/?][^<>]*>`)
	// mdLink is a link of the subset, [text](url); the URL may hold one
	// level of parentheses, so that javascript:alert(1) is seen whole.
	mdLink = regexp.MustCompile(`\[([^\[\]]*)\]\(((?:[^()\s]|\([^()\s]*\))*)\)`)
)

// CleanMarkdown returns body as the server stores it: raw HTML tags
// stripped, and every link whose URL is not a safe one (SafeURL) turned
// into its text. It is applied until nothing changes, so that stripping
// one tag cannot join the halves of another.
func CleanMarkdown(body string) string {
	for {
		out := htmlTag.ReplaceAllString(body, "")
		out = mdLink.ReplaceAllStringFunc(out, func(link string) string {
			m := mdLink.FindStringSubmatch(link)
			if SafeURL(m[2]) {
				return link
			}
			return m[1]
		})
		if out == body {
			return out
		}
		body = out
	}
}

// SafeURL reports whether a message link or call to action may point at
// url: an http, https or mailto URL, or a path on the page's own site.
// Anything else (javascript:, data:, vbscript:, a protocol-relative
// //host) is refused.
func SafeURL(url string) bool {
	u := strings.ToLower(url)
	switch {
	case strings.HasPrefix(u, "http://"), strings.HasPrefix(u, "https://"), strings.HasPrefix(u, "mailto:"):
		return len(u) > len("mailto:")
	case strings.HasPrefix(u, "/"):
		return !strings.HasPrefix(u, "//") && !strings.HasPrefix(u, `/\`)
	}
	return false
}
