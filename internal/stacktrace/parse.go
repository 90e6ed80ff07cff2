// Package stacktrace reads the JavaScript error stacks that the SDKs send
// raw (the `error.stack` string) and fingerprints errors, so that the same
// bug lands in one group whichever browser threw it and however often the
// code was rebuilt. Parse reads the stack formats of V8 (Chrome, Edge,
// Node), SpiderMonkey (Firefox) and JavaScriptCore (Safari) line by line;
// Fingerprint hashes an error's type with the names and file paths of its
// top frames. The formats, the normalisation rules and the fingerprint are
// in docs/errors.md.
package stacktrace

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Frame is one call of a stack, as Parse reads it.
type Frame struct {
	// Function is the function's name, normalised by Name so that engines
	// agree ("Cart.sum" in V8 and "sum" in SpiderMonkey and
	// JavaScriptCore are "sum"); "" for anonymous functions and for a
	// script's, a module's or an eval's top-level code.
	Function string
	// URL is the script's URL (or, in Node, its path) as the engine wrote
	// it, query and all; for code run by eval or new Function, the URL of
	// the script that called eval. "" when the engine gave none.
	URL string
	// Line and Column are 1-based; 0 when the engine gave none. For eval'd
	// code they are where eval was called in URL (SpiderMonkey gives no
	// column there), not the position inside the eval'd source.
	Line, Column int
	// Native marks the engine's own code: V8's "(native)" and
	// "(<anonymous>)" without a position, JavaScriptCore's
	// "[native code]", SpiderMonkey's "self-hosted" scripts. Engines
	// disagree about which of these they show.
	Native bool
	// Eval marks code run by eval or new Function.
	Eval bool
	// Async is the asynchronous boundary the frame is marked with, "" for
	// none: "async" for a function resumed after an await (V8's
	// "at async f", SpiderMonkey's "async*f"), or SpiderMonkey's other
	// causes as written ("setTimeout handler", "promise callback", …).
	// The frames below such a frame are where the task was scheduled or
	// awaited, which engines record differently or not at all.
	Async string
}

// The bounds on Parse's work, so that any input costs time linear in its
// length and at most maxFrames frames of memory.
const (
	// maxFrames is how many frames Parse returns at most (V8 records 10 by
	// default, SpiderMonkey up to 128).
	maxFrames = 100
	// maxLine is the longest line, in bytes, that Parse reads as a frame;
	// a longer one is skipped.
	maxLine = 4096
	// maxNumber bounds line and column digits (a larger number is not a
	// frame's).
	maxNumber = 9
)

// Parse reads the frames of a JavaScript error stack, the top (where the
// error was thrown) first. Each line is recognised on its own, so stacks
// of any engine, or lines of several, are read alike: V8's message lines,
// and any other line that is not a frame, are skipped. It never fails:
// what it cannot read gives no frames (nil). At most maxFrames frames are
// returned and lines longer than maxLine bytes are skipped, so any input,
// a megabyte of binary included, costs time linear in its length.
func Parse(stack string) []Frame {
	var frames []Frame
	for rest := stack; rest != "" && len(frames) < maxFrames; {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		if len(line) > maxLine {
			continue
		}
		line = strings.TrimSpace(line)
		if line == "" || !textLine(line) {
			continue
		}
		var f Frame
		var ok bool
		if strings.HasPrefix(line, "at ") {
			f, ok = parseV8(line[3:])
		} else {
			f, ok = parseAt(line)
		}
		if ok {
			f.Function = Name(f.Function)
			frames = append(frames, f)
		}
	}
	return frames
}

// textLine reports whether a line is text, as every line of a stack is:
// valid UTF-8 without control characters but tabs. Any other line is
// binary, and no frame: so the frames' strings are text too.
func textLine(line string) bool {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(line)
}

