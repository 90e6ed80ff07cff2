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
// first once they hold more than Budget bytes (Map.Size), for HitTTL each,
// and remembers for MissTTL that a key has no map, so that a release
// without maps costs the store one lookup per key and interval rather than
// one per event. An upload drops its key here (Forget), so it takes effect
// on this node at once, and on the others within MissTTL (a new map) or
// HitTTL (a replaced one).
type Cache struct {
	Budget          int
	HitTTL, MissTTL time.Duration
	Now             func() time.Time

	mu    sync.Mutex
	used  int
	order *list.List // of *entry, most recent first
	byKey map[Key]*list.Element
}

type entry struct {
	key    Key
	m      *Map // nil: no map
	loaded time.Time
}

// Get returns the map of k, loading it with load on a miss. load returns
// nil and no error when there is no map.
func (c *Cache) Get(k Key, load func() (*Map, error)) (*Map, error) {
	c.mu.Lock()
	if c.byKey == nil {
		c.byKey, c.order = map[Key]*list.Element{}, list.New()
	}
	if el, ok := c.byKey[k]; ok {
		e := el.Value.(*entry)
		ttl := c.MissTTL
		if e.m != nil {
			ttl = c.HitTTL
		}
		if c.now().Sub(e.loaded) < ttl {
			c.order.MoveToFront(el)
			c.mu.Unlock()
			return e.m, nil
		}
		c.remove(el)
	}
	c.mu.Unlock()

	m, err := load()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok { // loaded meanwhile by another caller
		c.remove(el)
	}
	e := &entry{key: k, m: m, loaded: c.now()}
	c.byKey[k] = c.order.PushFront(e)
	if m != nil {
		c.used += m.Size()
	}
	for c.used > c.Budget && c.order.Len() > 1 {
		c.remove(c.order.Back())
	}
	return m, nil
}

// Forget drops k, after an upload or a delete.
func (c *Cache) Forget(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.remove(el)
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
