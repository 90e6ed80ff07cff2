package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"strata/internal/admin"
	"strata/internal/analytics"
	"strata/internal/enrich/bots"
	"strata/internal/enrich/ua"
	"strata/internal/errtrack"
	"strata/internal/importer"
	"strata/internal/ingest"
	profiles "strata/internal/persons"
	"strata/internal/store/duckdb"
	"strata/internal/store/spool"
)

// The pacing of an import into a running server, as the spec's migration
// example: batches of 500 events, half a second apart, so that a backfill
// never crowds out live traffic; and a --fast import's batch.
const (
	pacedBatch = 500
	pacedPause = 500 * time.Millisecond
	fastBatch  = 10000
)

// importCmd is `strata import --from SOURCE --product ID FILE…`
// (docs/import.md): paced through the running server's admin socket, or
// with --fast unpaced into a data directory no server holds; --dry-run
// maps every record and prints the report without writing.
func importCmd(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", lookupOr(env.Lookup, "STRATA_DATA", "./data"), "data directory")
	from := fs.String("from", "", "the source: posthog, mixpanel, amplitude, umami or ga4")
	product := fs.Int64("product", 0, "the product to import into")
	testEnv := fs.Bool("test", false, "import as test data")
	fast := fs.Bool("fast", false, "unpaced, straight into a stopped data directory")
	dryRun := fs.Bool("dry-run", false, "map every record and report, writing nothing")
	batch := fs.Int("batch", 0, "events per batch (default 500, 10000 with --fast)")
	pause := fs.Duration("pause", -1, "pause after each batch (default 0.5s, none with --fast)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	src, ok := importer.SourceNamed(*from)
	if !ok {
		names := []string{}
		for _, s := range importer.Sources() {
			names = append(names, s.Name())
		}
		return usageError{fmt.Sprintf("import needs --from, one of %s", strings.Join(names, ", "))}
	}
	if len(files) == 0 {
		return usageError{"import needs at least one FILE"}
	}
	if *product <= 0 && !*dryRun {
		return usageError{"import needs --product ID"}
	}
	opt := importer.Options{Source: src, Batch: *batch, Pause: *pause, DryRun: *dryRun}
	if opt.Batch <= 0 {
		opt.Batch = pacedBatch
		if *fast {
			opt.Batch = fastBatch
		}
	}
	opt.Batch = min(opt.Batch, importer.MaxBatch)
	if opt.Pause < 0 {
		opt.Pause = pacedPause
		if *fast || *dryRun {
			opt.Pause = 0
		}
	}
	envName := analytics.EnvLive
	if *testEnv {
		envName = analytics.EnvTest
	}
	opt.Progress = progressLine(env.Stderr)

	var sink importer.Sink
	if !*dryRun {
		opt.Checkpoints = filepath.Join(*dataDir, "imports")
		opt.Scope = fmt.Sprintf("product%d-%s", *product, envName)
		c, db, err := dialOrOpen(ctx, *dataDir)
		if err != nil {
			return err
		}
		switch {
		case c != nil && *fast:
			return analytics.Errorf(analytics.KindConflict, "server_running",
				"A server holds %s: --fast writes only into a stopped data directory. Stop the server, or drop --fast to import paced through it.", *dataDir)
		case c != nil:
			sink = admin.ImportSink{Client: c, Product: *product, Env: envName}
		default:
			local, closeStore, err := openImportTarget(ctx, db, *dataDir, *product, envName)
			if err != nil {
				return err
			}
			defer closeStore()
			sink = local
		}
	}
	rep, err := importer.Run(ctx, sink, opt, files...)
	if opt.Progress != nil {
		fmt.Fprintln(env.Stderr)
	}
	printImportReport(env.Stdout, rep, *dryRun)
	if err != nil {
		return err
	}
	if rep.Records() > 0 && rep.Imported == 0 && rep.Duplicates == 0 {
		return errors.New("nothing could be imported: see the reasons above")
	}
	return nil
}

// openImportTarget makes a data directory no server holds the target of
// an import: the spool replays what an unclean stop left, then the events
// go through the ingest pipeline straight into the store.
func openImportTarget(ctx context.Context, db *duckdb.Store, dataDir string, product int64, env analytics.Env) (importer.Sink, func(), error) {
	if _, err := db.Product(ctx, product); err != nil {
		db.Close()
		return nil, nil, err
	}
	// Person profiles are updated from the imported events as from
	// ingested ones (docs/ingest.md, "Person profiles"); closing the spool
	// writes the last of them, then closes the store.
	people := profiles.New(profiles.Options{})
	people.Start(db)
	inner := profiles.Inner{Inner: db, Updater: people}
	sp, err := spool.Open(ctx, inner, spool.Options{Dir: filepath.Join(dataDir, "spool")})
	if err != nil {
		people.Close()
		db.Close()
		return nil, nil, err
	}
	target := &importer.Target{
		Pipeline: &ingest.Pipeline{UA: ua.NewParser(50000, bots.Default()), Exceptions: errtrack.NewProcessor(db, 64<<20)},
		Stored:   db,
		Write: func(ctx context.Context, ps []ingest.Pending) error {
			events := make([]analytics.Event, len(ps))
			for i := range ps {
				events[i] = ps[i].Event
			}
			return inner.AppendEvents(ctx, events)
		},
		Now: time.Now,
	}
	return importer.Local{Target: target, Product: product, Env: env}, func() { sp.Close() }, nil
}

// progressLine reports an import's progress on w: one line rewritten in
// place on a terminal, a line every five seconds otherwise.
func progressLine(w io.Writer) func(importer.Progress) {
	f, ok := w.(*os.File)
	terminal := false
	if ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			terminal = true
		}
	}
	var last time.Time
	return func(p importer.Progress) {
		if !terminal && time.Since(last) < 5*time.Second {
			return
		}
		last = time.Now()
		rate := float64(p.Records) / max(p.Elapsed.Seconds(), 0.001)
		line := fmt.Sprintf("%d records · %.0f/s", p.Records, rate)
		if p.BytesTotal > 0 {
			share := float64(p.BytesDone) / float64(p.BytesTotal)
			line += fmt.Sprintf(" · %.0f%%", 100*share)
			if share > 0 && share < 1 {
				left := time.Duration(float64(p.Elapsed) * (1 - share) / share).Round(time.Second)
				line += " · " + left.String() + " left"
			}
		}
		if terminal {
			fmt.Fprintf(w, "\r%-70s", line)
		} else {
			fmt.Fprintln(w, line)
		}
	}
}

