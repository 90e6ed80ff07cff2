// Package sourcemap reads version 3 source maps and looks up where a
// position of a minified file came from. It is Strata's own small decoder
// rather than a library: the Go library we tried (go-sourcemap) answers a
// position before a line's first mapping with the previous line's last
// mapping, which would put a frame on the wrong line; here such a position
// has no answer (docs/errors.md, "Sourcemaps").
package sourcemap

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Map is a parsed source map.
type Map struct {
	sources        []string
	sourcesContent []*string
	names          []string
	// lines holds each generated line's segments, by generated column.
	lines [][]segment
	// starts holds, for each source with content, the offset of each of
	// its lines, so that SourceLine costs no scan.
	starts [][]int32
	// size estimates the memory the map holds, for caches.
	size int
}

// segment is one mapping: a generated column and, when it maps to
// anything, the original source, line and column (0-based), and the name
// index or -1.
type segment struct {
	genCol               int32
	src, srcLine, srcCol int32
	name                 int32
}

// Position is where a generated position came from. Line and Column are
// 1-based, as stacks print them.
type Position struct {
	Source string
	Line   int
	Column int
	// Name is the original name at the position, when the map has one.
	Name string
}

// Parse reads a version 3 source map. Index maps (with sections) are
// refused, as uploads refuse them.
func Parse(text []byte) (*Map, error) {
	var raw struct {
		Version        int       `json:"version"`
		SourceRoot     string    `json:"sourceRoot"`
		Sources        []string  `json:"sources"`
		SourcesContent []*string `json:"sourcesContent"`
		Names          []string  `json:"names"`
		Mappings       string    `json:"mappings"`
		Sections       any       `json:"sections"`
	}
	if err := json.Unmarshal(text, &raw); err != nil {
		return nil, fmt.Errorf("sourcemap: %w", err)
	}
	if raw.Sections != nil {
		return nil, errors.New("sourcemap: index maps (sections) are not supported")
	}
	if raw.Version != 3 {
		return nil, fmt.Errorf("sourcemap: version %d, not 3", raw.Version)
	}
	m := &Map{sources: raw.Sources, sourcesContent: raw.SourcesContent, names: raw.Names, size: len(text)}
	if raw.SourceRoot != "" {
		root := strings.TrimSuffix(raw.SourceRoot, "/") + "/"
		for i, s := range m.sources {
			m.sources[i] = root + s
		}
	}
	if err := m.decode(raw.Mappings); err != nil {
		return nil, err
	}
	m.starts = make([][]int32, len(m.sourcesContent))
	for i, c := range m.sourcesContent {
		if c == nil {
			continue
		}
		starts := []int32{0}
		for j := 0; j < len(*c); j++ {
			if (*c)[j] == '\n' {
				starts = append(starts, int32(j+1))
			}
		}
		m.starts[i] = starts
		m.size += len(*c) + 4*len(starts)
	}
	return m, nil
}

// Size returns an estimate of the bytes the map holds.
func (m *Map) Size() int { return m.size }

