package query

import (
	"context"
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

// TestParseFunnelView reads the view, with or without a breakdown, and
// refuses an unknown view or an interval it does not take.
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
	// A breakdown splits either view by value, as it splits the steps.
	if q, err := ParseFunnel([]byte(`{"steps":["a","b"],"view":"time_to_convert","breakdown":"browser","breakdownLimit":3}`), sc, now); err != nil ||
		!q.TimeToConvert || q.Breakdown == nil || q.Breakdown.Column != "browser" || q.BreakdownLimit != 3 {
		t.Errorf("time_to_convert by browser: %v %+v", err, q)
	}
	if q, err := ParseFunnel([]byte(`{"steps":["a","b"],"view":"trends","interval":"week","breakdown":"properties.plan"}`), sc, now); err != nil ||
		q.OverTime != analytics.Week || q.Breakdown == nil || q.Breakdown.Key != "plan" || q.BreakdownLimit != DefaultBreakdown {
		t.Errorf("trends by plan: %v %+v", err, q)
	}
	for body, field := range map[string]string{
		`{"steps":["a","b"],"view":"trendz"}`:                    "view",
		`{"steps":["a","b"],"view":"trends","interval":"month"}`: "interval",
		`{"steps":["a","b"],"interval":"day"}`:                   "interval",
		`{"steps":["a","b"],"view":"trends","breakdownLimit":3}`: "breakdownLimit",
	} {
		var e *analytics.Error
		if _, err := ParseFunnel([]byte(body), sc, now); !errors.As(err, &e) || !strings.HasPrefix(e.Message, field+":") {
			t.Errorf("%s: %v, want an invalid_request naming %s", body, err, field)
		}
	}
}

// viewStore answers a funnel's rows, times and buckets as set, and keeps
// the top values the engine sent with the view.
type viewStore struct {
	stubStore
	rows    []analytics.FunnelRow
	times   analytics.FunnelTimes
	buckets []analytics.FunnelBucket
	sent    []string
}

func (s *viewStore) FunnelRows(context.Context, analytics.FunnelQuery) ([]analytics.FunnelRow, error) {
	return s.rows, nil
}

func (s *viewStore) FunnelTimes(_ context.Context, q analytics.FunnelQuery) (analytics.FunnelTimes, error) {
	s.sent = q.TopValues
	return s.times, nil
}

func (s *viewStore) FunnelOverTime(_ context.Context, q analytics.FunnelQuery) ([]analytics.FunnelBucket, error) {
	s.sent = q.TopValues
	return s.buckets, nil
}

