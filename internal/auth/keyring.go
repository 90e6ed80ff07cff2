package auth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"strata/internal/analytics"
)

// Keyring answers "which key is this?" on the ingest hot path. It caches
// lookups, positive and negative, for a short TTL so that a burst of
// requests costs one store query, and it batches last-used times so that
// ingest never writes metadata per request.
//
// A change made through this process (the admin socket, later the
// dashboard) calls Invalidate and takes effect at once; a change made by
// another node takes effect within the TTL.
type Keyring struct {
	meta analytics.MetaStore
	ttl  time.Duration
	now  func() time.Time

	mu       sync.RWMutex
	cache    map[string]keyEntry
	lastUsed map[int64]time.Time
	// tokensUsed is lastUsed for query tokens.
	tokensUsed map[int64]time.Time
	// hits and misses count lookups answered from the cache and from the
	// store, for the metrics (Stats).
	hits, misses atomic.Uint64
}

// Stats is how many key and token lookups the cache answered (hits) and
// how many read the store (misses).
func (k *Keyring) Stats() (hits, misses uint64) { return k.hits.Load(), k.misses.Load() }

type keyEntry struct {
	key     analytics.APIKey
	token   analytics.QueryToken
	found   bool
	expires time.Time
}

// maxCachedKeys bounds the cache so that a stream of random well-formed keys
// cannot grow it without limit; past it the cache starts over.
const maxCachedKeys = 10000

// NewKeyring returns a keyring over meta with the given cache TTL.
func NewKeyring(meta analytics.MetaStore, ttl time.Duration, now func() time.Time) *Keyring {
	return &Keyring{meta: meta, ttl: ttl, now: now, cache: map[string]keyEntry{}, lastUsed: map[int64]time.Time{},
		tokensUsed: map[int64]time.Time{}}
}

// Errors returned by Authenticate, in the vocabulary the HTTP layer maps to
// statuses.
var (
	ErrMissingKey = analytics.Errorf(analytics.KindUnauthenticated, "missing_api_key",
		"An API key is required: send it in the X-API-Key header, the api_key body field or the api_key query parameter.")
	ErrInvalidKey = analytics.Errorf(analytics.KindUnauthenticated, "invalid_api_key",
		"The API key is not valid: it is unknown or has been revoked.")
	ErrKeyDisabled = analytics.Errorf(analytics.KindForbidden, "key_disabled",
		"The API key is disabled. Enable it again or use another key.")
)

// Authenticate returns the active key for a presented plaintext, or one of
// ErrMissingKey, ErrInvalidKey, ErrKeyDisabled, or an internal error when
// the store fails.
func (k *Keyring) Authenticate(ctx context.Context, plaintext string) (analytics.APIKey, error) {
	if plaintext == "" {
		return analytics.APIKey{}, ErrMissingKey
	}
	if _, ok := ParseAPIKey(plaintext); !ok {
		return analytics.APIKey{}, ErrInvalidKey
	}
	now := k.now()
	e, err := k.lookup(Hash(plaintext), now, func(hash []byte) (keyEntry, error) {
		key, err := k.meta.APIKeyByHash(ctx, hash)
		return keyEntry{key: key}, err
	})
	if err != nil {
		return analytics.APIKey{}, err
	}
	switch {
	case !e.found || e.key.Status == analytics.KeyRevoked:
		return analytics.APIKey{}, ErrInvalidKey
	case e.key.Status == analytics.KeyDisabled:
		return analytics.APIKey{}, ErrKeyDisabled
	}
	k.mu.Lock()
	k.lastUsed[e.key.ID] = now
	k.mu.Unlock()
	return e.key, nil
}

// Bearer errors. The API takes a query token, or on the few routes that
// allow one (httpapi), an API key.
var (
	ErrMissingBearer = analytics.Errorf(analytics.KindUnauthenticated, "missing_credentials",
		"A credential is required: send Authorization: Bearer <query token>, or sign in to the dashboard.")
	ErrInvalidBearer = analytics.Errorf(analytics.KindUnauthenticated, "invalid_credentials",
		"The bearer credential is not valid: it is unknown or has been revoked.")
	ErrTokenDisabled = analytics.Errorf(analytics.KindForbidden, "token_disabled",
		"The query token is disabled. Enable it again or use another token.")
)

// Principal is who a query request acts for: always exactly one product.
type Principal struct {
	ProductID int64
	// KeyID or TokenID names the credential that was presented; KeyEnv
	// is the key's environment, which decides where a test key is
	// accepted.
	KeyID, TokenID int64
	KeyEnv         analytics.Env
	// KeyRateLimit is a key's own ingest budget a minute, 0 for the
	// server's default, which a key's sourcemap uploads are charged to.
	KeyRateLimit int
	// Prefix is the credential's stored prefix ("st_tok_abcd"), enough to
	// tell it apart in a list and never the secret.
	Prefix string
	// UserID and Email are set instead of a credential when a dashboard
	// session signed the request and named the product (httpapi).
	UserID int64
	Email  string
	// ShareID is set instead when a shared link's secret signed the
	// request (httpapi/share.go): read-only, on the routes a link may
	// reach only.
	ShareID int64
}

