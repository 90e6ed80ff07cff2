package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"strata/internal/admin"
	"strata/internal/analytics"
	profiles "strata/internal/persons"
	"strata/internal/privacy"
	"strata/internal/store/duckdb"
	"strata/internal/store/replayfs"
	"strata/internal/store/spool"
)

// persons runs `strata persons delete|export` (docs/privacy.md) and
// `strata persons rebuild` (docs/ingest.md): through the admin socket of
// the server that holds the data directory, or on the stopped embedded
// store itself, whose spool it replays first so that no acknowledged
// event is missed.
func persons(ctx context.Context, args []string, env Env) error {
	if len(args) < 1 {
		return usageError{"persons needs a subcommand: delete, export or rebuild"}
	}
	cmd := args[0]
	if cmd == "rebuild" {
		return rebuildPersons(ctx, args[1:], env)
	}
	if cmd != "delete" && cmd != "export" {
		return usageError{"unknown command \"persons " + cmd + "\""}
	}
	fs := flag.NewFlagSet("persons "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", lookupOr(env.Lookup, "STRATA_DATA", "./data"), "data directory")
	product := fs.Int64("product", 0, "product id")
	file := fs.String("file", "", "a file of distinct ids, one a line (delete)")
	ids, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	if err != nil {
		return usageError{err.Error()}
	}
	if *product <= 0 {
		return usageError{"persons " + cmd + " needs --product ID"}
	}
	if cmd == "export" && len(ids) != 1 {
		return usageError{"persons export needs exactly one distinct id"}
	}
	if *file != "" {
		if cmd != "delete" {
			return usageError{"--file is for persons delete"}
		}
		more, err := readIDs(*file)
		if err != nil {
			return err
		}
		ids = append(ids, more...)
	}
	if cmd == "delete" && len(ids) == 0 {
		return usageError{"persons delete needs distinct ids, as arguments or --file FILE"}
	}

	if c, err := admin.Dial(ctx, *dataDir); err == nil {
		if cmd == "export" {
			return c.ExportPerson(ctx, *product, ids[0], env.Stdout)
		}
		d, err := c.RequestDeletion(ctx, *product, ids)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stderr, "strata: deletion job %d of %d distinct ids accepted by the running server\n", d.ID, d.IDCount)
		for d.Status != analytics.DeletionDone && d.Status != analytics.DeletionFailed {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
			if d, err = c.Deletion(ctx, *product, d.ID); err != nil {
				return err
			}
		}
		return printDeletion(env.Stdout, d)
	}

	svc, closeAll, err := openPrivacy(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer closeAll()
	const actor = "cli (stopped store)"
	if cmd == "export" {
		return svc.Export(ctx, *product, actor, ids[0], env.Stdout)
	}
	d, err := svc.RequestDeletion(ctx, *product, actor, ids)
	if err != nil {
		return err
	}
	svc.RunPending(ctx)
	if d, err = svc.Deletion(ctx, *product, d.ID); err != nil {
		return err
	}
	return printDeletion(env.Stdout, d)
}

// rebuildPersons runs `strata persons rebuild --product ID`: a product's
// person profiles written from its stored events (persons.Rebuild), by the
// running server or on the stopped embedded store, then a line of what it
// wrote.
func rebuildPersons(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("persons rebuild", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", lookupOr(env.Lookup, "STRATA_DATA", "./data"), "data directory")
	product := fs.Int64("product", 0, "product id")
	capDefault, _ := strconv.ParseInt(lookupOr(env.Lookup, "STRATA_PERSONS_PER_PRODUCT", "10000000"), 10, 64)
	maxPersons := fs.Int64("persons-per-product", capDefault,
		"the cap on the product's persons, on a stopped store (a running server applies its own)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return err
	} else if err != nil {
		return usageError{err.Error()}
	}
	if *product <= 0 || fs.NArg() > 0 {
		return usageError{"persons rebuild needs --product ID and nothing else"}
	}
	var report profiles.RebuildReport
	if c, err := admin.Dial(ctx, *dataDir); err == nil {
		if err := c.RebuildPersons(ctx, *product, &report); err != nil {
			return err
		}
	} else {
		db, err := duckdb.Open(ctx, *dataDir, duckdb.Options{})
		if err != nil {
			return fmt.Errorf("opening %s (no server answered on its admin socket): %w", *dataDir, err)
		}
		// The spool's replay stores what an unclean stop left, and
		// updates the profiles as the server would.
		people := profiles.New(profiles.Options{MaxPersons: *maxPersons})
		people.Start(db)
		sp, err := spool.Open(ctx, profiles.Inner{Inner: db, Updater: people}, spool.Options{Dir: filepath.Join(*dataDir, "spool")})
		if err != nil {
			people.Close()
			db.Close()
			return err
		}
		defer sp.Close()
		if err := sp.Sync(ctx); err != nil {
			return err
		}
		if report, err = profiles.Rebuild(ctx, db, db, *product, profiles.Options{MaxPersons: *maxPersons}); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.Stdout, "rebuilt %d persons of product %d from their events (%d events set properties) in %.1f s\n",
		report.Persons, *product, report.TraitEvents, report.Seconds)
	return nil
}

// openPrivacy opens the stopped embedded store, its spool (which replays
// what an unclean stop left) and its replays, and the privacy service
// over them.
func openPrivacy(ctx context.Context, dataDir string) (*privacy.Service, func(), error) {
	db, err := duckdb.Open(ctx, dataDir, duckdb.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s (no server answered on its admin socket): %w", dataDir, err)
	}
	// The spool's replay updates the profiles as the server would; the
	// deletion then deletes them (docs/privacy.md).
	people := profiles.New(profiles.Options{})
	people.Start(db)
	sp, err := spool.Open(ctx, profiles.Inner{Inner: db, Updater: people}, spool.Options{Dir: filepath.Join(dataDir, "spool")})
	if err != nil {
		people.Close()
		db.Close()
		return nil, nil, err
	}
	files, err := replayfs.Open(filepath.Join(dataDir, "replay"), replayfs.Options{})
	if err != nil {
		sp.Close()
		return nil, nil, err
	}
	events := privacy.Events{Store: db, Sync: sp.Sync}
	svc := privacy.New(db, nil, events, privacy.Groups{Events: events}, privacy.Replays{Store: files},
		privacy.SurveyResponses{Store: db}, privacy.MessageStates{Store: db})
	svc.Profiles, svc.Flush = db, people.Flush
	return svc, func() { files.Close(); sp.Close() }, nil
}

// readIDs reads distinct ids one a line; empty lines are skipped, and a
// line is taken as it is but its line ending (an id may hold spaces).
func readIDs(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimRight(sc.Text(), "\r"); line != "" {
			ids = append(ids, line)
		}
	}
	return ids, sc.Err()
}

// printDeletion prints a finished job; a failed one is an error.
func printDeletion(w io.Writer, d analytics.PersonDeletion) error {
	if d.Status == analytics.DeletionFailed {
		return fmt.Errorf("deletion job %d failed: %s (run it again: every step may be repeated)", d.ID, d.Error)
	}
	kinds := make([]string, 0, len(d.Counts))
	for k := range d.Counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, d.Counts[k]))
	}
	ids := fmt.Sprintf("%d distinct ids", d.IDCount)
	if d.IDCount == 1 {
		ids = "1 distinct id"
	}
	fmt.Fprintf(w, "deletion job %d done: %s; deleted %s\n", d.ID, ids, strings.Join(parts, ", "))
	return nil
}
