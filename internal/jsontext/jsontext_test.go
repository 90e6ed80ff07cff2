package jsontext

import (
	"strings"
	"testing"
)

func TestLoneSurrogate(t *testing.T) {
	cases := []struct {
		name string
		json string
		want int // offset of the lone escape, -1 for none
	}{
		{"plain", `{"a":"b"}`, -1},
		{"a valid pair", `{"a":"\ud83d\ude00"}`, -1},
		{"a valid pair in capitals", `{"a":"\uD83D\uDE00"}`, -1},
		{"two pairs", `["\ud83d\ude00\ud83d\ude01"]`, -1},
		{"other escapes", `{"a":"\u00e9\n\"\\\/\u0000"}`, -1},
		{"an escaped backslash before u", `{"a":"\\ud800"}`, -1},
		{"outside a string", `{"a":1}\ud800`, -1},
		{"a lone high", `{"a":"s\ud800"}`, 7},
		{"a lone low", `{"a":"\udc00x"}`, 6},
		{"a high before a non-surrogate", `{"a":"\ud800\u0041"}`, 6},
		{"a high at the end", `["\ud83d"]`, 2},
		{"a low after a pair", `["\ud83d\ude00\ude00"]`, 14},
		{"in a key", `{"\udfff":1}`, 2},
		{"two highs", `["\ud800\ud800\udc00"]`, 2},
		{"cut short", `["\ud8`, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := LoneSurrogate([]byte(c.json)); got != c.want {
				t.Errorf("LoneSurrogate(%s) = %d, want %d", c.json, got, c.want)
			}
		})
	}
}

func TestPath(t *testing.T) {
	doc := `{"label":"x","series":[{"event":"a"},{"event":"b\ud800","math":"total"}],"ids":[1,2,"\ud800"],"n":{"deep":{"k":"v"}}}`
	for _, c := range []struct {
		at   string // the first occurrence of this text marks the offset
		want string
	}{
		{`"x"`, "label"},
		{`"b\ud800"`, "series[1].event"},
		{`"\ud800"]`, "ids[2]"},
		{`"v"`, "n.deep.k"},
		{`"label"`, "label"},
	} {
		off := strings.Index(doc, c.at)
		if got := Path([]byte(doc), off+1); got != c.want {
			t.Errorf("Path at %s = %q, want %q", c.at, got, c.want)
		}
	}
	if got := Path([]byte(`["\ud800"]`), 2); got != "body[0]" {
		t.Errorf("Path in a top-level array = %q", got)
	}
	if got := Path([]byte(doc), 0); got != "body" {
		t.Errorf("Path at the opening brace = %q", got)
	}
	if got := Path([]byte(`{"a":`), 0); got != "body" {
		t.Errorf("Path at the start = %q", got)
	}
}