// Bucket is the credential's rate-limit bucket: one per query token, API
// key, shared link or dashboard user. The four are numbered separately, so
// the kind is kept in the low bits, to tell token 5 from user 5.
func (p Principal) Bucket() int64 {
	switch {
	case p.TokenID != 0:
		return p.TokenID<<2 | 1
	case p.KeyID != 0:
		return p.KeyID<<2 | 2
	case p.ShareID != 0:
		return p.ShareID << 2
	}
	return p.UserID<<2 | 3
}

// Describe names who acted, for the records that keep it (an annotation's
// createdBy, a flag's audit trail): a dashboard user by email, a credential
// by its kind and shown prefix ("token st_tok_abcd…"), never its secret.
func (p Principal) Describe() string {
	switch {
	case p.UserID != 0:
		return p.Email
	case p.TokenID != 0:
		return "token " + p.Prefix + "…"
	case p.ShareID != 0:
		return "shared link " + p.Prefix + "…"
	}
	return "key " + p.Prefix + "…"
}

// AuthenticateBearer resolves the value of an Authorization: Bearer header,
// a query token or an API key, to its product. A key keeps its ingest
// meaning (disabled is 403, revoked 401); a token likewise. What the
// credential may do there is the caller's decision: API keys are public,
// and the HTTP layer lets them make only a few writes.
func (k *Keyring) AuthenticateBearer(ctx context.Context, plaintext string) (Principal, error) {
	switch {
	case plaintext == "":
		return Principal{}, ErrMissingBearer
	case ValidTokenShape(plaintext):
	default:
		key, err := k.Authenticate(ctx, plaintext)
		switch {
		case errors.Is(err, ErrInvalidKey):
			return Principal{}, ErrInvalidBearer
		case err != nil:
			return Principal{}, err
		}
		return Principal{ProductID: key.ProductID, KeyID: key.ID, KeyEnv: key.Env, KeyRateLimit: key.RateLimit, Prefix: key.Prefix}, nil
	}
	e, err := k.lookup(Hash(plaintext), k.now(), func(hash []byte) (keyEntry, error) {
		tok, err := k.meta.QueryTokenByHash(ctx, hash)
		return keyEntry{token: tok}, err
	})
	if err != nil {
		return Principal{}, err
	}
	switch {
	case !e.found || e.token.Status == analytics.KeyRevoked:
		return Principal{}, ErrInvalidBearer
	case e.token.Status == analytics.KeyDisabled:
		return Principal{}, ErrTokenDisabled
	}
	k.mu.Lock()
	k.tokensUsed[e.token.ID] = k.now()
	k.mu.Unlock()
	return Principal{ProductID: e.token.ProductID, TokenID: e.token.ID, Prefix: e.token.Prefix}, nil
}

// lookup returns the cached entry for a credential hash, or asks fetch and
// caches its answer, found or not, for the TTL. Only a store failure is an
// error.
func (k *Keyring) lookup(hash []byte, now time.Time, fetch func([]byte) (keyEntry, error)) (keyEntry, error) {
	k.mu.RLock()
	e, ok := k.cache[string(hash)]
	k.mu.RUnlock()
	if ok && !now.After(e.expires) {
		k.hits.Add(1)
		return e, nil
	}
	k.misses.Add(1)
	e, err := fetch(hash)
	switch {
	case err == nil:
		e.found = true
	case errors.Is(err, analytics.ErrNotFound):
		e = keyEntry{}
	default:
		return keyEntry{}, err
	}
	e.expires = now.Add(k.ttl)
	k.mu.Lock()
	if len(k.cache) >= maxCachedKeys {
		k.cache = map[string]keyEntry{}
	}
	k.cache[string(hash)] = e
	k.mu.Unlock()
	return e, nil
}

// Invalidate forgets every cached lookup, so that a key created, disabled
// or revoked through this process is seen by the next request.
func (k *Keyring) Invalidate() {
	k.mu.Lock()
	k.cache = map[string]keyEntry{}
	k.mu.Unlock()
}

// FlushLastUsed writes the last-used times of keys and query tokens
// gathered since the previous flush. On failure the times are kept for the
// next attempt.
func (k *Keyring) FlushLastUsed(ctx context.Context) error {
	return errors.Join(
		k.flush(ctx, &k.lastUsed, k.meta.TouchAPIKeys),
		k.flush(ctx, &k.tokensUsed, k.meta.TouchQueryTokens))
}

// flush hands the times in *used to touch and empties it, or puts them
// back, keeping the later of two times, when touch fails.
func (k *Keyring) flush(ctx context.Context, used *map[int64]time.Time, touch func(context.Context, map[int64]time.Time) error) error {
	k.mu.Lock()
	pending := *used
	*used = map[int64]time.Time{}
	k.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	if err := touch(ctx, pending); err != nil {
		k.mu.Lock()
		for id, t := range pending {
			if cur, ok := (*used)[id]; !ok || cur.Before(t) {
				(*used)[id] = t
			}
		}
		k.mu.Unlock()
		return err
	}
	return nil
}
