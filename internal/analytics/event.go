package analytics

import (
	"context"
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
	// Source and Channel say where the visit came from, and UTMSource,
	// UTMMedium and UTMCampaign are the page URL's UTM tags, all found at
	// ingest (package enrich/source); "" when they do not apply.
	Source, Channel                   string
	UTMSource, UTMMedium, UTMCampaign string
	// Country (ISO 3166-1 alpha-2), Region and City are where the client
	// address was, found at ingest (package enrich/geo); the address
	// itself is never kept. "" when the database does not know it.
	Country, Region, City string
	// ScreenClass is the size class of the page's viewport, from the
	// $viewport_width the browser SDK sends: mobile, tablet, laptop or
	// desktop (docs/ingest.md, "Devices"); "" without one.
	ScreenClass string
	// Properties is a compact JSON object, never nil ("{}" when empty).
	Properties json.RawMessage
}

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
