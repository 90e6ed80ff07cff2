package sourcemap

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sizeCases are maps of every shape whose cost differs: real builds, the
// hostile shapes (nothing but line separators, nothing but one-field
// segments, a long list of names, sources without content), a source root
// and content with many lines.
func sizeCases(t testing.TB) map[string][]byte {
	t.Helper()
	app, replay := realMaps(t)
	names := `"n"` + strings.Repeat(`,"n"`, 300_000)
	nulls := `null` + strings.Repeat(`,null`, 100_000)
	sources := `"s"` + strings.Repeat(`,"s"`, 100_000)
	return map[string][]byte{
		"esbuild-app": app,
		"sdk-replay":  replay,
		"empty-lines": []byte(`{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA` + strings.Repeat(";", 2_000_000) + `"}`),
		"dense":       []byte(`{"version":3,"sources":[],"names":[],"mappings":"A` + strings.Repeat(",A", 1_000_000) + `"}`),
		"names":       []byte(`{"version":3,"sources":["a.js"],"names":[` + names + `],"mappings":"AAAAA"}`),
		"no-content":  []byte(`{"version":3,"sources":[` + sources + `],"sourcesContent":[` + nulls + `],"names":[],"mappings":"AAAA"}`),
		"root-and-lines": []byte(`{"version":3,"sourceRoot":"webpack:///src/","sources":["a.js","b.js"],"names":[],"mappings":"AAAA,CAAC;ACAA",` +
			`"sourcesContent":["` + strings.Repeat(`x\n`, 200_000) + `",null]}`),
	}
}

// realMaps reads the two real maps the size and speed cases start from:
// the esbuild build of testdata, and the browser SDK's replay bundle's,
// which is mostly sourcesContent.
func realMaps(t testing.TB) (app, replay []byte) {
	t.Helper()
	var err error
	if app, err = os.ReadFile("testdata/app.min.js.map"); err != nil {
		t.Fatal(err)
	}
	if replay, err = os.ReadFile("../httpapi/sdkjs/replay.min.js.map"); err != nil {
		t.Fatal(err)
	}
	return app, replay
}

// TestMeasureIsSize checks that what an upload is measured at, without
// parsing, is what the parsed map then counts.
func TestMeasureIsSize(t *testing.T) {
	for name, text := range sizeCases(t) {
		m, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, err := Measure(text); err != nil || got != m.Size() {
			t.Errorf("%s: Measure %d %v, Size %d", name, got, err, m.Size())
		}
	}
}

// heapOf returns the bytes of live heap that make's result holds.
func heapOf(make func() any) (int, any) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := make()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int(after.HeapAlloc) - int(before.HeapAlloc), v
}

// TestSizeIsWhatTheMapHolds parses maps and weighs the live heap they
// hold: Size must be within a tenth of it (and 64 KB), so that a cache
// bounded by Size is bounded in memory. (Parsed as a slice a line, the
// map of two million empty lines held 48 MB and counted 2 MB.)
func TestSizeIsWhatTheMapHolds(t *testing.T) {
	for name, text := range sizeCases(t) {
		if len(text) < 100_000 {
			continue // too small to weigh among the runtime's own allocations
		}
		held, v := heapOf(func() any {
			m, err := Parse(text)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return m
		})
		size := v.(*Map).Size()
		if diff := max(held-size, size-held); diff > size/10+64<<10 {
			t.Errorf("%s: Size %d, but the map holds %d bytes of heap", name, size, held)
		}
		runtime.KeepAlive(v)
	}
}

// TestTooComplexIsRefusedBeforeParsing gives Parse and Measure maps just
// over and just under MaxSize, of both hostile shapes: the one over is a
// *TooComplexError naming its size, before Parse allocates its parsed
// form; the one under parses, within the limit.
func TestTooComplexIsRefusedBeforeParsing(t *testing.T) {
	source := stringBytes + len("a.js")
	for _, c := range []struct {
		name string
		map_ func(n int) []byte
		cost func(n int) int
		per  int
	}{
		{"dense", func(n int) []byte {
			return []byte(`{"version":3,"sources":["a.js"],"mappings":"A` + strings.Repeat(",A", n-1) + `"}`)
		}, func(n int) int { return mapBytes + chunkedBytes(n, segmentBytes) + chunkedBytes(2, lineBytes) + source }, segmentBytes},
		{"empty-lines", func(n int) []byte {
			return []byte(`{"version":3,"sources":["a.js"],"mappings":"` + strings.Repeat(";", n) + `"}`)
		}, func(n int) int { return mapBytes + chunkedBytes(n+2, lineBytes) + source }, lineBytes},
	} {
		fits := sort.Search(MaxSize, func(n int) bool { return c.cost(n) > MaxSize }) - 1
		over := c.map_(fits + 1)
		var tooComplex *TooComplexError
		if _, err := Measure(over); !errors.As(err, &tooComplex) || tooComplex.Size <= MaxSize || tooComplex.Size > MaxSize+c.per+sliceBytes {
			t.Errorf("%s: Measure of a map just over the limit: %v", c.name, err)
		}
		var stats runtime.MemStats
		runtime.ReadMemStats(&stats)
		allocated := stats.TotalAlloc
		m, err := Parse(over)
		runtime.ReadMemStats(&stats)
		if !errors.As(err, &tooComplex) || m != nil || !strings.Contains(err.Error(), "over the limit of 64 MB") {
			t.Errorf("%s: Parse of a map just over the limit: %v", c.name, err)
		}
		// The JSON's strings are allocated, the parsed form is not.
		if a := stats.TotalAlloc - allocated; a > 2*uint64(len(over)) {
			t.Errorf("%s: refusing a map of %d bytes allocated %d", c.name, len(over), a)
		}
		under := c.map_(fits)
		if m, err := Parse(under); err != nil || m.Size() > MaxSize || m.Size() < MaxSize-c.per-sliceBytes {
			t.Errorf("%s: a map just under the limit: %v", c.name, err)
		}
	}
}

