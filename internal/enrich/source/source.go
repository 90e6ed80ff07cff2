// Package source says where a visit came from, from the page's URL and its
// referrer, at ingest: the source (a known name such as Google or ChatGPT,
// else the referring domain, else the utm_source), the page URL's UTM
// source, medium and campaign, and the channel (direct, search, social, AI
// assistants, referral, email, paid). The rules are in docs/ingest.md,
// "Sources and channels".
package source

import (
	"net/url"
	"strings"
)

// The channels.
const (
	Direct   = "direct"
	Search   = "search"
	Social   = "social"
	AI       = "ai"
	Referral = "referral"
	Email    = "email"
	Paid     = "paid"
)

// Info is what Classify finds. Every field is "" when it does not apply:
// Source and Channel are both "" for a move within the site (a referrer on
// the page's own host, without UTM parameters) and for an event without a
// page URL, which are no visit's entry.
type Info struct {
	Source, Channel                   string
	UTMSource, UTMMedium, UTMCampaign string
}

// maxUTM bounds a stored UTM value, in bytes (cut at a character boundary).
const maxUTM = 200

// known is a referring site people know by name, and its channel.
type known struct{ name, channel string }

// sites maps a host, or the domain it belongs to, to its name and channel.
// A host matches an entry equal to it or to one of its parent domains.
var sites = map[string]known{
	// Search engines. Google is matched by its label (google.com,
	// google.co.uk, …) in lookup.
	"bing.com": {"Bing", Search}, "duckduckgo.com": {"DuckDuckGo", Search}, "search.yahoo.com": {"Yahoo", Search},
	"yahoo.com": {"Yahoo", Search}, "baidu.com": {"Baidu", Search}, "yandex.ru": {"Yandex", Search},
	"yandex.com": {"Yandex", Search}, "ecosia.org": {"Ecosia", Search}, "search.brave.com": {"Brave Search", Search},
	"qwant.com": {"Qwant", Search}, "startpage.com": {"Startpage", Search}, "kagi.com": {"Kagi", Search},
	"naver.com": {"Naver", Search}, "seznam.cz": {"Seznam", Search},
	// AI assistants.
	"chatgpt.com": {"ChatGPT", AI}, "chat.openai.com": {"ChatGPT", AI}, "perplexity.ai": {"Perplexity", AI},
	"claude.ai": {"Claude", AI}, "gemini.google.com": {"Gemini", AI}, "bard.google.com": {"Gemini", AI},
	"copilot.microsoft.com": {"Copilot", AI}, "you.com": {"You.com", AI}, "phind.com": {"Phind", AI},
	"poe.com": {"Poe", AI}, "chat.mistral.ai": {"Mistral", AI}, "chat.deepseek.com": {"DeepSeek", AI},
	"meta.ai": {"Meta AI", AI}, "grok.com": {"Grok", AI},
	// Social networks and communities.
	"facebook.com": {"Facebook", Social}, "fb.com": {"Facebook", Social}, "instagram.com": {"Instagram", Social},
	"t.co": {"X (Twitter)", Social}, "twitter.com": {"X (Twitter)", Social}, "x.com": {"X (Twitter)", Social},
	"linkedin.com": {"LinkedIn", Social}, "lnkd.in": {"LinkedIn", Social}, "reddit.com": {"Reddit", Social},
	"news.ycombinator.com": {"Hacker News", Social}, "youtube.com": {"YouTube", Social}, "youtu.be": {"YouTube", Social},
	"tiktok.com": {"TikTok", Social}, "pinterest.com": {"Pinterest", Social}, "threads.net": {"Threads", Social},
	"bsky.app": {"Bluesky", Social}, "mastodon.social": {"Mastodon", Social}, "quora.com": {"Quora", Social},
	"discord.com": {"Discord", Social}, "t.me": {"Telegram", Social}, "vk.com": {"VK", Social},
	// Webmail.
	"mail.google.com": {"Gmail", Email}, "com.google.android.gm": {"Gmail", Email},
	"outlook.live.com": {"Outlook", Email}, "outlook.office.com": {"Outlook", Email}, "mail.yahoo.com": {"Yahoo Mail", Email},
	// Well-known referrers.
	"github.com": {"GitHub", Referral}, "stackoverflow.com": {"Stack Overflow", Referral},
	"producthunt.com": {"Product Hunt", Referral}, "medium.com": {"Medium", Referral}, "wikipedia.org": {"Wikipedia", Referral},
}

