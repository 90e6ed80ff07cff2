// Package strata holds what belongs to the whole repository rather than to
// one part of it: the release version, read from the VERSION file beside
// it. That file is the one source of the version the binary reports
// (internal/buildinfo) and that the npm packages and the WordPress plugin
// are released under; version_test.go fails when any of them says
// otherwise (docs/deploy.md, "Versions and packages").
package strata

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var version string

// Version is the release version, such as 0.3.1: the VERSION file without
// its trailing newline. It is embedded rather than stamped with -ldflags so
// that every `go build` reports it, with or without the Makefile.
func Version() string { return strings.TrimSpace(version) }