// TestFunnelViewsByBreakdown runs both views with a breakdown on a store
// that answers its rows out of order: the engine sends the steps view's
// top values, lays each row out in the steps view's order (the other row
// last), fills every bucket, and adds the rows up into the whole funnel's
// buckets; without a breakdown the answer has no breakdown at all.
func TestFunnelViewsByBreakdown(t *testing.T) {
	ctx := context.Background()
	sc := analytics.EventRange{ProductID: 1, Env: analytics.EnvLive}
	now := time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	s := &viewStore{
		rows: []analytics.FunnelRow{{Breakdown: "Chrome", Counts: []int64{3, 2}}, {Breakdown: "", Counts: []int64{2, 1}}, {Other: true, Counts: []int64{1, 1}}},
		buckets: []analytics.FunnelBucket{
			{Bucket: day(3), Other: true, Counts: []int64{1, 1}},
			{Bucket: day(2), Breakdown: "Chrome", Counts: []int64{2, 2}},
			{Bucket: day(3), Breakdown: "Chrome", Counts: []int64{1, 0}},
			{Bucket: day(2), Counts: []int64{2, 1}},
		},
	}
	e := &Engine{Store: s}
	q, err := ParseFunnel([]byte(`{"steps":["a","b"],"dateFrom":"2026-11-02","dateTo":"2026-11-03","view":"trends","breakdown":"browser","breakdownLimit":2}`), sc, now)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.RunFunnel(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.sent, []string{"Chrome", ""}) {
		t.Errorf("top values sent %q, want Chrome and \"\"", s.sent)
	}
	got, _ := json.Marshal(res)
	want := `{"steps":[{"name":"a","count":6,"conversionPct":null},{"name":"b","count":4,"conversionPct":66.7}],` +
		`"breakdown":[` +
		`{"breakdownValue":"Chrome","steps":[{"name":"a","count":3,"conversionPct":null},{"name":"b","count":2,"conversionPct":66.7}],` +
		`"overTime":[{"date":"2026-11-02","entered":2,"converted":2,"conversionPct":100},{"date":"2026-11-03","entered":1,"converted":0,"conversionPct":0}]},` +
		`{"breakdownValue":"","steps":[{"name":"a","count":2,"conversionPct":null},{"name":"b","count":1,"conversionPct":50}],` +
		`"overTime":[{"date":"2026-11-02","entered":2,"converted":1,"conversionPct":50},{"date":"2026-11-03","entered":0,"converted":0,"conversionPct":0}]},` +
		`{"breakdownValue":null,"other":true,"steps":[{"name":"a","count":1,"conversionPct":null},{"name":"b","count":1,"conversionPct":100}],` +
		`"overTime":[{"date":"2026-11-02","entered":0,"converted":0,"conversionPct":0},{"date":"2026-11-03","entered":1,"converted":1,"conversionPct":100}]}],` +
		`"overTime":[{"date":"2026-11-02","entered":4,"converted":3,"conversionPct":75},{"date":"2026-11-03","entered":2,"converted":1,"conversionPct":50}]}`
	if string(got) != want {
		t.Errorf("over time by browser:\n%s\nwant\n%s", got, want)
	}

	// Time to convert: the rows' times under their rows, the whole
	// funnel's at the top; a row the times did not find has none at any
	// step, and users of other values the rows had not (stored between
	// the two statements) get the other row, last.
	hist := func(k int, n int64) []int64 {
		h := make([]int64, len(analytics.ConvertBuckets))
		h[k] = n
		return h
	}
	s.rows = s.rows[:2]
	s.times = analytics.FunnelTimes{Counts: []int64{6, 4}, Steps: []analytics.StepTimes{{MedianMicros: 90e6, Histogram: hist(3, 4)}},
		Breakdown: []analytics.FunnelTimesRow{
			{Other: true, Counts: []int64{1, 1}, Steps: []analytics.StepTimes{{MedianMicros: 20e6, Histogram: hist(1, 1)}}},
			{Breakdown: "Chrome", Counts: []int64{3, 2}, Steps: []analytics.StepTimes{{MedianMicros: 90e6, Histogram: hist(3, 2)}}},
		}}
	q.OverTime, q.TimeToConvert = "", true
	if res, err = e.RunFunnel(ctx, q); err != nil {
		t.Fatal(err)
	}
	type row struct {
		value  string
		counts []int64
		median *float64
		hist   []int64
	}
	var rows []row
	for _, b := range res.Breakdown {
		r := row{value: "<other>", median: b.TimeToConvert[0].MedianSeconds}
		if b.BreakdownValue != nil {
			r.value = *b.BreakdownValue
		}
		for _, st := range b.Steps {
			r.counts = append(r.counts, st.Count)
		}
		for _, h := range b.TimeToConvert[0].Histogram {
			r.hist = append(r.hist, h.Count)
		}
		rows = append(rows, r)
	}
	sec := func(f float64) *float64 { return &f }
	wantRows := []row{{"Chrome", []int64{3, 2}, sec(90), hist(3, 2)}, {"", []int64{0, 0}, nil, hist(0, 0)}, {"<other>", []int64{1, 1}, sec(20), hist(1, 1)}}
	if !reflect.DeepEqual(rows, wantRows) {
		t.Errorf("time to convert rows %+v, want %+v", rows, wantRows)
	}
	if m := res.TimeToConvert[0].MedianSeconds; m == nil || *m != 90 || res.Steps[1].Count != 4 || res.OverTime != nil {
		t.Errorf("time to convert, whole funnel: %+v", res)
	}

	// Without a breakdown: no rows, no top values asked.
	s.sent = nil
	q.Breakdown, q.BreakdownLimit = nil, 0
	s.times.Breakdown = nil
	if res, err = e.RunFunnel(ctx, q); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(res); strings.Contains(string(got), "breakdown") || s.sent != nil {
		t.Errorf("time to convert without a breakdown: %s, top values %q", got, s.sent)
	}
}
