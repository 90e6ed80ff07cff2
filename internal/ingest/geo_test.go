package ingest

import (
	"net/netip"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/geo"
	"strata/internal/enrich/ua"
)

// TestLocationAndScreen runs events through the pipeline with the shipped
// country database: every event of a request gets the client's country
// (none for a private address or without a database), except one that
// carries its own user agent, as a server-side SDK sends a visitor's
// request on its behalf; and each gets its own
// screen class from a top-level $viewport_width, which stays in its
// properties.
func TestLocationAndScreen(t *testing.T) {
	db, err := geo.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	body := `{"batch":[
		{"event_name":"a","distinct_id":"u","properties":{"$viewport_width":390}},
		{"event_name":"b","distinct_id":"u","properties":{"x":1, "$viewport_width" : 1280.5}},
		{"event_name":"c","distinct_id":"u","properties":{"nested":{"$viewport_width":390}}},
		{"event_name":"d","distinct_id":"u","properties":{"$viewport_width":"390"}},
		{"event_name":"e","distinct_id":"u"},
		{"event_name":"f","distinct_id":"u","properties":{"\u0024viewport_width":2560}},
		{"event_name":"g","distinct_id":"u","user_agent":"Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"}]}`
	wantScreens := []string{ua.ScreenMobile, ua.ScreenLaptop, "", "", "", ua.ScreenDesktop, ""}
	for _, c := range []struct {
		name    string
		db      *geo.DB
		addr    string
		country string
	}{
		{"public address", db, "8.8.8.8", "US"},
		{"IPv4-mapped", db, "::ffff:193.0.14.129", "NL"},
		{"private address", db, "10.0.0.1", ""},
		{"no address", db, "", ""},
		{"no database", nil, "8.8.8.8", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &Pipeline{UA: ua.NewParser(100, bots.Default()), Geo: c.db}
			env, err := ParseEnvelope([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			var addr netip.Addr
			if c.addr != "" {
				addr = netip.MustParseAddr(c.addr)
			}
			accepted, rejected := p.Process(env, Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now(), ClientAddr: addr})
			if len(rejected) != 0 || len(accepted) != len(wantScreens) {
				t.Fatalf("accepted %d, rejected %v", len(accepted), rejected)
			}
			for i, a := range accepted {
				e := a.Event
				// g carries a user agent of its own: sent on someone
				// else's behalf, it is not located at the sender.
				want := c.country
				if e.Name == "g" {
					want = ""
				}
				if e.Country != want || e.Region != "" || e.City != "" {
					t.Errorf("event %s: location %q/%q/%q, want country %q", e.Name, e.Country, e.Region, e.City, want)
				}
				if e.ScreenClass != wantScreens[i] {
					t.Errorf("event %s: screen class %q, want %q", e.Name, e.ScreenClass, wantScreens[i])
				}
			}
			if got := string(accepted[0].Event.Properties); got != `{"$viewport_width":390}` {
				t.Errorf("properties %s: the width must stay", got)
			}
		})
	}
}
