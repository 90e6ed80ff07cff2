package auth

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/store/duckdb/duckdbtest"
)

func TestSecrets(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		live, test, tok := NewAPIKey(analytics.EnvLive), NewAPIKey(analytics.EnvTest), NewQueryToken()
		for _, c := range []struct {
			s  Secret
			re string
		}{{live, `^st_live_[0-9A-Za-z]{32}$`}, {test, `^st_test_[0-9A-Za-z]{32}$`}, {tok, `^st_tok_[0-9A-Za-z]{40}$`}} {
			if !regexp.MustCompile(c.re).MatchString(c.s.Plaintext) {
				t.Fatalf("%q does not match %s", c.s.Plaintext, c.re)
			}
			if seen[c.s.Plaintext] {
				t.Fatal("a secret repeated")
			}
			seen[c.s.Plaintext] = true
			if string(c.s.Hash) != string(Hash(c.s.Plaintext)) || len(c.s.Prefix) >= len(c.s.Plaintext)-20 {
				t.Fatalf("hash or prefix wrong for %q: prefix %q", c.s.Plaintext, c.s.Prefix)
			}
		}
		if env, ok := ParseAPIKey(test.Plaintext); !ok || env != analytics.EnvTest {
			t.Fatalf("ParseAPIKey(%q) = %v, %v", test.Plaintext, env, ok)
		}
		if !ValidTokenShape(tok.Plaintext) || ValidTokenShape(live.Plaintext) {
			t.Fatal("token shape check is wrong")
		}
	}
	for _, bad := range []string{"", "st_live_", "st_live_" + "abc", "st_prod_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "st_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA!"} {
		if _, ok := ParseAPIKey(bad); ok {
			t.Errorf("ParseAPIKey accepted %q", bad)
		}
	}
}

// TestKeyring checks the states, the cache TTL, Invalidate and last-used
// batching against a real DuckDB metadata store.
func TestKeyring(t *testing.T) {
	ctx := context.Background()
	st, p := duckdbtest.Product(t)
	secret := NewAPIKey(analytics.EnvLive)
	k := analytics.APIKey{ProductID: p.ID, Hash: secret.Hash, Prefix: secret.Prefix, Env: analytics.EnvLive}
	if err := st.CreateAPIKey(ctx, &k); err != nil {
		t.Fatal(err)
	}

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kr := NewKeyring(st, 10*time.Second, func() time.Time { return now })
	for _, c := range []struct {
		key  string
		want error
	}{{"", ErrMissingKey}, {"nonsense", ErrInvalidKey}, {NewAPIKey(analytics.EnvLive).Plaintext, ErrInvalidKey}} {
		if _, err := kr.Authenticate(ctx, c.key); !errors.Is(err, c.want) {
			t.Errorf("Authenticate(%q) = %v, want %v", c.key, err, c.want)
		}
	}
	if got, err := kr.Authenticate(ctx, secret.Plaintext); err != nil || got.ProductID != p.ID {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}

	// A change made behind the keyring's back is seen after the TTL.
	st.SetAPIKeyStatus(ctx, k.ID, analytics.KeyDisabled)
	if _, err := kr.Authenticate(ctx, secret.Plaintext); err != nil {
		t.Errorf("within the TTL the cached answer stands, got %v", err)
	}
	now = now.Add(11 * time.Second)
	if _, err := kr.Authenticate(ctx, secret.Plaintext); !errors.Is(err, ErrKeyDisabled) {
		t.Errorf("after the TTL: %v, want ErrKeyDisabled", err)
	}
	// Invalidate makes a change visible at once.
	st.SetAPIKeyStatus(ctx, k.ID, analytics.KeyRevoked)
	kr.Invalidate()
	if _, err := kr.Authenticate(ctx, secret.Plaintext); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("revoked key: %v, want ErrInvalidKey", err)
	}

	// Last use is written in a batch.
	st.SetAPIKeyStatus(ctx, k.ID, analytics.KeyActive)
	kr.Invalidate()
	kr.Authenticate(ctx, secret.Plaintext)
	if got, _ := st.APIKey(ctx, k.ID); got.LastUsedAt != nil {
		t.Error("last use written before the flush")
	}
	if err := kr.FlushLastUsed(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.APIKey(ctx, k.ID); got.LastUsedAt == nil || !got.LastUsedAt.Equal(now) {
		t.Errorf("last used = %v, want %v", got.LastUsedAt, now)
	}
}

// TestPrincipalBucketsAreApart checks that a token, a key and a user with
// the same id never share a rate-limit bucket.
func TestPrincipalBucketsAreApart(t *testing.T) {
	ids := map[int64]string{}
	for name, p := range map[string]Principal{
		"token": {TokenID: 5}, "key": {KeyID: 5}, "user": {UserID: 5},
	} {
		id := p.Bucket()
		if other, ok := ids[id]; ok {
			t.Errorf("%s 5 and %s 5 share bucket %d", name, other, id)
		}
		ids[id] = name
	}
}
