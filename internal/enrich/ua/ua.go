// Package ua turns a user-agent string into the browser, OS and device type
// that reports group by, and the AI bot it names. Parsing is delegated to a
// maintained library and the bots to the allowlist (package bots); this
// package adds the cache that makes both free on the ingest hot path, where
// the same few hundred strings repeat millions of times.
package ua

import (
	"strings"
	"sync"

	"github.com/mileusna/useragent"

	"strata/internal/enrich/bots"
)

// Info is what Strata stores about a user agent. Empty strings mean unknown.
type Info struct {
	Browser string
	OS      string
	// DeviceType is desktop, mobile, tablet, bot, or empty when unknown.
	DeviceType string
	// AIBot is the allowlisted AI bot the user agent names, or nil.
	AIBot *bots.Bot
}

// maxCachedLen keeps abnormally long strings out of the cache, so that a
// client sending huge random user agents cannot use it to hold memory.
const maxCachedLen = 512

// Parser parses and caches. It is safe for concurrent use.
type Parser struct {
	max   int
	bots  *bots.Classifier
	mu    sync.RWMutex
	cache map[string]Info
}

// NewParser returns a parser whose cache holds up to maxEntries strings and
// that names AI bots with classifier.
func NewParser(maxEntries int, classifier *bots.Classifier) *Parser {
	return &Parser{max: maxEntries, bots: classifier, cache: make(map[string]Info)}
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
	// The cache outlives the request: its key, and any part of it the
	// parser returns, must not be a view of the request's bytes (ingest
	// decodes an event's strings as views of one copy of the event).
	userAgent = strings.Clone(userAgent)
	info = parse(userAgent)
	if bot, ok := p.bots.Classify(userAgent); ok {
		info.AIBot = &bot
	}
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
	case u.Name == "Opera Mini":
		// Opera Mini runs on phones, and its user agent has no "Mobile"
		// that would tell it from an Android tablet's below.
		info.DeviceType = "mobile"
	case u.Tablet, u.OS == "Android" && !strings.Contains(s, "Mobile"):
		// Android tablets are the Android browsers that leave "Mobile" out
		// of their user agent, as Google's guidance for them says; Firefox
		// says "Tablet", which u.Tablet catches, and iPads say "iPad".
		// iPadOS 13 and later send the Mac's user agent by default, which
		// no rule on the user agent can tell from a Mac: such an iPad is
		// a desktop here, and its screen class (ScreenClass) says more.
		info.DeviceType = "tablet"
	case u.Mobile:
		info.DeviceType = "mobile"
	case u.Desktop:
		info.DeviceType = "desktop"
	}
	return info
}
