package strata

//go:generate sh ./sync.sh

import (
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
)

// ai_bots.json is a copy of the server's allowlist
// (internal/enrich/bots/ai_bots.json): the SDK is its own module and may
// not import the server's packages, whose module pulls DuckDB, ClickHouse
// and fasthttp. sync.sh (go generate) copies it; the server module's
// internal/sdkgo tests fail when the copy differs from the original.
//
//go:embed ai_bots.json
var allowlist []byte

// botCategoryLabels are how the dashboard shows the two stored categories.
var botCategoryLabels = map[string]string{
	"ai_assistant": "AI assistant (live fetch)",
	"ai_crawler":   "AI crawler (training/index)",
}

// botTable is the parsed allowlist: each lower-cased token's bot, and the
// shortest and longest token, so that most of a user agent's products are
// skipped by their length alone.
type botTable struct {
	byToken        map[string]Bot
	minLen, maxLen int
}

var (
	botsOnce sync.Once
	bots     botTable
)

// table parses the embedded allowlist once. A broken copy is a build
// defect that the package's tests catch, so it panics rather than answer
// every user agent "not a bot" in silence.
func table() *botTable {
	botsOnce.Do(func() {
		var file struct {
			Bots []struct {
				Token, Name, Operator, Category string
			} `json:"bots"`
		}
		if err := json.Unmarshal(allowlist, &file); err != nil || len(file.Bots) == 0 {
			panic("strata: the embedded ai_bots.json is not an allowlist")
		}
		bots = botTable{byToken: make(map[string]Bot, len(file.Bots)), minLen: 1 << 30}
		for _, b := range file.Bots {
			key := strings.ToLower(b.Token)
			bots.byToken[key] = Bot{Name: b.Name, Operator: b.Operator, Category: b.Category, CategoryLabel: botCategoryLabels[b.Category]}
			bots.minLen = min(bots.minLen, len(key))
			bots.maxLen = max(bots.maxLen, len(key))
		}
	})
	return &bots
}

// classify finds the bot whose token is one of the user agent's product
// names, as the server's internal/enrich/bots does: products are the pieces
// between whitespace and ; ( ) , with any /version dropped, compared
// case-insensitively (ASCII only), never as loose substrings.
func (t *botTable) classify(userAgent string) (Bot, bool) {
	var buf [64]byte
	s := userAgent
	for len(s) > 0 {
		i := strings.IndexAny(s, " \t;(),")
		tok := s
		if i >= 0 {
			tok, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if j := strings.IndexByte(tok, '/'); j >= 0 {
			tok = tok[:j]
		}
		if len(tok) < t.minLen || len(tok) > t.maxLen || len(tok) > len(buf) {
			continue
		}
		for k := 0; k < len(tok); k++ {
			b := tok[k]
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			buf[k] = b
		}
		if b, ok := t.byToken[string(buf[:len(tok)])]; ok {
			return b, true
		}
	}
	return Bot{}, false
}
