#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerates scripts/symbol-order.txt: the functions `blegate stream` and `blegate run`
# execute, recorded by valgrind's callgrind while they run against the simulator (with
# link losses and malformed payloads) and the loopback backend. scripts/build-release.sh
# hands the list to lld (--symbol-ordering-file), which places those functions first and
# together in .text. The kernel maps code in 64 KiB windows around each fault, so code
# that runs, packed together, keeps fewer pages resident than the same code spread over
# the binary (docs/benchmarks.md, "Memory").
#
#   scripts/gen-symbol-order.sh [SECONDS=40]
#
# Run it after larger changes; a stale list is harmless (names no longer in the binary
# are skipped, new functions are placed after the listed ones).
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C  # comm and the sorted lists below compare bytes
command -v valgrind >/dev/null 2>&1 || { echo "gen-symbol-order: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
seconds="${1:-40}"
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
bin="$(scripts/build-release.sh | tail -n 1)"
swift build -c release --product blegate-test-backend >&2
backend_bin="$(swift build -c release --show-bin-path)/blegate-test-backend"

source scripts/simulated-gym.sh
simulated_gym "$bin/blegate" "$backend_bin" order \
    --straps 10 --adapters 2 --rate 2 --seed 5 --malformed-rate 0.02 --link-loss-every 15

grind() { # output file, then the command
    local out=$1; shift
    valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no --demangle=no "$@"
}
# Valgrind 3.19 cannot read these binaries' DWARF 5; it needs only the symbol table.
for b in blegate blegate-stream; do strip --strip-debug -o "$work/$b" "$bin/$b"; done

echo "gen-symbol-order: blegate stream under callgrind for $seconds s" >&2
grind "$work/stream.cg" "$work/blegate-stream" stream --bus "$bus" --device '*' --max-per-adapter 7 \
    --interval 5 --duration "$seconds" > /dev/null 2> "$work/stream.err"

# run sees a gym closer to the one it is measured in (scripts/bench-rss.sh): more straps on
# more adapters, for longer, with status asked every 30 s, so that code it runs only there
# is listed too (each function missing from the list keeps 64 KiB or more of code
# resident around it).
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
simulated_gym "$bin/blegate" "$backend_bin" order-run \
    --straps 21 --adapters 3 --rate 1 --seed 6 --malformed-rate 0.02 --link-loss-every 40
gateway_config order '[bluetooth]' 'max_per_adapter = 7'
run_seconds=$(( seconds * 4 ))
echo "gen-symbol-order: blegate run under callgrind for $run_seconds s" >&2
# Not through grind(): $! must be valgrind itself, so that SIGTERM reaches blegate run.
valgrind --tool=callgrind --callgrind-out-file="$work/run.cg" --dump-instr=no --demangle=no \
    "$work/blegate" run --config "$work/blegate.toml" --bus "$bus" > "$work/run.log" 2>&1 &
run=$!
for _ in $(seq 1 $(( run_seconds / 30 ))); do
    sleep 30
    "$bin/blegate" status --config "$work/blegate.toml" > /dev/null 2>&1 || true
done
sleep $(( run_seconds % 30 ))
kill -0 "$run" 2>/dev/null || { echo "gen-symbol-order: blegate run under valgrind ended early:" >&2; tail -20 "$work/run.log" >&2; exit 1; }
kill -TERM "$run"; wait "$run" || true

# Function names callgrind saw (fn= and cfn= lines name a function the first time), kept
# when one of the two binaries defines them: the stream's first, then the rest of run's.
names() { grep -oE '^c?fn=\([0-9]+\) .+' "$1" | sed -E 's/^c?fn=\([0-9]+\) //' | sort -u; }
defined() { nm --defined-only "$1" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u; }
comm -12 <(names "$work/stream.cg") <(defined "$bin/blegate-stream") > "$work/stream.order"
comm -12 <(names "$work/run.cg") <(defined "$bin/blegate") | comm -23 - "$work/stream.order" > "$work/run.order"
cat "$work/stream.order" "$work/run.order" > scripts/symbol-order.txt
echo "gen-symbol-order: scripts/symbol-order.txt: $(wc -l < "$work/stream.order") functions of stream, $(wc -l < "$work/run.order") more of run" >&2
