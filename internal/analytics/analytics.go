// Package analytics holds Strata's domain types, its error vocabulary and the
// storage contracts every backend implements. It performs no I/O: the store
// packages (duckdb, later clickhouse and postgres) depend on it, never the
// other way round, so a new storage engine is a new folder, not edits across
// handlers.
package analytics

import (
	"encoding/json"
	"time"
)

// Env separates production data from test data. Events sent with a test key
// are stored with EnvTest and stay out of queries unless test data is asked
// for explicitly.
type Env string

// The two environments an event or key can belong to.
const (
	EnvLive Env = "live"
	EnvTest Env = "test"
)

// Workspace groups products and, later, the people who may see them.
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

// Event is one stored event after validation and enrichment. Timestamps are
// UTC with microsecond precision.
type Event struct {
	UUID       [16]byte
	ProductID  int64
	Env        Env
	Timestamp  time.Time
	ReceivedAt time.Time
	Name       string
	DistinctID string
	// UserID is a 64-bit hash of the product and distinct_id. Queries join
	// and count on it instead of on the string, and it is the same on every
	// node and backend because it is computed, not allocated.
	UserID      uint64
	URL         string
	Path        string
	Referrer    string
	UserAgent   string
	Browser     string
	OS          string
	DeviceType  string
	IsBot       bool
	BotName     string
	BotCategory string
	// Properties is a compact JSON object, never nil ("{}" when empty).
	Properties json.RawMessage
}
