// Package auth issues and checks Strata's credentials: ingest API keys
// (st_live_…, st_test_…) and query tokens (st_tok_…). Only a SHA-256 of a
// secret is ever stored; the plaintext exists once, when it is created.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"strings"

	"strata/internal/analytics"
)

// The prefixes that name a credential's kind, and the length of the random
// part after them (docs/security.md, "Credentials and what they may do").
const (
	LivePrefix  = "st_live_"
	TestPrefix  = "st_test_"
	TokenPrefix = "st_tok_"
	SharePrefix = "st_share_"

	keyRandomLen   = 32
	tokenRandomLen = 40
	shareRandomLen = 32
	// shownLen is how many random characters the stored prefix keeps:
	// enough to tell keys apart in a list, far too few to guess the rest.
	shownLen = 4
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Secret is a freshly generated credential: Plaintext is shown to the user
// once; Hash and Prefix are what gets stored.
type Secret struct {
	Plaintext string
	Hash      []byte
	Prefix    string
}

// NewAPIKey generates an ingest key for the given environment.
func NewAPIKey(env analytics.Env) Secret {
	prefix := LivePrefix
	if env == analytics.EnvTest {
		prefix = TestPrefix
	}
	return newSecret(prefix, keyRandomLen)
}

// NewQueryToken generates a query token.
func NewQueryToken() Secret { return newSecret(TokenPrefix, tokenRandomLen) }

// NewShareSecret generates the secret of a shared link, which its URL
// carries (/share/st_share_…).
func NewShareSecret() Secret { return newSecret(SharePrefix, shareRandomLen) }

// ValidShareShape reports whether s looks like a shared link's secret.
func ValidShareShape(s string) bool {
	return strings.HasPrefix(s, SharePrefix) && isBase62(s[len(SharePrefix):], shareRandomLen)
}

func newSecret(prefix string, n int) Secret {
	plain := prefix + randomBase62(n)
	return Secret{Plaintext: plain, Hash: Hash(plain), Prefix: plain[:len(prefix)+shownLen]}
}

// randomBase62 draws n characters uniformly from crypto/rand, rejecting
// bytes ≥ 248 so that no character is more likely than another.
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n*2)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand failed: " + err.Error()) // never happens on Linux
		}
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// Hash is how a credential is stored and looked up.
func Hash(plaintext string) []byte {
	sum := sha256.Sum256([]byte(plaintext))
	return sum[:]
}

// ParseAPIKey checks a presented key's shape and returns the environment it
// names. A malformed key is rejected here, before any lookup, so that junk
// never reaches the store or the cache.
func ParseAPIKey(key string) (analytics.Env, bool) {
	var env analytics.Env
	var rest string
	switch {
	case strings.HasPrefix(key, LivePrefix):
		env, rest = analytics.EnvLive, key[len(LivePrefix):]
	case strings.HasPrefix(key, TestPrefix):
		env, rest = analytics.EnvTest, key[len(TestPrefix):]
	default:
		return "", false
	}
	return env, isBase62(rest, keyRandomLen)
}

// ValidTokenShape reports whether s looks like a query token.
func ValidTokenShape(s string) bool {
	return strings.HasPrefix(s, TokenPrefix) && isBase62(s[len(TokenPrefix):], tokenRandomLen)
}

func isBase62(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}
