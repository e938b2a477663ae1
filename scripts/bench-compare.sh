#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds measured side by side on the same machine in one run, so that a change's
# figures are read against the build before it rather than against a figure taken another
# day. Rounds alternate A, B, A, B (a burst of load elsewhere hits both builds); every
# line of output is prefixed with the build's label. Printed, never asserted.
#   scripts/bench-compare.sh A_DIR B_DIR stream [ROUNDS=2]   blegate stream (AcquireNotify) and
#        bleak at 500 and 50 notifications/s, 10 straps: CPU per notification, ratio, peak RSS
#   scripts/bench-compare.sh A_DIR B_DIR run [ROUNDS=2]      blegate run per record at real
#        arrival times (the stream benchmark's `run` client)
#   scripts/bench-compare.sh A_DIR B_DIR wear [SECONDS=180] [STRAPS=30]
#                                                            bytes written per record, both at once
#   scripts/bench-compare.sh A_DIR B_DIR wall [SECONDS=1800] [STRAPS=40] [SCREENS=10]
#        blegate run with the wall and sync, both at once: peak RSS over the run
#        (CPU figures of this one are shared by two gateways and two browsers: not comparable)
# A_DIR and B_DIR each hold a shipped `blegate` and `blegate-stream` (scripts/build-release.sh
# prints the directory); the harness (blegate-bench, blegate-test-backend) is this tree's
# debug build, which only starts and reads the measured processes. Labels: BENCH_LABELS="a,b".
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
[ $# -ge 3 ] || { sed -n '7,19p' "$0" >&2; exit 2; }
a="$1"; b="$2"; what="$3"; shift 3
IFS=, read -r label_a label_b <<< "${BENCH_LABELS:-a,b}"
for d in "$a" "$b"; do
    [ -x "$d/blegate" ] || { echo "bench-compare: no $d/blegate (scripts/build-release.sh)" >&2; exit 1; }
done
debug="$(swift build --show-bin-path)"
[ -x "$debug/blegate-bench" ] || swift build --product blegate-bench
[ -x "$debug/blegate-test-backend" ] || swift build --product blegate-test-backend
prefix() { sed -u "s/^/[$1] /"; }

# A directory holding the shipped binaries and the harness's test backend, as the
# single-build scripts expect (BLEGATE_BIN_DIR).
bindir() {
    local d; d="$(mktemp -d /tmp/blegate-compare.XXXXXX)"
    ln -s "$(realpath "$1")/blegate" "$d/blegate"
    [ -x "$1/blegate-stream" ] && ln -s "$(realpath "$1")/blegate-stream" "$d/blegate-stream"
    ln -s "$debug/blegate-test-backend" "$d/blegate-test-backend"
    echo "$d"
}

case "$what" in
    stream|run)
        rounds="${1:-2}"
        python=.build/bench-python/bin/python
        if [ "$what" = stream ] && ! "$python" -c 'import bleak' 2>/dev/null; then
            /usr/bin/python3 -m venv .build/bench-python
            .build/bench-python/bin/pip install -q --disable-pip-version-check 'bleak==3.1.0'
        fi
        clients=acquire,bleak; [ "$what" = run ] && clients=run
        for r in $(seq 1 "$rounds"); do
            for pair in "$label_a:$a" "$label_b:$b"; do
                label="${pair%%:*}"; dir="${pair#*:}"
                echo "[$label] round $r"
                "$debug/blegate-bench" stream --blegate "$dir/blegate" --clients "$clients" \
                    --python "$python" --bleak-script Benchmarks/bleak/bleak_stream.py 2>&1 | prefix "$label"
            done
        done
        ;;
    wear|wall)
        da="$(bindir "$a")"; db="$(bindir "$b")"
        trap 'rm -rf "$da" "$db"' EXIT
        script=scripts/bench-wear.sh; [ "$what" = wall ] && script=scripts/bench-wall.sh
        if [ "$what" = wear ]; then set -- "${1:-180}" "${2:-30}"; else set -- "${1:-1800}" "${2:-40}" "${3:-10}"; fi
        BLEGATE_BIN_DIR="$da" "$script" "$@" 2>&1 | prefix "$label_a" &
        pa=$!
        BLEGATE_BIN_DIR="$db" "$script" "$@" 2>&1 | prefix "$label_b" &
        pb=$!
        wait "$pa"; wait "$pb"
        ;;
    *) echo "bench-compare: unknown benchmark $what (stream, run, wear, wall)" >&2; exit 2 ;;
esac
