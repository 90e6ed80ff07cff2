//go:build !unix

package cli

// privateFiles does nothing where there is no umask; see umask_unix.go.
func privateFiles() {}
