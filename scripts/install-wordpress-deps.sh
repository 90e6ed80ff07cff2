#!/usr/bin/env bash
# Installs what the WordPress plugin's tests need (plugins/wordpress): PHP's
# command line with its MySQL driver, PHPUnit, WordPress itself (whose
# files the end-to-end test copies into a throwaway site), the MariaDB
# server that site runs on, and zip for the plugin's archive. Debian's
# `php-cli`, `php-mysql`, `phpunit`, `wordpress`, `mariadb-server` and `zip`
# packages; needs root or sudo.
#
# Idempotent: does nothing when everything is already there. Without
# apt-get, or without root or sudo, it says what to install and exits 1:
# unlike the store tests, the plugin's tests have no way to skip.
#
# The tests never use the MariaDB or Apache the packages would start: they
# run their own MariaDB with a throwaway data directory and PHP's built-in
# server, both on 127.0.0.1. Policy-rc.d (Debian's hook for "may a package
# start services?") stops the packages from starting theirs, when this
# script is the one that puts a policy in place.
set -euo pipefail

missing=()
command -v php >/dev/null || missing+=(php-cli)
# (Not `php -m | grep -q`: grep's early exit would fail the pipe under pipefail.)
php_modules=$(php -m 2>/dev/null || true)
grep -qx mysqli <<<"$php_modules" || missing+=(php-mysql)
command -v phpunit >/dev/null || missing+=(phpunit)
[ -f /usr/share/wordpress/wp-settings.php ] || missing+=(wordpress)
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || missing+=(mariadb-server)
command -v zip >/dev/null || missing+=(zip)
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-wordpress-deps: PHP, PHPUnit, WordPress, MariaDB and zip already installed"
	exit 0
fi

fail() {
	echo "install-wordpress-deps: $1" >&2
	echo "install-wordpress-deps: install ${missing[*]} (Debian packages) by hand" >&2
	exit 1
}

command -v apt-get >/dev/null || fail "apt-get not found"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || fail "not root and sudo not found"
	SUDO=(sudo)
fi

# Keep the packages' postinst from starting MariaDB and Apache, unless a
# policy is already in place (it is then the machine's own, left alone).
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
	printf '#!/bin/sh\n# Written by install-wordpress-deps.sh while it installs packages.\nexit 101\n' |
		"${SUDO[@]}" tee "$POLICY" >/dev/null
	"${SUDO[@]}" chmod 755 "$POLICY"
	trap '"${SUDO[@]}" rm -f "$POLICY"' EXIT
fi

install() {
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "$@"
}

# The package lists may be stale or missing (fresh containers); refresh them
# only when installing from them fails.
if ! install "${missing[@]}"; then
	echo "install-wordpress-deps: retrying after apt-get update" >&2
	"${SUDO[@]}" apt-get update -qq
	install "${missing[@]}" || fail "apt-get install failed"
fi
echo "install-wordpress-deps: installed ${missing[*]}"
