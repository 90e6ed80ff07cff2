package analytics

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// CheckPathRegex checks that a campaign's path regular expression means
// the same in Go's RE2, which the server evaluates, and in JavaScript,
// which the SDK evaluates again in the page, and compiles it. Only the
// subset in docs/messages.md ("Path regular expressions") is accepted:
// anything outside it differs between the two, or exists in one only, so
// it is refused with a message naming it rather than taken with a meaning
// the page would not share. The shared cases are testdata/messages/regex.json.
//
// A pattern larger than MaxPathRegexSize is refused too: the SDK matches
// with an automaton (sdk/browser/src/messages/pathregex.ts), never by
// backtracking, so that no pattern can freeze a page, and the automaton's
// size, which bounds its time per path character, grows with this measure.
// The SDK matches nothing with a larger pattern, so the server must not
// take one it would offer the page with another meaning.
func CheckPathRegex(pattern string) (*regexp.Regexp, error) {
	size, err := pathRegexSubset(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("is not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if size > MaxPathRegexSize {
		return nil, fmt.Errorf("is too large once its counted repeats are written out (a size over %d, docs/messages.md); use + or * instead of large {n,m} counts", MaxPathRegexSize)
	}
	return re, nil
}

// MaxPathRegexSize bounds a path expression's size as pathRegexSubset
// counts it (docs/messages.md, "Path regular expressions"): every literal,
// ., class, escape, anchor and | counts 1; x*, x+ and x? count x's size
// plus 1; x{n}, x{n,} and x{n,m} count x's size plus 1, times n, n+1 and
// m (at least once); a group counts what it holds. The SDK counts the
// same way, and its automaton has at most twice as many states.
const MaxPathRegexSize = 2000

// maxRepeat is the largest repeat count RE2 accepts; a larger one is
// refused by regexp.Compile, so the size only needs to count up to it.
const maxRepeat = 1000

// pathRegexSubset walks pattern token by token, refuses the first one
// outside the subset, and returns the pattern's size (MaxPathRegexSize).
// It checks the grouping it needs to know where a class or a group ends;
// what it leaves (an empty alternative, a range out of order, a repeat
// count over 1,000) regexp.Compile judges.
func pathRegexSubset(p string) (int, error) {
	// sizes holds the size so far of each open group, the whole pattern
	// first; last is the size of the previous atom, which a quantifier
	// repeats. Sizes are capped just above the limit, so nested counts
	// cannot overflow.
	sizes, last := []int{0}, 0
	add := func(n int) {
		sizes[len(sizes)-1] = min(sizes[len(sizes)-1]+n, MaxPathRegexSize+1)
	}
	atom := func(n int) {
		add(n)
		last = n
	}
	canRepeat := false // whether the previous token is an atom a quantifier may follow
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 || c > 0x7e {
			return 0, fmt.Errorf("may hold printable ASCII only (a path is percent-encoded), not %q at offset %d", rune(c), i)
		}
		switch c {
		case '\\':
			n, err := pathEscape(p, i, false)
			if err != nil {
				return 0, err
			}
			i += n
			canRepeat = p[i] != 'b' && p[i] != 'B'
			atom(1)
		case '[':
			n, err := pathClass(p, i)
			if err != nil {
				return 0, err
			}
			i += n
			canRepeat = true
			atom(1)
		case '(':
			if strings.HasPrefix(p[i:], "(?") {
				if !strings.HasPrefix(p[i:], "(?:") {
					return 0, fmt.Errorf("may not use %q at offset %d: flags, named groups and lookaround differ between Go and JavaScript; only (?: ) groups are allowed", p[i:min(i+3, len(p))], i)
				}
				i += 2
			}
			sizes = append(sizes, 0)
			canRepeat = false
		case ')':
			if len(sizes) == 1 {
				return 0, fmt.Errorf("has a ) at offset %d without its (", i)
			}
			group := sizes[len(sizes)-1]
			sizes = sizes[:len(sizes)-1]
			atom(group)
			canRepeat = true
		case '*', '+', '?', '{':
			if !canRepeat {
				return 0, fmt.Errorf("has a quantifier %q at offset %d with nothing to repeat", c, i)
			}
			times := 1
			if c == '{' {
				n, lo, hi, ok := pathBraces(p[i:])
				if !ok {
					return 0, fmt.Errorf("has a { at offset %d that is not a repeat count {n}, {n,} or {n,m}; write \\{ for the character", i)
				}
				times = max(hi, 1)
				if hi < 0 {
					times = lo + 1
				}
				i += n - 1
			}
			// The atom's size is already counted once.
			add((last+1)*times - last)
			if i+1 < len(p) && p[i+1] == '?' {
				i++ // lazy
			}
			canRepeat = false
		case '}', ']':
			return 0, fmt.Errorf("has a lone %q at offset %d; write \\%c for the character", c, i, c)
		case '^', '$':
			atom(1)
			canRepeat = false
		case '|':
			add(1)
			canRepeat = false
		default:
			atom(1)
			canRepeat = true
		}
	}
	if len(sizes) > 1 {
		return 0, fmt.Errorf("has a ( without its )")
	}
	return sizes[0], nil
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
// {n,m}, and returns its length and its bounds: hi is n for {n}, m for
// {n,m} and -1 for {n,}. Bounds over maxRepeat (which regexp.Compile
// refuses) are returned as maxRepeat+1.
func pathBraces(s string) (length, lo, hi int, ok bool) {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return 0, 0, 0, false
	}
	los, his, comma := s[1:end], "", false
	if k := strings.IndexByte(los, ','); k >= 0 {
		los, his, comma = los[:k], los[k+1:], true
	}
	digits := func(x string) bool { return strings.Trim(x, "0123456789") == "" }
	if los == "" || !digits(los) || !digits(his) || (!comma && his != "") {
		return 0, 0, 0, false
	}
	count := func(x string) int {
		n, err := strconv.Atoi(x)
		if err != nil || n > maxRepeat {
			return maxRepeat + 1
		}
		return n
	}
	lo, hi = count(los), -1
	switch {
	case !comma:
		hi = lo
	case his != "":
		hi = count(his)
	}
	return end + 1, lo, hi, true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
