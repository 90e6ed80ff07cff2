package sourcemap

import (
	"container/list"
	"sync"
	"time"
)

// Key names the map of one minified file of one product's release.
type Key struct {
	Product      int64
	Release, URL string
}

// Cache keeps parsed maps in memory for HitTTL each, and remembers for
// MissTTL that a key has no map, or a map that failed to load, so that a
// release without maps costs the store one lookup per key and interval
// rather than one per event, and a map that does not parse is not read and
// parsed again for every event. Every entry, a map's or a miss's, is
// charged to Budget (entryCost: a map's Size, what it really holds, and
// for any entry its key and bookkeeping, about 400 bytes), and the least
// recently used entries are dropped first once they hold more. Misses
// count because the keys an event names are the public API key's to
// choose: any $release, and fifty frames of two candidate URLs each.
// An upload drops its key here (Forget), so it takes effect on this node
// at once, and on the others within MissTTL (a new map) or HitTTL (a
// replaced one).
//
// Maps are loaded one at a time: a caller that misses waits for the load
// in progress, if any, and then finds its key again before loading it, so
// that callers missing the same key load it once. A load that parses with
// ParseReserving(text, c.Reserve) makes room in the budget before it
// allocates the map; the memory of maps is then at most Budget (or one
// map, at most MaxSize, when it alone is larger) and the text of the one
// being parsed, however many callers miss at once.
type Cache struct {
	Budget          int
	HitTTL, MissTTL time.Duration
	Now             func() time.Time

	// loading is held while a map is loaded.
	loading sync.Mutex

	mu    sync.Mutex
	used  int
	order *list.List // of *entry, most recent first
	byKey map[Key]*list.Element
}

type entry struct {
	key    Key
	m      *Map  // nil: no map, or err
	err    error // why the map could not be loaded
	loaded time.Time
	cost   int // entryCost, charged to used
}

// entryBytes is what an entry holds beside its strings and its map: the
// entry, its list element, and its slot in byKey with its share of the
// table, which does not shrink as entries are dropped. Measured at about
// 290 bytes once the cache has turned over (TestCacheChargesMisses), 380
// with the strings of a typical key; rounded up with room to spare.
const entryBytes = 384

// entryCost is what e holds: entryBytes, its key's strings, its error's
// text and its map's Size.
func entryCost(e *entry) int {
	n := entryBytes + len(e.key.Release) + len(e.key.URL)
	if e.err != nil {
		n += len(e.err.Error())
	}
	if e.m != nil {
		n += e.m.Size()
	}
	return n
}

// Get returns the map of k, loading it with load on a miss. load returns
// nil and no error when there is no map. An error load returns is
// returned again, without loading, for MissTTL.
func (c *Cache) Get(k Key, load func() (*Map, error)) (*Map, error) {
	if e, ok := c.find(k); ok {
		return e.m, e.err
	}
	c.loading.Lock()
	defer c.loading.Unlock()
	if e, ok := c.find(k); ok { // loaded by the caller this one waited for
		return e.m, e.err
	}
	m, err := load()
	if err != nil {
		m = nil
	}
	// Only loads add entries, one at a time, so k has none here.
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &entry{key: k, m: m, err: err, loaded: c.now()}
	e.cost = entryCost(e)
	c.evictUntil(c.Budget - e.cost)
	c.byKey[k] = c.order.PushFront(e)
	c.used += e.cost
	return m, err
}

// find returns k's entry while it is fresh: HitTTL for a map, MissTTL for
// no map or an error. A stale entry is dropped.
func (c *Cache) find(k Key) (*entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey, c.order = map[Key]*list.Element{}, list.New()
	}
	el, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	ttl := c.MissTTL
	if e.m != nil {
		ttl = c.HitTTL
	}
	if c.now().Sub(e.loaded) >= ttl {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e, true
}

// Forget drops k, after an upload or a delete.
func (c *Cache) Forget(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.remove(el)
	}
}

// Reserve drops the least recently used entries until those left and a
// map of size bytes fit in Budget. A load (Get's) calls it before parsing,
// so that the entries cached and the map being parsed hold at most Budget
// together.
func (c *Cache) Reserve(size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictUntil(c.Budget - size)
}

// evictUntil drops the least recently used entries, maps and misses
// alike, until the rest hold at most limit bytes (none are left when limit
// is below zero, for a map larger than Budget alone). c.mu is held.
func (c *Cache) evictUntil(limit int) {
	for c.used > limit && c.order != nil && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

// Used returns the bytes the cached entries hold, as entryCost counts them.
func (c *Cache) Used() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

func (c *Cache) remove(el *list.Element) {
	e := c.order.Remove(el).(*entry)
	delete(c.byKey, e.key)
	c.used -= e.cost
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
