// Package alerts sends a product's error alerts to its webhook
// (docs/errors.md, "Alerts"): a periodic job, run on one node at a time
// through a lease in the metadata store, finds the groups that are new and
// the groups whose last complete hour spiked, claims each alert once in
// the metadata store and posts it, signed with HMAC-SHA256, retried with
// exponential backoff. Nothing here runs on the ingest path or in a
// request, except the test delivery a product owner asks for.
package alerts

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"math"
	"strings"
)

// SecretPrefix starts every signing secret, so that one is told from the
// other credentials (st_live_, st_tok_) at a glance.
const SecretPrefix = "st_whsec_"

// shownSecretChars is how much of a secret the API shows after it was
// created: the prefix and four characters.
const shownSecretChars = len(SecretPrefix) + 4

// NewSecret returns a fresh signing secret: the prefix and 32 random bytes
// in unpadded base64url (43 characters).
func NewSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on Linux
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// ShownSecret is the part of a secret the API shows after its creation.
func ShownSecret(secret string) string {
	if len(secret) <= shownSecretChars {
		return secret
	}
	return secret[:shownSecretChars]
}

// SignatureHeader and TimestampHeader are the headers of every delivery.
const (
	SignatureHeader = "X-Strata-Signature"
	TimestampHeader = "X-Strata-Timestamp"
)

// Sign returns the X-Strata-Signature of body: "sha256=" and the hex
// HMAC-SHA256 of the body's exact bytes, keyed with the whole secret
// (prefix included) as its bytes.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Verify reports whether signature is body's, comparing in constant time:
// what a receiver written in Go does.
func Verify(secret string, body []byte, signature string) bool {
	hexSum, ok := strings.CutPrefix(signature, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// HistoryHours is the number of hours a spike's average is taken over: the
// seven days before the hour.
const HistoryHours = 7 * 24

// Spike applies the spike rule to a group's count in an hour and its events
// in the seven days before: the average is history / 168 (hours without an
// event count as zero), and the hour is a spike when count is at least
// minCount and above factor times the average. A group without history
// spikes when it reaches minCount.
func Spike(count, history int64, factor float64, minCount int64) (spike bool, average float64) {
	average = float64(history) / HistoryHours
	return count >= minCount && float64(count) > factor*average, math.Round(average*1000) / 1000
}
