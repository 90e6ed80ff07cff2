package query

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"strata/internal/analytics"
)

// TestParseFunnelStepFilters reads steps sent as strings and as objects
// with filters, and refuses malformed ones with the field at fault.
func TestParseFunnelStepFilters(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	now := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	q, err := ParseFunnel([]byte(`{"steps":["a",{"event":"$pageview","where":[{"property":"path","operator":"eq","value":"/pricing"},`+
		`{"property":"properties.plan","operator":"is_set"}]},{"event":"b"}]}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Steps, []string{"a", "$pageview", "b"}) {
		t.Errorf("steps %v", q.Steps)
	}
	want := [][]analytics.Filter{nil, {
		{Property: analytics.Property{Column: "path"}, Operator: analytics.OpEq, Value: "/pricing"},
		{Property: analytics.Property{Key: "plan"}, Operator: analytics.OpIsSet},
	}, nil}
	if !reflect.DeepEqual(q.StepFilters, want) {
		t.Errorf("step filters %+v, want %+v", q.StepFilters, want)
	}
	// Without a filtered step the query is today's plain funnel.
	if q, err := ParseFunnel([]byte(`{"steps":["a",{"event":"b","where":[]}]}`), sc, now); err != nil || q.StepFilters != nil {
		t.Errorf("plain steps: %v %+v", err, q.StepFilters)
	}
	for body, field := range map[string]string{
		`{"steps":["a",{"event":"b","wher":[]}]}`: `"wher"`,
		`{"steps":["a",7]}`:                       "steps: each step",
		`{"steps":["a",{"event":"","where":[{"property":"path","operator":"is_set"}]}]}`:          "steps[1].event",
		`{"steps":["a",{"event":"b","where":[{"property":"nope","operator":"is_set"}]}]}`:         "steps[1].where[0].property",
		`{"steps":["a",{"event":"b","where":[{"property":"path","operator":"like"}]}]}`:           "steps[1].where[0].operator",
		`{"steps":[{"event":"b","where":[{"property":"path","operator":"gt","value":"x"}]},"a"]}`: "steps[0].where[0].value",
	} {
		_, err := ParseFunnel([]byte(body), sc, now)
		var e *analytics.Error
		if !errors.As(err, &e) || e.Code != "invalid_request" || !strings.Contains(e.Message, field) {
			t.Errorf("%s: %v, want an invalid_request naming %s", body, err, field)
		}
	}
}

// TestFunnelStepJSON writes a step without filters as its name, so that a
// saved plain funnel reads as the spec's request, and any other as the
// object it was sent as.
func TestFunnelStepJSON(t *testing.T) {
	steps := []FunnelStepRequest{{Event: "a"}, {Event: "b", Where: []FilterRequest{{Property: "path", Operator: "eq", Value: "/x"}}}}
	got, _ := json.Marshal(FunnelRequest{Steps: steps})
	if string(got) != `{"steps":["a",{"event":"b","where":[{"property":"path","operator":"eq","value":"/x"}]}]}` {
		t.Errorf("marshalled %s", got)
	}
	var back FunnelRequest
	if err := json.Unmarshal(got, &back); err != nil || !reflect.DeepEqual(back.Steps, steps) {
		t.Errorf("round trip: %v %+v", err, back.Steps)
	}
}

// TestParseFunnelExclusionsBreakdown reads exclusions and a breakdown and
// refuses exclusions whose steps are not two steps in order.
func TestParseFunnelExclusionsBreakdown(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	now := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	q, err := ParseFunnel([]byte(`{"steps":["a","b","c"],"exclusions":[{"event":"x","fromStep":0,"toStep":2,`+
		`"where":[{"property":"browser","operator":"eq","value":"Chrome"}]}],"breakdown":"properties.plan"}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	wantX := []analytics.FunnelExclusion{{Event: "x", FromStep: 0, ToStep: 2,
		Filters: []analytics.Filter{{Property: analytics.Property{Column: "browser"}, Operator: analytics.OpEq, Value: "Chrome"}}}}
	if !reflect.DeepEqual(q.Exclusions, wantX) || q.Breakdown == nil || q.Breakdown.Key != "plan" || q.BreakdownLimit != DefaultBreakdown {
		t.Errorf("parsed %+v %+v %d", q.Exclusions, q.Breakdown, q.BreakdownLimit)
	}
	for body, field := range map[string]string{
		`{"steps":["a","b"],"exclusions":[{"event":"x","fromStep":1,"toStep":1}]}`:     "exclusions[0].fromStep",
		`{"steps":["a","b","c"],"exclusions":[{"event":"x","fromStep":1,"toStep":1}]}`: "exclusions[0].toStep",
		`{"steps":["a","b"],"exclusions":[{"event":"x","fromStep":0,"toStep":2}]}`:     "exclusions[0].toStep",
		`{"steps":["a","b"],"exclusions":[{"event":"","fromStep":0,"toStep":1}]}`:      "exclusions[0].event",
		`{"steps":["a","b"],"breakdownLimit":3}`:                                       "breakdownLimit",
		`{"steps":["a","b"],"breakdown":"browser","breakdownLimit":101}`:               "breakdownLimit",
		`{"steps":["a","b"],"breakdown":"nope"}`:                                       "breakdown",
	} {
		_, err := ParseFunnel([]byte(body), sc, now)
		var e *analytics.Error
		if !errors.As(err, &e) || e.Code != "invalid_request" || !strings.HasPrefix(e.Message, field+":") {
			t.Errorf("%s: %v, want an invalid_request naming %s", body, err, field)
		}
	}
}

// TestParseFunnelView reads the view and refuses time to convert under a
// breakdown.
func TestParseFunnelView(t *testing.T) {
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	now := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	if q, err := ParseFunnel([]byte(`{"steps":["a","b"],"view":"time_to_convert"}`), sc, now); err != nil || !q.TimeToConvert {
		t.Errorf("time_to_convert: %v %v", err, q.TimeToConvert)
	}
	if q, err := ParseFunnel([]byte(`{"steps":["a","b"],"view":"steps"}`), sc, now); err != nil || q.TimeToConvert {
		t.Errorf("steps: %v %v", err, q.TimeToConvert)
	}
	if q, err := ParseFunnel([]byte(`{"steps":["a","b"],"view":"trends","interval":"week"}`), sc, now); err != nil || q.OverTime != analytics.Week {
		t.Errorf("trends by week: %v %v", err, q.OverTime)
	}
	if q, err := ParseFunnel([]byte(`{"steps":["a","b"],"view":"trends"}`), sc, now); err != nil || q.OverTime != analytics.Day {
		t.Errorf("trends: %v %v", err, q.OverTime)
	}
	for body, field := range map[string]string{
		`{"steps":["a","b"],"view":"trendz"}`:                                "view",
		`{"steps":["a","b"],"view":"time_to_convert","breakdown":"browser"}`: "view",
		`{"steps":["a","b"],"view":"trends","breakdown":"browser"}`:          "view",
		`{"steps":["a","b"],"view":"trends","interval":"month"}`:             "interval",
		`{"steps":["a","b"],"interval":"day"}`:                               "interval",
	} {
		var e *analytics.Error
		if _, err := ParseFunnel([]byte(body), sc, now); !errors.As(err, &e) || !strings.HasPrefix(e.Message, field+":") {
			t.Errorf("%s: %v, want an invalid_request naming %s", body, err, field)
		}
	}
}
