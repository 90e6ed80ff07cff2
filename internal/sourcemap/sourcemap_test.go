package sourcemap

import (
	"os"
	"strings"
	"testing"
)

// vlqEncode writes one base64 VLQ value, for hand-made mappings.
func vlqEncode(v int) string {
	u := v << 1
	if v < 0 {
		u = (-v << 1) | 1
	}
	var out strings.Builder
	for {
		d := u & 31
		u >>= 5
		if u > 0 {
			d |= 32
		}
		out.WriteByte(vlqDigits[d])
		if u == 0 {
			return out.String()
		}
	}
}

func TestVLQRoundTrip(t *testing.T) {
	for _, v := range []int{0, 1, -1, 15, 16, -16, 31, 32, 1000, -123456, 1<<30 - 1} {
		got, next, err := vlq(vlqEncode(v), 0)
		if err != nil || int(got) != v || next != len(vlqEncode(v)) {
			t.Errorf("%d: %d %d %v", v, got, next, err)
		}
	}
}

// TestLookupBoundaries uses a map written by hand:
//
//	line 1: column 0 → a.js 1:1, column 10 → a.js 2:5 named "f"
//	line 2: no segment
//	line 3: column 4 → b.js 7:1, column 8 → (nothing)
//
// A position before line 3's first segment has no answer: it must not
// take line 1's last mapping, as a library we tried did.
func TestLookupBoundaries(t *testing.T) {
	seg := func(fields ...int) string {
		var s string
		for _, f := range fields {
			s += vlqEncode(f)
		}
		return s
	}
	// Fields are relative: generated column to the line's previous segment,
	// the others to the previous segment with them.
	mappings := seg(0, 0, 0, 0) + "," + seg(10, 0, 1, 4, 0) + ";;" + seg(4, 1, 5, -4) + "," + seg(4)
	m, err := Parse([]byte(`{"version":3,"sources":["a.js","b.js"],"names":["f"],"mappings":"` + mappings +
		`","sourcesContent":["one\ntwo","1\n2\n3\n4\n5\n6\nseven"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line, col int
		want      Position
		ok        bool
	}{
		{1, 1, Position{"a.js", 1, 1, ""}, true},
		{1, 10, Position{"a.js", 1, 1, ""}, true},   // the last column before the second segment
		{1, 11, Position{"a.js", 2, 5, "f"}, true},  // exactly on the second segment
		{1, 500, Position{"a.js", 2, 5, "f"}, true}, // past the line's last segment
		{2, 1, Position{}, false},                   // a line without segments
		{3, 1, Position{}, false},                   // before the line's first segment
		{3, 4, Position{}, false},
		{3, 5, Position{"b.js", 7, 1, ""}, true},
		{3, 9, Position{}, false}, // a segment that maps to nothing
		{4, 1, Position{}, false}, // past the last line
		{0, 1, Position{}, false},
	} {
		got, ok := m.Lookup(c.line, c.col)
		if ok != c.ok || got != c.want {
			t.Errorf("Lookup(%d, %d) = %+v %v, want %+v %v", c.line, c.col, got, ok, c.want, c.ok)
		}
	}
	if l := m.SourceLine("b.js", 7); l != "seven" {
		t.Errorf("source line 7 of b.js: %q", l)
	}
	if l := m.SourceLine("a.js", 3); l != "" {
		t.Errorf("a line past the end: %q", l)
	}
}

// TestEsbuildMap looks up, in a real esbuild build, where each marker
// string of the minified file came from, and checks it against the line
// and column of the same marker in the original file.
func TestEsbuildMap(t *testing.T) {
	text, err := os.ReadFile("testdata/app.min.js.map")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	minified, _ := os.ReadFile("testdata/app.min.js")
	original, _ := os.ReadFile("testdata/app.ts")
	where := func(text, s string) (line, col int) {
		i := strings.Index(text, s)
		if i < 0 {
			t.Fatalf("%q not found", s)
		}
		line = strings.Count(text[:i], "\n") + 1
		return line, i - strings.LastIndex(text[:i], "\n")
	}
	for _, marker := range []string{`"marker-add"`, `"marker-reduce"`, `"marker-checkout"`, `"marker-load"`} {
		gl, gc := where(string(minified), marker)
		pos, ok := m.Lookup(gl, gc)
		ol, oc := where(string(original), marker)
		if !ok || pos.Source != "app.ts" || pos.Line != ol || pos.Column != oc {
			t.Errorf("%s at %d:%d maps to %+v %v, want app.ts:%d:%d", marker, gl, gc, pos, ok, ol, oc)
		}
		if line := m.SourceLine("app.ts", pos.Line); !strings.Contains(line, marker) {
			t.Errorf("%s: source line %q", marker, line)
		}
	}
	// The function names: "checkout" is minified, and the map names it.
	gl, gc := where(string(minified), "RangeError")
	if pos, ok := m.Lookup(gl, gc); !ok || pos.Line != 22 {
		t.Errorf("new RangeError at %d:%d maps to %+v", gl, gc, pos)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, text := range []string{
		`not json`,
		`{"version":2,"mappings":""}`,
		`{"version":3,"sections":[]}`,
		`{"version":3,"sources":[],"mappings":"AAAA"}`,  // names a source that is not there
		`{"version":3,"sources":["a"],"mappings":"A!"}`, // not base64
		`{"version":3,"sources":["a"],"mappings":"AAg"}`,
		`{"version":3,"sources":["a"],"mappings":"AA"}`, // two fields
	} {
		if _, err := Parse([]byte(text)); err == nil {
			t.Errorf("parsed %s", text)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":3,"sources":["a"],"names":["n"],"mappings":"AAAA,CAACA;;EAAE"}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		m, err := Parse(text)
		if err == nil {
			for l := 0; l < 4; l++ {
				m.Lookup(l, 1)
				m.Lookup(l, 1<<20)
			}
		}
	})
}
