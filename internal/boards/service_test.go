package boards

import (
	"encoding/json"
	"testing"

	"strata/internal/analytics"
)

// TestApplyFilters checks how a board's filters join a tile's definition:
// appended to a trend's and a paths query's filters and to every funnel
// step's where (each ANDed with the tile's own, which stay), and to a
// retention query's filters; the other fields stay.
func TestApplyFilters(t *testing.T) {
	board := json.RawMessage(`[{"property":"country","operator":"eq","value":"FR"}]`)
	for _, c := range []struct {
		kind     analytics.QueryKind
		def, out string
	}{
		{analytics.QueryTrend, `{"series":[{"event":"a"}],"filters":[{"property":"path","operator":"eq","value":"/"}]}`,
			`{"filters":[{"property":"path","operator":"eq","value":"/"},{"property":"country","operator":"eq","value":"FR"}],"series":[{"event":"a"}]}`},
		{analytics.QueryTrend, `{"series":[{"event":"a"}]}`,
			`{"filters":[{"property":"country","operator":"eq","value":"FR"}],"series":[{"event":"a"}]}`},
		{analytics.QueryPaths, `{"kind":"event","start":"a","filters":null}`,
			`{"filters":[{"property":"country","operator":"eq","value":"FR"}],"kind":"event","start":"a"}`},
		{analytics.QueryFunnel, `{"steps":[{"event":"a","where":[{"property":"os","operator":"eq","value":"iOS"}]},{"event":"b"}],"windowHours":24}`,
			`{"steps":[{"event":"a","where":[{"property":"os","operator":"eq","value":"iOS"},{"property":"country","operator":"eq","value":"FR"}]},{"event":"b","where":[{"property":"country","operator":"eq","value":"FR"}]}],"windowHours":24}`},
		{analytics.QueryFunnel, `{"steps":["a",{"event":"b"}],"windowHours":24}`,
			`{"steps":[{"event":"a","where":[{"property":"country","operator":"eq","value":"FR"}]},{"event":"b","where":[{"property":"country","operator":"eq","value":"FR"}]}],"windowHours":24}`},
		{analytics.QueryRetention, `{"startEvent":"a"}`, `{"filters":[{"property":"country","operator":"eq","value":"FR"}],"startEvent":"a"}`},
	} {
		got, err := ApplyFilters(c.kind, json.RawMessage(c.def), board)
		if err != nil || string(got) != c.out {
			t.Errorf("%s %s:\n got %s %v\nwant %s", c.kind, c.def, got, err, c.out)
		}
	}
	for _, none := range []string{``, `[]`} {
		if got, _ := ApplyFilters(analytics.QueryTrend, json.RawMessage(`{"series":[]}`), json.RawMessage(none)); string(got) != `{"series":[]}` {
			t.Errorf("no board filters (%q): %s", none, got)
		}
	}
}