// decode reads the mappings: lines separated by ";", segments by ",",
// each a run of base64 VLQ fields whose values (but the generated column's
// at each line's start) are relative to the previous segment's.
func (m *Map) decode(mappings string) error {
	var src, srcLine, srcCol, name int32
	line := []segment{}
	var genCol int32
	m.lines = make([][]segment, 0, strings.Count(mappings, ";")+1)
	for i := 0; i <= len(mappings); {
		if i == len(mappings) || mappings[i] == ';' {
			m.lines = append(m.lines, line)
			line, genCol = nil, 0
			i++
			continue
		}
		if mappings[i] == ',' {
			i++
			continue
		}
		var fields [5]int32
		n := 0
		for i < len(mappings) && mappings[i] != ',' && mappings[i] != ';' {
			v, next, err := vlq(mappings, i)
			if err != nil {
				return err
			}
			if n == 5 {
				return fmt.Errorf("sourcemap: a segment of more than 5 fields at %d", i)
			}
			fields[n], n, i = v, n+1, next
		}
		genCol += fields[0]
		seg := segment{genCol: genCol, src: -1, name: -1}
		switch n {
		case 1:
		case 4, 5:
			src, srcLine, srcCol = src+fields[1], srcLine+fields[2], srcCol+fields[3]
			if src < 0 || int(src) >= len(m.sources) {
				return fmt.Errorf("sourcemap: a segment names source %d of %d", src, len(m.sources))
			}
			seg.src, seg.srcLine, seg.srcCol = src, srcLine, srcCol
			if n == 5 {
				name += fields[4]
				if name < 0 || int(name) >= len(m.names) {
					return fmt.Errorf("sourcemap: a segment names name %d of %d", name, len(m.names))
				}
				seg.name = name
			}
		default:
			return fmt.Errorf("sourcemap: a segment of %d fields", n)
		}
		line = append(line, seg)
	}
	for _, l := range m.lines {
		// Segments are sorted by generated column in a well-made map;
		// sort a careless one rather than answer wrongly.
		if !sort.SliceIsSorted(l, func(a, b int) bool { return l[a].genCol < l[b].genCol }) {
			sort.SliceStable(l, func(a, b int) bool { return l[a].genCol < l[b].genCol })
		}
		m.size += len(l) * 20
	}
	return nil
}

// base64 digits of VLQ.
const vlqDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

var vlqValue = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range len(vlqDigits) {
		t[vlqDigits[i]] = int8(i)
	}
	return t
}()

// vlq decodes one base64 VLQ value at s[i:] and returns it and where the
// next begins.
func vlq(s string, i int) (int32, int, error) {
	var result int64
	shift := uint(0)
	for {
		if i >= len(s) {
			return 0, i, errors.New("sourcemap: a value is cut short")
		}
		d := vlqValue[s[i]]
		if d < 0 {
			return 0, i, fmt.Errorf("sourcemap: %q is not a base64 digit", s[i])
		}
		i++
		result |= int64(d&31) << shift
		if d&32 == 0 {
			break
		}
		shift += 5
		if shift > 31 {
			return 0, i, errors.New("sourcemap: a value is too large")
		}
	}
	v := int32(result >> 1)
	if result&1 != 0 {
		v = -v
	}
	return v, i, nil
}

// Lookup returns where the generated 1-based line and column came from:
// the segment of that line with the greatest column not after it. A
// position before the line's first segment, on a line without segments,
// or on a segment that maps to nothing, has no answer (ok false).
func (m *Map) Lookup(line, column int) (pos Position, ok bool) {
	if line < 1 || line > len(m.lines) || column < 1 {
		return pos, false
	}
	segs := m.lines[line-1]
	col := int32(column - 1)
	i := sort.Search(len(segs), func(i int) bool { return segs[i].genCol > col }) - 1
	if i < 0 || segs[i].src < 0 {
		return pos, false
	}
	s := segs[i]
	pos = Position{Source: m.sources[s.src], Line: int(s.srcLine) + 1, Column: int(s.srcCol) + 1}
	if s.name >= 0 {
		pos.Name = m.names[s.name]
	}
	return pos, true
}

// SourceLine returns the 1-based line of source from the map's
// sourcesContent, or "" when the map does not carry the source.
func (m *Map) SourceLine(source string, line int) string {
	for i, s := range m.sources {
		if s != source {
			continue
		}
		if i >= len(m.starts) || m.starts[i] == nil || line < 1 || line > len(m.starts[i]) {
			return ""
		}
		text := *m.sourcesContent[i]
		start := int(m.starts[i][line-1])
		end := len(text)
		if line < len(m.starts[i]) {
			end = int(m.starts[i][line]) - 1
		}
		return strings.TrimSuffix(text[start:end], "\r")
	}
	return ""
}
