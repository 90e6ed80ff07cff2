package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"strata/internal/analytics"
)

// roundTripEvents makes n events that vary every column the appender
// fills: optional strings empty (NULL) or not at every bit position of the
// validity masks, strings inlined (up to 12 bytes) and not, multi-byte
// UTF-8, uuids on both sides of the sign bit, bots and not.
func roundTripEvents(n int) []analytics.Event {
	r := rand.New(rand.NewPCG(7, 11))
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	opt := func(i, k int, s string) string {
		if (i*7+k)%3 == 0 {
			return ""
		}
		return s
	}
	events := make([]analytics.Event, n)
	for i := range events {
		var u [16]byte
		for j := range u {
			u[j] = byte(r.Uint32())
		}
		events[i] = analytics.Event{
			UUID:        u,
			ProductID:   int64(1 + i%3),
			Env:         []analytics.Env{analytics.EnvLive, analytics.EnvTest}[i%2],
			Timestamp:   base.Add(time.Duration(r.Int64N(int64(30 * 24 * time.Hour)))).Truncate(time.Microsecond),
			ReceivedAt:  base.Add(time.Duration(i) * time.Millisecond),
			Name:        fmt.Sprintf("event_%d", i%9),
			DistinctID:  fmt.Sprintf("user-%d-ü", i%700),
			UserID:      r.Uint64(),
			URL:         opt(i, 0, fmt.Sprintf("https://example.com/p/%d?q=%s", i, strings.Repeat("x", i%40))),
			Path:        opt(i, 1, fmt.Sprintf("/p/%d", i)),
			Referrer:    opt(i, 2, "https://news.example/"),
			UserAgent:   opt(i, 3, "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0"),
			Browser:     opt(i, 4, "Chrome"),
			OS:          opt(i, 5, "Linux"),
			DeviceType:  opt(i, 6, "desktop"),
			IsBot:       i%5 == 0,
			BotName:     opt(i, 7, "GPTBot"),
			BotCategory: opt(i, 8, "ai_crawler"),
			Properties:  fmt.Appendf(nil, `{"i":%d,"s":"%s"}`, i, strings.Repeat("é", i%20)),
			Source:      opt(i, 9, "Google"),
			Channel:     opt(i, 10, "organic_search"),
			UTMSource:   opt(i, 11, "newsletter"),
			UTMMedium:   opt(i, 12, "email"),
			UTMCampaign: opt(i, 13, "spring-sale-2026"),
		}
		// The events of the second chunk (2,048 to 4,095) have no
		// location or screen class, so those columns are NULL in a whole
		// chunk filled after one that had them (the appender then writes
		// nothing but their validity).
		if i < 2048 || i >= 4096 {
			e := &events[i]
			e.Country, e.Region = opt(i, 14, "GB"), opt(i, 15, "England")
			e.City, e.ScreenClass = opt(i, 16, "Newcastle upon Tyne"), opt(i, 17, "laptop")
		}
	}
	return events
}

// storedEvents reads back every column of table events, by uuid.
func storedEvents(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT uuid::VARCHAR, product_id, env, epoch_us(ts), epoch_us(received_at), event,
		distinct_id, user_id, url, path, referrer, user_agent, browser, os, device_type, is_bot,
		bot_name, bot_category, properties, source, channel, utm_source, utm_medium, utm_campaign,
		country, region, city, screen_class FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, env, name, did, props string
		var product, ts, received int64
		var user uint64
		var bot bool
		var opt [18]sql.NullString
		if err := rows.Scan(&id, &product, &env, &ts, &received, &name, &did, &user, &opt[0], &opt[1], &opt[2],
			&opt[3], &opt[4], &opt[5], &opt[6], &bot, &opt[7], &opt[8], &props,
			&opt[9], &opt[10], &opt[11], &opt[12], &opt[13], &opt[14], &opt[15], &opt[16], &opt[17]); err != nil {
			t.Fatal(err)
		}
		out[id] = fmt.Sprint(product, env, ts, received, name, did, user, opt, bot, props)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantStored is what storedEvents should read for e.
func wantStored(e analytics.Event) string {
	opt := func(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
	return fmt.Sprint(e.ProductID, string(e.Env), e.Timestamp.UnixMicro(), e.ReceivedAt.UnixMicro(), e.Name,
		e.DistinctID, e.UserID, [18]sql.NullString{opt(e.URL), opt(e.Path), opt(e.Referrer), opt(e.UserAgent),
			opt(e.Browser), opt(e.OS), opt(e.DeviceType), opt(e.BotName), opt(e.BotCategory),
			opt(e.Source), opt(e.Channel), opt(e.UTMSource), opt(e.UTMMedium), opt(e.UTMCampaign),
			opt(e.Country), opt(e.Region), opt(e.City), opt(e.ScreenClass)},
		e.IsBot, string(e.Properties))
}

// TestAppendStoresEveryColumn appends more events than one data chunk
// holds, through both paths that fill chunks (AppendEvents and the spool's
// AppendMissing), and reads every value back.
func TestAppendStoresEveryColumn(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, t.TempDir(), Options{MemoryLimit: "256MB", Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	events := roundTripEvents(5000)
	if err := s.AppendEvents(ctx, events[:3000]); err != nil {
		t.Fatal(err)
	}
	// Replay overlaps what is stored: only the missing 2,000 are added.
	if err := s.AppendMissing(ctx, events[1000:]); err != nil {
		t.Fatal(err)
	}
	got := storedEvents(t, s.DB())
	if len(got) != len(events) {
		t.Fatalf("%d events stored, want %d", len(got), len(events))
	}
	for i, e := range events {
		id := uuid.UUID(e.UUID).String()
		if want := wantStored(e); got[id] != want {
			t.Fatalf("event %d (%s) stored as\n%s\nwant\n%s", i, id, got[id], want)
		}
	}

	// UUIDs sort as their text does: the appender's 128-bit layout (sign
	// bit flipped) is DuckDB's.
	var first, last string
	if err := s.DB().QueryRow(`SELECT min(uuid)::VARCHAR, max(uuid)::VARCHAR FROM events`).Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = uuid.UUID(e.UUID).String()
	}
	slices.Sort(ids)
	if first != ids[0] || last != ids[len(ids)-1] {
		t.Errorf("uuid order: min %s max %s, want %s and %s", first, last, ids[0], ids[len(ids)-1])
	}

	// The dense ids were filled too.
	var noUID int
	if err := s.DB().QueryRow(`SELECT count(*) FROM events WHERE uid IS NULL OR eid IS NULL`).Scan(&noUID); err != nil || noUID != 0 {
		t.Errorf("%d events without dense ids (%v)", noUID, err)
	}
}
