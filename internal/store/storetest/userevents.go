package storetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/ingest"
)

// testUserEvents checks one user's events (the person page): newest first,
// ties by uuid in byte order (the same in DuckDB's UUID and ClickHouse's
// FixedString), before strictly older, the limit, the session id read from
// the properties, and only the product's, environment's and user's human
// events: the same distinct_id in another product, in the test
// environment, a bot event of it and another user's events never appear.
func testUserEvents(ctx context.Context, t *testing.T, s Events) {
	day := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	const user = "ü/1 o'brien"
	var events []analytics.Event
	add := func(first byte, product int64, env analytics.Env, distinctID, name string, at time.Time, props string) analytics.Event {
		e := analytics.Event{ProductID: product, Env: env, Timestamp: at, ReceivedAt: day, Name: name,
			DistinctID: distinctID, UserID: ingest.UserID(distinctID), Properties: json.RawMessage(props)}
		e.UUID[0], e.UUID[1], e.UUID[15] = first, byte(len(events)), 0xe5
		events = append(events, e)
		return e
	}
	// Product 1, live, the user: a year-old event (no lower bound), two
	// with pages and a session, one without a session, and three in one
	// microsecond whose uuids straddle the sign bit (0x7f…, 0x80…).
	old := add(0x20, 1, analytics.EnvLive, user, "signed_up", day.AddDate(-1, 0, 0), `{"plan":"free"}`)
	view := add(0x30, 1, analytics.EnvLive, user, "$pageview", day.Add(time.Hour), `{"$session_id":"s-1","n":1}`)
	view.URL, view.Path, view.Browser, view.OS, view.DeviceType = "https://shop.example/cart?x=1", "/cart", "Firefox", "Linux", "desktop"
	events[len(events)-1] = view
	plain := add(0x40, 1, analytics.EnvLive, user, "no_session", day.Add(2*time.Hour+time.Microsecond), `{}`)
	tie := day.Add(3 * time.Hour)
	t80 := add(0x80, 1, analytics.EnvLive, user, "tie_80", tie, `{"$session_id":"s-2"}`)
	t01 := add(0x01, 1, analytics.EnvLive, user, "tie_01", tie, `{"$session_id":"s-2"}`)
	t7f := add(0x7f, 1, analytics.EnvLive, user, "tie_7f", tie, `{"$session_id":"s-2","list":[1,{"a":null}]}`)
	// What must never appear among product 1's live events of the user.
	bot := add(0x50, 1, analytics.EnvLive, user, "$bot_pageview", day.Add(4*time.Hour), `{}`)
	bot.IsBot, bot.BotName, bot.BotCategory = true, "GPTBot", "ai_crawler"
	events[len(events)-1] = bot
	add(0x51, 1, analytics.EnvLive, "u2", "other_user", day.Add(4*time.Hour), `{"$session_id":"s-1"}`)
	add(0x52, 2, analytics.EnvLive, user, "other_product", day.Add(4*time.Hour), `{"$session_id":"s-9"}`)
	testEv := add(0x53, 1, analytics.EnvTest, user, "test_only", day.Add(5*time.Hour), `{"$session_id":"t-1"}`)
	if err := s.AppendEvents(ctx, events); err != nil {
		t.Fatal(err)
	}

	names := func(list []analytics.UserEvent) string {
		var out []string
		for _, e := range list {
			out = append(out, e.Name)
		}
		return strings.Join(out, ",")
	}
	ask := func(q analytics.UserEventsQuery) []analytics.UserEvent {
		t.Helper()
		got, err := s.UserEvents(ctx, q)
		if err != nil {
			t.Fatalf("UserEvents(%+v): %v", q, err)
		}
		return got
	}
	live := analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvLive, DistinctID: user, Limit: 100}
	got := ask(live)
	if n := names(got); n != "tie_01,tie_7f,tie_80,no_session,$pageview,signed_up" {
		t.Fatalf("the user's events = %s; want product 1's live human events, newest first, ties by uuid", n)
	}
	// Every field of one event, and the session ids.
	for i, want := range []analytics.Event{t01, t7f, t80, plain, view, old} {
		e := got[i]
		sid := ""
		var p map[string]any
		json.Unmarshal(want.Properties, &p)
		if v, ok := p["$session_id"].(string); ok {
			sid = v
		}
		if e.UUID != want.UUID || !e.Time.Equal(want.Timestamp) || e.Time.Location() != time.UTC || e.URL != want.URL || e.Path != want.Path ||
			e.Browser != want.Browser || e.OS != want.OS || e.DeviceType != want.DeviceType || e.SessionID != sid ||
			string(e.Properties) != string(want.Properties) {
			t.Errorf("event %d = %+v (properties %s), want %s at %v, session %q, properties %s", i, e, e.Properties,
				want.Name, want.Timestamp, sid, want.Properties)
		}
	}

	// The limit, and before: strictly older, down to the microsecond.
	live.Limit = 2
	if n := names(ask(live)); n != "tie_01,tie_7f" {
		t.Errorf("limit 2 = %s", n)
	}
	live.Limit, live.Before = 100, tie
	if n := names(ask(live)); n != "no_session,$pageview,signed_up" {
		t.Errorf("before the tie = %s; want the events strictly older", n)
	}
	live.Before = plain.Timestamp
	if n := names(ask(live)); n != "$pageview,signed_up" {
		t.Errorf("before no_session's microsecond = %s", n)
	}
	live.Before = plain.Timestamp.Add(time.Microsecond)
	if n := names(ask(live)); n != "no_session,$pageview,signed_up" {
		t.Errorf("one microsecond after no_session = %s", n)
	}
	live.Before = old.Timestamp
	if n := names(ask(live)); n != "" {
		t.Errorf("before the oldest event = %s", n)
	}

	// The test environment, another product, another user, nobody.
	for _, c := range []struct {
		q    analytics.UserEventsQuery
		want string
	}{
		{analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvTest, DistinctID: user, Limit: 10}, testEv.Name},
		{analytics.UserEventsQuery{ProductID: 2, Env: analytics.EnvLive, DistinctID: user, Limit: 10}, "other_product"},
		{analytics.UserEventsQuery{ProductID: 2, Env: analytics.EnvLive, DistinctID: "u2", Limit: 10}, ""},
		{analytics.UserEventsQuery{ProductID: 3, Env: analytics.EnvLive, DistinctID: user, Limit: 10}, ""},
		{analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvLive, DistinctID: "ü/1", Limit: 10}, ""},
		{analytics.UserEventsQuery{ProductID: 1, Env: analytics.EnvLive, DistinctID: "nobody", Limit: 10}, ""},
	} {
		if n := names(ask(c.q)); n != c.want {
			t.Errorf("UserEvents(product %d, %s, %q) = %s, want %s", c.q.ProductID, c.q.Env, c.q.DistinctID, n, c.want)
		}
	}
}
