package messages

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
	"strata/internal/flags"
)

// product is what a product's requests read: its setting, its active
// campaigns compiled, every campaign by id (for /track), and its flags.
type product struct {
	autoRender bool
	active     []*compiled
	all        map[int64]*compiled
	flags      map[string]*flags.Flag
	// cohorts are the cohorts the active campaigns' audiences and their
	// flags' conditions name: each request asks for the user's membership
	// of these.
	cohorts []int64
	loaded  time.Time
}

// productCache holds each product's campaigns. An entry older than
// productTTL is still served while one background read replaces it, so
// that no request waits for the metadata store once a product was read.
// gen counts each product's changes made through this node: a read that
// began before a change is not stored over it.
type productCache struct {
	mu         sync.Mutex
	entries    map[int64]*product
	gen        map[int64]uint64
	refreshing map[int64]bool
	// hits and misses count the answers from memory and from the store,
	// for the metrics (Engine.CacheStats).
	hits, misses atomic.Uint64
}

func (pc *productCache) get(ctx context.Context, e *Engine, id int64) (*product, error) {
	pc.mu.Lock()
	p, ok := pc.entries[id]
	if ok && e.Now().Sub(p.loaded) >= productTTL && !pc.refreshing[id] {
		if pc.refreshing == nil {
			pc.refreshing = map[int64]bool{}
		}
		pc.refreshing[id] = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := pc.load(ctx, e, id); err != nil {
				e.Log.Error("reading the product's message campaigns", "product", id, "err", err)
			}
			pc.mu.Lock()
			delete(pc.refreshing, id)
			pc.mu.Unlock()
		}()
	}
	pc.mu.Unlock()
	if ok {
		pc.hits.Add(1)
		return p, nil
	}
	pc.misses.Add(1)
	return pc.load(ctx, e, id)
}

// load reads a product's setting, campaigns and flags, and keeps them
// unless the product changed through this node meanwhile.
func (pc *productCache) load(ctx context.Context, e *Engine, id int64) (*product, error) {
	pc.mu.Lock()
	gen := pc.gen[id]
	pc.mu.Unlock()
	p := &product{all: map[int64]*compiled{}, loaded: e.Now()}
	var err error
	if p.autoRender, err = e.Store.AutoRender(ctx, id); err != nil {
		return nil, err
	}
	list, err := e.Store.ListCampaigns(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		cc, err := compile(c)
		if err != nil {
			return nil, err
		}
		p.all[c.ID] = cc
		if c.Status == analytics.CampaignActive {
			p.active = append(p.active, cc)
		}
	}
	if p.flags, err = e.Flags(ctx, id); err != nil {
		return nil, err
	}
	for _, c := range p.active {
		p.cohorts = appendNew(p.cohorts, c.Audience.Cohorts()...)
		if f := p.flags[c.FlagKey]; f != nil && len(c.variants) > 1 {
			p.cohorts = appendNew(p.cohorts, flags.CohortIDs(f.Conditions)...)
		}
	}
	if len(p.cohorts) > 0 {
		if e.Cohorts == nil {
			p.cohorts = nil // nothing answers memberships: every cohort condition fails
		} else if err := e.Cohorts.Refresh(ctx, id, p.cohorts); err != nil {
			return nil, err
		}
	}
	pc.mu.Lock()
	if pc.entries == nil {
		pc.entries = map[int64]*product{}
	}
	if pc.gen[id] == gen {
		pc.entries[id] = p
	}
	pc.mu.Unlock()
	return p, nil
}

// appendNew appends the ids list lacks.
func appendNew(list []int64, ids ...int64) []int64 {
	for _, id := range ids {
		if !slices.Contains(list, id) {
			list = append(list, id)
		}
	}
	return list
}

func (pc *productCache) drop(id int64) {
	pc.mu.Lock()
	delete(pc.entries, id)
	if pc.gen == nil {
		pc.gen = map[int64]uint64{}
	}
	pc.gen[id]++
	pc.mu.Unlock()
}

// userCache holds the users' states read lately, in two generations: a
// lookup checks the current one, then the previous, and moves what it
// finds there forward; when the current one is full it becomes the
// previous one and the oldest generation is dropped. So it holds between
// max/2 and max users, the least recently used going first, without a
// list to keep in order.
type userCache struct {
	mu        sync.Mutex
	max       int
	cur, prev map[userKey]userEntry
}

type userKey struct {
	product int64
	id      string
}

type userEntry struct {
	states map[int64]analytics.MessageState
	loaded time.Time
}

const defaultUsers = 200_000

func (uc *userCache) get(productID int64, id string, now time.Time) (map[int64]analytics.MessageState, bool) {
	k := userKey{productID, id}
	uc.mu.Lock()
	defer uc.mu.Unlock()
	ent, ok := uc.cur[k]
	if !ok {
		if ent, ok = uc.prev[k]; ok {
			uc.insert(k, ent)
		}
	}
	if !ok || now.Sub(ent.loaded) >= userTTL {
		return nil, false
	}
	return ent.states, true
}

func (uc *userCache) put(productID int64, id string, states map[int64]analytics.MessageState, now time.Time) {
	uc.mu.Lock()
	uc.insert(userKey{productID, id}, userEntry{states: states, loaded: now})
	uc.mu.Unlock()
}

func (uc *userCache) insert(k userKey, ent userEntry) {
	if uc.cur == nil || len(uc.cur) >= uc.max/2 {
		uc.prev, uc.cur = uc.cur, make(map[userKey]userEntry, uc.max/2)
	}
	uc.cur[k] = ent
}

func (uc *userCache) drop(productID int64, id string) {
	k := userKey{productID, id}
	uc.mu.Lock()
	delete(uc.cur, k)
	delete(uc.prev, k)
	uc.mu.Unlock()
}

var userSeed = maphash.MakeSeed()

func userHash(productID int64, id string) uint64 {
	var h maphash.Hash
	h.SetSeed(userSeed)
	h.WriteString(id)
	return h.Sum64() + uint64(productID)
}
