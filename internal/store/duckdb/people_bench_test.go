package duckdb

import (
	"context"
	"testing"

	"strata/internal/store/storetest"
)

// BenchmarkPeopleList times the people list over a million persons
// (storetest.TimePeopleList; STRATA_PEOPLE_BENCH_PERSONS). Fastest of
// five interleaved runs, as ms.
func BenchmarkPeopleList(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir(), Options{MemoryLimit: "2GB"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	storetest.TimePeopleList(b, s, s.db)
}
