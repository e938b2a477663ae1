#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Peak RSS and CPU of `blegate stream` following simulated straps, run as it ships (handed
# over to blegate-stream) and inside the whole `blegate` (BLEGATE_IN_PROCESS=1). Printed,
# never asserted.
#   scripts/bench-stream-rss.sh [SECONDS=40] [STRAPS=10]
# BLEGATE_BIN_DIR picks the binaries (default: the debug build); the shipped figures are
# from `BLEGATE_BIN_DIR=$(scripts/build-release.sh | tail -n 1) scripts/bench-stream-rss.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-40}"
straps="${2:-10}"
bin="${BLEGATE_BIN_DIR:-$(swift build --show-bin-path)}"
for b in blegate blegate-stream; do
    [ -x "$bin/$b" ] || { echo "stream-rss: no $bin/$b; build it first" >&2; exit 1; }
done
cat "$bin/blegate" "$bin/blegate-stream" > /dev/null   # in the page cache, as on a running Pi
work="$(mktemp -d /tmp/blegate-stream-rss.XXXXXX)"
sim=""
trap '[ -n "$sim" ] && kill -TERM "$sim" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
"$bin/blegate" simulate --private-bus --straps "$straps" --adapters 2 --rate 1 --seed 5 > "$work/sim.out" 2>&1 &
sim=$!
for _ in $(seq 1 300); do grep -q '^ready:' "$work/sim.out" 2>/dev/null && break; sleep 0.1; done
bus="$(sed -n 's/^DBUS_SYSTEM_BUS_ADDRESS=//p' "$work/sim.out")"
[ -n "$bus" ] || { echo "stream-rss: the simulator did not start" >&2; cat "$work/sim.out" >&2; exit 1; }
ticks=$(getconf CLK_TCK)
for mode in handed-over in-process; do
    env_in=""; [ "$mode" = in-process ] && env_in="BLEGATE_IN_PROCESS=1"
    env $env_in "$bin/blegate" stream --bus "$bus" --device '*' --format none --duration "$seconds" \
        > /dev/null 2> "$work/$mode.err" &
    pid=$!
    peak=0; anon=0; file=0; cpu=0; image=""
    while kill -0 "$pid" 2>/dev/null; do
        if read -r h a f < <(awk '/^VmHWM:/ {h=$2} /^RssAnon:/ {a=$2} /^RssFile:/ {f=$2} END {print h, a, f}' "/proc/$pid/status" 2>/dev/null); then
            [ "${h:-0}" -gt "$peak" ] && peak=$h && anon=$a && file=$f
        fi
        cpu=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo "$cpu")
        [ -n "$image" ] || image="$(readlink "/proc/$pid/exe" 2>/dev/null || true)"
        sleep 1
    done
    wait "$pid" || { echo "stream-rss: $mode stream failed" >&2; cat "$work/$mode.err" >&2; exit 1; }
    records=$(sed -n 's/.*: \([0-9]*\) notifications,.*/\1/p' "$work/$mode.err" | awk '{s += $1} END {print s + 0}')
    awk -v m="$mode" -v i="${image##*/}" -v p="$peak" -v a="$anon" -v f="$file" -v c="$cpu" -v t="$ticks" -v n="$records" -v s="$straps" \
        'BEGIN { printf "stream-rss: %s (%s), %d straps: peak RSS %.1f MiB (RssAnon %.1f, RssFile %.1f at the peak), %d notifications, CPU %.2f s\n", m, i, s, p / 1024, a / 1024, f / 1024, n, c / t }'
done
