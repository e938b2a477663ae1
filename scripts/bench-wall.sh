#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The wall under load: STRAPS simulated straps → blegate run → SCREENS headless Chromium
# tabs on the wall. Prints notification → DOM latency p50/p99 (each record's timestamp,
# taken when the gateway received the notification, to the moment the page put its value
# in the DOM; one clock, one machine), the gateway's CPU with no screen and with SCREENS
# screens, and its peak RSS (VmHWM). Printed, never asserted.
#   scripts/bench-wall.sh [SECONDS=60] [STRAPS=40] [SCREENS=10]
# BLEGATE_BIN_DIR picks blegate and blegate-test-backend (default: the debug build).
# BLEGATE_WALL_OFF=1: the same gateway with `listen = ""` and no browser, for comparison.
# BLEGATE_RSS_PAGES=FILE: where the gateway's resident pages of its binary are at the end,
# per section and module (scripts/rss-pages.py), written to FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
straps="${2:-40}"
screens="${3:-10}"
bin="${BLEGATE_BIN_DIR:-$(swift build --show-bin-path)}"
for b in blegate blegate-test-backend; do
    [ -x "$bin/$b" ] || { echo "wall: no $bin/$b; build it first" >&2; exit 1; }
done
source scripts/simulated-gym.sh
adapters=$(( (straps + 6) / 7 ))
simulated_gym "$bin/blegate" "$bin/blegate-test-backend" wall-bench \
    --straps "$straps" --adapters "$adapters" --rate 1 --seed 5
port="$(free_port)"
# All addresses: each screen connects through its own 127.0.0.N (see wall_browser.py bench).
listen="0.0.0.0:$port"; [ "${BLEGATE_WALL_OFF:-0}" = 1 ] && listen=""
gateway_config wall-bench '[display]' "listen = \"$listen\"" 'gym_name = "Bench Gym"'
# Binaries read just before, as scripts/bench-rss.sh runs are (docs/run.md, "Memory").
cat "$bin/blegate" > /dev/null
"$bin/blegate" run --config "$work/blegate.toml" --bus "$bus" > "$work/run.log" 2>&1 &
run=$!
pids=("$run" "${pids[@]}")
echo "wall: blegate run (pid $run, $bin) with $straps simulated straps on $adapters adapters at 1 Hz, wall on port $port"
for _ in $(seq 1 1200); do
    [ "$(grep -c '] connected ' "$work/run.log" || true)" -ge "$straps" ] && break
    kill -0 "$run" 2>/dev/null || { echo "wall: blegate run exited" >&2; tail -20 "$work/run.log" >&2; exit 1; }
    sleep 0.1
done
hz="$(getconf CLK_TCK)"
ticks() { awk '{ print $14 + $15 }' "/proc/$run/stat"; }
now() { date +%s.%N; }
cpu_over() { # seconds → CPU % of one core over that window
    local t0 c0 t1 c1
    t0="$(now)"; c0="$(ticks)"; sleep "$1"; t1="$(now)"; c1="$(ticks)"
    awk -v c="$((c1 - c0))" -v hz="$hz" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", c / hz / (t1 - t0) * 100 }'
}
idle="$(cpu_over 20)"
echo "wall: gateway CPU with no screen: $idle % of one core (20 s)"
rss() { awk '/^(VmHWM|RssAnon|RssFile):/ { printf "%s %.1f MiB  ", $1, $2 / 1024 } END { print "" }' "/proc/$run/status"; }
if [ "${BLEGATE_WALL_OFF:-0}" = 1 ]; then
    cpu="$(cpu_over "$seconds")"
    echo "wall: off; gateway CPU $cpu % of one core over $seconds s; $(rss)"
    kill -TERM "$run"; wait "$run" || true
    exit 0
fi
/usr/bin/python3 Tests/WallTests/wall_browser.py bench "http://127.0.0.1:$port/" --tiles "$straps" --screens "$screens" \
    --seconds "$seconds" > "$work/bench.out" 2> "$work/bench.err" &
browser=$!
for _ in $(seq 1 1800); do grep -q '^# MEASURING' "$work/bench.out" && break; sleep 0.1; done
grep -q '^# MEASURING' "$work/bench.out" || { echo "wall: the browser did not start" >&2; cat "$work/bench.out" "$work/bench.err" >&2; exit 1; }
loaded="$(cpu_over "$seconds")"
wait "$browser"
result="$(grep '^{' "$work/bench.out")"
echo "wall: $result"
/usr/bin/python3 - "$result" "$idle" "$loaded" "$screens" "$seconds" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print("wall: notification -> DOM over %s s, %d screens: p50 %s ms, p99 %s ms, max %s ms (%d values drawn)"
      % (sys.argv[5], r["screens"], r["p50_ms"], r["p99_ms"], r["max_ms"], r["samples"]))
print("wall: gateway CPU: %s %% of one core with no screen, %s %% with %s screens" % (sys.argv[2], sys.argv[3], sys.argv[4]))
PY
echo "wall: gateway memory: $(rss)(budget: peak 64 MiB)"
if [ -n "${BLEGATE_RSS_PAGES:-}" ]; then
    /usr/bin/python3 scripts/rss-pages.py "$run" --symbols 60 > "$BLEGATE_RSS_PAGES" || echo "wall: scripts/rss-pages.py failed" >&2
fi
kill -TERM "$run"; wait "$run" || true
