package analytics

import (
	"context"
	"time"
)

// Workspace groups products and the dashboard users who may see them.
type Workspace struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// Product is the unit of data isolation: every key, token and event belongs
// to exactly one product.
type Product struct {
	ID          int64     `json:"id"`
	WorkspaceID int64     `json:"workspaceId"`
	Name        string    `json:"name"`
	CreatedAt   time.Time `json:"createdAt"`
	// TimeZone is the IANA name of the zone the product's dates and
	// buckets follow (docs/queries.md, "Time zones"); "UTC" by default.
	TimeZone string `json:"timeZone"`
	// Retention is how long the product's events, error occurrences and
	// replays are kept (retention.go); zeros by default.
	Retention DataRetention `json:"retention"`
	// Privacy is what the product asks of its browser SDKs: cookieless
	// mode and privacy signals (cookieless.go); off by default.
	Privacy PrivacySettings `json:"privacy"`
}

// KeyStatus is the life-cycle state of an API key. Active keys ingest;
// disabled keys are refused with 403 and may be re-enabled; revoked keys are
// refused with 401 like unknown ones, and revocation is final.
type KeyStatus string

// The states an API key or query token can be in.
const (
	KeyActive   KeyStatus = "active"
	KeyDisabled KeyStatus = "disabled"
	KeyRevoked  KeyStatus = "revoked"
)

// APIKey is an ingest credential as stored: only the SHA-256 of the secret is
// kept, plus a short prefix so people can tell keys apart in a list.
type APIKey struct {
	ID        int64     `json:"id"`
	ProductID int64     `json:"productId"`
	Hash      []byte    `json:"-"`
	Prefix    string    `json:"prefix"`
	Env       Env       `json:"env"`
	Status    KeyStatus `json:"status"`
	// RateLimit is the per-key override of requests per minute; zero means
	// the server default.
	RateLimit  int        `json:"rateLimit"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// QueryToken is a read credential for the query API, stored like an APIKey.
type QueryToken struct {
	ID         int64      `json:"id"`
	ProductID  int64      `json:"productId"`
	Hash       []byte     `json:"-"`
	Prefix     string     `json:"prefix"`
	Status     KeyStatus  `json:"status"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// MetaStore holds workspaces, products and credentials. Lookups of a single
// row return an error wrapping ErrNotFound when the row does not exist.
type MetaStore interface {
	// CreateWorkspace inserts a workspace and returns it with its ID.
	CreateWorkspace(ctx context.Context, name string) (Workspace, error)
	// ListWorkspaces returns every workspace, oldest first.
	ListWorkspaces(ctx context.Context) ([]Workspace, error)

	// CreateProduct inserts a product into a workspace.
	CreateProduct(ctx context.Context, workspaceID int64, name string) (Product, error)
	// Product returns one product, or ErrNotFound.
	Product(ctx context.Context, id int64) (Product, error)
	// ListProducts returns the products of a workspace, oldest first.
	ListProducts(ctx context.Context, workspaceID int64) ([]Product, error)
	// RenameProduct changes a product's name, or returns ErrNotFound.
	RenameProduct(ctx context.Context, id int64, name string) error
	// SetProductTimeZone sets a product's time zone, an IANA name the
	// caller checked with LoadZone, or returns ErrNotFound.
	SetProductTimeZone(ctx context.Context, id int64, zone string) error
	// SetProductRetention sets a product's retention periods, which the
	// caller checked with DataRetention.Check, or returns ErrNotFound.
	SetProductRetention(ctx context.Context, id int64, r DataRetention) error
	// SetProductPrivacy sets what a product asks of its browser SDKs, or
	// returns ErrNotFound.
	SetProductPrivacy(ctx context.Context, id int64, p PrivacySettings) error

	// CreateAPIKey stores k (whose Hash, Prefix, Env and ProductID are set)
	// and fills in its ID, Status and CreatedAt.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// APIKeyByHash returns the key with the given SHA-256, or ErrNotFound.
	APIKeyByHash(ctx context.Context, hash []byte) (APIKey, error)
	// APIKey returns the key with the given ID, or ErrNotFound.
	APIKey(ctx context.Context, id int64) (APIKey, error)
	// ListAPIKeys returns a product's keys, oldest first.
	ListAPIKeys(ctx context.Context, productID int64) ([]APIKey, error)
	// SetAPIKeyStatus changes a key's status, or returns ErrNotFound. It
	// enforces no transition rules; the caller does.
	SetAPIKeyStatus(ctx context.Context, id int64, status KeyStatus) error
	// TouchAPIKeys records when keys were last used. It is called in
	// batches, not per request, so it never sits on the ingest hot path.
	TouchAPIKeys(ctx context.Context, lastUsed map[int64]time.Time) error
	// AddUsage adds each id's newly admitted requests under scope ("key"
	// for ingest, "workspace" for annotation writes) to the total every
	// node shares and returns the new totals; a zero count only reads.
	// Nodes use it to hold rate limits across them.
	AddUsage(ctx context.Context, scope string, deltas map[int64]int64) (map[int64]int64, error)

	// CreateQueryToken stores t and fills in its ID, Status and CreatedAt.
	CreateQueryToken(ctx context.Context, t *QueryToken) error
	// QueryTokenByHash returns the token with the given SHA-256, or
	// ErrNotFound.
	QueryTokenByHash(ctx context.Context, hash []byte) (QueryToken, error)
	// ListQueryTokens returns a product's tokens, oldest first.
	ListQueryTokens(ctx context.Context, productID int64) ([]QueryToken, error)
	// SetQueryTokenStatus changes a token's status, or returns ErrNotFound.
	SetQueryTokenStatus(ctx context.Context, id int64, status KeyStatus) error
	// TouchQueryTokens records when tokens were last used, in batches like
	// TouchAPIKeys.
	TouchQueryTokens(ctx context.Context, lastUsed map[int64]time.Time) error
}
