// Package buildinfo says which build of strata is running: the release
// version (the repository's VERSION file, embedded by package strata), and
// from what the Go toolchain recorded in the binary
// (runtime/debug.ReadBuildInfo) the Git commit it was built from, that
// commit's time, whether the work tree had uncommitted changes, and the Go
// version. It is
// what `strata version` prints, what the "listening" log line carries and
// what GET /api/v1/version answers.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strata"
	"strings"
	"sync"
)

// Info is one build's identity. Commit, CommitTime and Modified are empty
// when the build recorded no version-control information: a build outside
// a Git checkout, in a Git worktree (the go command does not read one), or
// with -buildvcs=false.
type Info struct {
	// Version is the release version from the VERSION file, such as 0.3.1,
	// the version the npm packages and the WordPress plugin are released
	// under. A build between releases says the last one; Commit and Modified
	// tell such builds apart.
	Version string `json:"version"`
	// Commit is the full Git revision, "" when unknown.
	Commit string `json:"commit"`
	// CommitTime is the commit's time in RFC 3339 (UTC), "" when unknown.
	CommitTime string `json:"commitTime"`
	// Modified reports uncommitted changes in the work tree at build time.
	Modified bool `json:"modified"`
	// Go is the toolchain that built the binary, such as go1.26.8.
	Go string `json:"go"`
}

// Read returns the running binary's Info. It reads the build information
// once.
func Read() Info { return read() }

var read = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: strata.Version(), Go: runtime.Version()}
	}
	return fromBuildInfo(bi, strata.Version())
})

// fromBuildInfo picks the fields of Info out of the go command's record,
// with release as the version. The module version the go command records
// is "(devel)" for every build from a checkout, so it names nothing; it is
// the fallback only should release be empty.
func fromBuildInfo(bi *debug.BuildInfo, release string) Info {
	i := Info{Version: release, Go: bi.GoVersion}
	if i.Version == "" {
		i.Version = bi.Main.Version
	}
	if i.Version == "" {
		i.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.CommitTime = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	return i
}

// String is the build on one line: the version, then what is known of the
// commit (its first 12 characters, its time, "modified"), then the Go
// version, as in "0.3.1 (commit bb4fc1d5f20c, 2026-11-25T00:32:51Z,
// modified) go1.26.8", or "0.3.1 go1.26.8" without version-control
// information.
func (i Info) String() string {
	var b strings.Builder
	b.WriteString(i.Version)
	var commit []string
	if i.Commit != "" {
		commit = append(commit, "commit "+short(i.Commit))
	}
	if i.CommitTime != "" {
		commit = append(commit, i.CommitTime)
	}
	if i.Modified {
		commit = append(commit, "modified")
	}
	if len(commit) > 0 {
		b.WriteString(" (" + strings.Join(commit, ", ") + ")")
	}
	if i.Go != "" {
		b.WriteString(" " + i.Go)
	}
	return b.String()
}

// short abbreviates a revision to 12 characters, as Go's pseudo-versions do.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
