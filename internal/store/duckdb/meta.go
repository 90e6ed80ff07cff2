package duckdb

import (
	"context"

	"strata/internal/analytics"
	"strata/internal/store/sqlmeta"
)

// The metadata half of the store (workspaces, products, credentials and
// saved queries) is sqlmeta.Store, embedded in Store: its statements are
// written in the PostgreSQL dialect that DuckDB also runs, and the
// PostgreSQL metadata store runs the same code. This file keeps the
// package's short name for the row type the event queries share with it.

// scanner is what *sql.Row and *sql.Rows share.
type scanner = sqlmeta.Scanner

// PutSourcemap and SourcemapText store and read a map as sqlmeta does,
// then give back to the kernel the C heap's free pages when the map was
// large: DuckDB copies a string of megabytes into C buffers on its way in
// and out, and glibc keeps such freed buffers, so that maps uploaded and
// parsed grew the process by hundreds of megabytes it did not use
// (docs/errors.md, "Limits of a map").
func (s *Store) PutSourcemap(ctx context.Context, sm *analytics.Sourcemap, mapText, minified []byte, quota analytics.SourcemapAmount) error {
	err := s.Store.PutSourcemap(ctx, sm, mapText, minified, quota)
	if len(mapText)+len(minified) >= largeText {
		releaseMemory()
	}
	return err
}

func (s *Store) SourcemapText(ctx context.Context, productID int64, release, url string) ([]byte, error) {
	text, err := s.Store.SourcemapText(ctx, productID, release, url)
	if len(text) >= largeText {
		releaseMemory()
	}
	return text, err
}

// largeText is the size of a map past which its C buffers are worth
// giving back at once.
const largeText = 1 << 20
