package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRetentionPerProduct sets a product's retention periods through the
// settings API of the real binary, with a one-second job interval: the
// events of the local days before the last three, and the error
// occurrences of the days before today, leave the trends, while the rest,
// and another product's same events, stay. Bad periods are refused and
// change nothing.
func TestRetentionPerProduct(t *testing.T) {
	checkRetention(t, startServer(t, t.TempDir(), "--retention-interval", "1s"))
}

// TestRetentionOnClickHouse is the same on two nodes over ClickHouse and
// PostgreSQL, both running the job: the lease holder deletes the events
// by mutations.
func TestRetentionOnClickHouse(t *testing.T) {
	a, _ := startNodes(t, "--retention-interval", "1s")
	checkRetention(t, a)
}

// checkRetention is the scenario of TestRetentionPerProduct on s.
func checkRetention(t *testing.T, s *server) {
	b := setupOwner(t, s)
	// Two minutes ago, so that the newest event is never in the future;
	// each day before it has one visit and one error occurrence.
	base := time.Now().UTC().Add(-2 * time.Minute)
	from, to := base.AddDate(0, 0, -6).Format(time.DateOnly), base.Format(time.DateOnly)
	products := map[string]string{}
	for _, name := range []string{"Short", "Long"} {
		r := b.do(t, "POST", "/api/v1/products", map[string]string{"name": name})
		if r.Status != 201 {
			t.Fatalf("create product: %d %s", r.Status, r.Body)
		}
		pid := jsonNumber(int64(r.JSON(t)["id"].(float64)))
		products[name] = pid
		key, _ := b.do(t, "POST", "/api/v1/products/"+pid+"/keys", map[string]string{"env": "live"}).JSON(t)["secret"].(string)
		var events []map[string]any
		for i := range 7 {
			at := base.AddDate(0, 0, -i)
			events = append(events, map[string]any{"event_name": "visit", "distinct_id": fmt.Sprint("u", i), "timestamp": at.Format(time.RFC3339Nano)},
				exception("fp1", fmt.Sprint("u", i), at))
		}
		if r := postEvents(t, s, key, events...); r.Status != 202 {
			t.Fatalf("ingest: %d %s", r.Status, r.Body)
		}
	}
	// trend returns the daily counts of event over the seven days.
	trend := func(pid, event string) []int64 {
		t.Helper()
		var got trendAnswer
		r := b.do(t, "POST", "/api/v1/query/trend?product="+pid, map[string]any{
			"series": []map[string]string{{"event": event}}, "interval": "day", "dateFrom": from, "dateTo": to})
		if r.Status != 200 {
			t.Fatalf("trend: %d %s", r.Status, r.Body)
		}
		if err := json.Unmarshal(r.Body, &got); err != nil || len(got.Series) != 1 {
			t.Fatalf("trend answer %s: %v", r.Body, err)
		}
		var values []int64
		for _, p := range got.Series[0].Data {
			values = append(values, p.Value)
		}
		return values
	}
	// waitFor polls until every trend has its counts.
	waitFor := func(what string, want map[[2]string][]int64) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			got := map[[2]string][]int64{}
			for k := range want {
				got[k] = trend(products[k[0]], k[1])
			}
			if reflect.DeepEqual(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v; want %v\n%s", what, got, want, s.Logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	all := []int64{1, 1, 1, 1, 1, 1, 1}
	waitFor("stored", map[[2]string][]int64{{"Short", "visit"}: all, {"Short", "$exception"}: all, {"Long", "visit"}: all})

	short := "/api/v1/products/" + products["Short"] + "/retention"
	periods := func(events, errors, replays float64) map[string]any {
		return map[string]any{"eventsDays": events, "errorsDays": errors, "replaysDays": replays, "replayDefaultDays": 30.0}
	}
	if r := b.do(t, "GET", short, nil); r.Status != 200 || !reflect.DeepEqual(r.JSON(t), periods(0, 0, 0)) {
		t.Errorf("GET retention: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		body any
		code string
	}{
		{map[string]int{"eventsDays": 5000}, "invalid_retention"},
		{map[string]int{"errorsDays": -1}, "invalid_retention"},
		{map[string]any{}, "invalid_request"},
		{map[string]any{"eventsDays": 3, "days": 1}, "invalid_request"},
	} {
		if r := b.do(t, "PUT", short, c.body); r.Status != 400 || r.ErrorCode(t) != c.code {
			t.Errorf("PUT %v: %d %s; want 400 %s", c.body, r.Status, r.Body, c.code)
		}
	}
	// Nothing was deleted by the refusals.
	time.Sleep(1500 * time.Millisecond)
	waitFor("after the refusals", map[[2]string][]int64{{"Short", "visit"}: all, {"Short", "$exception"}: all})

	r := b.do(t, "PUT", short, map[string]int{"eventsDays": 3, "errorsDays": 1})
	if r.Status != 200 || !reflect.DeepEqual(r.JSON(t), periods(3, 1, 0)) {
		t.Fatalf("PUT retention: %d %s", r.Status, r.Body)
	}
	if got := b.do(t, "GET", "/api/v1/products/"+products["Short"], nil).JSON(t)["retention"]; !reflect.DeepEqual(got,
		map[string]any{"eventsDays": 3.0, "errorsDays": 1.0, "replaysDays": 0.0}) {
		t.Errorf("the product's retention: %v", got)
	}
	// The change is in the product's audit log, the refusals are not.
	log := b.do(t, "GET", "/api/v1/products/"+products["Short"]+"/audit-log", nil).JSON(t)["items"].([]any)
	if len(log) != 1 || log[0].(map[string]any)["action"] != "privacy_setting_changed" ||
		!strings.Contains(log[0].(map[string]any)["summary"].(string), "events 3, errors 1, replays 0") {
		t.Errorf("the audit log after one change and three refusals: %v", log)
	}
	waitFor("after the job", map[[2]string][]int64{
		{"Short", "visit"}:      {0, 0, 0, 0, 1, 1, 1},
		{"Short", "$exception"}: {0, 0, 0, 0, 0, 0, 1},
		{"Long", "visit"}:       all,
		{"Long", "$exception"}:  all,
	})
}
