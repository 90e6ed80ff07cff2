package analytics

import (
	"fmt"
	"regexp"
	"strings"
)

// CheckPathRegex checks that a campaign's path regular expression means
// the same in Go's RE2, which the server evaluates, and in JavaScript,
// which the SDK evaluates again in the page, and compiles it. Only the
// subset in docs/messages.md ("Path regular expressions") is accepted:
// anything outside it differs between the two, or exists in one only, so
// it is refused with a message naming it rather than taken with a meaning
// the page would not share. The shared cases are testdata/messages/regex.json.
func CheckPathRegex(pattern string) (*regexp.Regexp, error) {
	if err := pathRegexSubset(pattern); err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("is not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return re, nil
}

// pathRegexSubset walks pattern token by token and refuses the first one
// outside the subset. It checks the grouping it needs to know where a class
// or a group ends; what it leaves (an empty alternative, a range out of
// order) regexp.Compile judges.
func pathRegexSubset(p string) error {
	depth := 0
	canRepeat := false // whether the previous token is an atom a quantifier may follow
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 || c > 0x7e {
			return fmt.Errorf("may hold printable ASCII only (a path is percent-encoded), not %q at offset %d", rune(c), i)
		}
		switch c {
		case '\\':
			n, err := pathEscape(p, i, false)
			if err != nil {
				return err
			}
			i += n
			canRepeat = p[i] != 'b' && p[i] != 'B'
		case '[':
			n, err := pathClass(p, i)
			if err != nil {
				return err
			}
			i += n
			canRepeat = true
		case '(':
			if strings.HasPrefix(p[i:], "(?") {
				if !strings.HasPrefix(p[i:], "(?:") {
					return fmt.Errorf("may not use %q at offset %d: flags, named groups and lookaround differ between Go and JavaScript; only (?: ) groups are allowed", p[i:min(i+3, len(p))], i)
				}
				i += 2
			}
			depth++
			canRepeat = false
		case ')':
			if depth == 0 {
				return fmt.Errorf("has a ) at offset %d without its (", i)
			}
			depth--
			canRepeat = true
		case '*', '+', '?', '{':
			if !canRepeat {
				return fmt.Errorf("has a quantifier %q at offset %d with nothing to repeat", c, i)
			}
			if c == '{' {
				n, ok := pathBraces(p[i:])
				if !ok {
					return fmt.Errorf("has a { at offset %d that is not a repeat count {n}, {n,} or {n,m}; write \\{ for the character", i)
				}
				i += n - 1
			}
			if i+1 < len(p) && p[i+1] == '?' {
				i++ // lazy
			}
			canRepeat = false
		case '}', ']':
			return fmt.Errorf("has a lone %q at offset %d; write \\%c for the character", c, i, c)
		case '^', '$', '|':
			canRepeat = false
		default:
			canRepeat = true
		}
	}
	if depth > 0 {
		return fmt.Errorf("has a ( without its )")
	}
	return nil
}

// pathEscape checks the escape at p[i] ('\') and returns how many bytes
// after the backslash it takes (always 1). In a class, \b is not allowed
// (a backspace in JavaScript, refused by Go).
func pathEscape(p string, i int, inClass bool) (int, error) {
	if i+1 >= len(p) {
		return 0, fmt.Errorf("ends with a lone \\")
	}
	c := p[i+1]
	switch {
	case c == 'd' || c == 'D' || c == 'w' || c == 'W':
		return 1, nil
	case (c == 'b' || c == 'B') && !inClass:
		return 1, nil
	case c > 0x20 && c < 0x7f && !isAlnum(c):
		return 1, nil
	}
	return 0, fmt.Errorf("may not use the escape \\%c at offset %d: it differs between Go and JavaScript or exists in one only; allowed are \\d \\D \\w \\W \\b \\B and \\ before punctuation", c, i)
}

// pathClass checks the class starting at p[i] ('[') and returns how many
// bytes after the '[' it takes, up to its ']'.
func pathClass(p string, i int) (int, error) {
	j := i + 1
	if j < len(p) && p[j] == '^' {
		j++
	}
	first := true
	for ; j < len(p); j++ {
		switch c := p[j]; {
		case c < 0x20 || c > 0x7e:
			return 0, fmt.Errorf("may hold printable ASCII only, not %q at offset %d", rune(c), j)
		case c == ']' && !first:
			return j - i, nil
		case c == ']' || c == '[':
			return 0, fmt.Errorf("has a %q inside a class at offset %d (POSIX classes such as [[:alpha:]] and a leading ] differ); write \\%c", c, j, c)
		case c == '\\':
			n, err := pathEscape(p, j, true)
			if err != nil {
				return 0, err
			}
			j += n
		}
		first = false
	}
	return 0, fmt.Errorf("has a [ at offset %d without its ]", i)
}

// pathBraces reports whether s starts with a repeat count {n}, {n,} or
// {n,m}, and its length.
func pathBraces(s string) (int, bool) {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return 0, false
	}
	lo, hi, comma := s[1:end], "", false
	if k := strings.IndexByte(lo, ','); k >= 0 {
		lo, hi, comma = lo[:k], lo[k+1:], true
	}
	digits := func(x string) bool { return strings.Trim(x, "0123456789") == "" }
	if lo == "" || !digits(lo) || !digits(hi) || (!comma && hi != "") {
		return 0, false
	}
	return end + 1, true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