// TestLookupAgainstSegments writes random maps from segments made up
// here (empty lines, one-field segments, columns out of order and
// repeated) and checks every lookup against the segments themselves: of
// the line's segments in stable column order, the last one at or before
// the column.
func TestLookupAgainstSegments(t *testing.T) {
	type seg struct{ col, src, line, scol, name int } // src -1: no source; name -1: none
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var lines [][]seg
		var mappings strings.Builder
		var prevSrc, prevLine, prevCol, prevName int
		for l := range rng.IntN(6) {
			if l > 0 {
				mappings.WriteByte(';')
			}
			var line []seg
			prevGen := 0
			for i := range rng.IntN(5) {
				s := seg{col: rng.IntN(30), src: -1, name: -1}
				if i > 0 {
					mappings.WriteByte(',')
				}
				mappings.WriteString(vlqEncode(s.col - prevGen))
				prevGen = s.col
				if rng.IntN(4) > 0 {
					s.src, s.line, s.scol = rng.IntN(2), rng.IntN(50), rng.IntN(80)
					mappings.WriteString(vlqEncode(s.src-prevSrc) + vlqEncode(s.line-prevLine) + vlqEncode(s.scol-prevCol))
					prevSrc, prevLine, prevCol = s.src, s.line, s.scol
					if rng.IntN(2) == 0 {
						s.name = rng.IntN(3)
						mappings.WriteString(vlqEncode(s.name - prevName))
						prevName = s.name
					}
				}
				line = append(line, s)
			}
			lines = append(lines, line)
		}
		text := `{"version":3,"sources":["a.js","b.js"],"names":["x","y","z"],"mappings":"` + mappings.String() + `"}`
		m, err := Parse([]byte(text))
		if err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, text)
		}
		if got, _ := Measure([]byte(text)); got != m.Size() {
			t.Errorf("round %d: Measure %d, Size %d", round, got, m.Size())
		}
		for l := 0; l <= len(lines)+1; l++ {
			var segs []seg
			if l >= 1 && l <= len(lines) {
				segs = slices.Clone(lines[l-1])
				slices.SortStableFunc(segs, func(a, b seg) int { return a.col - b.col })
			}
			for col := 0; col <= 32; col++ {
				want, wantOK := Position{}, false
				for _, s := range segs {
					if s.col <= col-1 {
						want, wantOK = Position{}, s.src >= 0
						if wantOK {
							want = Position{Source: []string{"a.js", "b.js"}[s.src], Line: s.line + 1, Column: s.scol + 1}
							if s.name >= 0 {
								want.Name = []string{"x", "y", "z"}[s.name]
							}
						}
					}
				}
				if l == 0 || col == 0 {
					want, wantOK = Position{}, false
				}
				if got, ok := m.Lookup(l, col); got != want || ok != wantOK {
					t.Fatalf("round %d: Lookup(%d, %d) = %+v %v, want %+v %v\n%s", round, l, col, got, ok, want, wantOK, text)
				}
			}
		}
	}
}

