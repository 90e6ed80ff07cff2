package jsontext

import (
	"strings"
	"testing"

	"strata/internal/analytics"
)

func TestDecode(t *testing.T) {
	type series struct {
		Event string   `json:"event"`
		Tags  []string `json:"tags"`
	}
	type request struct {
		Name   *string  `json:"name"`
		Hours  int      `json:"hours"`
		Ratio  float64  `json:"ratio"`
		On     bool     `json:"on"`
		Series []series `json:"series"`
	}
	var ok request
	if err := Decode([]byte(` {"name":"a","hours":3,"series":[{"event":"x","tags":["t"]}]} `), &ok); err != nil ||
		*ok.Name != "a" || ok.Hours != 3 || ok.Series[0].Event != "x" {
		t.Fatalf("valid body: %+v, %v", ok, err)
	}

	cases := []struct {
		name, body, want string
	}{
		{"unknown field", `{"name":"a","author":"me"}`, "author: is not a known field"},
		{"two values", `{"name":"a"}{"name":"b"}`, "body: must hold one JSON object and nothing after it"},
		{"trailing garbage", `{"name":"a"} x`, "body: must hold one JSON object and nothing after it"},
		{"not an object", `[1]`, "body: must be a JSON object"},
		{"a string", `"a"`, "body: must be a JSON object"},
		{"malformed", `{"name":`, "body: is not valid JSON"},
		{"syntax error", `{"name" "a"}`, "body: is not valid JSON"},
		{"empty", ``, "body: is not valid JSON"},
		{"string for int", `{"hours":"3"}`, `hours: must be an integer, not a JSON string`},
		{"fraction for int", `{"hours":1.5}`, `hours: must be an integer, not a JSON number`},
		{"number for string", `{"name":5}`, `name: must be a string, not a JSON number`},
		{"string for float", `{"ratio":"x"}`, `ratio: must be a number, not a JSON string`},
		{"string for bool", `{"on":"yes"}`, `on: must be true or false, not a JSON string`},
		{"object for array", `{"series":{}}`, `series: must be an array, not a JSON object`},
		{"nested wrong type", `{"series":[{"event":"x"},{"event":7}]}`, `series[1].event: must be a string, not a JSON number`},
		{"nested in array", `{"series":[{"event":"x","tags":["a",2]}]}`, `series[0].tags[1]: must be a string, not a JSON number`},
		{"lone surrogate", `{"series":[{"event":"\ud800"}]}`, `series[0].event: must be Unicode text`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v request
			err := Decode([]byte(c.body), &v)
			e := analytics.AsError(err)
			if err == nil || e.Kind != analytics.KindInvalid || e.Code != "invalid_request" || !strings.HasPrefix(e.Message, c.want) {
				t.Fatalf("Decode(%s) = %v; want invalid_request %q", c.body, err, c.want)
			}
			if strings.Contains(e.Message, "json:") || strings.Contains(e.Message, "Go ") {
				t.Errorf("the client message carries a Go error: %q", e.Message)
			}
		})
	}
}
