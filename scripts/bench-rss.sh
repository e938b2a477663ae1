#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Peak RSS of `blegate run` with simulated straps, sampled from /proc every 5 s, and
# whether it stays flat (printed, never asserted); /metrics is scraped every 15 s.
#   scripts/bench-rss.sh [SECONDS=1800] [STRAPS=50]
# BLEGATE_BIN_DIR picks the binaries (default: the debug build, `swift build --show-bin-path`);
# SECONDS=0 skips the run (CI). BLEGATE_RSS_PAGES=FILE writes, at the end, where the resident
# pages of the binary are, per section and module (scripts/rss-pages.py), to FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-1800}"
straps="${2:-50}"
if [ "$duration" = 0 ]; then echo "rss: skipped (duration 0)"; exit 0; fi
bin="${BLEGATE_BIN_DIR:-$(swift build --show-bin-path)}"
for b in blegate blegate-test-backend; do
    [ -x "$bin/$b" ] || { echo "rss: no $bin/$b; build it first (swift build --product $b)" >&2; exit 1; }
done
source scripts/simulated-gym.sh
# /metrics on, as by default, and scraped every 15 s as a Prometheus would.
metrics_port="$(free_port)"
export BENCH_METRICS_LISTEN="127.0.0.1:$metrics_port"
adapters=$(( (straps + 6) / 7 ))
simulated_gym "$bin/blegate" "$bin/blegate-test-backend" rss-bench \
    --straps "$straps" --adapters "$adapters" --rate 1 --seed 5
gateway_config rss-bench '[bluetooth]' 'max_per_adapter = 7'
"$bin/blegate" run --config "$work/blegate.toml" --bus "$bus" > "$work/run.log" 2>&1 &
run=$!
pids=("$run" "${pids[@]}")
echo "rss: blegate run (pid $run, $bin) with $straps simulated straps on $adapters adapters at 1 Hz, backend $url, for $duration s"
samples="$work/rss"
end=$(( $(date +%s) + duration ))
while [ "$(date +%s)" -lt "$end" ]; do
    kill -0 "$run" 2>/dev/null || { echo "rss: blegate run exited early" >&2; tail -20 "$work/run.log" >&2; exit 1; }
    awk '/^VmRSS:/ {print $2}' "/proc/$run/status" >> "$samples"
    tick=$(( ${tick:-0} + 1 ))
    if [ $(( tick % 3 )) = 0 ]; then
        /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$metrics_port/metrics', timeout=10).read()" 2>/dev/null || true
    fi
    sleep 5
done
peak_kib="$(awk '/^VmHWM:/ {print $2}' "/proc/$run/status")"
# Where the resident memory is at the end: anonymous (heap, stacks) and each mapped file.
awk '/^(RssAnon|RssFile|RssShmem):/ {printf "rss: %s %.1f MiB\n", $1, $2 / 1024}' "/proc/$run/status"
if [ -n "${BLEGATE_RSS_PAGES:-}" ]; then
    /usr/bin/python3 scripts/rss-pages.py "$run" --symbols 60 > "$BLEGATE_RSS_PAGES" || echo "rss: scripts/rss-pages.py failed" >&2
fi
awk '$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ { name = (NF >= 6) ? $6 : "[anonymous]"; n = split(name, parts, "/"); name = parts[n] }
     $1 == "Rss:" { rss[name] += $2 }
     END { for (k in rss) if (rss[k] >= 256) printf "%8.1f MiB  %s\n", rss[k] / 1024, k }' "/proc/$run/smaps" | sort -rn | head -12 | sed 's/^/rss:   /'
connected="$(grep -c 'connected ' "$work/run.log" || true)"
"$bin/blegate" status --config "$work/blegate.toml" | sed -n '/OUTBOX/,/SYNC/p' | head -2 | tail -1
kill -TERM "$run"; wait "$run" && status=0 || status=$?
# Flat or not is judged after the warm-up: the HRV engine fills a 300-second beat window
# per strap in the first five minutes (bounded, by design), so the samples of the first
# 300 s (or of the first quarter, in shorter runs) are left out; the first and last thirds
# of the rest are compared. The first-to-last-quarter figure is printed as well.
awk -v peak="$peak_kib" -v connected="$connected" -v status="$status" -v interval=5 '
    function mean(from, to,    i, sum) { sum = 0; for (i = from; i <= to; i++) sum += v[i]; return sum / (to - from + 1) }
    { v[NR] = $1 }
    END {
        n = NR; q = int(n / 4); if (q < 1) q = 1
        a = mean(1, q); b = mean(n - q + 1, n)
        max = 0; for (i = 1; i <= n; i++) if (v[i] > max) max = v[i]
        growth = (b - a) / a * 100
        warm = int(300 / interval); if (warm > q) warm = q
        t = int((n - warm) / 3); if (t < 1) t = 1
        c = mean(warm + 1, warm + t); d = mean(n - t + 1, n)
        steady = (d - c) / c * 100
        minutes = (n - warm - t) * interval / 60
        printf "rss: peak (VmHWM) %.1f MiB, max sampled %.1f MiB; mean first quarter %.1f MiB, last quarter %.1f MiB (%+.1f%%) over %d samples\n",
            peak / 1024, max / 1024, a / 1024, b / 1024, growth, n
        printf "rss: after the %d s warm-up: first third %.1f MiB, last third %.1f MiB (%+.1f%%, %+.0f KiB per 10 min): %s\n",
            warm * interval, c / 1024, d / 1024, steady, (minutes > 0 ? (d - c) / minutes * 10 : 0), (steady < 2 && steady > -2) ? "flat" : "not flat"
        printf "rss: %d connect lines in the log; blegate run exited %d on SIGTERM (budget with 40 straps, the wall and sync: peak <= 64 MiB, flat)\n", connected, status
    }' "$samples"