// TestCacheLoadsOneMapAtATime misses many keys that have maps from many
// goroutines at once: loads (reads and parses) never overlap, so that the
// memory of maps being parsed is one map's, and callers missing one key
// together load it once. Misses of keys without a map do not take turns
// (TestCacheMissesDoNotWait).
func TestCacheLoadsOneMapAtATime(t *testing.T) {
	c := &Cache{Budget: 1 << 20, HitTTL: time.Minute, MissTTL: time.Minute}
	var running, most atomic.Int32
	src := &store{read: func(Key) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
	}}
	for i := range 4 {
		src.put(Key{1, "1.0", fmt.Sprint(i)}, `{"version":3,"sources":["a.js"],"mappings":"AAAA"}`)
	}
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if m, err := c.Get(context.Background(), Key{1, "1.0", fmt.Sprint(i % 4)}, src); m == nil || err != nil {
				t.Errorf("%d: %v %v", i%4, m, err)
			}
		})
	}
	wg.Wait()
	if _, loads := src.counts(); most.Load() != 1 || loads != 4 {
		t.Errorf("%d loads at once at most, %d loads of 4 keys", most.Load(), loads)
	}
}

// TestCacheRemembersFailedLoads checks that a map that does not load (a
// map over MaxSize stored before the limit, a broken one) is not loaded
// again for every event, but again after MissTTL or Forget.
func TestCacheRemembersFailedLoads(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := &Cache{Budget: 1 << 20, HitTTL: time.Minute, MissTTL: 30 * time.Second, Now: func() time.Time { return now }}
	k := Key{1, "1.0", "app.js"}
	src := &store{}
	src.put(k, `{"version":3,"sources":[],"mappings":"AAAA"}`)
	loads := func() int { _, n := src.counts(); return n }
	for range 3 {
		if m, err := c.Get(ctx, k, src); m != nil || err == nil || !strings.Contains(err.Error(), "names source 0 of 0") {
			t.Fatalf("a broken map: %v %v", m, err)
		}
	}
	if loads() != 1 {
		t.Errorf("a broken map loaded %d times within MissTTL", loads())
	}
	now = now.Add(31 * time.Second)
	c.Get(ctx, k, src)
	c.Forget(k)
	c.Get(ctx, k, src)
	if loads() != 3 {
		t.Errorf("%d loads: MissTTL or Forget did not load the map again", loads())
	}
}

// TestCacheMakesRoomBeforeParsing loads a third map into a budget that
// holds two through ParseReserving and Reserve: the least recently used
// map is dropped before the third is allocated, so that the maps cached
// and the one being parsed never hold more than the budget.
func TestCacheMakesRoomBeforeParsing(t *testing.T) {
	ctx := context.Background()
	text := `{"version":3,"sources":["a.js"],"mappings":"AAAA","names":[],"sourcesContent":["` + strings.Repeat("x", 900) + `"]}`
	one, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	// An entry of a map holds its Size and the entry's own bytes.
	cost := entryCost(&entry{key: Key{1, "1.0", "a"}, m: one})
	c := &Cache{Budget: 2*cost + 100, HitTTL: time.Minute, MissTTL: time.Minute}
	heldAtParse := -1
	c.parse = func(text []byte, reserve func(int)) (*Map, error) {
		return ParseReserving(text, func(size int) {
			reserve(size)
			heldAtParse = c.Used() + size
		})
	}
	src := &store{}
	for _, url := range []string{"a", "b", "c"} {
		src.put(Key{1, "1.0", url}, text)
	}
	for _, url := range []string{"a", "b", "c"} {
		heldAtParse = -1
		if _, err := c.Get(ctx, Key{1, "1.0", url}, src); err != nil {
			t.Fatal(err)
		}
		if heldAtParse < 0 || heldAtParse > c.Budget {
			t.Errorf("loading %s: %d bytes held while parsing, over the budget of %d", url, heldAtParse, c.Budget)
		}
	}
	if c.Used() != 2*cost {
		t.Errorf("%d bytes cached, want two maps' %d", c.Used(), 2*cost)
	}
	// a was dropped to make room for c; b is still there.
	_, before := src.counts()
	c.Get(ctx, Key{1, "1.0", "b"}, src)
	c.Get(ctx, Key{1, "1.0", "a"}, src)
	if _, after := src.counts(); after-before != 1 {
		t.Errorf("%d loads of a and b, want 1 (a)", after-before)
	}
}

