package duckdb

import (
	"context"
	"fmt"
)

// Spilling on a disk with a floor (docs/queries.md, "Memory").
//
// Joins, aggregates and sorts that outgrow the buffer pool spill to the
// temporary directory beside the database file, on the data directory's
// filesystem. DuckDB's own bound on that directory is nine tenths of the
// disk that was free when the instance opened, which lets one large query
// take the room the floor keeps for events (--min-free-disk): ingest would
// stop acknowledging, and a spill that met a full disk would fail with an
// I/O error, which breaks the instance (recover.go). LimitSpill bounds the
// directory instead to what it holds plus what is free above the floor, so
// that a query that would cross the floor fails alone, as a query that ran
// out of memory (503 query_too_large), and the disk keeps its floor.

// LimitSpill sets the bound on DuckDB's temporary files from free, the
// bytes now free on the data directory's filesystem, and keep, the floor:
// the files may grow by what is free above the floor, and not at all below
// it. The server calls it every second (internal/app); the bound set last
// holds until the next call, so a reopened instance (Recover) has DuckDB's
// default until then.
func (s *Store) LimitSpill(ctx context.Context, free, keep uint64) error {
	var used uint64
	if err := s.db.QueryRowContext(ctx, "SELECT coalesce(sum(size), 0)::UBIGINT FROM duckdb_temporary_files()").Scan(&used); err != nil {
		return fmt.Errorf("reading the size of the temporary files: %w", err)
	}
	limit := used
	if free > keep {
		limit += free - keep
	}
	// A setting takes no parameter; the number is formatted here.
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("SET GLOBAL max_temp_directory_size = '%dB'", limit)); err != nil {
		return fmt.Errorf("bounding the temporary files to %d bytes: %w", limit, err)
	}
	return nil
}
