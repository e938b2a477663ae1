#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What Prometheus costs `blegate run`: CPU with a scrape of /metrics every 15 s against
# none, in alternating windows of one run (so both see the same class), the CPU of one
# scrape measured over back-to-back scrapes, and the size of the body. Printed, never
# asserted.
#   scripts/bench-metrics.sh [ROUNDS=3] [STRAPS=40] [WINDOW=120]
# BLEGATE_BIN_DIR picks the binaries (default: the debug build).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
straps="${2:-40}"
window="${3:-120}"
bin="${BLEGATE_BIN_DIR:-$(swift build --show-bin-path)}"
for b in blegate blegate-test-backend; do
    [ -x "$bin/$b" ] || { echo "metrics: no $bin/$b; build it first" >&2; exit 1; }
done
source scripts/simulated-gym.sh
port="$(free_port)"
export BENCH_METRICS_LISTEN="127.0.0.1:$port"
adapters=$(( (straps + 6) / 7 ))
simulated_gym "$bin/blegate" "$bin/blegate-test-backend" metrics-bench \
    --straps "$straps" --adapters "$adapters" --rate 1 --seed 5
gateway_config metrics-bench '[bluetooth]' 'max_per_adapter = 7'
"$bin/blegate" run --config "$work/blegate.toml" --bus "$bus" > "$work/run.log" 2>&1 &
run=$!
pids=("$run" "${pids[@]}")
metrics_url="http://127.0.0.1:$port/metrics"
echo "metrics: blegate run (pid $run, $bin), $straps simulated straps at 1 Hz, $rounds rounds of ${window} s without and ${window} s with a scrape every 15 s"

# CPU seconds (user + system) the gateway used so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$run/stat"; }
# Scrapes COUNT times back to back; prints the body's bytes.
scrape() {
    /usr/bin/python3 - "$metrics_url" "$1" <<'PY'
import sys, urllib.request
url, count = sys.argv[1], int(sys.argv[2])
size = 0
for _ in range(count):
    with urllib.request.urlopen(url, timeout=10) as r:
        size = len(r.read())
print(size)
PY
}
for _ in $(seq 1 600); do scrape 1 > /dev/null 2>&1 && break; sleep 0.1; done
sleep 60  # links made, HRV windows filling
without=0; with=0; scrapes=0
for r in $(seq 1 "$rounds"); do
    a="$(cpu)"; sleep "$window"; b="$(cpu)"
    without="$(awk -v s="$without" -v a="$a" -v b="$b" 'BEGIN { print s + b - a }')"
    a="$(cpu)"; end=$(( $(date +%s) + window ))
    while [ "$(date +%s)" -lt "$end" ]; do
        scrape 1 > /dev/null; scrapes=$(( scrapes + 1 )); sleep 15
    done
    b="$(cpu)"
    with="$(awk -v s="$with" -v a="$a" -v b="$b" 'BEGIN { print s + b - a }')"
done
t0="$(date +%s.%N)"; a="$(cpu)"; size="$(scrape 200)"; b="$(cpu)"; t1="$(date +%s.%N)"
streaming="$("$bin/blegate" status --json --config "$work/blegate.toml" | /usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(sum(1 for d in r["devices"] if d["state"] in ("streaming","advertised")))')"
rss_kib="$(awk '/^VmHWM:/ {print $2}' "/proc/$run/status")"
awk -v without="$without" -v with="$with" -v total=$(( rounds * window )) -v scrapes="$scrapes" -v a="$a" -v b="$b" \
    -v size="$size" -v t0="$t0" -v t1="$t1" -v streaming="$streaming" -v straps="$straps" -v rss="$rss_kib" 'BEGIN {
    printf "metrics: %d of %d straps recorded; peak RSS %.1f MiB\n", streaming, straps, rss / 1024
    printf "metrics: CPU without scrapes %.2f%%, with a scrape every 15 s %.2f%% (%d scrapes; %+.1f ms CPU per scrape)\n",
        without / total * 100, with / total * 100, scrapes, (with - without) / scrapes * 1000
    # The class goes on meanwhile: its CPU at the rate without scrapes is taken off.
    printf "metrics: 200 scrapes back to back in %.1f s: %.2f ms CPU each; body %d bytes\n",
        t1 - t0, ((b - a) - without / total * (t1 - t0)) / 200 * 1000, size
}'
