package duckdb

import (
	"strata/internal/store/sqlmeta"
)

// The metadata half of the store (workspaces, products, credentials and
// saved queries) is sqlmeta.Store, embedded in Store: its statements are
// written in the PostgreSQL dialect that DuckDB also runs, and the
// PostgreSQL metadata store runs the same code. This file keeps the
// package's short name for the row type the event queries share with it.

// scanner is what *sql.Row and *sql.Rows share.
type scanner = sqlmeta.Scanner
