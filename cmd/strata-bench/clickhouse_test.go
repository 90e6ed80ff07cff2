package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"strata/internal/store/clickhouse/chtest"
)

// TestClickHouseOverviewAnswersAsDuckDB loads the same generated events
// into the embedded store (directLoad) and into a ClickHouse node with its
// metadata in PostgreSQL (clickHouseRun.overview, which loads in process
// too), and times the whole Overview on both: every answer but visitors
// now (a count at the moment asked) must be the same, so that the two
// stores' figures in docs/benchmarks.md are over the same events.
func TestClickHouseOverviewAnswersAsDuckDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ClickHouse, PostgreSQL and two servers")
	}
	chtest.Skip(t)
	bin := buildStrata(t)
	const days = 30
	start, from, to := benchDays(days)
	events := generateEvents(20_000, 1_000, days, start)
	ranges := overviewRanges(from, to)

	dataDir := filepath.Join(t.TempDir(), "data")
	srv, tok, err := startWithToken(bin, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.stop() }()
	expID, err := benchExperiment(srv, tok, from, to)
	if err != nil {
		t.Fatal(err)
	}
	srv.stop()
	if _, err := directLoad(dataDir, events, expID); err != nil {
		t.Fatal(err)
	}
	if srv, err = startServer(bin, dataDir); err != nil {
		t.Fatal(err)
	}
	duck, err := timeOverviews(bin, dataDir, srv, ranges, 1)
	if err != nil {
		t.Fatal(err)
	}

	ch, err := startClickHouse()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.stop()
	house, err := ch.overview(bin, filepath.Join(t.TempDir(), "ch-node"), events, expID, from, to, ranges, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range ranges {
		for i, q := range overviewRequests(r.from, r.to) {
			if q.path == "/api/v1/query/live" {
				continue
			}
			d, c := duck[k], house[k]
			if d.failed[i] > 0 || c.failed[i] > 0 {
				t.Errorf("%s, %s: refused (DuckDB %q, ClickHouse %q)", r.name, q.name, d.why[i], c.why[i])
				continue
			}
			if !bytes.Equal(d.answers[i], c.answers[i]) {
				t.Errorf("%s, %s: DuckDB answered %s, ClickHouse %s", r.name, q.name, d.answers[i], c.answers[i])
			}
		}
	}
}
