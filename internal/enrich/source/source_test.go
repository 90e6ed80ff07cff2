package source

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClassify(t *testing.T) {
	const page = "https://shop.example.com/pricing"
	for _, c := range []struct {
		name, page, ref string
		want            Info
	}{
		{"no referrer", page, "", Info{Channel: Direct}},
		{"no page URL (a server event)", "", "https://www.google.com/", Info{}},
		{"a move within the site", page, "https://shop.example.com/", Info{}},
		{"within the site, www or not", "https://www.shop.example.com/a", "https://shop.example.com/b", Info{}},
		{"Google, any country", page, "https://www.google.co.uk/", Info{Source: "Google", Channel: Search}},
		{"Bing", page, "https://www.bing.com/search?q=x", Info{Source: "Bing", Channel: Search}},
		{"ChatGPT", page, "https://chatgpt.com/", Info{Source: "ChatGPT", Channel: AI}},
		{"Perplexity", page, "https://www.perplexity.ai/search/abc", Info{Source: "Perplexity", Channel: AI}},
		{"Gemini before Google's other hosts", page, "https://gemini.google.com/app", Info{Source: "Gemini", Channel: AI}},
		{"a subdomain of a known site", page, "https://l.facebook.com/l.php?u=x", Info{Source: "Facebook", Channel: Social}},
		{"t.co", page, "https://t.co/abc", Info{Source: "X (Twitter)", Channel: Social}},
		{"Gmail's app", page, "android-app://com.google.android.gm/", Info{Source: "Gmail", Channel: Email}},
		{"an unknown site", page, "https://blog.example.org/post?id=1", Info{Source: "blog.example.org", Channel: Referral}},
		{"a port and upper case", page, "https://Blog.Example.org:8443/", Info{Source: "blog.example.org", Channel: Referral}},
		{"a referrer that is not a URL", page, "not a url", Info{Channel: Direct}},
		{"UTM tags without a referrer", page + "?utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale", "",
			Info{Source: "newsletter", Channel: Email, UTMSource: "newsletter", UTMMedium: "email", UTMCampaign: "spring sale"}},
		{"ChatGPT's utm_source", page + "?utm_source=chatgpt.com", "", Info{Source: "ChatGPT", Channel: AI, UTMSource: "chatgpt.com"}},
		{"paid by medium", page + "?utm_source=google&utm_medium=cpc", "https://www.google.com/",
			Info{Source: "Google", Channel: Paid, UTMSource: "google", UTMMedium: "cpc"}},
		{"paid by click id", page + "?gclid=abc", "https://www.google.com/", Info{Source: "Google", Channel: Paid}},
		{"social by medium", page + "?utm_source=partner&utm_medium=social", "", Info{Source: "partner", Channel: Social, UTMSource: "partner", UTMMedium: "social"}},
		{"unknown utm_source alone", page + "?utm_source=podcast", "", Info{Source: "podcast", Channel: Referral, UTMSource: "podcast"}},
		{"UTM tags on a move within the site", page + "?utm_campaign=launch", "https://shop.example.com/",
			Info{Channel: Direct, UTMCampaign: "launch"}},
		{"a malformed query is ignored", page + "?utm_source=%zz", "", Info{Channel: Direct}},
		{"user info, an IPv6 host, a fragment", "https://[::1]:8080/a?utm_source=x#utm_medium=y", "https://user:pw@[::1]/b",
			Info{Source: "x", Channel: Referral, UTMSource: "x"}},
		{"a referrer without a scheme", page, "www.google.com/search", Info{Channel: Direct}},
	} {
		if got := Classify(c.page, c.ref); got != c.want {
			t.Errorf("%s: Classify(%q, %q) = %+v, want %+v", c.name, c.page, c.ref, got, c.want)
		}
	}
}

func TestUTMValuesAreText(t *testing.T) {
	in := Classify("https://a.example/?utm_source=%FF%00x&utm_campaign="+strings.Repeat("é", 300), "")
	if !utf8.ValidString(in.UTMSource) || strings.ContainsRune(in.UTMSource, 0) || in.UTMSource != "\uFFFDx" {
		t.Errorf("utm_source %q", in.UTMSource)
	}
	if len(in.UTMCampaign) > maxUTM || !utf8.ValidString(in.UTMCampaign) {
		t.Errorf("utm_campaign of %d bytes, valid %v", len(in.UTMCampaign), utf8.ValidString(in.UTMCampaign))
	}
}

func BenchmarkClassify(b *testing.B) {
	for range b.N {
		Classify("https://shop.example.com/pricing?utm_source=newsletter&utm_medium=email", "https://www.google.com/")
	}
}
