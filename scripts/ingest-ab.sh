#!/bin/bash
# ingest-ab.sh compares server settings under the batch load of
# cmd/strata-bench, side by side: one fresh server per setting, the settings
# alternating, REPS rounds (default 2), DUR per run (default 20s). A setting
# is a space-separated list of VAR=value environment entries and --flags
# for `strata serve`, or "-" for the defaults; bin=PATH runs another strata
# binary (an earlier build, to compare builds). For each run it prints the
# sustained rate and latencies, the server's CPU per event (from
# /proc/PID/stat) and its peak RSS (VmHWM).
#
#   scripts/ingest-ab.sh - GOGC=100 "--duckdb-memory 256MB"
#   scripts/ingest-ab.sh - bin=/tmp/strata-previous
#
# Servers listen on 127.0.0.1 only and are stopped by their own PID.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/strata ./cmd/strata
go build -o bin/strata-bench ./cmd/strata-bench
dur=${DUR:-20s}
for _ in $(seq "${REPS:-2}"); do
	for setting in "$@"; do
		dir=$(mktemp -d)
		envs=() args=() bin=./bin/strata
		for w in $setting; do
			case $w in
			-) ;;
			bin=*) bin=${w#bin=} ;;
			--*) args+=("$w") ;;
			*=*) envs+=("$w") ;;
			*) args+=("$w") ;;
			esac
		done
		env "${envs[@]}" "$bin" serve --addr 127.0.0.1:18181 --data "$dir" --log-format json \
			--rate-limit 100000000 "${args[@]}" 2>"$dir/log" &
		pid=$!
		for _ in $(seq 100); do grep -q '"listening"' "$dir/log" 2>/dev/null && break; sleep 0.2; done
		key=$(grep -o '"api_key":"[^"]*"' "$dir/log" | head -1 | cut -d'"' -f4)
		t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
		start=$(date +%s.%N)
		result=$(./bin/strata-bench -url http://127.0.0.1:18181 -key "$key" -duration "$dur" -conns 8 |
			grep "batch load" | grep -o "[0-9]* events/s, p50 [0-9.]* ms, p99 [0-9.]* ms")
		elapsed=$(echo "$(date +%s.%N) $start" | awk '{print $1-$2}')
		t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
		hwm=$(awk '/VmHWM/{print int($2/1024)}' "/proc/$pid/status")
		rate=${result%% *}
		# CPU ticks are 10 ms; the server's CPU over the run, per event posted.
		cpu=$(echo "$t0 $t1 $rate $elapsed" | awk '{printf "%.1f", ($2-$1)*10000/($3*$4)}')
		echo "[$setting] $result | server $cpu µs/event | peak RSS $hwm MB"
		kill "$pid"
		wait "$pid" || true
		rm -rf "$dir"
	done
done
