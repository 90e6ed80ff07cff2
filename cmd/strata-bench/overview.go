package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// The whole Overview (issue 37's performance target): every request the
// dashboard's Overview page sends for a range, sent at once as the page
// sends them, timed until the last answer. The requests follow
// dashboard/src/pages/Overview.tsx and the components it renders: for the
// range and for the previous period of the same length (components/
// OverviewPeriod.ts), the two-line trend of visitors and page views (whose
// visitors line carries the unique visitors over the period as its total)
// and the sessions query; for the range alone, the event names (EventInput.tsx),
// the top pages and top sources (BreakdownCard.tsx), the countries
// (Countries.tsx), the first tab of the devices (Devices.tsx, browsers),
// the chart's annotations, and the visitors now (LiveVisitors.tsx).

// overviewRange is one range the Overview is timed over.
type overviewRange struct {
	name     string
	from, to time.Time // days, inclusive
}

// previousDays is the range of the same length as from..to that ends the
// day before from, as the dashboard's previousPeriod computes it.
func previousDays(from, to time.Time) (time.Time, time.Time) {
	end := from.AddDate(0, 0, -1)
	return end.Add(-to.Sub(from)), end
}

// rangeInterval is the chart's bucket for a range, as the Overview picks
// it: hours up to 2 days, days up to 90, then weeks.
func rangeInterval(from, to time.Time) string {
	days := int(to.Sub(from).Hours()/24) + 1
	switch {
	case days <= 2:
		return "hour"
	case days <= 90:
		return "day"
	}
	return "week"
}

// overviewRequests are the requests of the Overview over from..to.
func overviewRequests(from, to time.Time) []benchQuery {
	day := func(t time.Time) string { return t.Format("2006-01-02") }
	interval := rangeInterval(from, to)
	period := func(label string, from, to time.Time) []benchQuery {
		dates := func(m map[string]any) map[string]any {
			m["dateFrom"], m["dateTo"] = day(from), day(to)
			return m
		}
		return []benchQuery{
			{label + ": visitors and page views by " + interval, "POST", "/api/v1/query/trend", dates(map[string]any{
				"series":   []map[string]any{{"event": "$pageview", "math": "unique_users"}, {"event": "$pageview", "math": "total"}},
				"interval": interval})},
			{label + ": sessions by month", "POST", "/api/v1/query/sessions", dates(map[string]any{"interval": "month"})},
		}
	}
	breakdown := func(name, property, math string, filters []map[string]any) benchQuery {
		return benchQuery{name, "POST", "/api/v1/query/trend", map[string]any{
			"series": []map[string]any{{"event": "$pageview", "math": math}}, "interval": "month",
			"breakdown": property, "breakdownLimit": 10, "filters": filters, "dateFrom": day(from), "dateTo": day(to)}}
	}
	pf, pt := previousDays(from, to)
	reqs := period("range", from, to)
	reqs = append(reqs, period("previous", pf, pt)...)
	return append(reqs,
		benchQuery{"event names", "GET", "/api/v1/query/events?" + url.Values{"dateFrom": {day(from)}, "dateTo": {day(to)}}.Encode(), nil},
		breakdown("top pages", "path", "total", []map[string]any{}),
		breakdown("top sources", "source", "total", []map[string]any{{"property": "source", "operator": "is_set"}}),
		breakdown("countries", "country", "unique_users", []map[string]any{}),
		breakdown("devices: browsers", "browser", "total", []map[string]any{}),
		benchQuery{"annotations", "GET", "/api/v1/annotations?" + url.Values{"from": {day(from)}, "to": {day(to)}, "pageSize": {"100"}}.Encode(), nil},
		benchQuery{"visitors now (live)", "GET", "/api/v1/query/live", nil},
	)
}

