// Package errtrack turns an $exception event's raw stack into what the
// error pages show and group by, at ingest: the frames parsed (package
// stacktrace), de-minified with the sourcemap uploaded for the event's
// $release and the frame's file (package sourcemap), and the fingerprint
// that makes the group (docs/errors.md).
package errtrack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"strata/internal/analytics"
	"strata/internal/sourcemap"
	"strata/internal/stacktrace"
)

// Properties ingest adds to an $exception event; a client may send
// $exception_fingerprint itself, to group as it likes, but not the others.
const (
	PropFingerprint = "$exception_fingerprint"
	PropFrames      = "$exception_frames"
	PropResolution  = "$exception_resolution"
)

// maxFrames bounds the frames stored with an event.
const maxFrames = 50

// mapsTimeout bounds the time one event waits for its frames' maps: the
// store's lookups and reads, and its turn behind the maps other events
// are parsing. A frame whose map is not there by then stays minified,
// and $exception_resolution says why; ingest goes on with the event.
const mapsTimeout = 5 * time.Second

// Frame is one stored frame: de-minified when Resolved.
type Frame struct {
	Function string `json:"function"`
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	// InApp is false for the SDK's own frames and native code, which the
	// fingerprint skips.
	InApp    bool `json:"in_app"`
	Resolved bool `json:"resolved"`
	// Minified marks an app frame that stayed unresolved in a file that
	// looks minified (minifiedFile), the frames a missing map leaves
	// unreadable; an inline script's or a hand-written file's frame reads
	// as it is and is not. Always written, so that a reader can tell the
	// frames of events stored before it existed (no key).
	Minified bool `json:"minified"`
	// SourceLine is the original line, when the map carries the source.
	SourceLine string `json:"source_line,omitempty"`
}

// Processor enriches $exception events, and takes the sourcemap uploads
// they are de-minified with. Maps caches the parsed sourcemaps that Store
// holds; Quota bounds what each product's uploads may take (zero: no
// bound).
type Processor struct {
	Store analytics.SourcemapStore
	Maps  *sourcemap.Cache
	Quota analytics.SourcemapAmount
	// Aliases and Groups keep a bug in one group when a sourcemap
	// arrives after its first errors (aliases.go); nil: no aliases.
	// AliasLimit caps each product's aliases (0: no cap).
	Aliases    analytics.ErrorAliasStore
	Groups     GroupFinder
	AliasLimit int
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	cache aliasCache
}

// NewProcessor returns a processor whose cache holds at most budget bytes
// of parsed maps.
func NewProcessor(store analytics.SourcemapStore, budget int) *Processor {
	return &Processor{Store: store, Maps: &sourcemap.Cache{Budget: budget, HitTTL: 5 * time.Minute, MissTTL: 30 * time.Second}}
}

// Upload stores a release's map of one file, and the minified file or nil,
// for sm's product, release and URL, after the checks of docs/errors.md,
// "Limits of an upload": the fields (analytics.ValidateSourcemap), the
// memory the map takes parsed (sourcemap.Measure: over sourcemap.MaxSize,
// 413 sourcemap_too_complex) and the product's quota (p.Quota, which the
// store checks in the transaction that stores the upload). It then drops
// this node's parsed copy of the map it replaces.
func (p *Processor) Upload(ctx context.Context, sm *analytics.Sourcemap, mapText, minified []byte) error {
	if err := analytics.ValidateSourcemap(sm.Release, sm.URL, mapText, minified); err != nil {
		return err
	}
	if _, err := sourcemap.Measure(mapText); err != nil {
		var tooComplex *sourcemap.TooComplexError
		if errors.As(err, &tooComplex) {
			return analytics.SourcemapTooComplex(tooComplex.Size, sourcemap.MaxSize)
		}
		return analytics.InvalidField("file", "must be a sourcemap this server can read: %s", strings.TrimPrefix(err.Error(), "sourcemap: "))
	}
	if err := p.Store.PutSourcemap(ctx, sm, mapText, minified, p.Quota); err != nil {
		return err
	}
	p.Uploaded(sm.ProductID, sm.Release, sm.URL)
	return nil
}

// Uploaded drops the cached map of a release's file after an upload or a
// delete made through this node.
func (p *Processor) Uploaded(productID int64, release, url string) {
	p.Maps.Forget(sourcemap.Key{Product: productID, Release: release, URL: url})
}

