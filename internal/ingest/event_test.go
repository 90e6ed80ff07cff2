package ingest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
)

func TestScanProperties(t *testing.T) {
	cases := []struct {
		name     string
		json     string
		depth    int
		reserved string
		nul      bool
	}{
		{"flat", `{"a":1,"b":"x"}`, 1, "", false},
		{"nested", `{"a":{"b":[1,[2]]}}`, 4, "", false},
		{"reserved", `{"a":1,"$bot_name":"x"}`, 1, "$bot_name", false},
		{"escaped reserved", `{"\u0024is_bot":true}`, 1, "$is_bot", false},
		{"nested reserved is fine", `{"a":{"$is_bot":true}}`, 2, "", false},
		{"reserved as value is fine", `{"a":"$is_bot"}`, 1, "", false},
		{"brackets in strings", `{"a":"{[{[","b":"\"}"}`, 1, "", false},
		{"key after array", `{"a":[1,2],"$bot_category":"x"}`, 2, "$bot_category", false},
		{"NUL in a value", `{"a":"x\u0000y"}`, 1, "", true},
		{"NUL in a key", `{"a\u0000":1}`, 1, "", true},
		{"NUL deep down", `{"a":[{"b":["\u0000"]}]}`, 4, "", true},
		{"an escaped backslash, then u0000", `{"a":"\\u0000"}`, 1, "", false},
		{"other escapes", `{"a":"\u0001\u00e9\n"}`, 1, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, r, nul, groups, _ := scanProperties([]byte(c.json))
			if d != c.depth || r != c.reserved || nul != c.nul || groups {
				t.Errorf("scan(%s) = %d, %q, %v, %v; want %d, %q, %v, false", c.json, d, r, nul, groups, c.depth, c.reserved, c.nul)
			}
		})
	}
	for doc, want := range map[string]bool{
		`{"$groups":{"company":"a"}}`: true, `{"a":1,"\u0024groups":1}`: true,
		`{"a":{"$groups":{}}}`: false, `{"a":"$groups"}`: false,
	} {
		if _, _, _, got, _ := scanProperties([]byte(doc)); got != want {
			t.Errorf("scan(%s) saw $groups: %v, want %v", doc, got, want)
		}
	}
}