// TestCacheMissesDoNotWait misses 200 keys without maps, from 8
// goroutines, while a map is being loaded (its read held up until they
// are done): the misses are answered and remembered without waiting for
// that load, which alone takes turns; a caller of another map waits,
// until its context ends.
func TestCacheMissesDoNotWait(t *testing.T) {
	c := &Cache{Budget: 1 << 20, HitTTL: time.Minute, MissTTL: time.Minute}
	const text = `{"version":3,"sources":["a.js"],"mappings":"AAAA"}`
	big, other := Key{1, "1.0", "big.js"}, Key{1, "1.0", "other.js"}
	reading, release := make(chan struct{}), make(chan struct{})
	src := &store{read: func(k Key) {
		if k == big {
			close(reading)
			<-release
		}
	}}
	src.put(big, text)
	src.put(other, text)
	loaded := make(chan error, 1)
	go func() {
		m, err := c.Get(context.Background(), big, src)
		if m == nil && err == nil {
			err = errors.New("no map")
		}
		loaded <- err
	}()
	<-reading
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 25 {
					k := Key{1, fmt.Sprintf("r%d", g), fmt.Sprintf("https://cdn.example.com/%d.js", i)}
					if m, err := c.Get(context.Background(), k, src); m != nil || err != nil {
						t.Errorf("a key without a map: %v %v", m, err)
					}
				}
			})
		}
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("misses of keys without maps waited for the map being loaded")
	}
	lookups, _ := src.counts()
	c.Get(context.Background(), Key{1, "r3", "https://cdn.example.com/7.js"}, src)
	if again, _ := src.counts(); lookups != 201 || again != lookups {
		t.Errorf("%d lookups for 200 misses and the load, %d after asking one again: the misses were not remembered", lookups, again)
	}
	// A map that exists waits for its turn, no longer than its context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if m, err := c.Get(ctx, other, src); m != nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("a load waiting behind another, its context ended: %v %v after %v", m, err, time.Since(start))
	}
	close(release)
	if err := <-loaded; err != nil {
		t.Errorf("the map being loaded: %v", err)
	}
	if m, err := c.Get(context.Background(), other, src); m == nil || err != nil {
		t.Errorf("the map that waited, asked again: %v %v", m, err)
	}
}

// TestCacheForgetDuringLookup uploads a map while a lookup that found none
// is in progress: the lookup's answer, from before the upload, is not
// cached, so that the upload takes effect at once on this node.
func TestCacheForgetDuringLookup(t *testing.T) {
	c := &Cache{Budget: 1 << 20, HitTTL: time.Minute, MissTTL: time.Minute}
	k := Key{1, "1.0", "app.js"}
	src := &uploading{store: &store{}, c: c, k: k}
	if m, err := c.Get(context.Background(), k, src); m != nil || err != nil {
		t.Fatalf("the lookup before the upload: %v %v", m, err)
	}
	if m, err := c.Get(context.Background(), k, src); m == nil || err != nil {
		t.Errorf("after the upload: %v %v", m, err)
	}
}

// uploading is a store on which k's map is uploaded, and Forget called,
// while the first lookup of k is answered.
type uploading struct {
	*store
	c        *Cache
	k        Key
	uploaded bool
}

func (u *uploading) HasMap(ctx context.Context, k Key) (bool, error) {
	has, err := u.store.HasMap(ctx, k)
	if k == u.k && !u.uploaded {
		u.uploaded = true
		u.store.put(k, `{"version":3,"sources":["a.js"],"mappings":"AAAA"}`)
		u.c.Forget(k)
	}
	return has, err
}

// TestCacheDoesNotKeepStoreErrors fails the store's lookup, then its read,
// once each, as a database briefly unreachable would: each error is
// returned and not kept, so that the next caller asks again and finds the
// map, where a map that does not parse is kept for MissTTL
// (TestCacheRemembersFailedLoads).
func TestCacheDoesNotKeepStoreErrors(t *testing.T) {
	ctx := context.Background()
	c := &Cache{Budget: 1 << 20, HitTTL: time.Minute, MissTTL: time.Minute}
	src := &failing{store: &store{}}
	for _, url := range []string{"a.js", "b.js"} {
		src.put(Key{1, "1.0", url}, `{"version":3,"sources":["a.ts"],"mappings":"AAAA"}`)
	}
	src.lookupErr = errors.New("connection refused")
	if m, err := c.Get(ctx, Key{1, "1.0", "a.js"}, src); m != nil || err == nil {
		t.Fatalf("a failed lookup: %v %v", m, err)
	}
	if m, err := c.Get(ctx, Key{1, "1.0", "a.js"}, src); m == nil || err != nil {
		t.Errorf("the lookup after one that failed: %v %v", m, err)
	}
	src.readErr = errors.New("connection reset")
	if m, err := c.Get(ctx, Key{1, "1.0", "b.js"}, src); m != nil || err == nil {
		t.Fatalf("a failed read: %v %v", m, err)
	}
	if m, err := c.Get(ctx, Key{1, "1.0", "b.js"}, src); m == nil || err != nil {
		t.Errorf("the read after one that failed: %v %v", m, err)
	}
}

// failing is a store whose next lookup, or next read, fails with the
// error set.
type failing struct {
	*store
	lookupErr, readErr error
}

func (f *failing) HasMap(ctx context.Context, k Key) (bool, error) {
	if err := f.lookupErr; err != nil {
		f.lookupErr = nil
		return false, err
	}
	return f.store.HasMap(ctx, k)
}

func (f *failing) MapText(ctx context.Context, k Key) ([]byte, error) {
	if err := f.readErr; err != nil {
		f.readErr = nil
		return nil, err
	}
	return f.store.MapText(ctx, k)
}
