package sourcemap

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Key names the map of one minified file of one product's release.
type Key struct {
	Product      int64
	Release, URL string
}

// Cache keeps parsed maps in memory for HitTTL each, and remembers for
// MissTTL that a key has no map, or a map that does not parse, so that a
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
// A key the cache does not hold is first looked up (Source.HasMap), which
// any number of callers do at once: most misses are of maps that do not
// exist (a release without maps, a frame of another site's script), and
// they are remembered without waiting for anything. Maps that exist are
// read and parsed one at a time: a caller waits for the load in progress,
// if any, and then finds its key again before loading it, so that callers
// missing the same key load it once. A load parses with
// ParseReserving(text, c.Reserve), which makes room in the budget before
// it allocates the map; the memory of maps is then at most Budget (or one
// map, at most MaxSize, when it alone is larger) and the text of the one
// being parsed, however many callers miss at once.
type Cache struct {
	Budget          int
	HitTTL, MissTTL time.Duration
	Now             func() time.Time

	// loading holds a token while a map is read and parsed: a channel
	// rather than a mutex, so that a caller stops waiting when its
	// context ends.
	loading chan struct{}

	mu    sync.Mutex
	used  int
	order *list.List // of *entry, most recent first
	byKey map[Key]*list.Element
	// hits and misses count Get's answers from memory and from the
	// source, for the metrics.
	hits, misses atomic.Uint64
	// forgets counts Forget's calls: a lookup that began before one
	// (forgets changed since) does not cache its answer, which may be
	// from before the upload.
	forgets uint64

	// parse is ParseReserving, or what a test puts in its place to watch
	// the budget while a map is parsed.
	parse func(text []byte, reserve func(size int)) (*Map, error)
}

// Source is where a Cache finds maps: the store of uploads.
type Source interface {
	// HasMap reports whether k has a map, without reading it.
	HasMap(ctx context.Context, k Key) (bool, error)
	// MapText returns k's map, or nil and no error when k has none
	// (deleted since HasMap answered).
	MapText(ctx context.Context, k Key) ([]byte, error)
}

type entry struct {
	key    Key
	m      *Map  // nil: no map, or err
	err    error // why the map does not parse
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

// Get returns the map of k from src, nil and no error when k has none. On
// a miss it asks src whether k has a map; one that does is read and parsed
// in turn with other loads (the wait ends with ctx). The error of a map
// that does not parse is returned again, without asking src, for MissTTL;
// src's own errors (a database briefly unreachable, ctx's end) are
// returned and not kept, so that the next event asks again.
func (c *Cache) Get(ctx context.Context, k Key, src Source) (*Map, error) {
	e, ok, forgets := c.find(k)
	if ok {
		c.hits.Add(1)
		return e.m, e.err
	}
	c.misses.Add(1)
	has, err := src.HasMap(ctx, k)
	if err != nil {
		return nil, err
	}
	if !has {
		return nil, c.add(k, nil, nil, forgets)
	}
	select {
	case c.loading <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("sourcemap: waiting for the map being loaded: %w", ctx.Err())
	}
	defer func() { <-c.loading }()
	if e, ok, forgets = c.find(k); ok { // loaded by the caller this one waited for
		return e.m, e.err
	}
	text, err := src.MapText(ctx, k)
	if err != nil {
		return nil, err
	}
	if text == nil {
		return nil, c.add(k, nil, nil, forgets)
	}
	parse := c.parse
	if parse == nil {
		parse = ParseReserving
	}
	m, err := parse(text, c.Reserve)
	if err != nil {
		m = nil
	}
	return m, c.add(k, m, err, forgets)
}

// add caches k's map, or its absence, or err, in place of any entry k has,
// unless Forget was called since the lookup began (when forgets was read),
// and returns err.
func (c *Cache) add(k Key, m *Map, err error, forgets uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgets != forgets {
		return err
	}
	if el, ok := c.byKey[k]; ok { // another lookup of k, at the same time
		c.remove(el)
	}
	e := &entry{key: k, m: m, err: err, loaded: c.now()}
	e.cost = entryCost(e)
	c.evictUntil(c.Budget - e.cost)
	c.byKey[k] = c.order.PushFront(e)
	c.used += e.cost
	return err
}

// find returns k's entry while it is fresh: HitTTL for a map, MissTTL for
// no map or an error. A stale entry is dropped. It also returns the count
// of Forget's calls, for add.
func (c *Cache) find(k Key) (*entry, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey, c.order, c.loading = map[Key]*list.Element{}, list.New(), make(chan struct{}, 1)
	}
	el, ok := c.byKey[k]
	if !ok {
		return nil, false, c.forgets
	}
	e := el.Value.(*entry)
	ttl := c.MissTTL
	if e.m != nil {
		ttl = c.HitTTL
	}
	if c.now().Sub(e.loaded) >= ttl {
		c.remove(el)
		return nil, false, c.forgets
	}
	c.order.MoveToFront(el)
	return e, true, c.forgets
}

// Forget drops k, after an upload or a delete, and keeps the lookups in
// progress from caching what they found before it.
func (c *Cache) Forget(k Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
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
// Stats is how many Gets were answered from memory (hits) and how many
// asked the source (misses).
func (c *Cache) Stats() (hits, misses uint64) { return c.hits.Load(), c.misses.Load() }

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
