#!/usr/bin/env bash
# Installs what `make bench` needs beyond Go: wrk, the C load generator used
# for the single-event phase. Debian's package; needs root or sudo.
set -euo pipefail
command -v wrk >/dev/null && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq wrk
