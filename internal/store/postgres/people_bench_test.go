package postgres

import (
	"context"
	"testing"

	"strata/internal/store/postgres/pgtest"
	"strata/internal/store/storetest"
)

// BenchmarkPeopleList is the DuckDB store's BenchmarkPeopleList on
// PostgreSQL.
func BenchmarkPeopleList(b *testing.B) {
	s, err := Open(context.Background(), pgtest.Start(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.TimePeopleList(b, s, s.db)
}
