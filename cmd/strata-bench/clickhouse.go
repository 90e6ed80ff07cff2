package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/store/clickhouse"
	"strata/internal/store/clickhouse/chtest"
	"strata/internal/store/postgres/pgtest"
)

// The ClickHouse half of the query benchmark (issue 4): the same events
// through a Strata node whose events live in a local clickhouse-server,
// the same queries over HTTP, and the funnel next to ClickHouse's own
// windowFunnel.

const benchDatabase = "strata_bench"

// clickHouseRun is one clickhouse-server started for the benchmark.
type clickHouseRun struct {
	server *chtest.Server
}

func startClickHouse() (*clickHouseRun, error) {
	servers, err := chtest.StartServers(1)
	if err != nil {
		for _, s := range servers {
			s.Stop()
		}
		return nil, err
	}
	return &clickHouseRun{server: servers[0]}, nil
}

func (c *clickHouseRun) stop() { c.server.Stop() }

// bench ingests events through a Strata node on ClickHouse and times the
// queries. Before timing, the table's parts are merged (OPTIMIZE … FINAL),
// as ClickHouse's background merges would have done a while after a load.
func (c *clickHouseRun) bench(bin, dataDir string, events []queryEvent, expID int64, from, to time.Time, queries []benchQuery, runs int) (backendResult, error) {
	r := backendResult{name: "ClickHouse"}
	srv, tok, err := startWithToken(bin, dataDir, "--events", c.server.URL(benchDatabase, ""))
	if err != nil {
		return r, err
	}
	defer srv.stop()
	// The experiment's results are read by the same path on both nodes:
	// each new node's first experiment has the same id.
	if id, err := benchExperiment(srv, tok, from, to); err != nil {
		return r, err
	} else if id != expID {
		return r, fmt.Errorf("the ClickHouse node's experiment is %d, the embedded one's %d", id, expID)
	}
	if r.ingest, err = ingestEvents(srv, events, expID, 500, 8); err != nil {
		return r, err
	}
	fmt.Printf("ClickHouse: ingest through POST /e: %.0f events/s\n", r.ingest)
	if _, err := c.settle(); err != nil {
		return r, err
	}
	return r, timeQueries(bin, dataDir, srv, queries, runs, &r)
}

// overview times the whole Overview (overview.go) on a Strata node whose
// events live in ClickHouse and its metadata in PostgreSQL, as a cluster's
// nodes run (docs/deploy.md). The events are not sent over HTTP, which
// takes too long at 10 M on this machine: they go through the ingest
// pipeline in process as the embedded store's direct load does
// (pipelineLoad, the same generated events), inserted by the ClickHouse
// store's AppendEvents in blocks of loadBatch into the events table the
// node created. expID is the embedded node's experiment, whose id the
// exposures carry: a new node's first experiment has the same one.
func (c *clickHouseRun) overview(bin, nodeDir string, events []queryEvent, expID int64, from, to time.Time, ranges []overviewRange, runs int) ([]overviewResult, error) {
	ctx := context.Background()
	metaURL, stopMeta, err := pgtest.Run(ctx)
	if err != nil {
		return nil, err
	}
	defer stopMeta()
	eventsURL := c.server.URL(benchDatabase, "")
	srv, err := startServer(bin, nodeDir, "--events", eventsURL, "--meta", metaURL)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	out, err := exec.Command(bin, "tokens", "create", "--product", "1", "--data", nodeDir, "--meta", metaURL).Output()
	if err != nil {
		return nil, fmt.Errorf("creating a token: %w", err)
	}
	tok := strings.TrimSpace(string(out))
	if id, err := benchExperiment(srv, tok, from, to); err != nil {
		return nil, err
	} else if id != expID {
		return nil, fmt.Errorf("the ClickHouse node's experiment is %d, the embedded one's %d", id, expID)
	}

	st, err := clickhouse.Open(ctx, eventsURL)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = pipelineLoad(events, expID, st.AppendEvents)
	st.Close()
	if err != nil {
		return nil, fmt.Errorf("loading ClickHouse: %w", err)
	}
	fmt.Printf("ClickHouse: loaded in process through the ingest pipeline: %.0f events/s\n", float64(len(events))/time.Since(start).Seconds())
	stored, err := c.settle()
	if err != nil {
		return nil, err
	}
	if stored != len(events) {
		return nil, fmt.Errorf("ClickHouse holds %d events of the %d loaded", stored, len(events))
	}
	return timeOverviewsWith(srv, tok, ranges, runs)
}

