package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strata"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	cases := []struct {
		name    string
		release string
		bi      debug.BuildInfo
		want    Info
		line    string
	}{
		{
			name:    "a release build from a checkout: the VERSION file's version, the module's (devel) aside",
			release: "0.3.1",
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "strata", Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "bb4fc1d5f20c9410dc899dc5290b55e34b238808"},
				{Key: "vcs.time", Value: "2026-11-25T00:32:51Z"},
				{Key: "vcs.modified", Value: "true"},
			}},
			want: Info{Version: "0.3.1", Commit: "bb4fc1d5f20c9410dc899dc5290b55e34b238808", CommitTime: "2026-11-25T00:32:51Z", Modified: true, Go: "go1.26.8"},
			line: "0.3.1 (commit bb4fc1d5f20c, 2026-11-25T00:32:51Z, modified) go1.26.8",
		},
		{
			name: "no release version: a tagged module",
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "strata", Version: "v1.2.0"}, Settings: []debug.BuildSetting{
				{Key: "vcs", Value: "git"},
				{Key: "vcs.revision", Value: "bb4fc1d5f20c9410dc899dc5290b55e34b238808"},
				{Key: "vcs.time", Value: "2026-11-25T00:32:51Z"},
				{Key: "vcs.modified", Value: "false"},
			}},
			want: Info{Version: "v1.2.0", Commit: "bb4fc1d5f20c9410dc899dc5290b55e34b238808", CommitTime: "2026-11-25T00:32:51Z", Go: "go1.26.8"},
			line: "v1.2.0 (commit bb4fc1d5f20c, 2026-11-25T00:32:51Z) go1.26.8",
		},
		{
			name: "a checkout with uncommitted changes",
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "strata", Version: "v0.0.0-20261125003251-bb4fc1d5f20c+dirty"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "bb4fc1d5f20c9410dc899dc5290b55e34b238808"},
				{Key: "vcs.time", Value: "2026-11-25T00:32:51Z"},
				{Key: "vcs.modified", Value: "true"},
			}},
			want: Info{Version: "v0.0.0-20261125003251-bb4fc1d5f20c+dirty", Commit: "bb4fc1d5f20c9410dc899dc5290b55e34b238808",
				CommitTime: "2026-11-25T00:32:51Z", Modified: true, Go: "go1.26.8"},
			line: "v0.0.0-20261125003251-bb4fc1d5f20c+dirty (commit bb4fc1d5f20c, 2026-11-25T00:32:51Z, modified) go1.26.8",
		},
		{
			name: "no version-control information",
			bi:   debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "strata", Version: "(devel)"}},
			want: Info{Version: "(devel)", Go: "go1.26.8"},
			line: "(devel) go1.26.8",
		},
		{
			name: "no main module version at all (go run of a file)",
			bi:   debug.BuildInfo{GoVersion: "go1.26.8"},
			want: Info{Version: "(devel)", Go: "go1.26.8"},
			line: "(devel) go1.26.8",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := fromBuildInfo(&c.bi, c.release)
			if got != c.want {
				t.Errorf("fromBuildInfo = %+v; want %+v", got, c.want)
			}
			if s := got.String(); s != c.line {
				t.Errorf("String = %q; want %q", s, c.line)
			}
		})
	}
}

// TestRead checks what the test binary itself recorded: the VERSION file's
// version and the Go version the tests run under.
func TestRead(t *testing.T) {
	i := Read()
	if i.Version != strata.Version() || i.Go != runtime.Version() {
		t.Errorf("Read = %+v; want version %s and Go %s", i, strata.Version(), runtime.Version())
	}
	if Read() != i {
		t.Error("Read changed between calls")
	}
}
