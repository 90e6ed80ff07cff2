// Package bots classifies user agents against Strata's AI-bot allowlist,
// ai_bots.json beside this file. That file is the single source of truth:
// the Go server embeds it; the Node SDK compiles it into its package when
// it is built (sdk/node/scripts/gen-bots.mjs) and runs this package's
// testdata/user_agents.tsv in its tests; the WordPress plugin's PHP table
// is generated from it (plugins/wordpress/bin/generate-bots.php), and
// plugins/wordpress/test/crosscheck checks that the plugin's matching
// answers as this one does; the Go SDK, a module of its own, embeds a copy
// (sdk/go/strata/ai_bots.json, copied by its go generate), which
// internal/sdkgo holds to this file and to this package's answers. So all
// classify the same way.
//
// Matching is by whole product tokens, never loose substrings: "GPTBot/1.2"
// is GPTBot, but "NotGPTBot/1.0" or a URL ending in /gptbot is not.
package bots

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The two stored categories and how the dashboard shows them.
const (
	CategoryAssistant = "ai_assistant"
	CategoryCrawler   = "ai_crawler"
)

// CategoryLabel is the display text of a stored category.
func CategoryLabel(category string) string {
	switch category {
	case CategoryAssistant:
		return "AI assistant (live fetch)"
	case CategoryCrawler:
		return "AI crawler (training/index)"
	}
	return category
}

// Bot is one allowlist entry. Token is the product token the bot puts in
// its user agent; Name is what Strata stores as $bot_name.
type Bot struct {
	Token    string `json:"token"`
	Name     string `json:"name"`
	Operator string `json:"operator"`
	Category string `json:"category"`
	URL      string `json:"url"`
}

//go:embed ai_bots.json
var allowlist []byte

// Classifier matches user agents against an allowlist. It is immutable and
// safe for concurrent use.
type Classifier struct {
	version  int
	reviewed string
	bots     []Bot
	byToken  map[string]int // lower-cased token → index in bots
	minLen   int
	maxLen   int
}

var (
	defaultOnce sync.Once
	defaultC    *Classifier
)

// Default returns the classifier for the embedded allowlist. A broken
// embedded file is a build defect, caught by the package's tests, so it
// panics rather than returning an error every caller would have to handle.
func Default() *Classifier {
	defaultOnce.Do(func() {
		c, err := New(allowlist)
		if err != nil {
			panic("bots: embedded ai_bots.json: " + err.Error())
		}
		defaultC = c
	})
	return defaultC
}

// New builds a classifier from allowlist JSON, checking every entry.
func New(data []byte) (*Classifier, error) {
	var file struct {
		Version  int    `json:"version"`
		Reviewed string `json:"reviewed"`
		Bots     []Bot  `json:"bots"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("parsing allowlist: %w", err)
	}
	if len(file.Bots) == 0 {
		return nil, fmt.Errorf("allowlist has no bots")
	}
	if file.Version < 1 {
		return nil, fmt.Errorf("allowlist has no version")
	}
	if _, err := time.Parse(time.DateOnly, file.Reviewed); err != nil {
		return nil, fmt.Errorf("allowlist: reviewed must be the date of its last review (YYYY-MM-DD), not %q", file.Reviewed)
	}
	c := &Classifier{version: file.Version, reviewed: file.Reviewed, bots: file.Bots, byToken: make(map[string]int, len(file.Bots)), minLen: 1 << 30}
	for i, b := range file.Bots {
		switch {
		case b.Token == "" || b.Name == "":
			return nil, fmt.Errorf("bot %d: token and name are required", i)
		case strings.ContainsAny(b.Token, " \t;(),/"):
			return nil, fmt.Errorf("bot %q: a token is one product name, without spaces or separators", b.Token)
		case b.Category != CategoryAssistant && b.Category != CategoryCrawler:
			return nil, fmt.Errorf("bot %q: category %q is not %s or %s", b.Token, b.Category, CategoryAssistant, CategoryCrawler)
		}
		key := strings.ToLower(b.Token)
		if _, dup := c.byToken[key]; dup {
			return nil, fmt.Errorf("bot %q is listed twice", b.Token)
		}
		c.byToken[key] = i
		c.minLen = min(c.minLen, len(key))
		c.maxLen = max(c.maxLen, len(key))
	}
	return c, nil
}

// Version is the allowlist's version, raised by every change to its bots;
// Reviewed is the date (YYYY-MM-DD) it was last checked against the
// operators' documentation (docs/ingest.md, "The AI-bot allowlist").
func (c *Classifier) Version() int     { return c.version }
func (c *Classifier) Reviewed() string { return c.reviewed }

// Bots returns the allowlist entries in file order.
func (c *Classifier) Bots() []Bot { return append([]Bot(nil), c.bots...) }

// Classify returns the bot whose token is one of the user agent's product
// names. Products are the pieces between whitespace and ; ( ) , with any
// /version dropped, compared case-insensitively.
func (c *Classifier) Classify(userAgent string) (Bot, bool) {
	var buf [64]byte
	s := userAgent
	for len(s) > 0 {
		i := strings.IndexFunc(s, isSeparator)
		tok := s
		if i >= 0 {
			tok, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if j := strings.IndexByte(tok, '/'); j >= 0 {
			tok = tok[:j]
		}
		if len(tok) < c.minLen || len(tok) > c.maxLen || len(tok) > len(buf) {
			continue
		}
		for k := 0; k < len(tok); k++ {
			b := tok[k]
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			buf[k] = b
		}
		if idx, ok := c.byToken[string(buf[:len(tok)])]; ok {
			return c.bots[idx], true
		}
	}
	return Bot{}, false
}

func isSeparator(r rune) bool {
	switch r {
	case ' ', '\t', ';', '(', ')', ',':
		return true
	}
	return false
}
