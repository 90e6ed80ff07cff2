// Package geotest writes GeoIP databases for tests, in the layout of
// MaxMind's GeoLite2-City, with MaxMind's own writer: regions and cities
// are tested without shipping MaxMind's licensed data.
package geotest

import (
	"net"
	"os"
	"testing"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Network is one network of a test database and the place it is in.
type Network struct {
	CIDR                  string
	Country, Region, City string
}

// WriteCity writes a database of networks to path. Each record has what a
// GeoLite2-City record has around the fields Strata reads (the names in
// other languages, a second subdivision, the continent), so that a reader
// must pick its fields out as it would in the real database.
func WriteCity(t testing.TB, path string, networks ...Network) {
	t.Helper()
	w, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: "GeoLite2-City", RecordSize: 24})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range networks {
		_, network, err := net.ParseCIDR(n.CIDR)
		if err != nil {
			t.Fatal(err)
		}
		rec := mmdbtype.Map{
			"continent": mmdbtype.Map{"code": mmdbtype.String("EU")},
			"country":   mmdbtype.Map{"iso_code": mmdbtype.String(n.Country), "names": mmdbtype.Map{"en": mmdbtype.String("country name")}},
			"city":      mmdbtype.Map{"geoname_id": mmdbtype.Uint32(1), "names": mmdbtype.Map{"en": mmdbtype.String(n.City), "de": mmdbtype.String("x")}},
			"subdivisions": mmdbtype.Slice{
				mmdbtype.Map{"iso_code": mmdbtype.String("BY"), "names": mmdbtype.Map{"en": mmdbtype.String(n.Region)}},
				mmdbtype.Map{"iso_code": mmdbtype.String("XX"), "names": mmdbtype.Map{"en": mmdbtype.String("second subdivision")}},
			},
		}
		if err := w.Insert(network, rec); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := w.WriteTo(f); err != nil {
		t.Fatal(err)
	}
}
