package ingest

import (
	"math/bits"
	"slices"
	"sort"
	"sync/atomic"
	"time"
)

// dedupSet remembers keys for at least window. Keys live in generations of
// window/4; a lookup checks all of them and the oldest is dropped once it
// is more than window old, so a key is kept between window and 1.25·window.
// When capacity is reached the oldest generation goes early, which shortens
// the window rather than growing memory without bound.
//
// Memory is what bounds the window, so keys are stored compactly: the
// generation being filled is an open-addressing table (16–32 bytes a key),
// and a generation that is full is sorted, off the commit path, into a
// plain slice with a prefix index (8 bytes a key). A Go map takes about 38
// bytes a key; at the default 4 M keys this is 60 MB against 150 MB.
type dedupSet struct {
	window   time.Duration
	capacity int
	gens     []*dedupGen // oldest first
	size     int
	// evictedEarly counts generations dropped for capacity before their
	// window ended.
	evictedEarly int
}

// dedupGen is one generation: its table while it fills and until its
// sorted form is ready, then only the sorted form.
type dedupGen struct {
	start  time.Time
	n      int
	table  *keyTable
	sorted atomic.Pointer[sortedKeys]
}

const dedupGenerations = 4

func newDedupSet(window time.Duration, capacity int, now time.Time) *dedupSet {
	return &dedupSet{window: window, capacity: capacity, gens: []*dedupGen{{start: now, table: newKeyTable()}}}
}

func (d *dedupSet) has(k uint64, now time.Time) bool {
	d.expire(now)
	for _, g := range d.gens {
		if s := g.sorted.Load(); s != nil {
			g.table = nil // the sorted form replaced it
			if s.has(k) {
				return true
			}
		} else if g.table.has(k) {
			return true
		}
	}
	return false
}

func (d *dedupSet) add(k uint64, now time.Time) {
	d.expire(now)
	cur := d.gens[len(d.gens)-1]
	if now.Sub(cur.start) >= d.window/dedupGenerations || cur.n >= d.capacity/dedupGenerations {
		seal(cur)
		cur = &dedupGen{start: now, table: newKeyTable()}
		d.gens = append(d.gens, cur)
	}
	if !cur.table.add(k) {
		return
	}
	cur.n++
	d.size++
	for d.size > d.capacity && len(d.gens) > 1 {
		d.dropOldest()
		d.evictedEarly++
	}
}

// seal sorts a full generation's keys in the background; lookups use its
// table until the sorted form is stored.
func seal(g *dedupGen) {
	keys := g.table.keys()
	go func() { g.sorted.Store(newSortedKeys(keys)) }()
}

// expire drops generations whose newest possible key is older than window.
func (d *dedupSet) expire(now time.Time) {
	for len(d.gens) > 1 && now.Sub(d.gens[1].start) > d.window {
		d.dropOldest()
	}
}

func (d *dedupSet) dropOldest() {
	d.size -= d.gens[0].n
	d.gens[0] = nil
	d.gens = d.gens[1:]
}

// keyTable is a set of 64-bit keys in open addressing with linear probing,
// at most half full. Zero marks an empty slot, so key 0 is stored as 1: the
// keys are hashes, and that costs a 2^-64 chance of a false match.
type keyTable struct {
	slots []uint64
	n     int
}

func newKeyTable() *keyTable { return &keyTable{slots: make([]uint64, 1024)} }

func (t *keyTable) has(k uint64) bool {
	if k == 0 {
		k = 1
	}
	mask := uint64(len(t.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch t.slots[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

// add inserts k and reports whether it was new.
func (t *keyTable) add(k uint64) bool {
	if k == 0 {
		k = 1
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := k & mask; ; i = (i + 1) & mask {
		switch t.slots[i] {
		case k:
			return false
		case 0:
			t.slots[i] = k
			t.n++
			return true
		}
	}
}

func (t *keyTable) grow() {
	old := t.slots
	t.slots, t.n = make([]uint64, 2*len(old)), 0
	for _, k := range old {
		if k != 0 {
			t.add(k)
		}
	}
}

func (t *keyTable) keys() []uint64 {
	out := make([]uint64, 0, t.n)
	for _, k := range t.slots {
		if k != 0 {
			out = append(out, k)
		}
	}
	return out
}

// sortedKeys is a sealed generation: its keys sorted, and where the keys of
// each top-bits prefix start, so a lookup is a binary search over the few
// keys of one prefix (the keys are uniform hashes).
type sortedKeys struct {
	keys  []uint64
	shift uint
	start []uint32
}

func newSortedKeys(keys []uint64) *sortedKeys {
	slices.Sort(keys)
	// About 16 keys a prefix, at most 2^16 prefixes.
	b := max(0, min(16, bits.Len(uint(len(keys)))-4))
	s := &sortedKeys{keys: keys, shift: uint(64 - b), start: make([]uint32, 1<<b+1)}
	if b == 0 {
		s.shift = 63 // every key has prefix 0 below
		s.start[1] = uint32(len(keys))
		return s
	}
	for i, k := range keys {
		s.start[(k>>s.shift)+1] = uint32(i + 1)
	}
	for p := 1; p < len(s.start); p++ { // prefixes without keys start where the previous ended
		s.start[p] = max(s.start[p], s.start[p-1])
	}
	return s
}

func (s *sortedKeys) has(k uint64) bool {
	if k == 0 {
		k = 1
	}
	p := k >> s.shift
	if len(s.start) == 2 {
		p = 0
	}
	lo, hi := int(s.start[p]), int(s.start[p+1])
	i := lo + sort.Search(hi-lo, func(i int) bool { return s.keys[lo+i] >= k })
	return i < hi && s.keys[i] == k
}
