package errtrack

import (
	"context"
	"sync"
	"time"

	"strata/internal/analytics"
)

// One bug, one group (docs/errors.md): a sourcemap uploaded after a bug's
// first errors arrived de-minifies the next ones' frames, whose
// fingerprint is then another. Ingest keeps the bug in its first group:
// when an event's frames resolved, it also computes the fingerprint of its
// raw frames, and when a group of that fingerprint exists and none of the
// de-minified one, it records the de-minified one as an alias of the raw
// one (analytics.ErrorAliasStore), so that the event counts in the raw
// group. Every event is stored with its own fingerprint, also one that has
// an alias (recorded so, or by a merge): the queries map it to its group,
// and an unmerge, which deletes the alias, gives all of its events back to
// its own group.

// GroupFinder tells whether a product has live $exception events of a
// fingerprint: the event store, read directly (ingest must not wait for
// the read-your-writes barrier that its own events are behind).
type GroupFinder interface {
	ErrorGroups(ctx context.Context, q analytics.ErrorGroupsQuery) ([]analytics.ErrorGroupRow, error)
}

// Bounds of what a node remembers of aliases and groups: each product's
// aliases for aliasTTL (a merge made on another node is applied here
// within it), at most maxCachedProducts of them, and at most maxDecisions
// decisions about de-minified fingerprints, forgotten all at once when
// full (each is asked of the stores again, and decided the same way).
const (
	aliasTTL          = 30 * time.Second
	maxCachedProducts = 1000
	maxDecisions      = 10000
	// groupLookback is how far back a group is looked for: a bug whose
	// raw group had no event for 90 days starts a new group de-minified.
	groupLookback = 90 * 24 * time.Hour
)

// aliasCache is what the processor remembers of aliases and of the
// decisions it made.
type aliasCache struct {
	mu       sync.Mutex
	products map[int64]cachedAliases
	// decided holds the de-minified fingerprints already decided: their
	// group (themselves, or the raw one they are an alias of).
	decided map[decisionKey]string
}

type cachedAliases struct {
	aliases map[string]string
	read    time.Time
}

type decisionKey struct {
	product        int64
	fingerprint    string
	rawFingerprint string
}

// Forget drops what the processor remembers of a product's aliases, after
// a merge made through this node.
func (p *Processor) Forget(productID int64) {
	p.cache.mu.Lock()
	delete(p.cache.products, productID)
	for k := range p.cache.decided {
		if k.product == productID {
			delete(p.cache.decided, k)
		}
	}
	p.cache.mu.Unlock()
}

// aliasesOf returns a product's aliases, from memory when read within
// aliasTTL.
func (p *Processor) aliasesOf(ctx context.Context, product int64) (map[string]string, error) {
	now := p.now()
	p.cache.mu.Lock()
	c, ok := p.cache.products[product]
	p.cache.mu.Unlock()
	if ok && now.Sub(c.read) < aliasTTL {
		return c.aliases, nil
	}
	aliases, err := p.Aliases.ErrorAliases(ctx, product)
	if err != nil {
		return nil, err
	}
	p.cache.mu.Lock()
	if p.cache.products == nil || len(p.cache.products) >= maxCachedProducts {
		p.cache.products = map[int64]cachedAliases{}
	}
	p.cache.products[product] = cachedAliases{aliases: aliases, read: now}
	p.cache.mu.Unlock()
	return aliases, nil
}

// groupOf returns the group an event of fingerprint fp counts in, and
// records the alias of a de-minified fingerprint when it should. raw
// is the fingerprint of its raw frames when some of its frames were
// de-minified, else "". Any failure of the stores leaves fp as it is: an
// error is never refused for its group, and queries apply aliases
// recorded later.
func (p *Processor) groupOf(ctx context.Context, product int64, fp, raw string) string {
	if p.Aliases == nil {
		return fp
	}
	aliases, err := p.aliasesOf(ctx, product)
	if err != nil {
		return fp
	}
	if into, ok := aliases[fp]; ok {
		return into
	}
	if raw == "" || raw == fp || p.Groups == nil {
		return fp
	}
	key := decisionKey{product, fp, raw}
	p.cache.mu.Lock()
	into, ok := p.cache.decided[key]
	p.cache.mu.Unlock()
	if ok {
		return into
	}
	into = fp
	if group, ok := aliases[raw]; ok {
		raw = group
	}
	// Minified frames tell bugs apart less well than original ones (one
	// file, the minifier's short names, no lines), so that several bugs
	// may share the raw group. Only the first de-minified fingerprint is
	// kept in it; the others, told apart now, start groups of their own.
	for _, group := range aliases {
		if group == raw {
			return p.decide(key, fp)
		}
	}
	rawExists, err := p.hasGroup(ctx, product, raw, aliases)
	if err != nil {
		return fp
	}
	if rawExists {
		exists, err := p.hasGroup(ctx, product, fp, aliases)
		if err != nil {
			return fp
		}
		if !exists {
			stored, err := p.Aliases.AddErrorAlias(ctx, product, analytics.ErrorAlias{Fingerprint: fp, Into: raw,
				Reason: analytics.AliasSourcemap, CreatedBy: "ingest"}, p.AliasLimit)
			if err != nil {
				// Over the cap, or the store failing: the event starts
				// its own group, as before aliases.
				return fp
			}
			into = stored
			p.cache.mu.Lock()
			delete(p.cache.products, product)
			p.cache.mu.Unlock()
		}
	}
	return p.decide(key, into)
}

// decide remembers the group of a de-minified fingerprint, and returns it.
func (p *Processor) decide(key decisionKey, into string) string {
	p.cache.mu.Lock()
	if p.cache.decided == nil || len(p.cache.decided) >= maxDecisions {
		p.cache.decided = map[decisionKey]string{}
	}
	p.cache.decided[key] = into
	p.cache.mu.Unlock()
	return into
}

// hasGroup reports whether the product has live $exception events that
// count in fp's group in the last groupLookback.
func (p *Processor) hasGroup(ctx context.Context, product int64, fp string, aliases map[string]string) (bool, error) {
	now := p.now()
	rows, err := p.Groups.ErrorGroups(ctx, analytics.ErrorGroupsQuery{
		EventRange:  analytics.EventRange{ProductID: product, Env: analytics.EnvLive, From: now.Add(-groupLookback), To: now.Add(time.Hour)},
		Fingerprint: fp, Limit: 1, Aliases: aliases})
	return len(rows) > 0, err
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