// printImportReport writes what an import did, or would do.
func printImportReport(w io.Writer, rep importer.Report, dryRun bool) {
	verb := "imported"
	if dryRun {
		verb = "would import (dry run, nothing written)"
	}
	rate := float64(rep.Imported) / max(rep.Elapsed.Seconds(), 0.001)
	fmt.Fprintf(w, "%s %d events from %s in %s (%.0f events/s)\n", verb, rep.Imported, rep.Source, rep.Elapsed.Round(time.Millisecond), rate)
	if rep.Duplicates > 0 {
		fmt.Fprintf(w, "already stored (left out): %d\n", rep.Duplicates)
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "resumed: %d records stored by an earlier run were not read again\n", rep.Skipped)
	}
	for _, name := range rep.Done {
		fmt.Fprintf(w, "already imported whole by an earlier run: %s\n", name)
	}
	for _, part := range []struct {
		title  string
		counts map[string]int
	}{{"refused by the event contract", rep.Refused}, {"not mapped", rep.Unmapped}} {
		for _, reason := range importer.Reasons(part.counts) {
			fmt.Fprintf(w, "%s: %s %d (first: %s)\n", part.title, reason, part.counts[reason], rep.Examples[reason])
		}
	}
	for _, name := range importer.Reasons(rep.Names) {
		fmt.Fprintf(w, "event %s: %d\n", name, rep.Names[name])
	}
}
