package sourcemap

import (
	"strings"
	"testing"
)

// benchMaps are the maps the benchmarks parse and look up in: two real
// ones (the esbuild build of testdata and the browser SDK's replay
// bundle, whose map is mostly sourcesContent) and the two hostile shapes
// of docs/security.md, "Sourcemaps that cost more parsed than sent".
func benchMaps(b *testing.B) map[string][]byte {
	b.Helper()
	app, replay := realMaps(b)
	return map[string][]byte{
		"esbuild-app":   app,
		"sdk-replay":    replay,
		"empty-lines":   []byte(`{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA` + strings.Repeat(";", 2<<20) + `"}`),
		"dense-1-field": []byte(`{"version":3,"sources":[],"names":[],"mappings":"A` + strings.Repeat(",A", 1<<20) + `"}`),
	}
}

func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"esbuild-app", "sdk-replay", "empty-lines", "dense-1-field"} {
		text := benchMaps(b)[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			var m *Map
			for b.Loop() {
				var err error
				if m, err = Parse(text); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(m.Size()), "size-bytes")
		})
	}
}

// BenchmarkLookup looks up positions spread over the map's generated
// lines and columns, hits and misses alike.
func BenchmarkLookup(b *testing.B) {
	for _, name := range []string{"esbuild-app", "sdk-replay", "empty-lines", "dense-1-field"} {
		m, err := Parse(benchMaps(b)[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				m.Lookup(1+i*7919%64, 1+i*104729%100000)
			}
		})
	}
}