// overviewResult is one build's Overview over one range: the wall time of
// each run (all requests sent at once, until the last answer), each
// request's own times, and the last answers.
type overviewResult struct {
	walls   []time.Duration
	each    [][]time.Duration // by request, by run
	answers [][]byte
	// failed counts each request's runs that got no answer, and why the
	// last did not (the server refuses what waits too long for a query
	// slot: 503 server_busy).
	failed []int
	why    []string
	// alone is each request's median time sent alone, one after the
	// other: its own cost, without the wait for a query slot.
	alone []time.Duration
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// timeOverview sends reqs at once runs times, after one warm-up round, and
// returns the times. A request refused is counted, not retried, as the
// page shows the card's error: its time is until the refusal.
func timeOverview(srv *server, token string, reqs []benchQuery, runs int) (overviewResult, error) {
	client := &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: len(reqs)}}
	call := func(q benchQuery) ([]byte, time.Duration, error) {
		var body io.Reader
		if q.body != nil {
			raw, _ := json.Marshal(q.body)
			body = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(q.method, srv.url+q.path, body)
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		took := time.Since(start)
		if resp.StatusCode != 200 {
			var e struct{ Error struct{ Code string } }
			json.Unmarshal(out, &e)
			return nil, took, fmt.Errorf("%d %s", resp.StatusCode, e.Error.Code)
		}
		return out, took, nil
	}
	res := overviewResult{each: make([][]time.Duration, len(reqs)), answers: make([][]byte, len(reqs)),
		failed: make([]int, len(reqs)), why: make([]string, len(reqs))}
	for run := 0; run <= runs; run++ {
		var wg sync.WaitGroup
		errs := make([]error, len(reqs))
		took := make([]time.Duration, len(reqs))
		start := time.Now()
		for i, q := range reqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res.answers[i], took[i], errs[i] = call(q)
			}()
		}
		wg.Wait()
		wall := time.Since(start)
		for i, err := range errs {
			var netErr net.Error
			if errors.As(err, &netErr) {
				return overviewResult{}, fmt.Errorf("%s: %w", reqs[i].name, err)
			}
		}
		if run == 0 { // the warm-up
			continue
		}
		res.walls = append(res.walls, wall)
		for i := range reqs {
			res.each[i] = append(res.each[i], took[i])
			if errs[i] != nil {
				res.failed[i]++
				res.why[i] = errs[i].Error()
			}
		}
	}
	for _, q := range reqs {
		var times []time.Duration
		for range runs {
			_, took, err := call(q)
			if err != nil {
				return overviewResult{}, fmt.Errorf("%s alone: %w", q.name, err)
			}
			times = append(times, took)
		}
		res.alone = append(res.alone, median(times))
	}
	return res, nil
}

// overviewRanges are the ranges the Overview is timed over, from the
// benchmark's days from..to: all of them (every event in the range, an
// empty previous period), and their second half beside the first as its
// previous period (every event read once, half by each period).
func overviewRanges(from, to time.Time) []overviewRange {
	days := int(to.Sub(from).Hours()/24) + 1
	mid := from.AddDate(0, 0, days/2)
	return []overviewRange{
		{fmt.Sprintf("Overview, the %d days of events", days), from, to},
		{fmt.Sprintf("Overview, the last %d days (the previous %d the rest)", days-days/2, days-days/2), mid, to},
	}
}

// timeOverviews times the Overview over every range on srv, for the build
// named name.
func timeOverviews(bin, dataDir string, srv *server, ranges []overviewRange, runs int) ([]overviewResult, error) {
	tok, err := token(bin, dataDir)
	if err != nil {
		return nil, err
	}
	return timeOverviewsWith(srv, tok, ranges, runs)
}

// timeOverviewsWith times the Overview over every range on srv with the
// query token tok (a node whose metadata is in PostgreSQL makes its token
// with --meta).
func timeOverviewsWith(srv *server, tok string, ranges []overviewRange, runs int) ([]overviewResult, error) {
	var out []overviewResult
	for _, r := range ranges {
		res, err := timeOverview(srv, tok, overviewRequests(r.from, r.to), runs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// printOverviews prints each range's Overview, the builds side by side:
// the wall time (median and max) and each request's median, with whether
// the builds answered alike (visitors now aside, whose answer is a count
// at the moment asked).
func printOverviews(ranges []overviewRange, names []string, results [][]overviewResult, runs int) {
	for k, r := range ranges {
		fmt.Printf("\n%s: %s to %s, every request at once (%d runs after a warm-up)\n", r.name,
			r.from.Format("2006-01-02"), r.to.Format("2006-01-02"), runs)
		fmt.Printf("%-52s", "")
		for _, n := range names {
			fmt.Printf(" %21s %10s", n, "alone")
		}
		fmt.Println()
		fmt.Printf("%-52s", "whole Overview until the last answer: median, max; sum alone")
		for b := range names {
			res := results[b][k]
			var sum time.Duration
			for _, d := range res.alone {
				sum += d
			}
			fmt.Printf(" %10s %10s %10s", ms(median(res.walls)), ms(slices.Max(res.walls)), ms(sum))
		}
		fmt.Println("  (target ≤ 500 ms)")
		fmt.Printf("%-52s", "requests refused (of all runs)")
		for b := range names {
			n := 0
			for _, f := range results[b][k].failed {
				n += f
			}
			fmt.Printf(" %21s %10s", fmt.Sprintf("%d of %d", n, len(results[b][k].failed)*runs), "")
		}
		fmt.Println()
		for i, q := range overviewRequests(r.from, r.to) {
			fmt.Printf("%-52s", q.name)
			refused := false
			for b := range names {
				res := results[b][k]
				cell := ms(median(res.each[i]))
				if res.failed[i] > 0 {
					cell = fmt.Sprintf("%s (%d× %s)", cell, res.failed[i], res.why[i])
					refused = true
				}
				fmt.Printf(" %21s %10s", cell, ms(res.alone[i]))
			}
			// Each other column's answer against the first's.
			for b := 1; b < len(names) && q.path != "/api/v1/query/live" && !refused; b++ {
				if bytes.Equal(results[0][k].answers[i], results[b][k].answers[i]) {
					fmt.Printf("  same answer (%s)", names[b])
				} else {
					fmt.Printf("  ANSWERS DIFFER (%s)", names[b])
				}
			}
			fmt.Println()
		}
	}
}
