#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A gym class through one gateway, measured from /proc (printed, never asserted):
#   run     `blegate run` with 40 straps on 2 adapters whose link limits (4 and 7) it is
#           not told, 12 of them advertising heart rate (4 only advertising), the backend
#           syncing: CPU per record delivered, peak RSS and RssAnon.
#   stream  `blegate stream --device '*' --format none` with 50 linked straps on 2 adapters
#           and 30 heard only by advertisement: CPU per record, peak RSS and RssAnon.
#   scripts/bench-class.sh [SECONDS=120]
# BLEGATE_BIN_DIR picks the binaries (default: the debug build); the shipped figures are
# from `BLEGATE_BIN_DIR=$(scripts/build-release.sh | tail -n 1) scripts/bench-class.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-120}"
bin="${BLEGATE_BIN_DIR:-$(swift build --show-bin-path)}"
for b in blegate blegate-stream; do
    [ -x "$bin/$b" ] || { echo "class: no $bin/$b; build it first" >&2; exit 1; }
done
# The loopback backend is not part of the shipped build: the debug one serves.
backend="$bin/blegate-test-backend"
[ -x "$backend" ] || backend="$(swift build --show-bin-path)/blegate-test-backend"
[ -x "$backend" ] || { echo "class: no blegate-test-backend; build it first (swift build --product blegate-test-backend)" >&2; exit 1; }
ticks=$(getconf CLK_TCK)
cpu_seconds() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
memory() { awk '/^VmHWM:/ {h=$2} /^RssAnon:/ {a=$2} /^RssFile:/ {f=$2} END {printf "peak RSS %.1f MiB, RssAnon %.1f MiB, RssFile %.1f MiB", h/1024, a/1024, f/1024}' "/proc/$1/status"; }

source scripts/simulated-gym.sh
simulated_gym "$bin/blegate" "$backend" class-bench \
    --straps 40 --adapters 2 --link-limits 4,7 --advertising 12 --advertising-only 4 --rate 1 --seed 5
# The wall is part of what ships: on, on loopback, with no screen.
gateway_config class-bench '[display]' 'listen = "127.0.0.1:18080"'
"$bin/blegate" run --config "$work/blegate.toml" --bus "$bus" > "$work/run.log" 2>&1 &
run=$!
pids=("$run" "${pids[@]}")
status() { "$bin/blegate" status --json --config "$work/blegate.toml" 2>/dev/null; }
delivered() { status | python3 -c 'import json,sys; print(json.load(sys.stdin)["sync"]["delivered_since_start"])'; }
# Settle: both limits learned, every link in use.
for _ in $(seq 1 120); do
    s="$(status || true)"
    if python3 -c 'import json,sys; r=json.loads(sys.argv[1]); a={x["adapter"]:x for x in r.get("adapters") or []}; sys.exit(0 if all(a.get(k,{}).get("links")==n and a.get(k,{}).get("learned_limit")==n for k,n in (("hci0",4),("hci1",7))) else 1)' "$s" 2>/dev/null; then break; fi
    sleep 1
done
c0=$(cpu_seconds "$run"); d0=$(delivered); t0=$(date +%s.%N)
sleep "$duration"
c1=$(cpu_seconds "$run"); d1=$(delivered); t1=$(date +%s.%N)
python3 - "$c0" "$c1" "$d0" "$d1" "$t0" "$t1" <<'PY'
import sys
c0, c1, d0, d1, t0, t1 = map(float, sys.argv[1:])
n = d1 - d0
print(f"class run: {n:.0f} records delivered in {t1 - t0:.0f} s ({n / (t1 - t0):.1f}/s); CPU {c1 - c0:.2f} s = {1e6 * (c1 - c0) / max(n, 1):.1f} µs per record ({100 * (c1 - c0) / (t1 - t0):.1f} % of a core)")
PY
echo "class run: $(memory "$run")"
"$bin/blegate" status --config "$work/blegate.toml" | grep -E '^  links:' | sed 's/^ */class run: /'
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()

# stream: 50 linked straps on 2 adapters (25 each) and 30 heard only by advertisement,
# every strap at 1 Hz. CPU over a steady window once every strap is linked (40 s after
# start), per record expected in it (80 straps x 1 Hz); the totals at exit cross-check it.
simulated_gym "$bin/blegate" "$backend" stream-bench \
    --straps 80 --adapters 2 --advertising 30 --advertising-only 30 --rate 1 --seed 6
python3 - "$bin/blegate" "$bus" "$duration" <<'PY'
import os, re, subprocess, sys, time
blegate, bus, duration = sys.argv[1], sys.argv[2], float(sys.argv[3])
start = time.time()
p = subprocess.Popen([blegate, "stream", "--bus", bus, "--device", "*", "--format", "none", "--duration", str(duration + 50)],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
ticks = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / ticks
time.sleep(40)
c0, t0 = cpu(), time.time()
time.sleep(duration)
c1, t1 = cpu(), time.time()
status = open(f"/proc/{p.pid}/status").read()
kib = lambda key: int(re.search(key + r":\s+(\d+)", status).group(1)) / 1024
_, code, usage = os.wait4(p.pid, 0)
err = p.stderr.read()
notes = adverts = linked = 0
for m in re.finditer(r": (\d+) notifications, \d+ malformed \(skipped\), \d+ reconnect\(s\), (\d+) from advertisements", err):
    notes += int(m.group(1)); adverts += int(m.group(2)); linked += int(m.group(1)) > 0
expected = 80 * (t1 - t0)
total = time.time() - start
print(f"class stream: {linked} straps linked; in all {notes} notifications and {adverts} advertised records in {total:.0f} s "
      f"({(notes + adverts) / total:.0f}/s with connecting)")
print(f"class stream: steady {t1 - t0:.0f} s: CPU {c1 - c0:.2f} s = {1e6 * (c1 - c0) / expected:.1f} µs per record (80 records/s), "
      f"{100 * (c1 - c0) / (t1 - t0):.1f} % of a core")
print(f"class stream: peak RSS {kib('VmHWM'):.1f} MiB, RssAnon {kib('RssAnon'):.1f} MiB, RssFile {kib('RssFile'):.1f} MiB; exit {code >> 8}")
PY
