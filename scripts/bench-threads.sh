#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where `blegate run`'s CPU goes, thread by thread: the simulator with STRAPS straps at
# RATE Hz on ADAPTERS adapters, `blegate run` on it (cache only: no backend, no wall),
# then after WARM seconds the CPU time (/proc/PID/task/TID/schedstat) and voluntary
# context switches of every thread over WINDOW seconds. Prints figures only.
#   scripts/bench-threads.sh BLEGATE [STRAPS=50] [RATE=1] [ADAPTERS=2] [WARM=40] [WINDOW=20] [EXTRA [bluetooth] LINES...]
# e.g. scripts/bench-threads.sh "$(scripts/build-release.sh | tail -n 1)/blegate" 125 4 4
#      scripts/bench-threads.sh DIR/blegate 50 1 2 40 20 'scan_every = 0'   # scanning all the time
set -euo pipefail
bin=$(realpath "$1"); straps=${2:-50}; rate=${3:-1}; adapters=${4:-2}; warm=${5:-40}; window=${6:-20}
shift $(( $# < 6 ? $# : 6 ))
dir=$(mktemp -d /tmp/blegate-bench-threads.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
"$bin" simulate --private-bus --straps "$straps" --rate "$rate" --adapters "$adapters" --seed 7 > "$dir/sim.out" 2> "$dir/sim.err" &
pids+=($!)
for _ in $(seq 1 100); do grep -q '^ready' "$dir/sim.out" 2>/dev/null && break; sleep 0.1; done
bus=$(sed -n 's/^DBUS_SYSTEM_BUS_ADDRESS=//p' "$dir/sim.out")
[ -n "$bus" ] || { echo "bench-threads: the simulator did not start: $(cat "$dir/sim.err")" >&2; exit 1; }
{
    printf '[gateway]\nid = "bench"\nstate_directory = "%s"\n[bluetooth]\nmax_links = 32\n' "$dir"
    for line in "$@"; do printf '%s\n' "$line"; done
    printf '[status]\nsocket = "%s/status.sock"\n[display]\nlisten = ""\n[metrics]\nlisten = ""\n' "$dir"
} > "$dir/blegate.toml"
"$bin" run --config "$dir/blegate.toml" --bus "$bus" > "$dir/run.log" 2>&1 &
run=$!; pids+=($run)
sleep "$warm"
echo "bench-threads: $straps straps at $rate Hz on $adapters adapters; $("$bin" status --config "$dir/blegate.toml" | grep -c ' streaming ') streaming; load $(cut -d' ' -f1-3 /proc/loadavg)"
snap() { for t in /proc/$run/task/*; do echo "$(basename "$t") $(tr ' ' _ < "$t/comm") $(cut -d' ' -f1 "$t/schedstat") $(awk '/^voluntary_ctxt/ {print $2}' "$t/status")"; done | sort; }
snap > "$dir/a"; sleep "$window"; snap > "$dir/b"
records=$(awk -v s="$straps" -v r="$rate" 'BEGIN {print s * r}')
join "$dir/a" "$dir/b" > "$dir/both"
awk -v w="$window" '{ printf "%-18s %8.0f µs/s %7.1f wake-ups/s\n", $2, ($6 - $3) / w / 1000, ($7 - $4) / w }' "$dir/both" | sort -k2 -n -r
awk -v w="$window" -v n="$records" '{ cpu += ($6 - $3) / w / 1000; wake += ($7 - $4) / w }
    END { printf "%-18s %8.0f µs/s %7.1f wake-ups/s: %.1f µs per record (%d records/s)\n", "whole process", cpu, wake, cpu / n, n }' "$dir/both"
grep -E '^(VmHWM|RssAnon|RssFile)' "/proc/$run/status" | tr -s ' \t' ' ' | paste -sd ' '
