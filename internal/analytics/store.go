package analytics

import (
	"context"
	"time"
)

// EventStore is where events live. The embedded backend is DuckDB; a
// ClickHouse backend implements the same contract at scale.
type EventStore interface {
	// AppendEvents stores events as one atomic commit. When it returns nil
	// every event is durable and will survive a crash of the process; when
	// it returns an error none of them was stored and the caller may retry
	// the whole slice. It does not deduplicate: that is the ingest writer's
	// job, because it must see concurrent requests.
	AppendEvents(ctx context.Context, events []Event) error

	// RecentUUIDs calls fn for the events received at or after since, newest
	// first and at most limit of them, so that the deduplication window
	// survives a restart. It stops early and returns fn's error if fn fails.
	RecentUUIDs(ctx context.Context, since time.Time, limit int, fn func(productID int64, uuid [16]byte) error) error

	// Close flushes and releases the store. It is called once, after the
	// last AppendEvents has returned.
	Close() error
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
	// AddKeyUsage adds each key's newly admitted ingest requests to the
	// total every node shares and returns the new totals; a zero count
	// only reads. Nodes use it to hold a key's rate limit across them.
	AddKeyUsage(ctx context.Context, deltas map[int64]int64) (map[int64]int64, error)

	// CreateQueryToken stores t and fills in its ID, Status and CreatedAt.
	CreateQueryToken(ctx context.Context, t *QueryToken) error
	// QueryTokenByHash returns the token with the given SHA-256, or
	// ErrNotFound.
	QueryTokenByHash(ctx context.Context, hash []byte) (QueryToken, error)
	// ListQueryTokens returns a product's tokens, oldest first.
	ListQueryTokens(ctx context.Context, productID int64) ([]QueryToken, error)
	// SetQueryTokenStatus changes a token's status, or returns ErrNotFound.
	SetQueryTokenStatus(ctx context.Context, id int64, status KeyStatus) error
}

// SavedQueryStore keeps saved query definitions. Every method is scoped to
// one product: a saved query of another product is ErrNotFound.
type SavedQueryStore interface {
	// CreateSavedQuery stores q (ProductID, Kind, Name and Definition set)
	// and fills in its ID and times.
	CreateSavedQuery(ctx context.Context, q *SavedQuery) error
	// SavedQuery returns one saved query, or ErrNotFound.
	SavedQuery(ctx context.Context, productID, id int64) (SavedQuery, error)
	// ListSavedQueries returns a product's saved queries, newest first.
	ListSavedQueries(ctx context.Context, productID int64) ([]SavedQuery, error)
	// UpdateSavedQuery replaces the name and definition and sets
	// UpdatedAt, or returns ErrNotFound.
	UpdateSavedQuery(ctx context.Context, q *SavedQuery) error
	// DeleteSavedQuery removes a saved query, or returns ErrNotFound.
	DeleteSavedQuery(ctx context.Context, productID, id int64) error
}
