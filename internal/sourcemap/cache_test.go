package sourcemap

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// store is a Source of maps held in memory, which counts what it is asked.
type store struct {
	mu    sync.Mutex
	texts map[Key]string
	// lookups counts HasMap's calls, reads MapText's.
	lookups, reads int
	// read, if set, runs in MapText before it answers.
	read func(k Key)
}

func (s *store) put(k Key, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts = map[Key]string{}
	}
	s.texts[k] = text
}

func (s *store) HasMap(ctx context.Context, k Key) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups++
	_, ok := s.texts[k]
	return ok, nil
}

func (s *store) MapText(ctx context.Context, k Key) ([]byte, error) {
	s.mu.Lock()
	s.reads++
	read := s.read
	text, ok := s.texts[k]
	s.mu.Unlock()
	if read != nil {
		read(k)
	}
	if !ok {
		return nil, nil
	}
	return []byte(text), nil
}

func (s *store) counts() (lookups, reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups, s.reads
}

func TestCacheBoundsMemoryAndForgetsMisses(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	// Each map here holds about 1,150 bytes (900 of them its source's
	// text), its entry about 1,540; the budget holds two.
	text := `{"version":3,"sources":["a.js"],"mappings":"AAAA","names":[],"sourcesContent":["` + strings.Repeat("x", 900) + `"]}`
	c := &Cache{Budget: 3500, HitTTL: 10 * time.Minute, MissTTL: time.Minute, Now: func() time.Time { return now }}
	src := &store{}
	loads := func() int { n, _ := src.counts(); return n }
	for _, url := range []string{"a", "b", "c"} {
		src.put(Key{1, "1.0", url}, text)
	}
	for _, url := range []string{"a", "b", "a", "c"} {
		if m, err := c.Get(ctx, Key{1, "1.0", url}, src); m == nil || err != nil {
			t.Fatalf("%s: %v %v", url, m, err)
		}
	}
	// a, b loaded; a hit; c loaded and b, the least recently used, dropped.
	if loads() != 3 || c.Used() > c.Budget {
		t.Errorf("%d loads, %d bytes held", loads(), c.Used())
	}
	c.Get(ctx, Key{1, "1.0", "a"}, src)
	if loads() != 3 {
		t.Error("a was dropped instead of b")
	}
	c.Get(ctx, Key{1, "1.0", "b"}, src)
	if loads() != 4 {
		t.Error("b was not dropped")
	}

	// A miss is remembered for MissTTL, then asked again; Forget asks at once.
	miss := Key{1, "2.0", "a"}
	for range 3 {
		if m, _ := c.Get(ctx, miss, src); m != nil {
			t.Fatal("a map for a missing key")
		}
	}
	if loads() != 5 {
		t.Errorf("%d loads: the miss was not remembered", loads())
	}
	now = now.Add(2 * time.Minute)
	c.Get(ctx, miss, src)
	if loads() != 6 {
		t.Error("the miss outlived MissTTL")
	}
	src.put(miss, text)
	c.Forget(miss)
	if m, _ := c.Get(ctx, miss, src); m == nil || loads() != 7 {
		t.Error("Forget did not let an upload take effect")
	}
	// A map is read again after HitTTL, so that a replacing upload made
	// through another node takes effect here too.
	c.Get(ctx, miss, src)
	if loads() != 7 {
		t.Error("a fresh map was read again")
	}
	now = now.Add(11 * time.Minute)
	c.Get(ctx, miss, src)
	if loads() != 8 {
		t.Error("a map outlived HitTTL")
	}
}

// TestCacheChargesMisses misses 60,000 keys of random releases, as events
// with a random $release would: every miss is charged to the budget, the
// least recently used dropped, so that the cache holds at most Budget bytes
// and a bounded number of entries; and what it holds, measured on the
// heap, is not more than Used says (entryBytes is not too small).
func TestCacheChargesMisses(t *testing.T) {
	const budget = 8 << 20
	c := &Cache{Budget: budget, HitTTL: time.Minute, MissTTL: time.Minute}
	ctx, src := context.Background(), &store{}
	c.Get(ctx, Key{1, "warm", "up"}, src)
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	for i := range 60_000 {
		release := fmt.Sprintf("%08x-%04x-release", rand.Uint32(), i%65536)
		c.Get(ctx, Key{1, release, fmt.Sprintf("https://shop.example.com/assets/chunk-%d.min.js", i)}, src)
	}
	held := int(heap() - before)
	t.Logf("%d misses kept, %d bytes on the heap (%d each); Used says %d", c.order.Len(), held, held/c.order.Len(), c.Used())
	if held > c.Used() {
		t.Errorf("the misses kept hold %d bytes, more than the %d bytes Used counts", held, c.Used())
	}
	most := budget / entryBytes
	if c.Used() > budget || c.Used() < budget-1000 || c.order.Len() > most || len(c.byKey) != c.order.Len() {
		t.Errorf("after 60,000 misses: %d bytes used of %d, %d entries (at most %d), %d keys", c.Used(), budget, c.order.Len(), most, len(c.byKey))
	}
	// The most recent misses are those kept.
	asked, _ := src.counts()
	c.Get(ctx, Key{1, "warm", "up"}, src)
	if again, _ := src.counts(); again != asked+1 {
		t.Error("the oldest miss was not dropped")
	}
}
