package cohorts

import (
	"context"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"time"

	"strata/internal/analytics"
	"strata/internal/flags"
)

// Bounds of the targeted cohorts held in memory (docs/security.md, the
// limits table).
const (
	// DefaultMaxTargetMembers is how many members of targeted cohorts a
	// node holds, all products together: 8 bytes each, 32 MB.
	DefaultMaxTargetMembers = 4_000_000
	// targetReload is how old a held cohort may grow before it is read
	// again even at the same generation, so that a person deleted through
	// another node leaves it here within it.
	targetReload = 10 * time.Minute
	// targetIdle is how long a cohort no flag or audience asked for stays
	// held.
	targetIdle = 30 * time.Minute
	// targetPage is how many members one read of a cohort returns.
	targetPage = 10_000
)

// Targets holds the members of the cohorts that flags and message
// audiences target, so that a user's membership is answered from memory on
// every request (docs/flags.md, "Cohorts"). A cohort is held at its
// current generation as the sorted keyed hashes of its members' ids, read
// again when its generation changes, and at least every targetReload; a
// cohort that does not fit in MaxMembers is not held, and its membership
// is unknown, so its conditions fail.
type Targets struct {
	Meta   analytics.CohortStore
	Events analytics.CohortMemberStore
	// MaxMembers bounds the members held, all cohorts together; 0 means
	// DefaultMaxTargetMembers.
	MaxMembers int
	Now        func() time.Time
	Log        *slog.Logger

	once sync.Once
	seed maphash.Seed

	mu    sync.RWMutex
	held  map[targetKey]*heldCohort
	total int
}

type targetKey struct{ product, cohort int64 }

// heldCohort is one cohort's members at one generation.
type heldCohort struct {
	generation int64
	// hashes are the members' keyed hashes, sorted; nil when tooLarge.
	hashes []uint64
	// tooLarge marks a generation that did not fit: not read again until
	// the generation changes or targetReload passes.
	tooLarge bool
	loaded   time.Time
	wanted   time.Time
	loading  bool
}

func (t *Targets) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Targets) hash(id string) uint64 {
	t.once.Do(func() { t.seed = maphash.MakeSeed() })
	return maphash.String(t.seed, id)
}

func (t *Targets) max() int {
	if t.MaxMembers > 0 {
		return t.MaxMembers
	}
	return DefaultMaxTargetMembers
}

// Refresh makes the product's cohorts ids held at their current
// generations, reading the ones that changed (or are older than
// targetReload). It is called where a product's flags or campaigns are
// read, which is seldom (their caches), never per request. A cohort being
// read by another call is left to it; one the product no longer has is
// dropped.
func (t *Targets) Refresh(ctx context.Context, productID int64, ids []int64) error {
	now := t.now()
	t.mu.Lock()
	t.dropIdle(now)
	t.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	list, err := t.Meta.Cohorts(ctx, productID)
	if err != nil {
		return err
	}
	current := make(map[int64]int64, len(list))
	for _, c := range list {
		current[c.ID] = c.Generation
	}
	for _, id := range ids {
		key := targetKey{productID, id}
		gen, exists := current[id]
		t.mu.Lock()
		h := t.held[key]
		switch {
		case !exists:
			t.drop(key)
			t.mu.Unlock()
			continue
		case h != nil:
			h.wanted = now
			if h.loading || (h.generation == gen && now.Sub(h.loaded) < targetReload) {
				t.mu.Unlock()
				continue
			}
			h.loading = true
		default:
			if t.held == nil {
				t.held = map[targetKey]*heldCohort{}
			}
			// Not yet readable: Member answers unknown until it is.
			t.held[key] = &heldCohort{generation: -1, tooLarge: true, wanted: now, loading: true}
		}
		t.mu.Unlock()
		if err := t.load(ctx, key, gen); err != nil {
			return err
		}
	}
	return nil
}

// load reads one cohort's generation and holds it, unless it would not fit.
func (t *Targets) load(ctx context.Context, key targetKey, gen int64) error {
	var hashes []uint64
	fits := true
	if gen > 0 {
		t.mu.Lock()
		room := t.max() - t.total
		if h := t.held[key]; h != nil {
			room += len(h.hashes) // replaced once read
		}
		t.mu.Unlock()
		after := ""
		for {
			page, err := t.Events.CohortMembers(ctx, key.product, key.cohort, gen, after, targetPage)
			if err != nil {
				t.mu.Lock()
				if h := t.held[key]; h != nil {
					h.loading = false
				}
				t.mu.Unlock()
				return err
			}
			if len(hashes)+len(page) > room {
				fits, hashes = false, nil
				break
			}
			for _, id := range page {
				hashes = append(hashes, t.hash(id))
			}
			if len(page) < targetPage {
				break
			}
			after = page[len(page)-1]
		}
		slices.Sort(hashes)
		hashes = slices.Clip(hashes)
	}
	if !fits && t.Log != nil {
		t.Log.Warn("a targeted cohort is too large to hold; its conditions fail until it fits",
			"product", key.product, "cohort", key.cohort, "max_members", t.max())
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.held[key]
	if old == nil { // dropped meanwhile (Forget)
		return nil
	}
	t.total += len(hashes) - len(old.hashes)
	t.held[key] = &heldCohort{generation: gen, hashes: hashes, tooLarge: !fits, loaded: now, wanted: old.wanted}
	return nil
}

// drop forgets one held cohort; t.mu is held.
func (t *Targets) drop(key targetKey) {
	if h := t.held[key]; h != nil {
		t.total -= len(h.hashes)
		delete(t.held, key)
	}
}

// dropIdle forgets the cohorts nothing asked for in targetIdle; t.mu is
// held.
func (t *Targets) dropIdle(now time.Time) {
	for key, h := range t.held {
		if !h.loading && now.Sub(h.wanted) >= targetIdle {
			t.drop(key)
		}
	}
}

// Forget drops what is held of a product's cohorts, so that the next
// Refresh reads them again: after a person's deletion.
func (t *Targets) Forget(productID int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for key := range t.held {
		if key.product == productID {
			t.drop(key)
		}
	}
}

// Member answers, for each of the product's cohorts ids that is held,
// whether the user is a member; a cohort not held (not yet read, too
// large, deleted) is left out, and is unknown to the evaluators. It reads
// memory only. The answer is nil when ids is empty.
func (t *Targets) Member(productID int64, ids []int64, distinctID string) flags.Cohorts {
	if len(ids) == 0 {
		return nil
	}
	h := t.hash(distinctID)
	out := make(flags.Cohorts, len(ids))
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, id := range ids {
		c := t.held[targetKey{productID, id}]
		if c == nil || c.tooLarge {
			continue
		}
		_, found := slices.BinarySearch(c.hashes, h)
		out[id] = found
	}
	return out
}

// Held is how many members are held, all cohorts together (metrics, tests).
func (t *Targets) Held() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.total
}
