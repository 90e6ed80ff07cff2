package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// A board of 8 tiles fully loaded (issue 40, item 7's performance target,
// docs/dashboard.md, "Dashboards"): a dashboard of eight saved queries
// (four trends, two funnels, a retention table and a paths query, over the
// benchmark's events), every tile's run sent at once as the Dashboards
// page sends them, timed until the last answer.

// boardDefinitions are the eight saved queries of the benchmark's board.
func boardDefinitions() []map[string]any {
	trend := func(event, math, breakdown string) map[string]any {
		d := map[string]any{"series": []map[string]any{{"event": event, "math": math}}, "interval": "day"}
		if breakdown != "" {
			d["breakdown"] = breakdown
		}
		return map[string]any{"kind": "trend", "name": event + " " + math + " " + breakdown, "definition": d}
	}
	funnel := func(steps ...string) map[string]any {
		s := []map[string]any{}
		for _, e := range steps {
			s = append(s, map[string]any{"event": e})
		}
		return map[string]any{"kind": "funnel", "name": fmt.Sprint(steps), "definition": map[string]any{"steps": s, "windowHours": 24}}
	}
	return []map[string]any{
		trend("$pageview", "total", ""),
		trend("$pageview", "unique_users", ""),
		trend("signup", "total", ""),
		trend("$pageview", "total", "browser"),
		funnel("$pageview", "button_clicked", "form_submitted"),
		funnel("$pageview", "signup", "purchase"),
		{"kind": "retention", "name": "retention", "definition": map[string]any{"startEvent": "$pageview", "returnEvent": "$pageview", "period": "week"}},
		{"kind": "paths", "name": "paths", "definition": map[string]any{"kind": "event", "start": "$pageview"}},
	}
}

// errNoBoards is a build from before dashboards (a previous build timed with
// -strata): it has no board to time.
var errNoBoards = errors.New("this build has no dashboards")

// makeBoard saves the board's queries and the board with a tile for each
// on srv with the query token tok, and returns the requests of its tiles'
// runs over from..to.
func makeBoard(srv *server, tok string, from, to time.Time) ([]benchQuery, error) {
	client := &http.Client{Timeout: time.Minute}
	post := func(path string, body any) (map[string]any, error) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.url+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusNotFound && path == "/api/v1/boards" {
			return nil, errNoBoards
		}
		if resp.StatusCode != http.StatusCreated {
			return nil, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, out)
		}
		var m map[string]any
		return m, json.Unmarshal(out, &m)
	}
	board, err := post("/api/v1/boards", map[string]any{"name": "bench"})
	if err != nil {
		return nil, err
	}
	id := int64(board["id"].(float64))
	var reqs []benchQuery
	for _, def := range boardDefinitions() {
		q, err := post("/api/v1/queries", def)
		if err != nil {
			return nil, err
		}
		t, err := post(fmt.Sprintf("/api/v1/boards/%d/tiles", id), map[string]any{"queryId": int64(q["id"].(float64))})
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, benchQuery{name: fmt.Sprintf("tile %s: %s", def["kind"], def["name"]), method: "POST",
			path: fmt.Sprintf("/api/v1/boards/%d/tiles/%d/run?dateFrom=%s&dateTo=%s", id, int64(t["id"].(float64)),
				from.Format("2006-01-02"), to.Format("2006-01-02"))})
	}
	return reqs, nil
}

// timeBoard makes the board on srv and times its tiles, all at once.
func timeBoard(bin, dataDir string, srv *server, from, to time.Time, runs int) ([]benchQuery, overviewResult, error) {
	tok, err := token(bin, dataDir)
	if err != nil {
		return nil, overviewResult{}, err
	}
	reqs, err := makeBoard(srv, tok, from, to)
	if err != nil {
		return nil, overviewResult{}, fmt.Errorf("making the board: %w", err)
	}
	res, err := timeOverview(srv, tok, reqs, runs)
	return reqs, res, err
}

// printBoard prints the board's time until the last tile, and each tile's.
func printBoard(reqs []benchQuery, res overviewResult, from, to time.Time, runs int) {
	fmt.Printf("\nA board of %d tiles, %s to %s, every tile at once (%d runs after a warm-up)\n", len(reqs),
		from.Format("2006-01-02"), to.Format("2006-01-02"), runs)
	n := 0
	for _, f := range res.failed {
		n += f
	}
	fmt.Printf("%-60s %10s %10s  (target ≤ 2000 ms); %d of %d refused\n", "whole board until the last tile: median, max",
		ms(median(res.walls)), ms(slices.Max(res.walls)), n, len(reqs)*runs)
	for i, q := range reqs {
		fmt.Printf("%-60s %10s %10s alone", q.name, ms(median(res.each[i])), ms(res.alone[i]))
		if res.failed[i] > 0 {
			fmt.Printf("  (%s)", res.why[i])
		}
		fmt.Println()
	}
}
