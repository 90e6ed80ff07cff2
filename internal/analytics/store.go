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
	// RenameProduct changes a product's name, or returns ErrNotFound.
	RenameProduct(ctx context.Context, id int64, name string) error

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
	// DeleteSavedQuery removes a saved query, or returns ErrNotFound. The
	// query-scoped annotations drawn on it are deleted with it, in the same
	// transaction, since no chart can show them any more.
	DeleteSavedQuery(ctx context.Context, productID, id int64) error
}

// AnnotationStore keeps chart annotations. Every method is scoped to one
// workspace: an annotation of another workspace is ErrNotFound to it, is
// never listed and is never deleted through it.
type AnnotationStore interface {
	// CreateAnnotation stores a (WorkspaceID, Date, Label, Description,
	// Scope, QueryID, Color and CreatedBy set) and fills in its ID and
	// CreatedAt. A query-scoped annotation's QueryID must name a saved
	// query of a product of the same workspace; otherwise it returns
	// ErrNotFound and stores nothing. The caller validates every other
	// field.
	CreateAnnotation(ctx context.Context, a *Annotation) error
	// ListAnnotations returns one page of the annotations f selects,
	// newest Date first (ties: newest ID first), skipping offset and
	// returning at most limit, and the total f selects over all pages.
	ListAnnotations(ctx context.Context, f AnnotationFilter, offset, limit int) ([]Annotation, int, error)
	// EachAnnotation calls fn for every annotation f selects, in the order
	// of ListAnnotations, without holding them all in memory. It stops and
	// returns fn's error if fn fails.
	EachAnnotation(ctx context.Context, f AnnotationFilter, fn func(Annotation) error) error
	// DeleteAnnotation removes one annotation of a workspace, or returns
	// ErrNotFound when the workspace has no annotation with that id.
	DeleteAnnotation(ctx context.Context, workspaceID, id int64) error
	// DeleteAnnotations removes the annotations of a workspace among ids
	// and returns how many it removed; ids of other workspaces and unknown
	// ids are skipped, and a repeated id counts once.
	DeleteAnnotations(ctx context.Context, workspaceID int64, ids []int64) (int, error)
}

// UserStore keeps dashboard users, their workspace memberships and their
// sessions. Lookups of a single row return an error wrapping ErrNotFound
// when the row does not exist.
type UserStore interface {
	// CreateOwner stores u (Email and PasswordHash set), fills in its ID
	// and CreatedAt, and makes it the owner of every workspace, but only
	// while no user exists: first-run setup happens once. When a user
	// already exists, including one created concurrently by another
	// request or node, it stores nothing and returns ErrUserExists.
	CreateOwner(ctx context.Context, u *User) error
	// HasUsers reports whether any user exists, that is, whether first-run
	// setup is done.
	HasUsers(ctx context.Context) (bool, error)
	// UserByEmail returns the user with the given email (compared as
	// stored; callers normalise it first), or ErrNotFound.
	UserByEmail(ctx context.Context, email string) (User, error)
	// User returns one user, or ErrNotFound.
	User(ctx context.Context, id int64) (User, error)
	// UserWorkspaces returns the IDs of the workspaces a user belongs to,
	// in ID order; none when the user belongs to none.
	UserWorkspaces(ctx context.Context, userID int64) ([]int64, error)

	// CreateSession stores a session.
	CreateSession(ctx context.Context, s Session) error
	// SessionByHash returns the session whose token has the given SHA-256,
	// expired or not, or ErrNotFound; the caller checks ExpiresAt.
	SessionByHash(ctx context.Context, hash []byte) (Session, error)
	// ExtendSession moves a session's expiry, or returns ErrNotFound.
	ExtendSession(ctx context.Context, hash []byte, expiresAt time.Time) error
	// DeleteSession removes a session; removing one that does not exist is
	// not an error, so that signing out twice is harmless.
	DeleteSession(ctx context.Context, hash []byte) error
	// DeleteExpiredSessions removes every session that expired before t and
	// returns how many it removed.
	DeleteExpiredSessions(ctx context.Context, t time.Time) (int, error)
}
