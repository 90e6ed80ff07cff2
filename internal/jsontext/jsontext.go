// Package jsontext finds what JSON decoders accept but alter: the escape of
// half a surrogate pair (a "lone surrogate", such as "\ud800"), which is
// not Unicode text. encoding/json and goccy/go-json both decode it to
// U+FFFD without a word, so a string would be stored other than it was
// sent; Strata refuses it instead, as it refuses bytes that are not UTF-8
// (docs/security.md, "Text rules"). Decode, the API's one strict decoder of
// request bodies, refuses it with the rest of what a body may not hold.
package jsontext

import (
	"strconv"
	"strings"
)

// LoneSurrogate returns the offset in b of the first \uXXXX escape that
// is half of a surrogate pair without its other half, or -1. It reads the
// escapes of JSON strings only (a "\\ud800" is an escaped backslash, not
// an escape) and needs no well-formed input: it never fails, it only
// looks. A high surrogate (D800–DBFF) is whole when a low one (DC00–DFFF)
// escape follows at once, as in "\ud83d\ude00" (😀).
func LoneSurrogate(b []byte) int {
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(b) || b[i+1] != 'u' {
				i++ // a one-character escape: skip what it escapes
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				i++
				continue
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				if lo, ok := hex4(b, i+8); ok && i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11 // both halves
					continue
				}
				return i
			case r >= 0xDC00 && r <= 0xDFFF:
				return i
			}
			i += 5
		}
	}
	return -1
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Path names the JSON value that holds offset in a well-formed document b,
// the way the API's error messages name fields: `label`,
// `series[0].event`, `ids[2]`. A key itself is named by its path too. It
// returns "body" for the top level, or when b is not well-formed enough
// to tell.
func Path(b []byte, offset int) string {
	type level struct {
		object bool
		key    string
		index  int
	}
	var stack []level
	name := func() string {
		var sb strings.Builder
		for _, l := range stack {
			if l.object {
				if sb.Len() > 0 {
					sb.WriteByte('.')
				}
				sb.WriteString(l.key)
			} else {
				sb.WriteString("[" + strconv.Itoa(l.index) + "]")
			}
		}
		if sb.Len() == 0 || sb.String()[0] == '[' {
			return "body" + sb.String()
		}
		return sb.String()
	}
	expectKey := false
	for i := 0; i < len(b) && i <= offset; i++ {
		switch c := b[i]; c {
		case '{':
			stack = append(stack, level{object: true})
			expectKey = true
		case '[':
			stack = append(stack, level{})
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					expectKey = true
				} else {
					stack[n-1].index++
				}
			}
		case '"':
			start := i
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if expectKey && len(stack) > 0 {
				key, err := strconv.Unquote(string(b[start:min(i+1, len(b))]))
				if err != nil {
					key = string(b[start+1 : min(i, len(b))])
				}
				stack[len(stack)-1].key = key
				expectKey = false
			}
			if offset >= start && offset <= i {
				return name()
			}
		}
	}
	return name()
}
