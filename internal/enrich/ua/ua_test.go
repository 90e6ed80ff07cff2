package ua

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"strata/internal/enrich/bots"
)

func TestParseTable(t *testing.T) {
	f, err := os.Open("testdata/user_agents.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := NewParser(100, bots.Default())
	sc := bufio.NewScanner(f)
	rows, aiBots := 0, 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		cols := strings.SplitN(sc.Text(), "\t", 4)
		if len(cols) != 4 {
			t.Fatalf("malformed row %q", sc.Text())
		}
		rows++
		want := Info{Browser: cols[0], OS: cols[1], DeviceType: cols[2]}
		bot, isBot := bots.Default().Classify(cols[3])
		if isBot {
			aiBots++
		}
		// Twice: the second answer comes from the cache and must agree.
		for i := 0; i < 2; i++ {
			got := p.Parse(cols[3])
			if got.AIBot != nil != isBot || isBot && *got.AIBot != bot {
				t.Errorf("Parse(%q).AIBot = %v, want the classifier's %v (%v)", cols[3], got.AIBot, bot, isBot)
			}
			if got.AIBot = nil; got != want {
				t.Errorf("Parse(%q) = %+v, want %+v", cols[3], got, want)
			}
		}
	}
	if rows < 15 {
		t.Errorf("only %d rows", rows)
	}
	// The table has AI bots and crawlers that are not (Googlebot).
	if aiBots == 0 || aiBots == rows {
		t.Errorf("%d of %d rows are AI bots; the table should have both kinds", aiBots, rows)
	}
}

// TestParseConcurrentAndBounded hammers one parser from many goroutines
// (run with -race) with more distinct strings than the cache holds.
func TestParseConcurrentAndBounded(t *testing.T) {
	p := NewParser(50, bots.Default())
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				ua := fmt.Sprintf("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/%d.0 Safari/537.36", i%300)
				if got := p.Parse(ua); got.Browser != "Chrome" || got.OS != "Windows" {
					t.Errorf("Parse(%q) = %+v", ua, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(p.cache) > 50 {
		t.Errorf("cache holds %d entries, max 50", len(p.cache))
	}
	long := "Mozilla/5.0 (X11; Linux x86_64) Chrome/1.0 " + strings.Repeat("x", 600)
	p.mu.RUnlock()
	p.Parse(long)
	p.mu.RLock()
	if _, ok := p.cache[long]; ok {
		t.Error("a user agent over 512 bytes was cached")
	}
}

func BenchmarkParseCached(b *testing.B) {
	p := NewParser(100, bots.Default())
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Parse(ua)
	}
}

// TestScreenClass holds the width bounds of docs/ingest.md ("Devices") at
// their edges.
func TestScreenClass(t *testing.T) {
	for _, c := range []struct {
		width float64
		want  string
	}{
		{-1, ""}, {0, ""}, {1, ScreenMobile}, {375, ScreenMobile}, {575.9, ScreenMobile},
		{576, ScreenTablet}, {768, ScreenTablet}, {991, ScreenTablet},
		{992, ScreenLaptop}, {1280, ScreenLaptop}, {1439, ScreenLaptop},
		{1440, ScreenDesktop}, {2560, ScreenDesktop}, {100000, ScreenDesktop}, {100001, ""},
	} {
		if got := ScreenClass(c.width); got != c.want {
			t.Errorf("ScreenClass(%v) = %q, want %q", c.width, got, c.want)
		}
	}
}