// settle merges the events table's parts (merge), prints how many there
// were and how long it took, and returns how many events it holds.
func (c *clickHouseRun) settle() (int, error) {
	conn, err := c.conn()
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	start := time.Now()
	before, err := c.merge(conn)
	if err != nil {
		return 0, err
	}
	after, err := c.activeParts(conn)
	if err != nil {
		return 0, err
	}
	var stored uint64
	if err := conn.QueryRow(clickHouseContext(), "SELECT count() FROM "+benchDatabase+".events").Scan(&stored); err != nil {
		return 0, err
	}
	fmt.Printf("ClickHouse: %d events stored, %d parts merged into %d in %s\n", stored, before, after, time.Since(start).Round(time.Millisecond))
	return int(stored), nil
}

// merge merges each partition of the events table into one part, as
// background merges would in time (18.16 merges one partition per OPTIMIZE,
// so each is named), and returns how many parts there were.
func (c *clickHouseRun) merge(conn driver.Conn) (int, error) {
	ctx := clickHouseContext()
	n, err := c.activeParts(conn)
	if err != nil {
		return 0, err
	}
	rows, err := conn.Query(ctx, "SELECT DISTINCT partition FROM system.parts WHERE database = ? AND table = 'events' AND active", benchDatabase)
	if err != nil {
		return 0, err
	}
	var partitions []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return 0, err
		}
		partitions = append(partitions, p)
	}
	rows.Close()
	for _, p := range partitions {
		// p is a partition value the server listed (a YYYYMM number).
		if _, err := strconv.Atoi(p); err != nil {
			return 0, fmt.Errorf("unexpected partition %q", p)
		}
		if err := conn.Exec(ctx, "OPTIMIZE TABLE "+benchDatabase+".events PARTITION "+p+" FINAL"); err != nil {
			return 0, fmt.Errorf("merging partition %s: %w", p, err)
		}
	}
	return n, nil
}

func (c *clickHouseRun) activeParts(conn driver.Conn) (int, error) {
	var n uint64
	err := conn.QueryRow(clickHouseContext(), "SELECT count() FROM system.parts WHERE database = ? AND table = 'events' AND active", benchDatabase).Scan(&n)
	return int(n), err
}

func (c *clickHouseRun) conn() (driver.Conn, error) {
	return ch.Open(&ch.Options{Addr: []string{c.server.Addr}})
}

// clickHouseContext lets a long statement run.
func clickHouseContext() context.Context {
	return ch.Context(context.Background(), ch.WithSettings(ch.Settings{"max_execution_time": 600}))
}

// windowFunnelSQL is the funnel as a ClickHouse user would write it with
// the built-in: 18.16's windowFunnel takes DateTime or UInt32 times, so
// seconds, and its window runs from the first step, not from the previous
// one, and it does not require strictly later steps. It answers a looser
// question than Strata's rules, and is the fastest thing ClickHouse has.
const windowFunnelSQL = `
SELECT countIf(level >= 1), countIf(level >= 2), countIf(level >= 3) FROM (
  SELECT user_id, windowFunnel(86400)(toUInt32(intDiv(ts, 1000000)),
      event = '$pageview', event = 'button_clicked', event = 'form_submitted') AS level
  FROM ` + benchDatabase + `.events
  WHERE product_id = 1 AND env = 'live' AND is_bot = 0
    AND event IN ('$pageview', 'button_clicked', 'form_submitted') AND ts >= ? AND ts < ?
  GROUP BY user_id)`

// compareWindowFunnel times Strata's funnel (the query engine on the
// ClickHouse store, in this process) and windowFunnel, alternating.
func (c *clickHouseRun) compareWindowFunnel(from, to time.Time, runs int) (funnelPair, error) {
	ctx := context.Background()
	st, err := clickhouse.Open(ctx, c.server.URL(benchDatabase, ""))
	if err != nil {
		return funnelPair{}, err
	}
	defer st.Close()
	conn, err := c.conn()
	if err != nil {
		return funnelPair{}, err
	}
	defer conn.Close()
	var p funnelPair
	p.strata, p.plain, err = alternate(runs, strataFunnel(st, from, to, &p.strataCounts), func() error {
		var n [3]uint64
		if err := conn.QueryRow(clickHouseContext(), windowFunnelSQL, from.UnixMicro(), to.UnixMicro()).Scan(&n[0], &n[1], &n[2]); err != nil {
			return err
		}
		for k := range n {
			p.plainCounts[k] = int64(n[k])
		}
		return nil
	})
	return p, err
}
