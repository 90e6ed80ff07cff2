package config

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The default of --duckdb-memory is sized from the machine, as DuckDB sizes
// its own (80% of RAM), but leaving most of the machine to the rest of the
// process and to whatever else runs beside it:
//
//	pool = (memory − 1 GiB) / 4, at least 192 MB and at most 16 GB
//
// where memory is the cgroup's limit when the process runs in one (a
// container), else the machine's MemTotal. The gigabyte taken off first is
// what the process needs outside the pool with the other defaults (about
// 400 MB measured: the binary, the Go heap's soft limit of 256 MiB, the
// query slots' state outside the pool; docs/security.md, "Heavy queries")
// plus room for the kernel's page cache of the data files. A quarter of the
// rest keeps three quarters for the operating system's cache, a reverse
// proxy or a PostgreSQL on the same host. The floor is the fixed default
// this replaces, which fits a 1 GB machine; the ceiling keeps a large
// shared host from filling its memory with cached blocks nobody asked to
// keep (larger pools are for an operator to choose). With 192 MB a 3-step
// funnel over 50 M events of 2.5 M users ran out of memory; on a 24 GB
// machine this gives 5.75 GB (docs/queries.md, "Memory").
const (
	duckDBMemoryFloor   = 192 << 20
	duckDBMemoryCeiling = 16 << 30
	duckDBMemoryReserve = 1 << 30
)

// DuckDBMemoryFor returns the default buffer pool for a machine (or cgroup)
// of total bytes, as a size DuckDB reads ("5888MiB").
func DuckDBMemoryFor(total int64) string {
	pool := max(0, total-duckDBMemoryReserve) / 4
	pool = min(max(pool, duckDBMemoryFloor), duckDBMemoryCeiling)
	// Whole mebibytes, so the value reads well in the log and the flags.
	return strconv.FormatInt(pool>>20, 10) + "MiB"
}

// MachineMemory is the memory the process may use: the cgroup's limit
// (v2 memory.max, or v1 memory.limit_in_bytes) when it is lower than the
// machine's MemTotal, else MemTotal. from says which, for the log. It
// returns 0 when neither can be read (not Linux): the caller then keeps
// the floor.
func MachineMemory() (total int64, from string) {
	total, from = memTotal("/proc/meminfo"), "MemTotal"
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// "max" (v2) or a huge number (v1) mean no limit.
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (total == 0 || n < total) {
			total, from = n, "cgroup limit "+f
		}
		break
	}
	return total, from
}

// memTotal reads MemTotal from a meminfo file, in bytes; 0 when absent.
func memTotal(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// machineDuckDBMemory is the default of DuckDBMemoryLimit on this machine,
// read once per Default.
func machineDuckDBMemory() string {
	total, _ := MachineMemory()
	return DuckDBMemoryFor(total)
}

// DescribeDuckDBMemory says where c's pool size came from, for the log at
// start: the value given, or the machine's memory it was sized from.
func (c Config) DescribeDuckDBMemory() string {
	total, from := MachineMemory()
	if c.DuckDBMemoryLimit != DuckDBMemoryFor(total) {
		return "set by --duckdb-memory or STRATA_DUCKDB_MEMORY"
	}
	return fmt.Sprintf("a quarter of %d MiB (%s) less 1 GiB, between 192 MiB and 16 GiB", total>>20, from)
}
