package geo

import (
	"net/netip"
	"path/filepath"
	"testing"

	"strata/internal/enrich/geo/geotest"
)

// TestEmbeddedCountries looks public addresses up in the shipped DB-IP
// database: well-known resolvers and root servers whose country has not
// moved in years, IPv4 written as IPv6 as a listener may give it, and
// addresses no database places.
func TestEmbeddedCountries(t *testing.T) {
	db, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ addr, country string }{
		{"8.8.8.8", "US"},         // Google Public DNS
		{"208.67.222.222", "US"},  // OpenDNS
		{"193.0.14.129", "NL"},    // k.root-servers.net, RIPE NCC, Amsterdam
		{"77.88.8.8", "RU"},       // Yandex DNS
		{"::ffff:8.8.8.8", "US"},  // the same, IPv4-mapped
		{"10.1.2.3", ""},          // private
		{"192.168.0.1", ""},       // private
		{"127.0.0.1", ""},         // loopback
		{"::1", ""},               // loopback
		{"fe80::1%eth0", ""},      // link-local with a zone
		{"2001:db8::1", ""},       // documentation
		{"198.51.100.7", ""},      // documentation
		{"100.64.0.1", ""},        // carrier-grade NAT
		{"0.0.0.0", ""},           // unspecified
		{"255.255.255.255", ""},   // broadcast
		{"240.0.0.1", ""},         // reserved
		{"169.254.169.254", ""},   // link-local
		{"224.0.0.1", ""},         // multicast
		{"::", ""},                // unspecified
		{"fd00::1", ""},           // unique local
		{"ff02::1", ""},           // multicast
		{"100::1", ""},            // discard-only
		{"192.0.2.255", ""},       // documentation
		{"203.0.113.200", ""},     // documentation
		{"172.16.5.4", ""},        // private
		{"172.31.255.255", ""},    // private
		{"192.88.99.1", ""},       // 6to4 relay anycast, deprecated
		{"198.18.0.1", ""},        // benchmarking
		{"233.252.0.1", ""},       // MCAST-TEST-NET
		{"0.1.2.3", ""},           // this network
		{"127.255.255.254", ""},   // loopback
		{"::ffff:10.0.0.1", ""},   // private, IPv4-mapped
		{"::ffff:127.0.0.1", ""},  // loopback, IPv4-mapped
		{"::ffff:192.0.2.1", ""},  // documentation, IPv4-mapped
		{"::ffff:0.0.0.0", ""},    // unspecified, IPv4-mapped
		{"::ffff:224.0.0.1", ""},  // multicast, IPv4-mapped
		{"::ffff:100.64.0.1", ""}, // carrier-grade NAT, IPv4-mapped
	} {
		if got := db.Lookup(netip.MustParseAddr(c.addr)); got != (Location{Country: c.country}) {
			t.Errorf("Lookup(%s) = %+v, want country %q and no region or city", c.addr, got, c.country)
		}
	}
	if got := db.Lookup(netip.Addr{}); got != (Location{}) {
		t.Errorf("Lookup(zero Addr) = %+v", got)
	}
	var nilDB *DB
	if got := nilDB.Lookup(netip.MustParseAddr("8.8.8.8")); got != (Location{}) {
		t.Errorf("nil DB: Lookup = %+v", got)
	}
}

// TestLookupAllocates nothing on the shipped database once the reader's
// string cache holds the country codes: ingest looks up every request.
func TestLookupAllocatesNothing(t *testing.T) {
	db, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	addrs := []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("193.0.14.129"), netip.MustParseAddr("10.0.0.1")}
	for _, a := range addrs {
		db.Lookup(a)
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() { db.Lookup(addrs[i%len(addrs)]); i++ }); n != 0 {
		t.Errorf("Lookup allocates %.1f times per call, want 0", n)
	}
}

