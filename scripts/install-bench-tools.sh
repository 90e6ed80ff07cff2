#!/usr/bin/env bash
# Installs what `make bench` needs beyond Go: wrk, the C load generator used
# for the single-event phase, and (through install-test-deps.sh) the
# clickhouse-server the query benchmark compares with. Debian's packages;
# needs root or sudo.
set -euo pipefail
"$(dirname "$0")/install-test-deps.sh"
command -v wrk >/dev/null && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq wrk
