package bots

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestClassifyTable runs every row of testdata/user_agents.tsv and checks
// that every allowlist entry has at least one real user agent there.
func TestClassifyTable(t *testing.T) {
	f, err := os.Open("testdata/user_agents.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := Default()
	covered := map[string]bool{}
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		want, ua, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("malformed row %q", line)
		}
		rows++
		bot, found := c.Classify(ua)
		switch {
		case want == "-" && found:
			t.Errorf("%q classified as %s, want no bot", ua, bot.Name)
		case want != "-" && (!found || bot.Name != want):
			t.Errorf("%q classified as %q (%v), want %s", ua, bot.Name, found, want)
		}
		if found {
			covered[bot.Name] = true
		}
	}
	if rows < 60 {
		t.Errorf("only %d rows; the table should hold at least 60", rows)
	}
	for _, b := range c.Bots() {
		if !covered[b.Name] {
			t.Errorf("allowlist entry %s has no user agent in testdata", b.Name)
		}
	}
}

func TestAllowlist(t *testing.T) {
	bots := Default().Bots()
	if len(bots) < 40 {
		t.Fatalf("allowlist has %d bots, want at least 40", len(bots))
	}
	cats := map[string]int{}
	for _, b := range bots {
		cats[b.Category]++
		if b.Operator == "" || b.URL == "" {
			t.Errorf("%s lacks operator or url", b.Name)
		}
	}
	if cats[CategoryAssistant] == 0 || cats[CategoryCrawler] == 0 {
		t.Errorf("categories = %v", cats)
	}
	for _, generic := range []string{"googlebot", "bingbot", "applebot", "duckduckbot", "yandexbot", "baiduspider", "petalbot"} {
		for _, b := range bots {
			if strings.EqualFold(b.Token, generic) {
				t.Errorf("generic search crawler %s is listed as an AI bot", b.Token)
			}
		}
	}
	if CategoryLabel(CategoryAssistant) != "AI assistant (live fetch)" || CategoryLabel(CategoryCrawler) != "AI crawler (training/index)" {
		t.Error("category labels differ from the ones docs/dashboard.md and api/openapi.yaml (Bot.categoryLabel) give")
	}
}

func TestNewValidates(t *testing.T) {
	const head = `"version":1,"reviewed":"2026-11-25",`
	for name, data := range map[string]string{
		"not json":       `{`,
		"empty":          `{` + head + `"bots":[]}`,
		"no token":       `{` + head + `"bots":[{"name":"x","category":"ai_crawler"}]}`,
		"bad category":   `{` + head + `"bots":[{"token":"x","name":"x","category":"search"}]}`,
		"duplicate":      `{` + head + `"bots":[{"token":"X","name":"x","category":"ai_crawler"},{"token":"x","name":"y","category":"ai_crawler"}]}`,
		"space in token": `{` + head + `"bots":[{"token":"Kangaroo Bot","name":"x","category":"ai_crawler"}]}`,
		"no version":     `{"reviewed":"2026-11-25","bots":[{"token":"x","name":"x","category":"ai_crawler"}]}`,
		"no review date": `{"version":3,"bots":[{"token":"x","name":"x","category":"ai_crawler"}]}`,
		"bad date":       `{"version":3,"reviewed":"25/11/2026","bots":[{"token":"x","name":"x","category":"ai_crawler"}]}`,
	} {
		if _, err := New([]byte(data)); err == nil {
			t.Errorf("%s: New accepted %s", name, data)
		}
	}
	c, err := New([]byte(`{"version":3,"reviewed":"2026-11-25","bots":[{"token":"x","name":"x","category":"ai_crawler"}]}`))
	if err != nil || c.Version() != 3 || c.Reviewed() != "2026-11-25" {
		t.Errorf("a valid list: %v %+v", err, c)
	}
	if Default().Version() < 1 || Default().Reviewed() == "" {
		t.Error("the embedded allowlist has no version or review date")
	}
}

func BenchmarkClassify(b *testing.B) {
	c := Default()
	uas := []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Classify(uas[i%2])
	}
}