// parseV8 reads a V8 frame, the text after "at ":
//
//	fn (url:line:col)
//	url:line:col
//	async fn (url:line:col)
//	new Foo (url:line:col)
//	Object.<anonymous> (url:line:col)
//	fn [as alias] (url:line:col)
//	eval (eval at fn (url:line:col), <anonymous>:line:col)
//	Array.map (<anonymous>)   JSON.parse (native)   Promise.all (index 0)
func parseV8(s string) (Frame, bool) {
	var f Frame
	if rest, ok := strings.CutPrefix(s, "async "); ok {
		f.Async, s = "async", rest
	}
	name, loc := "", s
	if strings.HasSuffix(s, ")") {
		open := openParen(s)
		if open < 0 {
			return f, false
		}
		name, loc = strings.TrimSpace(s[:open]), s[open+1:len(s)-1]
		if name == "" || strings.ContainsAny(name, "()") {
			return f, false
		}
	} else if strings.Contains(loc, " (") {
		return f, false // "fn (url" without its ")"
	}
	switch {
	case strings.HasPrefix(loc, "eval at "):
		f.Eval = true
		f.URL, f.Line, f.Column = v8EvalOrigin(loc)
		if name == "eval" {
			name = "" // V8's name for the eval'd code itself
		}
	case loc == "native" || loc == "<anonymous>" || strings.HasPrefix(loc, "index "):
		if name == "" {
			return f, false
		}
		f.Native = true
	default:
		var ok bool
		f.URL, f.Line, f.Column, ok = location(loc)
		if !ok || f.Line == 0 {
			return f, false
		}
		if f.URL == "<anonymous>" {
			f.URL = "" // code without a script name (new Function, the console)
		}
	}
	f.Function = name
	return f, true
}

// openParen finds the "(" that opens the parenthesised group ending s (s
// ends with ")"), counting nested pairs, or -1.
func openParen(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// v8EvalOrigin reads where V8's eval'd code was evaluated: in
// "eval at fn (url:line:col), <anonymous>:line:col", possibly nested
// ("eval at f (eval at g (url:line:col), <anonymous>:1:1), …"), the
// position in the innermost url, which is the script's.
func v8EvalOrigin(loc string) (url string, line, col int) {
	for depth := 0; depth < 16 && strings.HasPrefix(loc, "eval at "); depth++ {
		open := strings.IndexByte(loc, '(')
		if open < 0 {
			return "", 0, 0
		}
		loc = loc[open+1:]
	}
	if end := strings.Index(loc, "), "); end >= 0 {
		loc = loc[:end]
	} else if end := strings.IndexByte(loc, ')'); end >= 0 {
		loc = loc[:end]
	}
	url, line, col, ok := location(loc)
	if !ok || url == "<anonymous>" {
		return "", 0, 0
	}
	return url, line, col
}

// parseAt reads a SpiderMonkey or JavaScriptCore frame:
//
//	fn@url:line:col            @url:line:col
//	fn/<@url:line:col          async*fn@url:line:col
//	setTimeout handler*fn@url:line:col
//	fn@url line 7 > eval:1:5   @url line 7 > Function:1:5
//	global code@url:line:col   module code@url:line:col
//	eval code@                 fn@   (JavaScriptCore: eval'd code)
//	map@[native code]          [native code]
func parseAt(line string) (Frame, bool) {
	var f Frame
	at := strings.IndexByte(line, '@')
	if at < 0 {
		// JavaScriptCore's frames without a location.
		switch line {
		case "[native code]":
			f.Native = true
			return f, true
		case "global code", "module code":
			return f, true
		case "eval code":
			f.Eval = true
			return f, true
		}
		return f, false
	}
	name, loc := line[:at], line[at+1:]
	if star := strings.LastIndexByte(name, '*'); star >= 0 {
		f.Async, name = name[:star], name[star+1:]
		if f.Async == "" {
			f.Async = "async"
		}
	}
	if !atName(name) {
		return f, false // text, such as a message line with an address in it
	}
	if name == "eval code" {
		f.Eval = true
	}
	switch {
	case loc == "":
		// JavaScriptCore's eval'd code, and the functions it defines, have
		// no location; then the name must look like one, since text such
		// as "name@" would pass for a frame too.
		if name != "eval code" && !identifier(name) {
			return f, false
		}
	case loc == "[native code]":
		f.Native = true
	default:
		if i := strings.Index(loc, " line "); i >= 0 && strings.Contains(loc[i:], "> ") {
			// SpiderMonkey: "url line N > eval:l:c", nested as
			// "url line N > eval line M > eval:l:c"; "> Function" for
			// new Function.
			f.Eval = true
			f.URL = loc[:i]
			f.Line, _ = number(strings.TrimSpace(cutAny(loc[i+len(" line "):], " >")))
			break
		}
		var ok bool
		f.URL, f.Line, f.Column, ok = location(loc)
		if !ok || f.Line == 0 {
			return f, false
		}
		if f.URL == "self-hosted" {
			f.Native = true
		}
	}
	f.Function = name
	return f, true
}

// atName reports whether the text before a frame's "@" can be a function
// name as SpiderMonkey and JavaScriptCore write them. Names have no spaces
// but for a few of the engines' own ("global code", a getter's
// "get total", a computed `obj["a key"]`), and never ": " or parentheses,
// which message lines have ("Error: mail me@example.com:8080") and
// Firefox 13's "fn(args)@" had.
func atName(name string) bool {
	if strings.Contains(name, ": ") || strings.ContainsAny(name, "()") {
		return false
	}
	if !strings.ContainsAny(name, " \t") {
		return true
	}
	switch name {
	case "global code", "eval code", "module code":
		return true
	}
	if rest, ok := strings.CutPrefix(name, "get "); ok {
		return !strings.ContainsAny(rest, " \t")
	}
	if rest, ok := strings.CutPrefix(name, "set "); ok {
		return !strings.ContainsAny(rest, " \t")
	}
	return strings.IndexByte(name, '[') >= 0
}

// identifier reports whether s is a name as JavaScript writes them, or an
// empty one: letters, digits, "_", "$" and the "." of a qualified name.
func identifier(s string) bool {
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '$' || r == '.') {
			return false
		}
	}
	return true
}