// TestGroupsProperty checks the rules of the $groups property: an object
// of up to five group types, each mapped to a key string of 1 to 200
// characters; the event is refused with invalid_groups otherwise.
func TestGroupsProperty(t *testing.T) {
	p := &Pipeline{UA: ua.NewParser(100, bots.Default())}
	cases := []struct {
		name  string
		props string
		ok    bool
	}{
		{"one group", `{"$groups":{"company":"acme"}}`, true},
		{"five groups and other properties", `{"plan":"pro","$groups":{"a":"1","b":"2","c":"3","d":"4","team_2":"ünï 😀"}}`, true},
		{"an empty object", `{"$groups":{}}`, true},
		{"a 32-character type and a 200-character key", `{"$groups":{"` + "t" + strings.Repeat("x", 31) + `":"` + strings.Repeat("é", 200) + `"}}`, true},
		{"nested $groups is any property", `{"a":{"$groups":7}}`, true},
		{"six groups", `{"$groups":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6"}}`, false},
		{"a string", `{"$groups":"acme"}`, false},
		{"null", `{"$groups":null}`, false},
		{"an array", `{"$groups":[{"company":"acme"}]}`, false},
		{"an upper-case type", `{"$groups":{"Company":"acme"}}`, false},
		{"a type starting with a digit", `{"$groups":{"1company":"acme"}}`, false},
		{"a 33-character type", `{"$groups":{"` + strings.Repeat("t", 33) + `":"acme"}}`, false},
		{"a number key", `{"$groups":{"company":42}}`, false},
		{"an object key", `{"$groups":{"company":{"id":"acme"}}}`, false},
		{"an empty key", `{"$groups":{"company":""}}`, false},
		{"a 201-character key", `{"$groups":{"company":"` + strings.Repeat("k", 201) + `"}}`, false},
		{"an escaped $groups", `{"\u0024groups":"acme"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, err := ParseEnvelope([]byte(`{"batch":[{"event_name":"a","distinct_id":"u","properties":` + c.props + `}]}`))
			if err != nil {
				t.Fatal(err)
			}
			accepted, rejected := p.Process(env, Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now()})
			if c.ok && len(accepted) != 1 {
				t.Errorf("refused: %+v", rejected)
			}
			if !c.ok && (len(rejected) != 1 || rejected[0].Code != RejectInvalidGroups || !strings.Contains(rejected[0].Message, "$groups")) {
				t.Errorf("rejected %+v, want invalid_groups", rejected)
			}
		})
	}
}

// TestTextRules checks the rules on what an event's text may hold, on the
// fast and the exact decoding paths alike: NUL nowhere (it can only come
// as the escape \u0000), no escape of half a surrogate pair (which the
// decoders would turn into U+FFFD), and whole pairs kept exactly. Each
// rule rejects its event only.
func TestTextRules(t *testing.T) {
	p := &Pipeline{UA: ua.NewParser(100, bots.Default())}
	ok := `{"event_name":"ok","distinct_id":"u"}`
	cases := []struct {
		name  string
		event string
		code  RejectReason // "" when accepted
		check func(t *testing.T, e analytics.Event)
	}{
		{"NUL in event_name", `{"event_name":"a\u0000","distinct_id":"u"}`, "invalid_character", nil},
		{"NUL in distinct_id", `{"event_name":"a","distinct_id":"\u0000"}`, "invalid_character", nil},
		{"NUL in url", `{"event_name":"a","distinct_id":"u","url":"https://a.b/\u0000"}`, "invalid_character", nil},
		{"NUL in a property value", `{"event_name":"a","distinct_id":"u","properties":{"k":"v\u0000"}}`, "invalid_character", nil},
		{"NUL in a property key", `{"event_name":"a","distinct_id":"u","properties":{"k\u0000":1}}`, "invalid_character", nil},
		{"NUL in a nested property", `{"event_name":"a","distinct_id":"u","properties":{"k":[{"x":"\u0000"}]}}`, "invalid_character", nil},
		{"lone high surrogate in event_name", `{"event_name":"s\ud800","distinct_id":"u"}`, "invalid_utf8", nil},
		{"lone low surrogate in distinct_id", `{"event_name":"a","distinct_id":"\udc00"}`, "invalid_utf8", nil},
		{"lone surrogate in a property value", `{"event_name":"a","distinct_id":"u","properties":{"k":"\ud83d"}}`, "invalid_utf8", nil},
		{"lone surrogate in a property key", `{"event_name":"a","distinct_id":"u","properties":{"\ude00":1}}`, "invalid_utf8", nil},
		{"a pair in event_name", `{"event_name":"\ud83d\ude00","distinct_id":"u"}`, "", func(t *testing.T, e analytics.Event) {
			if e.Name != "😀" {
				t.Errorf("name %q, want 😀", e.Name)
			}
		}},
		{"a pair in a property", `{"event_name":"a","distinct_id":"u","properties":{"\ud83d\ude00":"\ud83d\ude01"}}`, "", func(t *testing.T, e analytics.Event) {
			var m map[string]string
			if err := json.Unmarshal(e.Properties, &m); err != nil || m["😀"] != "😁" {
				t.Errorf("properties %s decode to %v (%v)", e.Properties, m, err)
			}
		}},
		{"an escaped backslash before u0000", `{"event_name":"a\\u0000","distinct_id":"u"}`, "", func(t *testing.T, e analytics.Event) {
			if e.Name != `a\u0000` {
				t.Errorf("name %q", e.Name)
			}
		}},
		{"a Hangul escape", `{"event_name":"\ud55c","distinct_id":"u"}`, "", func(t *testing.T, e analytics.Event) {
			if e.Name != "한" {
				t.Errorf("name %q, want 한", e.Name)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Alone, and with a good event on each side: the rule rejects
			// its event only.
			for _, body := range []string{`{"batch":[` + c.event + `]}`, `{"batch":[` + ok + `,` + c.event + `,` + ok + `]}`} {
				env, err := ParseEnvelope([]byte(body))
				if err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				accepted, rejected := p.Process(env, Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now()})
				var got *Rejection
				var ev *analytics.Event
				for i := range rejected {
					if rejected[i].Index == env.Len()/2 {
						got = &rejected[i]
					}
				}
				for i := range accepted {
					if accepted[i].Index == env.Len()/2 {
						ev = &accepted[i].Event
					}
				}
				if len(accepted)+len(rejected) != env.Len() || (env.Len() == 3 && len(accepted) < 2) {
					t.Fatalf("%s: accepted %d, rejected %v", body, len(accepted), rejected)
				}
				switch {
				case c.code == "" && got != nil:
					t.Errorf("%s: rejected %+v", body, *got)
				case c.code != "" && (got == nil || got.Code != c.code):
					t.Errorf("%s: rejection %+v, want %s", body, got, c.code)
				case c.code == "" && c.check != nil:
					c.check(t, *ev)
				}
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

// TestEveryRejectReason makes each RejectReason happen, so that a reason no
// rule can produce any more, or a rule with no reason listed, shows here.
func TestEveryRejectReason(t *testing.T) {
	p := &Pipeline{UA: ua.NewParser(100, bots.Default())}
	events := map[RejectReason]string{
		RejectInvalidEvent:       `"an event"`,
		RejectMissingEventName:   `{"distinct_id":"u"}`,
		RejectInvalidEventName:   `{"event_name":"","distinct_id":"u"}`,
		RejectReservedEventName:  `{"event_name":"$custom","distinct_id":"u"}`,
		RejectMissingDistinctID:  `{"event_name":"a","distinct_id":null}`,
		RejectInvalidDistinctID:  `{"event_name":"a","distinct_id":"` + strings.Repeat("d", maxDistinctIDChars+1) + `"}`,
		RejectInvalidTimestamp:   `{"event_name":"a","distinct_id":"u","timestamp":"yesterday"}`,
		RejectInvalidUUID:        `{"event_name":"a","distinct_id":"u","uuid":"1234"}`,
		RejectInvalidFieldType:   `{"event_name":"a","distinct_id":7}`,
		RejectFieldTooLong:       `{"event_name":"a","distinct_id":"u","referrer":"` + strings.Repeat("r", maxURLChars+1) + `"}`,
		RejectInvalidProperties:  `{"event_name":"a","distinct_id":"u","properties":[1]}`,
		RejectPropertiesTooLarge: `{"event_name":"a","distinct_id":"u","properties":{"k":"` + strings.Repeat("v", maxPropertiesBytes) + `"}}`,
		RejectPropertiesTooDeep:  `{"event_name":"a","distinct_id":"u","properties":` + strings.Repeat(`{"d":`, maxPropertiesDepth+1) + `1` + strings.Repeat(`}`, maxPropertiesDepth+1) + `}`,
		RejectReservedProperty:   `{"event_name":"a","distinct_id":"u","properties":{"$bot_name":"x"}}`,
		RejectUnknownField:       `{"event_name":"a","distinct_id":"u","colour":"red"}`,
		RejectInvalidUTF8:        `{"event_name":"a\ud800","distinct_id":"u"}`,
		RejectInvalidCharacter:   `{"event_name":"a","distinct_id":"u\u0000"}`,
		RejectInvalidGroups:      `{"event_name":"a","distinct_id":"u","properties":{"$groups":{"Company":"acme"}}}`,
		RejectInvalidSnapshot:    `{"event_name":"$snapshot","distinct_id":"u","properties":{}}`,
		RejectSnapshotTooLarge:   `{"event_name":"$snapshot","distinct_id":"u","properties":{"k":"` + strings.Repeat("v", maxSnapshotPropertiesBytes) + `"}}`,
		// The pipeline here has no salt store (cookieless_test.go has one).
		RejectCookieless: `{"event_name":"a","distinct_id":"$cookieless"}`,
	}
	seen := map[RejectReason]bool{}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for _, reason := range RejectReasons {
		if seen[reason] || !snake.MatchString(string(reason)) {
			t.Errorf("reason %q is repeated or not snake_case", reason)
		}
		seen[reason] = true
		if reason == RejectReplaySessionFull || reason == RejectReplayQuotaFull {
			// Decided after the pipeline, by the replay store against the
			// session's stored chunks and the product's sessions
			// (e2e/replay_limits_test.go).
			continue
		}
		event, ok := events[reason]
		if !ok {
			t.Errorf("no event here makes %s happen", reason)
			continue
		}
		env, err := ParseEnvelope([]byte(`{"batch":[` + event + `]}`))
		if err != nil {
			t.Fatalf("%s: %v", reason, err)
		}
		_, rejected := p.Process(env, Request{Product: 1, Env: analytics.EnvLive, ReceivedAt: time.Now()})
		if len(rejected) != 1 || rejected[0].Code != reason || rejected[0].Message == "" {
			t.Errorf("%s: rejected %+v", reason, rejected)
		}
	}
	if len(events) != len(RejectReasons)-2 {
		t.Errorf("%d events for %d reasons: RejectReasons misses a reason", len(events), len(RejectReasons))
	}
}
