package clickhouse

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"strata/internal/store/migrate"
)

// ClickHouse's DDL lives in migrations/*.sql, numbered like the other
// stores' and loaded by package migrate, but applied here: ClickHouse has no
// transactions, runs one statement per query, and its tables differ by
// deployment (one server, or shards under a Distributed table), so each
// file is a template of statements separated by semicolons. Every
// statement must be idempotent (IF NOT EXISTS, or for added columns see
// alreadyApplied): a failure between a statement and its record is then
// repaired by running it again.

//go:embed migrations/*.sql
var migrationFS embed.FS

// mergeTree is the engine of the table that stores events: partitioned by
// month and sorted for the funnel and trend access paths (one product, one
// environment, a few event names, a time range).
const mergeTree = `ENGINE = MergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(ts, 1000000), 'UTC'))
ORDER BY (product_id, env, event, ts)`

// tableSet is one events table of a server: its name and engine, which
// fill in the migrations' {table} and {engine}. A cluster's shard holds two
// (events_local and the Distributed events), each migrated and recorded on
// its own.
type tableSet struct {
	table, engine string
	// cohortTable and cohortEngine are the cohort members' table beside
	// this events table (migration 0004): cohort_members beside events,
	// cohort_members_local beside events_local.
	cohortTable, cohortEngine string
}

// cohortMergeTree is the engine of the table that stores cohort members,
// sorted for their readers (one cohort's generation, in id order).
const cohortMergeTree = `ENGINE = MergeTree()
ORDER BY (product_id, cohort_id, generation, distinct_id)`

// migrateTable applies to one table of one server the migrations its record
// lacks, recording each in {db}.schema_migrations under the table's name. A
// record newer than this binary is refused, as the other stores refuse
// theirs.
func migrateTable(ctx context.Context, conn driver.Conn, db string, set tableSet, now time.Time) error {
	all, err := migrate.Load(migrationFS, "migrations")
	if err != nil {
		return err
	}
	// TinyLog: a few rows written once each; 18.16 has every engine this
	// needs, and current releases still run it.
	for _, stmt := range []string{
		"CREATE DATABASE IF NOT EXISTS `" + db + "`",
		"CREATE TABLE IF NOT EXISTS `" + db + "`.schema_migrations (version UInt32, name String, target String, applied_at DateTime) ENGINE = TinyLog",
	} {
		if err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("creating schema_migrations: %w", err)
		}
	}
	rows, err := conn.Query(ctx, "SELECT version FROM `"+db+"`.schema_migrations WHERE target = ?", set.table)
	if err != nil {
		return fmt.Errorf("reading schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	latest := 0
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("reading schema_migrations: %w", err)
		}
		applied[int(v)], latest = true, max(latest, int(v))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading schema_migrations: %w", err)
	}
	if n := len(all); n > 0 && latest > all[n-1].Version {
		return fmt.Errorf("ClickHouse schema version %d is newer than this binary's %d", latest, all[n-1].Version)
	}
	fill := strings.NewReplacer("{db}", db, "{table}", set.table, "{engine}", set.engine,
		"{cohort_table}", set.cohortTable, "{cohort_engine}", set.cohortEngine)
	for _, m := range all {
		if applied[m.Version] {
			continue
		}
		for _, stmt := range statements(m.SQL) {
			if err := conn.Exec(ctx, fill.Replace(stmt)); err != nil && !alreadyApplied(stmt, err) {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		if err := record(ctx, conn, db, m, set.table, now); err != nil {
			return fmt.Errorf("recording migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// illegalColumn is ClickHouse's error code ILLEGAL_COLUMN, which an ALTER
// … ADD COLUMN of a column the table has answers (18.16 and current
// releases alike).
const illegalColumn = 44

// alreadyApplied reports whether err says that stmt, an ALTER … ADD COLUMN,
// was applied before: its column exists. It stands in for ADD COLUMN IF
// NOT EXISTS, which ClickHouse 18.16 lacks; each such migration adds its
// columns in one ALTER, which applies whole or not at all, so an existing
// column means the statement ran and only its record is missing.
func alreadyApplied(stmt string, err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && ex.Code == illegalColumn && strings.Contains(stmt, "ADD COLUMN") &&
		strings.Contains(ex.Message, "already exists")
}

// record notes that m was applied to target. It inserts a block, as
// AppendEvents does: an INSERT … VALUES with bound parameters never
// answers on ClickHouse 18.16.
func record(ctx context.Context, conn driver.Conn, db string, m migrate.Migration, target string, now time.Time) error {
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO `"+db+"`.schema_migrations (version, name, target, applied_at)")
	if err != nil {
		return err
	}
	defer batch.Abort()
	if err := batch.Append(uint32(m.Version), m.Name, target, now.UTC()); err != nil {
		return err
	}
	return batch.Send()
}

// statements splits a migration into its statements, dropping comment
// lines. A statement ends with a semicolon at the end of a line.
func statements(sql string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sql, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
