package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"strata/internal/analytics"
	"strata/internal/backup"
	"strata/internal/config"
	"strata/internal/persons"
	"strata/internal/store/clickhouse"
	"strata/internal/store/duckdb"
	"strata/internal/store/postgres"
	"strata/internal/store/replayfs"
	"strata/internal/store/spool"
)

// metaStore is the metadata half of storage.
type metaStore interface {
	analytics.MetaStore
	analytics.SavedQueryStore
	analytics.AnnotationStore
	analytics.UserStore
	analytics.FlagStore
	analytics.ExperimentStore
	analytics.LeaseStore
	analytics.SourcemapStore
	analytics.ErrorGroupStore
	analytics.ErrorAliasStore
	analytics.SharedLinkStore
	analytics.BoardStore
	analytics.GoalStore
	analytics.AlertStore
	analytics.CampaignStore
	analytics.GroupStore
	analytics.PersonStore
	analytics.ReplayStore
	analytics.PrivacyStore
	analytics.SaltStore
	analytics.Transactor
	analytics.CohortStore
	analytics.PersonIDStore
}

// storage is what a server stores into, chosen by configuration: by
// default everything in the embedded DuckDB file behind the write-ahead
// spool; with an events URL, events in ClickHouse; with a meta URL,
// metadata in PostgreSQL. Handlers see only the interfaces.
type storage struct {
	meta metaStore
	// events is where ingest writes: the spool, DuckDB or ClickHouse.
	events  analytics.EventStore
	queries analytics.QueryStore
	// sync is the read-your-writes barrier queries wait on; nil when a
	// write is visible once acknowledged.
	sync func(context.Context) error
	// replays keeps session replay chunks: files in the data directory,
	// or the PostgreSQL metadata store's table when there is one
	// (docs/replay.md, "Storage").
	replays analytics.ReplayStore
	// embedded is the DuckDB store when one is open (for idle
	// checkpoints), spool the spool in front of it when events go there.
	embedded *duckdb.Store
	spool    *spool.Store
	// files is the replay store when it is files in the data directory.
	files *replayfs.Store
	// guard keeps writes off a nearly full disk and reopens the embedded
	// database after a failed write (disk.go).
	guard *storageGuard
	// persons keeps person profiles from the stored events: the event
	// stores hand it each committed batch (internal/persons).
	persons *persons.Updater
	// closers run in order at close.
	closers []func() error
}

// openStorage opens the stores cfg names. On error, whatever it opened is
// closed again.
func openStorage(ctx context.Context, cfg config.Config, log *slog.Logger) (_ *storage, err error) {
	s := &storage{persons: persons.New(persons.Options{MaxPersons: int64(cfg.PersonsPerProduct), Logger: log.With("component", "persons")})}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	s.guard = newStorageGuard(cfg.DataDir, uint64(cfg.MinFreeDisk), uint64(cfg.MinFreeInodes), log.With("component", "storage"))
	if cfg.EventsURL == "" || cfg.MetaURL == "" {
		// Below the floor the database takes no write but serves reads, so
		// that a server whose disk is full starts and answers queries
		// (disk.go).
		s.embedded, err = duckdb.Open(ctx, cfg.DataDir, duckdb.Options{
			MemoryLimit: cfg.DuckDBMemoryLimit, CheckpointThreshold: cfg.DuckDBCheckpoint, WriteGate: s.guard.aboveFloor})
		if err != nil {
			return nil, err
		}
		// Said once at start, since the default depends on the machine
		// (config.DuckDBMemoryFor).
		log.Info("duckdb buffer pool", "memory", cfg.DuckDBMemoryLimit, "from", cfg.DescribeDuckDBMemory())
		s.meta = s.embedded
		s.guard.store = s.embedded
		s.guard.limitSpill(ctx)
	}
	if cfg.EventsURL == "" {
		// A spool left by an unclean stop is replayed even when the spool
		// is now switched off, so that no acknowledged event is left
		// behind. Closing the spool closes the store behind it.
		inner := persons.Inner{Inner: s.embedded, Updater: s.persons}
		s.spool, err = spool.Open(ctx, inner, spool.Options{
			Dir: filepath.Join(cfg.DataDir, "spool"), Gate: s.guard.Admit, Logger: log.With("component", "spool")})
		if err != nil {
			s.closers = append(s.closers, s.embedded.Close)
			return nil, err
		}
		s.closers = append(s.closers, s.spool.Close)
		s.events, s.queries, s.sync = s.spool, s.embedded, s.spool.Sync
		s.guard.spooled = cfg.Spool
		if !cfg.Spool {
			s.events = persons.Events{EventStore: s.embedded, Updater: s.persons}
		}
	} else {
		// The pending profile updates are written before the embedded
		// metadata store, if any, closes.
		s.closers = append(s.closers, s.persons.Close)
		if s.embedded != nil {
			s.closers = append(s.closers, s.embedded.Close)
		}
		ch, err := clickhouse.Open(ctx, cfg.EventsURL)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, ch.Close)
		s.events, s.queries = persons.Events{EventStore: ch, Updater: s.persons}, ch
	}
	if cfg.MetaURL != "" {
		pg, err := postgres.Open(ctx, cfg.MetaURL)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, pg.Close)
		s.meta = pg
		s.replays = pg
	} else {
		files, err := replayfs.Open(filepath.Join(cfg.DataDir, "replay"), replayfs.Options{Log: log.With("component", "replay")})
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, files.Close)
		s.replays, s.files = files, files
	}
	s.persons.Start(s.meta)
	return s, nil
}

// backups is the backup runner of a server whose data is all in the data
// directory, or nil when some of it is in ClickHouse or PostgreSQL.
func (s *storage) backups() *backup.Runner {
	if s.embedded == nil || s.spool == nil || s.files == nil {
		return nil
	}
	return &backup.Runner{DB: s.embedded, Spool: s.spool, Replays: s.files}
}

// embeddedBroken is the embedded store's Broken, or nil without one.
func (s *storage) embeddedBroken() error {
	if s.embedded == nil {
		return nil
	}
	return s.embedded.Broken()
}

// close closes every store once; ingest must have stopped.
func (s *storage) close() error {
	var errs []error
	for _, c := range s.closers {
		if err := c(); err != nil {
			errs = append(errs, err)
		}
	}
	s.closers = nil
	return errors.Join(errs...)
}

// describeStorage names the backends cfg selects, for the start-up log
// line.
func describeStorage(cfg config.Config) string {
	events, meta := "embedded", "embedded"
	if cfg.EventsURL != "" {
		events = "clickhouse"
	}
	if cfg.MetaURL != "" {
		meta = "postgres"
	}
	return fmt.Sprintf("events=%s meta=%s", events, meta)
}
