package stacktrace

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fingerprintFrames is how many frames a fingerprint takes.
const fingerprintFrames = 3

// maxMessage bounds the bytes of a message that Message reads.
const maxMessage = 1024

// fingerprintVersion is the first string hashed: changing the rule on
// purpose (and so starting every group anew) changes it.
const fingerprintVersion = "strata-error-fingerprint-v1"

// Fingerprint is the hex SHA-256 that groups an error: over its type and,
// for each of the top three usable frames, the frame's function name
// (Name) and file path (Path; "" for eval'd code, whose file the engines
// report differently or not at all). A frame is usable when it comes
// before the first asynchronous boundary (Frame.Async), is not the
// engine's own code (Frame.Native), is not skipped by skip (which marks
// the SDK's own frames, such as SDKFrame; nil skips none), and has a name
// or a path. Lines, columns and the message are left out, so the same bug
// groups across browsers and across rebuilds that move it. An error with
// no usable frame is fingerprinted over its type and its message
// (normalised by Message) instead.
//
// Pass de-minified frames where they resolved, raw frames otherwise. The
// exact bytes hashed are in docs/errors.md.
func Fingerprint(errType, message string, frames []Frame, skip func(Frame) bool) string {
	b := make([]byte, 0, 256)
	b = netstring(b, fingerprintVersion)
	b = netstring(b, strings.TrimSpace(text(errType)))
	n := 0
	for _, f := range frames {
		if f.Async != "" {
			break
		}
		if f.Native || (skip != nil && skip(f)) {
			continue
		}
		name, file := Name(f.Function), ""
		if !f.Eval {
			file = Path(f.URL)
		}
		if name == "" && file == "" {
			continue
		}
		if n == 0 {
			b = netstring(b, "frames")
		}
		b = netstring(b, name)
		b = netstring(b, file)
		if n++; n == fingerprintFrames {
			break
		}
	}
	if n == 0 {
		b = netstring(b, "message")
		b = netstring(b, Message(message))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// netstring appends s as a netstring: its length in decimal, ":", its
// bytes and ",", so that no two sequences of strings hash alike.
func netstring(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	b = append(b, s...)
	return append(b, ',')
}

// Path is the part of a frame's URL that a fingerprint keeps: the path,
// without the query or the fragment ("#…"), and for a URL with a host
// ("scheme://host/…") without the scheme and the host, cleaned ("/./"
// and "/../" resolved), so that the same script served from another
// domain, port or CDN, or with another cache-busting query, has the same
// path. A blob: URL, whose path is a new random id on every page load, is
// "blob:", a data: URL "data:". A path without a scheme (Node's
// /srv/app/x.js, node:internal/timers) is kept as it is. A content hash
// in a file's name (app.3f9c1a.js) is kept: it is part of the path.
func Path(url string) string {
	u := strings.TrimSpace(url)
	switch {
	case strings.HasPrefix(u, "blob:"):
		return "blob:"
	case strings.HasPrefix(u, "data:"):
		return "data:"
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i > 0 && scheme(u[:i]) {
		rest := u[i+3:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			return "/"
		}
		u = path.Clean(rest[slash:])
	}
	return u
}

// scheme reports whether s is a URL scheme: a letter, then letters,
// digits, "+", "-" or ".".
func scheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// Message normalises an error's message for the fingerprint of an error
// without usable frames: its first maxMessage bytes, as valid UTF-8, with
// each run of white space one space and none at either end, and the
// numbers and ids in it written as "0", so that "order 1234 failed" and
// "order 1235 failed" group together. A word (a run of ASCII letters and
// digits) with a digit in it is "0" when it is all hexadecimal digits
// (1234, 3f9c1a, each part of a UUID), and otherwise keeps its letters
// with each run of digits "0" (user42 is user0).
func Message(m string) string {
	if len(m) > maxMessage {
		cut := maxMessage
		for cut > 0 && m[cut]&0xC0 == 0x80 {
			cut--
		}
		m = m[:cut]
	}
	m = text(m)
	var b strings.Builder
	b.Grow(len(m))
	space := false
	for i := 0; i < len(m); {
		c := m[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			space = true
			i++
			continue
		case alnum(c):
			j := i
			for j < len(m) && alnum(m[j]) {
				j++
			}
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			word(&b, m[i:j])
			i = j
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// word writes one word of a message as Message says.
func word(b *strings.Builder, w string) {
	digit, hex := false, true
	for i := 0; i < len(w); i++ {
		c := w[i]
		isDigit := c >= '0' && c <= '9'
		digit = digit || isDigit
		hex = hex && (isDigit || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
	}
	switch {
	case !digit:
		b.WriteString(w)
	case hex:
		b.WriteByte('0')
	default:
		for i := 0; i < len(w); {
			if w[i] >= '0' && w[i] <= '9' {
				for i < len(w) && w[i] >= '0' && w[i] <= '9' {
					i++
				}
				b.WriteByte('0')
				continue
			}
			b.WriteByte(w[i])
			i++
		}
	}
}

// alnum reports whether c is an ASCII letter or digit.
func alnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// text makes a string valid UTF-8 without NULs.
func text(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// SDKFrame reports whether f runs Strata's browser SDK: the script served
// at /sdk/v1/sdk.min.js, or the npm package's files in a bundle's source
// map (node_modules/@strata/browser/). It is the skip to pass to
// Fingerprint for browser errors, so that the SDK's wrappers around a
// page's callbacks, which change with every SDK release, do not split a
// page's bug into one group per SDK version.
func SDKFrame(f Frame) bool {
	p := Path(f.URL)
	return strings.HasSuffix(p, "/sdk/v1/sdk.min.js") || strings.Contains(p, "node_modules/@strata/browser/")
}