// mediums maps a utm_medium (lower case) to its channel.
var mediums = map[string]string{
	"cpc": Paid, "ppc": Paid, "paid": Paid, "paidsearch": Paid, "paid_search": Paid, "paid-search": Paid,
	"paidsocial": Paid, "paid_social": Paid, "paid-social": Paid, "cpm": Paid, "cpv": Paid, "display": Paid,
	"banner": Paid, "retargeting": Paid,
	"email": Email, "e-mail": Email, "newsletter": Email,
	"social": Social, "social-network": Social, "social-media": Social, "sm": Social, "organic_social": Social,
	"organic":  Search,
	"referral": Referral, "affiliate": Referral,
	"ai": AI,
}

// clickIDs are the parameters ad networks add to the links of paid ads.
var clickIDs = []string{"gclid", "gbraid", "wbraid", "dclid", "msclkid"}

// Classify names the source and channel of an event with page URL page
// and referrer ref (either may be "").
func Classify(page, ref string) Info {
	var in Info
	if page == "" {
		return in
	}
	if ref == "" && !strings.ContainsRune(page, '?') {
		in.Channel = Direct // the common case, without parsing
		return in
	}
	pageHost, query := hostAndQuery(page)
	var paid bool
	if tagged(query) {
		if q, err := url.ParseQuery(query); err == nil {
			in.UTMSource, in.UTMMedium, in.UTMCampaign = utm(q.Get("utm_source")), utm(q.Get("utm_medium")), utm(q.Get("utm_campaign"))
			for _, id := range clickIDs {
				paid = paid || q.Has(id)
			}
		}
	}
	refHost, _ := hostAndQuery(ref)
	if refHost != "" && refHost == pageHost {
		refHost = "" // a move within the site
		if in.UTMSource == "" && in.UTMMedium == "" && in.UTMCampaign == "" && !paid {
			return in
		}
	}
	site, isKnown := lookup(refHost)
	switch {
	case isKnown:
		in.Source = site.name
	case refHost != "":
		in.Source = refHost
	case in.UTMSource != "":
		in.Source = in.UTMSource
		if s, ok := lookup(strings.ToLower(in.UTMSource)); ok {
			site, isKnown, in.Source = s, true, s.name
		}
	}
	medium := strings.ToLower(in.UTMMedium)
	switch {
	case paid || mediums[medium] == Paid:
		in.Channel = Paid
	case mediums[medium] != "":
		in.Channel = mediums[medium]
	case strings.EqualFold(in.UTMSource, "newsletter") || strings.EqualFold(in.UTMSource, "email"):
		in.Channel = Email
	case isKnown:
		in.Channel = site.channel
	case refHost != "" || in.UTMSource != "":
		in.Channel = Referral
	default:
		in.Channel = Direct
	}
	return in
}

// lookup finds the known site of host: Google by its label, else the
// entry for the host or its nearest parent domain.
func lookup(host string) (known, bool) {
	if host == "" {
		return known{}, false
	}
	if strings.HasPrefix(host, "google.") {
		return known{"Google", Search}, true
	}
	for h := host; ; {
		if k, ok := sites[h]; ok {
			return k, true
		}
		dot := strings.IndexByte(h, '.')
		if dot < 0 {
			return known{}, false
		}
		h = h[dot+1:]
	}
}

// hostAndQuery returns a URL's host in lower case without a "www.", a
// port or user info, and its query, or "" for what is not an absolute URL
// with a host (android-app://com.google.android.gm/ has the host
// com.google.android.gm). It reads the text itself rather than through
// net/url, which allocates a URL per call on ingest's path: a malformed
// URL gives what it seems to hold, and nothing is ever rejected here.
func hostAndQuery(raw string) (host, query string) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return "", ""
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host, rest = rest[:end], rest[end:]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if strings.HasPrefix(host, "[") {
		if j := strings.IndexByte(host, ']'); j > 0 {
			host = host[1:j]
		}
	} else if j := strings.LastIndexByte(host, ':'); j >= 0 {
		host = host[:j]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		query = rest[q+1:]
		if h := strings.IndexByte(query, '#'); h >= 0 {
			query = query[:h]
		}
	}
	return strings.TrimPrefix(host, "www."), query
}

// tagged reports whether a query may hold a UTM tag or a click id, so that
// one without either is not parsed.
func tagged(query string) bool {
	return strings.Contains(query, "utm_") || strings.Contains(query, "clid") || strings.Contains(query, "clkid") ||
		strings.Contains(query, "braid")
}

// utm trims a UTM value, makes it valid UTF-8 without NULs (storage takes
// only text, and a decoded %FF is not) and bounds its length.
func utm(v string) string {
	v = strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(v, "\x00", ""), "\uFFFD"))
	if len(v) <= maxUTM {
		return v
	}
	cut := maxUTM
	for cut > 0 && v[cut]&0xC0 == 0x80 {
		cut--
	}
	return v[:cut]
}
