#!/usr/bin/env bash
# Installs what the tests need beyond Go: the PostgreSQL server binaries
# (initdb, postgres) that internal/store/postgres/pgtest runs its own
# throwaway servers with, and clickhouse-server, which
# internal/store/clickhouse/chtest runs the same way, and the headless
# Chromium the browser SDK's end-to-end tests drive. Debian's `postgresql`,
# `clickhouse-server` and `chromium` packages; needs root or sudo.
#
# Idempotent: does nothing when the binaries are already there. Without
# apt-get, or without root or sudo, it explains what to install and exits 0,
# and the database tests skip with a message of their own.
#
# The tests never use the cluster the Debian package creates. Policy-rc.d
# (Debian's hook for "may a package start services?") stops the package from
# starting it, when this script is the one that puts a policy in place.
set -euo pipefail

have_postgres() {
	local bin
	for bin in /usr/lib/postgresql/*/bin; do
		[ -x "$bin/initdb" ] && [ -x "$bin/postgres" ] && return 0
	done
	return 1
}

have_clickhouse() {
	command -v clickhouse-server >/dev/null || [ -x /usr/sbin/clickhouse-server ] || command -v clickhouse >/dev/null
}

missing=()
have_postgres || missing+=(postgresql)
have_clickhouse || missing+=(clickhouse-server)
command -v chromium >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-test-deps: PostgreSQL, ClickHouse and Chromium already installed"
	exit 0
fi

skip() {
	echo "install-test-deps: $1" >&2
	echo "install-test-deps: install ${missing[*]} (Debian packages) by hand;" \
		"until then the tests of those stores skip" >&2
	exit 0
}

command -v apt-get >/dev/null || skip "apt-get not found"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || skip "not root and sudo not found"
	SUDO=(sudo)
fi

# Keep the package's postinst from starting the cluster service, unless a
# policy is already in place (it is then the machine's own, left alone).
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
	printf '#!/bin/sh\n# Written by install-test-deps.sh while it installs packages.\nexit 101\n' |
		"${SUDO[@]}" tee "$POLICY" >/dev/null
	"${SUDO[@]}" chmod 755 "$POLICY"
	trap '"${SUDO[@]}" rm -f "$POLICY"' EXIT
fi

install() {
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "$@"
}

# The package lists may be stale or missing (fresh containers); refresh them
# only when installing from them fails. A package the archive lacks (Debian
# dropped clickhouse-server after bookworm) is reported, not fatal: its
# tests skip with their own message.
if ! install "${missing[@]}"; then
	echo "install-test-deps: retrying after apt-get update" >&2
	"${SUDO[@]}" apt-get update -qq
	for pkg in "${missing[@]}"; do
		install "$pkg" || echo "install-test-deps: could not install $pkg; its tests will skip" >&2
	done
fi

if [[ " ${missing[*]} " == *" postgresql "* ]] && ! have_postgres; then
	echo "install-test-deps: postgresql installed but initdb/postgres not found under /usr/lib/postgresql/*/bin" >&2
fi
have_clickhouse && echo "install-test-deps: ClickHouse server binary present"
have_postgres && echo "install-test-deps: PostgreSQL server binaries present"
exit 0
