// Package ua turns a user-agent string into the browser, OS and device type
// that reports group by. Parsing is delegated to a maintained library; this
// package adds the cache that makes it free on the ingest hot path, where
// the same few hundred strings repeat millions of times.
package ua

import (
	"strings"
	"sync"

	"github.com/mileusna/useragent"
)

// Info is what Strata stores about a user agent. Empty strings mean unknown.
type Info struct {
	Browser string
	OS      string
	// DeviceType is desktop, mobile, tablet, bot, or empty when unknown.
	DeviceType string
}

// maxCachedLen keeps abnormally long strings out of the cache, so that a
// client sending huge random user agents cannot use it to hold memory.
const maxCachedLen = 512

// Parser parses and caches. It is safe for concurrent use.
type Parser struct {
	max   int
	mu    sync.RWMutex
	cache map[string]Info
}

// NewParser returns a parser whose cache holds up to maxEntries strings.
func NewParser(maxEntries int) *Parser {
	return &Parser{max: maxEntries, cache: make(map[string]Info)}
}

// Parse returns the Info for a user agent.
func (p *Parser) Parse(userAgent string) Info {
	if userAgent == "" {
		return Info{}
	}
	p.mu.RLock()
	info, ok := p.cache[userAgent]
	p.mu.RUnlock()
	if ok {
		return info
	}
	info = parse(userAgent)
	if len(userAgent) <= maxCachedLen {
		p.mu.Lock()
		// Starting over when full is cruder than LRU but costs nothing per
		// hit, and real traffic refills the hot strings within moments.
		if len(p.cache) >= p.max {
			p.cache = make(map[string]Info, p.max/4)
		}
		p.cache[userAgent] = info
		p.mu.Unlock()
	}
	return info
}

func parse(s string) Info {
	u := useragent.Parse(s)
	info := Info{Browser: u.Name, OS: u.OS}
	switch {
	case u.Bot:
		info.DeviceType = "bot"
	case u.Tablet, u.OS == "Android" && !strings.Contains(s, "Mobile"):
		// Android tablets are the Android browsers that leave "Mobile" out
		// of their user agent, as Google's guidance for them says.
		info.DeviceType = "tablet"
	case u.Mobile:
		info.DeviceType = "mobile"
	case u.Desktop:
		info.DeviceType = "desktop"
	}
	return info
}