// Enrich returns props, the properties of an $exception event of product,
// with the parsed frames, why frames stayed minified (if any did), and the
// fingerprint when the client sent none. It never fails: a stack it cannot
// read leaves the frames empty, and the event groups by type and message.
func (p *Processor) Enrich(ctx context.Context, product int64, props json.RawMessage) json.RawMessage {
	var in map[string]json.RawMessage
	if json.Unmarshal(props, &in) != nil {
		return props
	}
	text := func(key string) string {
		var s string
		if raw, ok := in[key]; ok {
			if json.Unmarshal(raw, &s) != nil {
				s = strings.Trim(string(raw), `"`)
			}
		}
		return s
	}
	release, errType, message := text("$release"), text("$exception_type"), text("$exception_message")
	parsed := stacktrace.Parse(text("$exception_stack"))
	if len(parsed) > maxFrames {
		parsed = parsed[:maxFrames]
	}
	frames := make([]Frame, len(parsed))
	var reasons []string
	ctx, cancel := context.WithTimeout(ctx, mapsTimeout)
	defer cancel()
	for i, f := range parsed {
		frames[i] = Frame{Function: f.Function, File: f.URL, Line: f.Line, Column: f.Column, InApp: inApp(f)}
		if !frames[i].InApp || f.URL == "" || f.Line == 0 {
			continue
		}
		if release == "" {
			if minifiedFile(parsed, f.URL) {
				reasons = appendOnce(reasons, "no $release on the event, so no sourcemap applies")
			}
			continue
		}
		m, err := p.mapOf(ctx, product, release, f.URL)
		var tooComplex *sourcemap.TooComplexError
		switch {
		case errors.As(err, &tooComplex):
			// A map stored before uploads were measured (docs/errors.md,
			// "Limits of a map"): it is never parsed, and says so.
			reasons = appendOnce(reasons, fmt.Sprintf("the sourcemap of %s (release %s) is not used: its parsed form would take %.1f MB, over the limit of %d MB; upload a smaller map",
				f.URL, release, float64(tooComplex.Size)/(1<<20), sourcemap.MaxSize>>20))
		case err != nil:
			reasons = appendOnce(reasons, "the sourcemap of "+f.URL+" could not be read: "+err.Error())
		case m == nil:
			// Only a minified file lacks a map: the page's own inline
			// script, or a script served as written, reads as it is.
			if minifiedFile(parsed, f.URL) {
				reasons = appendOnce(reasons, fmt.Sprintf("no sourcemap for release %s and %s", release, f.URL))
			}
		default:
			if pos, ok := m.Lookup(f.Line, f.Column); ok {
				fr := &frames[i]
				fr.File, fr.Line, fr.Column, fr.Resolved = pos.Source, pos.Line, pos.Column, true
				if name := enclosingFunction(m, pos.Source, pos.Line); name != "" {
					fr.Function = stacktrace.Name(name)
				}
				fr.SourceLine = truncate(m.SourceLine(pos.Source, pos.Line), 300)
			} else {
				reasons = appendOnce(reasons, fmt.Sprintf("the sourcemap of %s (release %s) maps nothing at line %d, column %d", f.URL, release, f.Line, f.Column))
			}
		}
	}
	for i, f := range parsed {
		frames[i].Minified = frames[i].InApp && !frames[i].Resolved && f.URL != "" && minifiedFile(parsed, f.URL)
	}
	out := map[string]any{PropFrames: frames}
	if len(reasons) > 0 {
		out[PropResolution] = strings.Join(reasons, "; ")
	}
	if text(PropFingerprint) == "" {
		resolved := make([]stacktrace.Frame, len(frames))
		anyResolved := false
		for i, f := range frames {
			resolved[i] = parsed[i]
			resolved[i].Function, resolved[i].URL = f.Function, f.File
			anyResolved = anyResolved || f.Resolved
		}
		fp, raw := stacktrace.Fingerprint(errType, message, resolved, stacktrace.SDKFrame), ""
		if anyResolved {
			// The group the bug had before its map was uploaded.
			raw = stacktrace.Fingerprint(errType, message, parsed, stacktrace.SDKFrame)
		}
		// The event keeps its own fingerprint, also when it has an
		// alias (one recorded now or before): queries apply aliases, so
		// it counts in the alias's group, and when the alias is deleted
		// (an unmerge) it counts in its own again, these events too.
		p.groupOf(ctx, product, fp, raw)
		out[PropFingerprint] = fp
	}
	return merge(props, out)
}

// mapOf returns the parsed map of a release's file, nil when none was
// uploaded. A URL is looked up as the stack names it, then without its
// query and fragment.
func (p *Processor) mapOf(ctx context.Context, product int64, release, url string) (*sourcemap.Map, error) {
	for _, u := range candidates(url) {
		m, err := p.Maps.Get(ctx, sourcemap.Key{Product: product, Release: release, URL: u}, source{p.Store})
		if err != nil || m != nil {
			return m, err
		}
	}
	return nil, nil
}

