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

// Cache keeps parsed maps in memory, the least recently used dropped
// first once they hold more than Budget bytes (Map.Size, what they really
// hold), for HitTTL each, and remembers for MissTTL that a key has no map,
// or a map that failed to load, so that a release without maps costs the
// store one lookup per key and interval rather than one per event, and a
// map that does not parse is not read and parsed again for every event.
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
	c.byKey[k] = c.order.PushFront(e)
	if m != nil {
		c.used += m.Size()
	}
	for c.used > c.Budget && c.order.Len() > 1 {
		c.remove(c.order.Back())
	}
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

// Reserve drops the least recently used maps until those left and a map of
// size bytes fit in Budget. A load (Get's) calls it before parsing, so that
// the maps cached and the one being parsed hold at most Budget together.
func (c *Cache) Reserve(size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.order == nil {
		return
	}
	for el := c.order.Back(); el != nil && c.used+size > c.Budget; {
		prev := el.Prev()
		if el.Value.(*entry).m != nil {
			c.remove(el)
		}
		el = prev
	}
}

// Used returns the bytes the cached maps hold.
func (c *Cache) Used() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

func (c *Cache) remove(el *list.Element) {
	e := c.order.Remove(el).(*entry)
	delete(c.byKey, e.key)
	if e.m != nil {
		c.used -= e.m.Size()
	}
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
