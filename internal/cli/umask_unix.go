//go:build unix

package cli

import "syscall"

// privateFiles makes every file and directory this process creates
// readable and writable by its user only, whatever the umask it inherited:
// the database holds every event and the hashes of every credential, and
// DuckDB creates its files (strata.duckdb, its .wal) with the umask's
// default mode, 0644 under the usual 022. The spool and the admin socket
// set 0600 themselves.
func privateFiles() { syscall.Umask(0o077) }
