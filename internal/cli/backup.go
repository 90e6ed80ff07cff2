package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"strata/internal/backup"
	"strata/internal/store/duckdb"
	"strata/internal/store/replayfs"
	"strata/internal/store/spool"
)

// backupCmd is `strata backup --to DIR`: an online backup through the
// running server's admin socket, or, when no server holds the data
// directory, of the directory opened here (docs/operations.md, "Backup and
// restore"). It prints the manifest.
func backupCmd(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data", lookupOr(env.Lookup, "STRATA_DATA", "./data"), "data directory")
	to := fs.String("to", "", "the backup's directory, new or empty")
	if _, err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if *to == "" {
		return usageError{"backup needs --to DIR"}
	}
	// The server resolves the path, and may not share this working
	// directory.
	dir, err := filepath.Abs(*to)
	if err != nil {
		return err
	}
	c, db, err := dialOrOpen(ctx, *dataDir)
	if err != nil {
		return err
	}
	var m backup.Manifest
	if c != nil {
		m, err = c.Backup(ctx, dir)
	} else {
		m, err = backupOffline(ctx, db, *dataDir, dir)
	}
	if err != nil {
		return err
	}
	return printManifest(env, m)
}

// backupOffline backs up a data directory no server holds: it opens the
// spool (which replays what an unclean stop left) and the replay store
// over the database dialOrOpen opened, as a server would, and closes them.
func backupOffline(ctx context.Context, db *duckdb.Store, dataDir, dir string) (backup.Manifest, error) {
	sp, err := spool.Open(ctx, db, spool.Options{Dir: filepath.Join(dataDir, "spool")})
	if err != nil {
		db.Close()
		return backup.Manifest{}, err
	}
	defer sp.Close() // closes db too
	files, err := replayfs.Open(filepath.Join(dataDir, "replay"), replayfs.Options{})
	if err != nil {
		return backup.Manifest{}, err
	}
	defer files.Close()
	r := &backup.Runner{DB: db, Spool: sp, Replays: files}
	return r.Take(ctx, dir)
}

// restoreCmd is `strata restore --from DIR --data NEWDIR`: a new data
// directory from a backup, checked against its manifest. It prints the
// manifest.
func restoreCmd(args []string, env Env) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.String("from", "", "the backup's directory")
	dataDir := fs.String("data", "", "the new data directory, new or empty")
	if _, err := parseInterspersed(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	// No default for --data: restoring over ./data by accident must not
	// be one flag away.
	if *from == "" || *dataDir == "" {
		return usageError{"restore needs --from DIR and --data NEWDIR"}
	}
	m, err := backup.Restore(*from, *dataDir)
	if err != nil {
		return err
	}
	return printManifest(env, m)
}

func printManifest(env Env, m backup.Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
	return err
}
