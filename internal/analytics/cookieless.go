package analytics

import (
	"context"
	"time"
)

// Cookieless mode (docs/privacy.md, "Cookieless mode"). A product may ask
// its browser SDKs to keep nothing in cookies or storage. Such an SDK
// sends CookielessID as the distinct_id of an anonymous visitor's events,
// and ingest replaces it with a visitor id derived from a salted hash of
// the client address, the user agent and the product. The salt is random,
// one per UTC day, and deleted once the day is over, so that an id cannot
// be computed again from an address later, and the same visitor gets a
// new id the next day.

// CookielessID is the distinct_id a client sends to ask the server to
// derive the visitor: reserved, never stored as such.
const CookielessID = "$cookieless"

// PrivacySettings is what a product asks of its browser SDKs.
type PrivacySettings struct {
	// Cookieless makes the SDKs that follow the product's setting keep
	// nothing in the browser (see above).
	Cookieless bool `json:"cookieless"`
	// RespectPrivacySignals makes those SDKs send nothing for a browser
	// that sends Global Privacy Control or Do Not Track.
	RespectPrivacySignals bool `json:"respectPrivacySignals"`
}

// SaltStore keeps the cookieless mode's daily salts, shared by every node
// of a deployment so that they derive the same visitor ids.
type SaltStore interface {
	// DailySalt returns the salt of day (days since 1970-01-01, UTC),
	// creating a random one if no node did yet; two nodes asking at once
	// get the same salt. It deletes the salts of the days before
	// day−1.
	DailySalt(ctx context.Context, day int64, fresh []byte) ([]byte, error)
}

// SaltDay is the day number DailySalt takes for the instant t.
func SaltDay(t time.Time) int64 {
	return t.UTC().Unix() / 86400
}
