#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bytes `blegate run` sends to the storage device per record, with simulated straps and
# the loopback backend: write_bytes of /proc/PID/io (what the process caused to be written
# to the block device: WAL, checkpoints, fsyncs) over a steady window, divided by the
# records committed in it (the growth of the cache's highest sequence).
#   scripts/bench-wear.sh [SECONDS=300] [STRAPS=30] [EXTRA RUN ARGS...]
# BLEGATE_BIN_DIR picks the binaries (default: the debug build, `swift build --show-bin-path`);
# SECONDS=0 skips the run (CI). Needs sqlite3 (read-only queries beside the running gateway)
# and a state directory on a real block device (not tmpfs, where write_bytes stays 0):
# BLEGATE_WEAR_DIR (default /var/tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-300}"
straps="${2:-30}"
shift 2 2>/dev/null || shift $#
if [ "$duration" = 0 ]; then echo "wear: skipped (duration 0)"; exit 0; fi
bin="${BLEGATE_BIN_DIR:-$(swift build --show-bin-path)}"
[ -x "$bin/blegate" ] || { echo "wear: no $bin/blegate; build it first (scripts/build-release.sh or swift build)" >&2; exit 1; }
# The shipped build has no test backend: the debug build's then.
backend="$bin/blegate-test-backend"
[ -x "$backend" ] || backend="$(swift build --show-bin-path)/blegate-test-backend"
[ -x "$backend" ] || { echo "wear: no blegate-test-backend; build it first (swift build --product blegate-test-backend)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "wear: needs sqlite3 (apt-get install sqlite3)" >&2; exit 1; }
source scripts/simulated-gym.sh
state="$(mktemp -d "${BLEGATE_WEAR_DIR:-/var/tmp}/blegate-wear.XXXXXX")"
trap 'simulated_gym_cleanup; rm -rf "$state"' EXIT
adapters=$(( (straps + 6) / 7 ))
simulated_gym "$bin/blegate" "$backend" wear-bench \
    --straps "$straps" --adapters "$adapters" --rate 1 --seed 5
gateway_config wear-bench '[bluetooth]' 'max_per_adapter = 7'
# The cache on the block device, everything else where the gym put it.
sed -i "s|^state_directory = .*|state_directory = \"$state\"|" "$work/blegate.toml"
"$bin/blegate" run --config "$work/blegate.toml" --bus "$bus" "$@" > "$work/run.log" 2>&1 &
run=$!
pids=("$run" "${pids[@]}")
db="$state/cache.sqlite"
echo "wear: blegate run (pid $run, $bin $*) with $straps simulated straps at 1 Hz, cache $db, window $duration s"
seq_now() { sqlite3 -readonly "file:$db?mode=ro" "SELECT coalesce(max(sequence), 0) FROM record" 2>/dev/null || echo 0; }
wb_now() { awk '/^write_bytes:/ {print $2}' "/proc/$run/io"; }
# Warm-up: every strap connected and the first checkpoints behind (60 s).
for _ in $(seq 1 600); do
    [ -f "$db" ] && [ "$(grep -c 'connected ' "$work/run.log" || true)" -ge "$straps" ] && break
    kill -0 "$run" 2>/dev/null || { echo "wear: blegate run exited early" >&2; tail -20 "$work/run.log" >&2; exit 1; }
    sleep 0.5
done
sleep 60
s0="$(seq_now)"; w0="$(wb_now)"; t0="$(date +%s.%N)"
sleep "$duration"
s1="$(seq_now)"; w1="$(wb_now)"; t1="$(date +%s.%N)"
kill -TERM "$run"; wait "$run" && status=0 || status=$?
awk -v s0="$s0" -v s1="$s1" -v w0="$w0" -v w1="$w1" -v t0="$t0" -v t1="$t1" -v status="$status" -v straps="$straps" '
    BEGIN {
        n = s1 - s0; b = w1 - w0; t = t1 - t0
        if (n <= 0) { print "wear: no records committed in the window"; exit 1 }
        perRecord = b / n; perSecond = b / t
        printf "wear: %d records in %.0f s (%.1f/s), %.1f MiB written: %.0f bytes per record, %.1f KiB/s\n",
            n, t, n / t, b / 1048576, perRecord, perSecond / 1024
        printf "wear: a 12-hour day with %d straps: %.0f MiB written (%.2f GiB)\n", straps, perSecond * 43200 / 1048576, perSecond * 43200 / 1073741824
        printf "wear: blegate run exited %d on SIGTERM\n", status
    }'
