package analytics

import (
	"strings"
	"testing"
	"time"
)

func TestAnnotationValidate(t *testing.T) {
	id := func(v int64) *int64 { return &v }
	valid := func() Annotation {
		return Annotation{Label: "Deploy v2", Date: time.Date(2026, 11, 20, 14, 5, 0, 0, time.UTC),
			Color: "emerald", Scope: ScopeWorkspace}
	}
	for _, ok := range []func(*Annotation){
		func(a *Annotation) {},
		func(a *Annotation) { a.Label = strings.Repeat("é", MaxAnnotationLabel) },
		func(a *Annotation) { a.Scope, a.QueryID = ScopeQuery, id(7) },
		func(a *Annotation) { a.Description = "line one\nline two" },
		func(a *Annotation) { a.Description = strings.Repeat("d", MaxAnnotationDescription) },
		func(a *Annotation) { a.Date = time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC) },
	} {
		a := valid()
		ok(&a)
		if err := a.Validate(); err != nil {
			t.Errorf("%+v: %v", a, err)
		}
	}

	cases := []struct {
		name   string
		change func(*Annotation)
		want   string
	}{
		{"label missing", func(a *Annotation) { a.Label = "" }, "label: is required"},
		{"label too long", func(a *Annotation) { a.Label = strings.Repeat("é", MaxAnnotationLabel+1) }, "label: must be 1 to 120 characters, not 121"},
		{"label blank", func(a *Annotation) { a.Label = "   " }, "label: must not be blank"},
		{"label line break", func(a *Annotation) { a.Label = "a\nb" }, "label: must not contain control characters"},
		{"label tab", func(a *Annotation) { a.Label = "a\tb" }, "label: must not contain control characters"},
		{"date missing", func(a *Annotation) { a.Date = time.Time{} }, "date: is required"},
		{"date year 10000", func(a *Annotation) { a.Date = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "date: must fall in the years 1 to 9999 (UTC), not 10000"},
		{"color missing", func(a *Annotation) { a.Color = "" }, "color: is required"},
		{"color unknown", func(a *Annotation) { a.Color = "red" }, `color: must be one of emerald, sky, amber, rose, violet or slate, not "red"`},
		{"scope missing", func(a *Annotation) { a.Scope = "" }, "scope: is required"},
		{"scope unknown", func(a *Annotation) { a.Scope = "global" }, `scope: must be workspace or query, not "global"`},
		{"queryId on workspace", func(a *Annotation) { a.QueryID = id(3) }, "queryId: must be left out when scope is workspace"},
		{"queryId missing", func(a *Annotation) { a.Scope = ScopeQuery }, "queryId: is required when scope is query"},
		{"queryId zero", func(a *Annotation) { a.Scope, a.QueryID = ScopeQuery, id(0) }, "queryId: must be a saved query's id, a positive integer, not 0"},
		{"description too long", func(a *Annotation) { a.Description = strings.Repeat("d", MaxAnnotationDescription+1) }, "description: must be at most 2000 characters, not 2001"},
		{"description NUL", func(a *Annotation) { a.Description = "a\x00b" }, "description: must not contain NUL characters"},
		// The first fault in field order is the one reported.
		{"label before color", func(a *Annotation) { a.Label, a.Color = "", "" }, "label: is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := valid()
			c.change(&a)
			err := a.Validate()
			e := AsError(err)
			if err == nil || e.Kind != KindInvalid || e.Code != "invalid_request" || !strings.HasPrefix(e.Message, c.want) {
				t.Errorf("Validate() = %v; want invalid_request %q", err, c.want)
			}
		})
	}
}
