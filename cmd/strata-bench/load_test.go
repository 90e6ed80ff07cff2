package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDirectLoadAnswersAsIngest loads the same events into two data
// directories, one through POST /e of a running server and one in process
// (directLoad, what the heavy suite uses for 100 M events), and asks both
// servers every query of the benchmark: the answers must be the same, so
// that figures measured over directly loaded data hold for ingested data.
// The experiment's results are among them, so the exposures must be there
// too.
func TestDirectLoadAnswersAsIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	bin := buildStrata(t)
	const days = 30
	start, from, to := benchDays(days)
	events := generateEvents(40_000, 2_000, days, start)

	answers := func(direct bool) [][]byte {
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
		if direct {
			srv.stop()
			if _, err := directLoad(dataDir, events, expID); err != nil {
				t.Fatal(err)
			}
			if srv, err = startServer(bin, dataDir); err != nil {
				t.Fatal(err)
			}
		} else if _, err := ingestEvents(srv, events, expID, 500, 4); err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for _, q := range benchQueries(from, to, expID) {
			_, _, answer, err := timeQuery(srv, tok, q, 1)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, answer)
		}
		return out
	}
	ingested, loaded := answers(false), answers(true)
	named := map[string][]byte{}
	for i, q := range benchQueries(from, to, 1) {
		if !bytes.Equal(ingested[i], loaded[i]) {
			t.Errorf("%s: through POST /e %s\nloaded in process %s", q.name, ingested[i], loaded[i])
		}
		named[strings.Fields(q.name)[0]+" "+strings.Fields(q.name)[1]] = loaded[i]
	}
	// The data must exercise what the queries read: bots, browsers and
	// both arms of the experiment.
	var res struct {
		Arms []struct {
			Variant string
			Exposed int64
		}
		Holdout int64
	}
	// The answers are found by their queries' names: benchQueries grows.
	results, bots := named["experiment results"], named["AI bots"]
	if err := json.Unmarshal(results, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Arms) != 2 || res.Arms[0].Exposed < 100 || res.Arms[1].Exposed < 100 || res.Holdout < 20 {
		t.Errorf("experiment results over too few exposures: %s", results)
	}
	if !bytes.Contains(bots, []byte("GPTBot")) {
		t.Errorf("no AI bot in the bots panel: %s", bots)
	}
}

// buildStrata builds the server into the test's directory.
func buildStrata(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "strata")
	build := exec.Command("go", "build", "-o", bin, "./cmd/strata")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building strata: %v\n%s", err, out)
	}
	return bin
}

// benchDays are the first day of a benchmark's days days, ending
// yesterday (UTC), and the first and last day the queries ask for.
func benchDays(days int) (start, from, to time.Time) {
	start = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -days)
	return start, start, start.AddDate(0, 0, days-1)
}
