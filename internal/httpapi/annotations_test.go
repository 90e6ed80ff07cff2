package httpapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
	"strata/internal/annotations"
)

func TestParseAnnotation(t *testing.T) {
	ok := `{"label":"Deploy","date":"2026-11-20T15:05:00.1234567+01:00","color":"emerald","scope":"workspace"}`
	a, err := parseAnnotation([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 20, 14, 5, 0, 123456000, time.UTC); !a.Date.Equal(want) || a.Date.Location() != time.UTC {
		t.Errorf("date %v, want %v in UTC to the microsecond", a.Date, want)
	}
	q, err := parseAnnotation([]byte(`{"label":"ü","date":"2026-11-20T14:05:00Z","color":"slate","scope":"query","queryId":7,"description":null}`))
	if err != nil || q.QueryID == nil || *q.QueryID != 7 || q.Scope != analytics.ScopeQuery || q.Description != "" {
		t.Errorf("query annotation: %+v, %v", q, err)
	}

	cases := []struct {
		name, body, field string
	}{
		{"not an object", `[1]`, "body:"},
		{"two values", ok + ok, "body:"},
		{"unknown field", `{"label":"x","author":"me"}`, "author: is not a known field"},
		{"label missing", `{"date":"2026-11-20T14:05:00Z","color":"emerald","scope":"workspace"}`, "label:"},
		{"label empty", `{"label":""}`, "label:"},
		{"label 121 characters", `{"label":"` + strings.Repeat("é", 121) + `"}`, "label: must be 1 to 120 characters, not 121"},
		{"label blank", `{"label":"   "}`, "label:"},
		{"label line break", `{"label":"a\nb"}`, "label:"},
		{"label a number", `{"label":5}`, "label: must be a string"},
		{"date missing", `{"label":"x","color":"emerald","scope":"workspace"}`, "date:"},
		{"date only a day", `{"label":"x","date":"2026-11-20"}`, "date:"},
		{"date without zone", `{"label":"x","date":"2026-11-20T14:05:00"}`, "date:"},
		{"color missing", `{"label":"x","date":"2026-11-20T14:05:00Z","scope":"workspace"}`, "color:"},
		{"color unknown", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"red"}`, `color: must be one of emerald, sky, amber, rose, violet or slate, not "red"`},
		{"scope missing", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"sky"}`, "scope:"},
		{"scope unknown", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"sky","scope":"global"}`, "scope:"},
		{"queryId missing", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"sky","scope":"query"}`, "queryId: is required"},
		{"queryId on workspace", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"sky","scope":"workspace","queryId":3}`, "queryId:"},
		{"queryId zero", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"sky","scope":"query","queryId":0}`, "queryId:"},
		{"queryId a string", `{"queryId":"3"}`, "queryId: must be an integer"},
		{"description too long", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"sky","scope":"workspace","description":"` + strings.Repeat("d", 2001) + `"}`, "description:"},
		{"description NUL", `{"label":"x","date":"2026-11-20T14:05:00Z","color":"sky","scope":"workspace","description":"a\u0000b"}`, "description:"},
	}
	// A body is decoded here and its rules are the service's, which checks
	// them before it touches its store: a create with no store reaches the
	// answer a rule gives, and one that passed every rule would panic.
	create := func(body []byte) error {
		a, err := parseAnnotation(body)
		if err != nil {
			return err
		}
		return (&annotations.Service{}).Create(context.Background(), &a)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := create([]byte(c.body))
			e := analytics.AsError(err)
			if err == nil || e.Kind != analytics.KindInvalid || e.Code != "invalid_request" || !strings.Contains(e.Message, c.field) {
				t.Errorf("error %v; want invalid_request naming %q", err, c.field)
			}
		})
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"Deploy":             "Deploy",
		"=1+2":               "'=1+2",
		"+49 30 123":         "'+49 30 123",
		"-5% signups":        "'-5% signups",
		"@SUM(A1)":           "'@SUM(A1)",
		"\t=1":               "'\t=1",
		"\r=1":               "'\r=1",
		"a=1":                "a=1",
		"'already quoted":    "'already quoted",
		"2026-11-20T14:05Z":  "2026-11-20T14:05Z",
		"token st_tok_abcd…": "token st_tok_abcd…",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}
