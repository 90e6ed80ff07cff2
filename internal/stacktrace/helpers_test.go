package stacktrace

import (
	"strconv"
	"strings"
)

// shortFrame writes a frame as "function file:line:col" and its marks
// (native, eval, async=cause), "_" standing for an empty function or URL
// and ":line:col" left out when both are 0,
// with the capture page's URLs shortened to their file's name: bugs.js
// and module.mjs (any build, as each engine writes them) and sdk.min.js.
func shortFrame(f Frame) string {
	var b strings.Builder
	b.WriteString(or(f.Function))
	b.WriteByte(' ')
	b.WriteString(or(shortURL(f.URL)))
	if f.Line != 0 || f.Column != 0 {
		b.WriteString(":" + strconv.Itoa(f.Line) + ":" + strconv.Itoa(f.Column))
	}
	if f.Native {
		b.WriteString(" native")
	}
	if f.Eval {
		b.WriteString(" eval")
	}
	if f.Async != "" {
		b.WriteString(" async=" + f.Async)
	}
	return b.String()
}

// shortURL shortens the capture page's URLs (see shortFrame).
func shortURL(u string) string {
	for _, prefix := range []string{"http://127.0.0.1:8765/assets/", "/tmp/strata-stacks/app/", "http://127.0.0.1:8765/sdk/v1/", "/tmp/strata-stacks/sdk/v1/"} {
		if rest, ok := strings.CutPrefix(u, prefix); ok {
			rest, _, _ = strings.Cut(rest, "?")
			return rest
		}
	}
	return u
}

// or is s, or "_" for "".
func or(s string) string {
	if s == "" {
		return "_"
	}
	return s
}
