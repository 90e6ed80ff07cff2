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
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// MaxSize bounds a parsed map, as Size counts it: Parse and Measure refuse
// a map whose parsed form would be larger, so that one map's memory is
// bounded whatever its text holds (docs/errors.md, "Limits of a map").
// Maps bundlers write take 1.3 to 2.2 times their text parsed with
// sourcesContent (which is held as sent) and up to 4.1 times without (20
// bytes a mapping, which the text writes in 4 to 8 characters): under the
// 10 MB upload limit, at most about 41 MB (measured in docs/errors.md).
// What goes past is text of almost nothing but separators and one-field
// mappings, such as three and a half million "A,".
const MaxSize = 64 << 20

// TooComplexError is the refusal of a map whose parsed form would take
// more than MaxSize bytes.
type TooComplexError struct {
	// Size is what the parsed form would take, as Size would count it.
	Size int
}

func (e *TooComplexError) Error() string {
	return fmt.Sprintf("sourcemap: its parsed form would take %.2f MB, over the limit of %d MB",
		float64(e.Size)/(1<<20), MaxSize>>20)
}

// Map is a parsed source map. Its form is compact, so that what a map
// holds grows with what it maps and not with its separators: all
// segments in one (chunked) slice and one int32 a generated line, where a
// slice a line took 24 bytes even for an empty one.
type Map struct {
	sources        []string
	sourcesContent []*string
	names          []string
	// segs holds every generated line's segments, line after line, each
	// line's sorted by generated column; lines[i] is where line i+1's
	// begin, so that line l's are segs[lines[l-1]:lines[l]] and lines has
	// one more element than the map has lines.
	segs  chunked[segment]
	lines chunked[int32]
	// starts holds, for each source with content, the offset of each of
	// its lines, so that SourceLine costs no scan.
	starts [][]int32
	// size is the bytes the map holds (cost).
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

// rawMap is a map's JSON.
type rawMap struct {
	Version        int       `json:"version"`
	SourceRoot     string    `json:"sourceRoot"`
	Sources        []string  `json:"sources"`
	SourcesContent []*string `json:"sourcesContent"`
	Names          []string  `json:"names"`
	Mappings       string    `json:"mappings"`
	Sections       any       `json:"sections"`
}

// decodeJSON reads a map's JSON and refuses what Parse cannot use: index
// maps (with sections), as uploads refuse them, and versions but 3.
func decodeJSON(text []byte) (*rawMap, error) {
	var raw rawMap
	if err := json.Unmarshal(text, &raw); err != nil {
		return nil, fmt.Errorf("sourcemap: %w", err)
	}
	if raw.Sections != nil {
		return nil, errors.New("sourcemap: index maps (sections) are not supported")
	}
	if raw.Version != 3 {
		return nil, fmt.Errorf("sourcemap: version %d, not 3", raw.Version)
	}
	return &raw, nil
}

// Measure returns the bytes the map of text would hold once parsed (what
// Size would answer), from its JSON and a count of its mappings' lines and
// segments, without decoding them: what it allocates is the JSON's strings,
// less than text itself. A map over MaxSize is a *TooComplexError. A map
// Measure accepts may still fail Parse, on a mapping that does not decode.
func Measure(text []byte) (int, error) {
	m, err := measure(text)
	return m.size, err
}

// measured is a map's JSON, the count of its mappings' lines and segments,
// and the size its parsed form will take (cost).
type measured struct {
	raw                   *rawMap
	lines, segments, size int
}

// measure reads a map's JSON and counts what its parsed form will hold,
// for Measure and ParseReserving alike. A map over MaxSize is a
// *TooComplexError, with its size in measured too.
func measure(text []byte) (measured, error) {
	raw, err := decodeJSON(text)
	if err != nil {
		return measured{}, err
	}
	m := measured{raw: raw}
	m.lines, m.segments = count(raw.Mappings)
	m.size = raw.cost(m.lines, m.segments)
	if m.size > MaxSize {
		return m, &TooComplexError{Size: m.size}
	}
	return m, nil
}

// Parse reads a version 3 source map. Index maps (with sections) are
// refused, as uploads refuse them, and so is a map over MaxSize, before
// its parsed form is allocated (a map stored before the limit existed).
func Parse(text []byte) (*Map, error) { return ParseReserving(text, nil) }

// ParseReserving is Parse that first calls reserve, unless nil, with the
// bytes the map will hold (its Size), before it allocates them, so that a
// cache makes room for the map (Cache.Reserve) rather than hold it beside
// a full budget.
func ParseReserving(text []byte, reserve func(size int)) (*Map, error) {
	mt, err := measure(text)
	if err != nil {
		return nil, err
	}
	raw, size := mt.raw, mt.size
	if reserve != nil {
		reserve(size)
	}
	// encoding/json grows slices by half again, so a long list of names
	// holds up to half as many unused headers: the map keeps exact copies.
	m := &Map{sources: exact(raw.Sources), sourcesContent: exact(raw.SourcesContent), names: exact(raw.Names), size: size}
	if raw.SourceRoot != "" {
		root := strings.TrimSuffix(raw.SourceRoot, "/") + "/"
		for i, s := range m.sources {
			m.sources[i] = root + s
		}
	}
	if err := m.decode(raw.Mappings, mt.lines, mt.segments); err != nil {
		return nil, err
	}
	m.starts = make([][]int32, len(m.sourcesContent))
	for i, c := range m.sourcesContent {
		if c == nil {
			continue
		}
		starts := make([]int32, 1, strings.Count(*c, "\n")+1)
		for j := 0; j < len(*c); j++ {
			if (*c)[j] == '\n' {
				starts = append(starts, int32(j+1))
			}
		}
		m.starts[i] = starts
	}
	return m, nil
}

// Size returns the bytes the map holds: what cost counts, the same figure
// Measure gives before parsing.
func (m *Map) Size() int { return m.size }

// Sizes of the parsed form's parts on a 64-bit machine, for cost.
const (
	mapBytes     = int(unsafe.Sizeof(Map{}))
	segmentBytes = int(unsafe.Sizeof(segment{}))
	lineBytes    = int(unsafe.Sizeof(int32(0)))
	stringBytes  = int(unsafe.Sizeof(""))
	sliceBytes   = int(unsafe.Sizeof([]int32(nil)))
	pointerBytes = int(unsafe.Sizeof((*string)(nil)))
)

// cost is what a map of raw's JSON, with lines generated lines and
// segments segments, holds once parsed: the segments and the line index,
// the sources (with the source root in front) and the names with their
// string headers, and each sourcesContent entry (a pointer, the string,
// and its line index). The JSON's text and the mappings' are not kept.
func (raw *rawMap) cost(lines, segments int) int {
	n := mapBytes + chunkedBytes(segments, segmentBytes) + chunkedBytes(lines+1, lineBytes)
	root := 0
	if raw.SourceRoot != "" {
		root = len(strings.TrimSuffix(raw.SourceRoot, "/")) + 1
	}
	for _, s := range raw.Sources {
		n += stringBytes + root + len(s)
	}
	for _, s := range raw.Names {
		n += stringBytes + len(s)
	}
	n += len(raw.SourcesContent) * (pointerBytes + sliceBytes)
	for _, c := range raw.SourcesContent {
		if c != nil {
			n += stringBytes + len(*c) + (strings.Count(*c, "\n")+1)*lineBytes
		}
	}
	return n
}

// count returns the generated lines and the segments of mappings, without
// decoding them: lines are separated by ";", segments by ",", and an empty
// field is no segment.
func count(mappings string) (lines, segments int) {
	lines = 1
	inSegment := false
	for i := 0; i < len(mappings); i++ {
		switch mappings[i] {
		case ';':
			lines, inSegment = lines+1, false
		case ',':
			inSegment = false
		default:
			if !inSegment {
				segments, inSegment = segments+1, true
			}
		}
	}
	return lines, segments
}

// exact returns s, or a copy of it without unused capacity.
func exact[T any](s []T) []T {
	if cap(s) == len(s) {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

// decode reads the mappings, of lines lines and segments segments (count):
// lines separated by ";", segments by ",", each a run of base64 VLQ
// fields whose values (but the generated column's at each line's start)
// are relative to the previous segment's. The slices are allocated once,
// at their final size: count counts what decode finds, or decode fails.
func (m *Map) decode(mappings string, lines, segments int) error {
	var src, srcLine, srcCol, name int32
	var genCol int32
	m.segs, m.lines = newChunked[segment](segments), newChunked[int32](lines+1)
	nSegs, nLines := 0, 1 // m.lines.at(0) is 0
	for i := 0; i <= len(mappings); {
		if i == len(mappings) || mappings[i] == ';' {
			*m.lines.at(nLines) = int32(nSegs)
			nLines++
			genCol = 0
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
		*m.segs.at(nSegs) = seg
		nSegs++
	}
	for l := 1; l < m.lines.n; l++ {
		// Segments are sorted by generated column in a well-made map;
		// sort a careless one rather than answer wrongly.
		from, to := int(*m.lines.at(l - 1)), int(*m.lines.at(l))
		for i := from + 1; i < to; i++ {
			if m.segs.at(i).genCol < m.segs.at(i-1).genCol {
				m.sortLine(from, to)
				break
			}
		}
	}
	return nil
}

// sortLine sorts the segments [from, to) by generated column, keeping
// the order of segments of one column (a stable sort, which Lookup's
// answer among them depends on). An in-place stable sort takes seconds on
// a line of a million segments in random order, which a map can hold, so
// the line is sorted as keys, each a column and the segment's place
// (8 bytes a segment, while it sorts), which sort in O(n log n) and
// cannot tie, and the segments are then moved along the permutation's
// cycles.
func (m *Map) sortLine(from, to int) {
	keys := make([]uint64, to-from)
	for i := range keys {
		// Flipping the sign bit orders int32 columns as unsigned.
		keys[i] = uint64(uint32(m.segs.at(from+i).genCol)^1<<31)<<32 | uint64(i)
	}
	slices.Sort(keys)
	// keys[i]'s low half is where the segment that belongs at i is; a
	// segment moved is marked by setting that half to i.
	for i := range keys {
		src := int(uint32(keys[i]))
		if src == i {
			continue
		}
		held := *m.segs.at(from + i)
		j := i
		for src != i {
			*m.segs.at(from + j) = *m.segs.at(from + src)
			keys[j] = keys[j]&^0xFFFFFFFF | uint64(j)
			j, src = src, int(uint32(keys[src]))
		}
		*m.segs.at(from + j) = held
		keys[j] = keys[j]&^0xFFFFFFFF | uint64(j)
	}
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
	if line < 1 || line >= m.lines.n || column < 1 {
		return pos, false
	}
	from, to := int(*m.lines.at(line - 1)), int(*m.lines.at(line))
	col := int32(column - 1)
	i := sort.Search(to-from, func(i int) bool { return m.segs.at(from+i).genCol > col }) - 1
	if i < 0 || m.segs.at(from+i).src < 0 {
		return pos, false
	}
	s := *m.segs.at(from + i)
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