// TestCityDatabase writes a database in GeoLite2-City's layout with
// MaxMind's own writer, opens it as --geoip-db does, and finds the
// country, region and city it holds, and nothing outside its networks.
func TestCityDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "city.mmdb")
	geotest.WriteCity(t, path,
		geotest.Network{CIDR: "81.2.69.0/24", Country: "DE", Region: "Bavaria", City: "Munich"},
		geotest.Network{CIDR: "2a02:c7e::/32", Country: "GB", Region: "England", City: "London"})

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		addr string
		want Location
	}{
		{"81.2.69.142", Location{"DE", "Bavaria", "Munich"}},
		{"::ffff:81.2.69.1", Location{"DE", "Bavaria", "Munich"}},
		{"2a02:c7e:1234::1", Location{"GB", "England", "London"}},
		{"81.2.70.1", Location{}},
		{"8.8.8.8", Location{}},
	} {
		if got := db.Lookup(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("Lookup(%s) = %+v, want %+v", c.addr, got, c.want)
		}
	}
	munich := netip.MustParseAddr("81.2.69.142")
	if n := testing.AllocsPerRun(1000, func() { db.Lookup(munich) }); n != 0 {
		t.Errorf("Lookup in a City database allocates %.1f times per call, want 0", n)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.mmdb")); err == nil {
		t.Error("Open of a missing file: no error")
	}
}

// TestClientAddr holds the trusted-proxy rule: X-Forwarded-For counts only
// from a trusted peer, and then its right-most entry that is not a trusted
// proxy is the client.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, c := range []struct {
		name    string
		peer    string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"no proxies trusted: the header is ignored", "127.0.0.1", []string{"8.8.8.8"}, nil, "127.0.0.1"},
		{"untrusted peer: the header is ignored", "203.0.113.9", []string{"8.8.8.8"}, trusted, "203.0.113.9"},
		{"trusted peer, one entry", "127.0.0.1", []string{"8.8.8.8"}, trusted, "8.8.8.8"},
		{"a spoofed entry left of the real one", "127.0.0.1", []string{"77.88.8.8, 8.8.8.8"}, trusted, "8.8.8.8"},
		{"trusted hops skipped from the right", "127.0.0.1", []string{"77.88.8.8, 8.8.8.8, 10.1.1.1, 10.2.2.2"}, trusted, "8.8.8.8"},
		{"several headers, the last nearest", "10.0.0.5", []string{"77.88.8.8", "8.8.8.8,10.0.0.9"}, trusted, "8.8.8.8"},
		{"spaces and empty items", "127.0.0.1", []string{" , 8.8.8.8 ,, "}, trusted, "8.8.8.8"},
		{"IPv4-mapped peer", "::ffff:127.0.0.1", []string{"8.8.8.8"}, trusted, "8.8.8.8"},
		{"IPv6 client", "127.0.0.1", []string{"2a00:1450:4001::1"}, trusted, "2a00:1450:4001::1"},
		{"trusted peer without the header", "127.0.0.1", nil, trusted, ""},
		{"only trusted entries", "127.0.0.1", []string{"10.0.0.1"}, trusted, ""},
		{"garbage where the client should be", "127.0.0.1", []string{"8.8.8.8, not-an-address"}, trusted, ""},
		{"a port is not an address", "127.0.0.1", []string{"8.8.8.8:443"}, trusted, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var xff [][]byte
			for _, h := range c.xff {
				xff = append(xff, []byte(h))
			}
			got := ClientAddr(netip.MustParseAddr(c.peer), xff, c.trusted)
			want := netip.Addr{}
			if c.want != "" {
				want = netip.MustParseAddr(c.want)
			}
			if got != want {
				t.Errorf("ClientAddr = %v, want %v", got, want)
			}
		})
	}
}

// BenchmarkLookup is one lookup in the shipped database, of addresses of
// several countries and a private one.
func BenchmarkLookup(b *testing.B) {
	db, err := Embedded()
	if err != nil {
		b.Fatal(err)
	}
	addrs := []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("193.0.14.129"),
		netip.MustParseAddr("2a00:1450:4001::1"), netip.MustParseAddr("10.0.0.1")}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		db.Lookup(addrs[i%len(addrs)])
		i++
	}
}