// source is the store as the cache of parsed maps reads it.
type source struct{ store analytics.SourcemapStore }

func (s source) HasMap(ctx context.Context, k sourcemap.Key) (bool, error) {
	return s.store.HasSourcemap(ctx, k.Product, k.Release, k.URL)
}

func (s source) MapText(ctx context.Context, k sourcemap.Key) ([]byte, error) {
	text, err := s.store.SourcemapText(ctx, k.Product, k.Release, k.URL)
	if errors.Is(err, analytics.ErrNotFound) {
		return nil, nil
	}
	return text, err
}

// Declarations enclosingFunction recognises, in the original source: a
// function declaration or expression with a name, a method or an object
// literal's function, and a name given an arrow or a function.
var (
	declaredFunction = regexp.MustCompile(`\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(`)
	methodFunction   = regexp.MustCompile(`^\s*(?:(?:public|private|protected|static|async|get|set)\s+)*\*?([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::[^{=]*)?\{`)
	assignedFunction = regexp.MustCompile(`([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[A-Za-z_$][\w$]*\s*=>)`)
)

// notNames are words the method pattern would take for a name.
var notNames = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "function": true, "return": true, "with": true}

// enclosingFunction names the function whose code holds line of source, as
// well as the lines above it can tell: it walks up, at most 200 lines,
// counting braces, and names the first block that encloses the line and
// is a function's (a block closed again before the line, such as an
// earlier function, is not). A minified frame's own function name is the
// minifier's and changes between builds; the original one keeps a group
// together across rebuilds. "" for code outside any named function, or
// when the map has no source.
func enclosingFunction(m *sourcemap.Map, source string, line int) string {
	depth := 0
	for l := line - 1; l >= 1 && l > line-200; l-- {
		text := m.SourceLine(source, l)
		depth += strings.Count(text, "}") - strings.Count(text, "{")
		if depth >= 0 {
			continue
		}
		// This line opens a block around the target line.
		for _, re := range []*regexp.Regexp{declaredFunction, methodFunction, assignedFunction} {
			if sub := re.FindStringSubmatch(text); sub != nil && !notNames[sub[1]] {
				return sub[1]
			}
		}
		depth = 0
	}
	return ""
}

// minifiedColumn is the column past which a frame's file reads as
// minified: minifiers write a bundle on one line, or a few very long ones,
// and code written by hand rarely runs this far to the right.
const minifiedColumn = 250

// minifiedFile reports whether the file at url, as the stack's frames show
// it, looks minified, and so is what a missing sourcemap leaves unreadable
// (docs/errors.md, "Why frames stayed minified"). A file is minified when
// its name says so (app.min.js) or when it is a script (.js, .mjs, .cjs)
// and a frame of the stack in it is past minifiedColumn. Anything else is
// not: a frame of the page itself (an inline <script>, whose URL is the
// page's, such as /checkout or /index.html) or of a script served as it
// was written.
func minifiedFile(frames []stacktrace.Frame, url string) bool {
	name := stacktrace.Path(url)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if strings.Contains(name, ".min.") {
		return true
	}
	ext := name[strings.LastIndexByte(name, '.')+1:]
	if !strings.Contains(name, ".") || (ext != "js" && ext != "mjs" && ext != "cjs") {
		return false
	}
	for _, f := range frames {
		if f.URL == url && f.Column > minifiedColumn {
			return true
		}
	}
	return false
}

// candidates are the URLs a frame's file may have been uploaded under.
func candidates(url string) []string {
	if i := strings.IndexAny(url, "?#"); i > 0 {
		return []string{url, url[:i]}
	}
	return []string{url}
}

// inApp reports whether a frame is the app's: not the engine's own code
// and not the SDK's script.
func inApp(f stacktrace.Frame) bool { return !f.Native && !stacktrace.SDKFrame(f) }

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// truncate cuts s to at most n bytes at a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// merge adds fields to a JSON object's text, after its own keys. Text is
// kept as it is (no HTML escaping of <, > and &, which source lines hold).
func merge(props json.RawMessage, fields map[string]any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil || buf.Len() <= 3 {
		return props
	}
	add := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	out := make([]byte, 0, len(props)+len(add))
	if len(props) > 2 {
		out = append(out, props[:len(props)-1]...)
		out = append(out, ',')
		out = append(out, add[1:]...)
		return out
	}
	return add
}
