package ingest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"strata/internal/enrich/bots"
)

func TestScanProperties(t *testing.T) {
	cases := []struct {
		name     string
		json     string
		depth    int
		reserved string
	}{
		{"flat", `{"a":1,"b":"x"}`, 1, ""},
		{"nested", `{"a":{"b":[1,[2]]}}`, 4, ""},
		{"reserved", `{"a":1,"$bot_name":"x"}`, 1, "$bot_name"},
		{"escaped reserved", `{"\u0024is_bot":true}`, 1, "$is_bot"},
		{"nested reserved is fine", `{"a":{"$is_bot":true}}`, 2, ""},
		{"reserved as value is fine", `{"a":"$is_bot"}`, 1, ""},
		{"brackets in strings", `{"a":"{[{[","b":"\"}"}`, 1, ""},
		{"key after array", `{"a":[1,2],"$bot_category":"x"}`, 2, "$bot_category"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, r := scanProperties([]byte(c.json))
			if d != c.depth || r != c.reserved {
				t.Errorf("scan(%s) = %d, %q; want %d, %q", c.json, d, r, c.depth, c.reserved)
			}
		})
	}
}

func TestWithBotProperties(t *testing.T) {
	bot := bots.Bot{Name: "GPTBot", Category: "ai_crawler"}
	for in, want := range map[string]string{
		`{}`:        `{"$is_bot":true,"$bot_name":"GPTBot","$bot_category":"ai_crawler"}`,
		`{"a":[1]}`: `{"$is_bot":true,"$bot_name":"GPTBot","$bot_category":"ai_crawler","a":[1]}`,
	} {
		got := withBotProperties(json.RawMessage(in), bot)
		if string(got) != want {
			t.Errorf("withBotProperties(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestEventTime(t *testing.T) {
	recv := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	str := func(s string) *string { return &s }
	cases := []struct {
		name   string
		ts     *string
		sentAt time.Time
		index  int
		want   time.Time
	}{
		{"receive time keeps batch order", nil, time.Time{}, 3, recv.Add(3 * time.Microsecond)},
		{"timestamp as is", str("2026-11-20T08:00:00.1234567+01:00"), time.Time{}, 0, time.Date(2026, 11, 20, 7, 0, 0, 123456000, time.UTC)},
		{"skew corrected", str("2026-11-23T13:59:50Z"), time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC), 0, recv.Add(-10 * time.Second)},
		{"timestamp after sent_at", str("2026-11-23T12:00:05Z"), time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC), 0, recv.Add(5 * time.Second)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, rej := eventTime(c.ts, c.sentAt, recv, c.index)
			if rej != nil || !got.Equal(c.want) {
				t.Errorf("eventTime = %v, %v; want %v", got, rej, c.want)
			}
		})
	}
	if _, rej := eventTime(str("2026-11-23"), time.Time{}, recv, 0); rej == nil || rej.Code != "invalid_timestamp" {
		t.Errorf("a date without time must be rejected, got %v", rej)
	}
}

func TestURLPathAndUserID(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/a/b?x=1#h": "/a/b",
		"https://example.com":           "/",
		"/relative/path?q":              "/relative/path",
		"":                              "",
		"%zz":                           "",
	} {
		if got := urlPath(in); got != want {
			t.Errorf("urlPath(%q) = %q, want %q", in, got, want)
		}
	}
	if UserID("alice") == UserID("bob") || UserID("alice") != UserID("alice") {
		t.Error("UserID must be deterministic and tell users apart")
	}
	// The hash is part of the stored data: it must never change.
	if got := UserID("user_1"); got != 0xf7a196aa74b9b772 {
		t.Errorf("UserID(user_1) = %#x; the FNV-1a hash changed", got)
	}
}

// TestParseEnvelopePaths checks that bodies the one-pass decoder declines
// (pretty-printed, raw control characters, a bad event) are still judged
// exactly by the slower path.
func TestParseEnvelopePaths(t *testing.T) {
	cases := []struct {
		name, body string
		fast       bool
		code       string
		events     int
	}{
		{"compact", `{"batch":[{"event_name":"a","distinct_id":"u"}]}`, true, "", 1},
		{"pretty", "{\n\t\"batch\": [\n\t\t{\"event_name\": \"a\", \"distinct_id\": \"u\"}\n\t]\n}\n", false, "", 1},
		{"raw control character in a string", "{\"batch\":[{\"event_name\":\"a\x04\",\"distinct_id\":\"u\"}]}", false, "invalid_json", 0},
		{"raw newline in a string", "{\"batch\":[{\"event_name\":\"a\nb\",\"distinct_id\":\"u\"}]}", false, "invalid_json", 0},
		{"one bad event", `{"batch":[{"event_name":"a","distinct_id":1},{"event_name":"b","distinct_id":"u"}]}`, false, "", 2},
		{"trailing data", `{"batch":[{"event_name":"a","distinct_id":"u"}]} {}`, false, "invalid_json", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, err := ParseEnvelope([]byte(c.body))
			if c.code != "" {
				if err == nil || !strings.Contains(err.Error(), c.code) {
					t.Fatalf("error = %v, want %s", err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (env.events != nil) != c.fast || env.Len() != c.events {
				t.Errorf("fast path %v with %d events, want %v with %d", env.events != nil, env.Len(), c.fast, c.events)
			}
		})
	}
}
