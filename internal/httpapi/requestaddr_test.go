package httpapi

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// The per-address budgets of sign-in and shared links key on the client
// behind a trusted proxy, and on the peer otherwise, whatever it claims.
func TestRequestAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	for _, c := range []struct {
		trusted   []netip.Prefix
		peer, xff string
		want      string
	}{
		{nil, "127.0.0.1:4000", "8.8.8.8", "127.0.0.1"},
		{trusted, "127.0.0.1:4000", "8.8.8.8", "8.8.8.8"},
		{trusted, "127.0.0.1:4000", "1.1.1.1, 8.8.8.8", "8.8.8.8"},
		{trusted, "127.0.0.1:4000", "8.8.8.8, 127.0.0.1", "8.8.8.8"},
		{trusted, "10.0.0.2:4000", "8.8.8.8", "10.0.0.2"},
		{trusted, "127.0.0.1:4000", "not an address", "127.0.0.1"},
		{trusted, "127.0.0.1:4000", "", "127.0.0.1"},
	} {
		s := &Server{TrustedProxies: c.trusted}
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := s.requestAddr(r); got != c.want {
			t.Errorf("peer %s, trusted %v, X-Forwarded-For %q: %s, want %s", c.peer, c.trusted, c.xff, got, c.want)
		}
	}
}