// cutAny returns s up to the first of the bytes in chars.
func cutAny(s, chars string) string {
	if i := strings.IndexAny(s, chars); i >= 0 {
		return s[:i]
	}
	return s
}

// location splits "url:line:col" or "url:line" at its last colons. ok is
// false when no line number ends it (nor a column). A URL without any
// number is not a location: frames always have a line.
func location(loc string) (url string, line, col int, ok bool) {
	i := strings.LastIndexByte(loc, ':')
	if i < 0 {
		return "", 0, 0, false
	}
	last, ok := number(loc[i+1:])
	if !ok {
		return "", 0, 0, false
	}
	head := loc[:i]
	if j := strings.LastIndexByte(head, ':'); j >= 0 && digits(head[j+1:]) {
		n, ok := number(head[j+1:])
		return head[:j], n, last, ok && head[:j] != ""
	}
	return head, last, 0, head != ""
}

// digits reports whether s is a run of one or more decimal digits.
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// number reads a decimal of 1 to maxNumber digits.
func number(s string) (int, bool) {
	if len(s) > maxNumber || !digits(s) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// Name normalises a function's name as the engines write it, so that the
// same function has the same name from each: it is what Frame.Function
// holds, and Fingerprint applies it again to frames it did not parse (a
// de-minified frame's name from a source map). In order:
//
//   - V8's " [as alias]" is dropped;
//   - SpiderMonkey's nesting path is dropped, up to the last "/"
//     ("outer/inner" is "inner");
//   - a name with a "<" is anonymous, "": SpiderMonkey's "fn/<" (an
//     anonymous function in fn), V8's "<anonymous>" and "<computed>";
//   - the receiver or namespace is dropped, up to the last ".": V8's
//     "Cart.sum" and "Object.save" (and inferred names such as "obj.save"
//     in both) are "sum" and "save", as SpiderMonkey and JavaScriptCore
//     write them;
//   - the prefixes "async ", "new " (V8's "new Widget" is "Widget", as in
//     the other engines), and a getter's or setter's "get " and "set "
//     are dropped;
//   - the names engines give to code that is no function are "":
//     JavaScriptCore's "global code", "eval code" and "module code",
//     "anonymous" (the name of a new Function), Chakra's "Global code"
//     and "Anonymous function".
//
// Name("") is "", and Name(Name(s)) is Name(s).
func Name(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " [as "); i >= 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if strings.IndexByte(s, '<') >= 0 {
		return ""
	}
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	for {
		s = strings.TrimSpace(s)
		rest, ok := strings.CutPrefix(s, "async ")
		if !ok {
			rest, ok = strings.CutPrefix(s, "new ")
		}
		if !ok {
			rest, ok = strings.CutPrefix(s, "get ")
		}
		if !ok {
			rest, ok = strings.CutPrefix(s, "set ")
		}
		if !ok {
			break
		}
		s = rest
	}
	switch s {
	case "global code", "eval code", "module code", "anonymous", "Global code", "Anonymous function":
		return ""
	}
	return s
}
