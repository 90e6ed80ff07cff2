package duckdb

import (
	"context"
	"database/sql"

	"strata/internal/store/sqlmeta"
)

// The metadata half of the store (workspaces, products, credentials and
// saved queries) is sqlmeta.Store, embedded in Store: its statements are
// written in the PostgreSQL dialect that DuckDB also runs, and the
// PostgreSQL metadata store runs the same code. This file keeps the
// package's short names for the helpers the event queries share with it.

// scanner is what *sql.Row and *sql.Rows share.
type scanner = sqlmeta.Scanner

// queryAll runs a query and scans every row with scan; what names the
// operation in errors.
func queryAll[T any](ctx context.Context, db *sql.DB, what string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	return sqlmeta.QueryAll(ctx, db, what, scan, query, args...)
}
