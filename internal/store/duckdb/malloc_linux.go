package duckdb

/*
#include <malloc.h>
#include <stdlib.h>

// DuckDB and duckdb-go allocate through the C library's malloc: every
// string appended is copied into a short-lived C buffer, while the rows not
// yet checkpointed live in long-lived ones. glibc gives each thread that
// contends for malloc an arena of its own (up to eight per core) and keeps
// the memory freed inside each; under ingest that retained memory measured
// hundreds of megabytes of RSS (see docs/benchmarks.md). glibc fixes the
// arena limit when a thread first needs an arena, so it is set as the
// program loads, before any thread starts. MALLOC_ARENA_MAX in the
// environment still wins.
__attribute__((constructor)) static void strata_limit_malloc_arenas(void) {
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		mallopt(M_ARENA_MAX, 2);
	}
}
*/
import "C"

// releaseMemory hands the C heap's free pages back to the kernel.
func releaseMemory() { C.malloc_trim(0) }
