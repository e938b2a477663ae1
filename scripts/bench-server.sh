#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What one blegate-server takes (docs/server.md, docs/benchmarks.md): one release
# blegate-server and a throw-away PostgreSQL with its durable defaults
# (scripts/test-postgres.sh) on this machine, gateways of BENCH_STRAPS straps (40) at 1 Hz
# each sending a gzip batch every 5 s (scripts/bench-server-load.py). Three phases
# (BENCH_PHASES, default all):
#   steady  BENCH_GATEWAYS gateways (100) for BENCH_SECONDS (600), then VACUUM: batch p50/p99,
#           CPU, and PostgreSQL bytes per stored heart-rate second (record_minutes: every
#           month's partition with its TOAST and indexes).
#   ramp    gateways added by BENCH_STEPS, BENCH_STEP_SECONDS (30) each, until a step's batch
#           p99 passes 250 ms or the server falls behind: per step records/s, p50/p99, server,
#           PostgreSQL and load generator CPU (% of one core); the knee (the last good step).
#   copy    PostgreSQL's own COPY of BENCH_COPY_ROWS (400000) such records, a row each
#           (id, gateway, member, device, source, time, hr, JSON) into a plain table:
#           rows/s, and the knee's share of it.
#   scripts/bench-server.sh                     # all three, about 20 minutes
#   BENCH_PHASES=ramp scripts/bench-server.sh   # the knee only
#   BENCH_PERF=90 ...                           # and 20 s of `perf record` of the server and
#                                               # PostgreSQL from 90 s into the ramp: top symbols
#   BENCH_PG_MEMORY=1 ...                       # the cluster in /dev/shm: its flushes cost
#                                               # nothing, so the knee is the cores' limit
# Every phase probes the cluster's filesystem with an 8 KiB write and fdatasync every 50 ms
# (`disk_flush`: p99, max, flushes over 250 ms): a durable batch waits for one such flush,
# so no batch p99 is below what this disk gives.
# Run it alone on the machine: the load generator shares the cores with what it measures.
set -euo pipefail
cd "$(dirname "$0")/.."
phases="${BENCH_PHASES:-steady ramp copy}"
gateways="${BENCH_GATEWAYS:-100}" straps="${BENCH_STRAPS:-40}" seconds="${BENCH_SECONDS:-600}"
steps="${BENCH_STEPS:-25,50,100,150,200,250,300,350,400,500,600,800,1000}" step_seconds="${BENCH_STEP_SECONDS:-30}"
copy_rows="${BENCH_COPY_ROWS:-400000}"
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift build -c release --product blegate-server >&2
bin="$(swift build -c release --show-bin-path)/blegate-server"
work="$(mktemp -d /tmp/blegate-bench-server.XXXXXX)"
chmod 755 "$work"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

[ "${BENCH_PG_MEMORY:-0}" = 1 ] && export BLEGATE_PG_TMPDIR=/dev/shm
probe_dir="${BLEGATE_PG_TMPDIR:-/tmp}"
sleep infinity & watch=$!
pids+=("$watch")
BLEGATE_PG_DURABLE=1 scripts/test-postgres.sh "$watch" > "$work/pg.out" 2>&1 &
for _ in $(seq 1 600); do grep -q '^READY ' "$work/pg.out" && break; sleep 0.1; done
admin="$(sed -n 's/^READY //p' "$work/pg.out")"
[ -n "$admin" ] || { cat "$work/pg.out" >&2; exit 1; }
socket="${admin##*host=}"
as=(); [ "$(id -u)" -eq 0 ] && as=(runuser -u postgres --)
psql() { "${as[@]}" psql -h "$socket" -U postgres -v ON_ERROR_STOP=1 "$@"; }
psql -qc "CREATE DATABASE bench" postgres
export BLEGATE_DATABASE_URL="${admin%/postgres\?*}/bench?host=$socket"
"$bin" migrate >/dev/null
# Gateways and their tokens straight into the table (a `gateway add` each would take minutes).
max_gateways="$(echo "$gateways,$steps" | tr ',' '\n' | sort -n | tail -n 1)"
python3 - "$max_gateways" "$work/tokens" "$work/gateways.sql" <<'PY'
import hashlib, os, sys
n, tokens, sql = int(sys.argv[1]), open(sys.argv[2], "w"), open(sys.argv[3], "w")
sql.write("INSERT INTO gateways (id, token_sha256) VALUES\n")
rows = []
for i in range(1, n + 1):
    token = "bgt_" + os.urandom(32).hex()
    tokens.write("gw-%d %s\n" % (i, token))
    rows.append("('gw-%d', '%s')" % (i, hashlib.sha256(token.encode()).hexdigest()))
sql.write(",\n".join(rows) + ";\n")
PY
psql -q -d bench -f "$work/gateways.sql"

"$bin" serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 > "$work/server.log" 2>&1 &
server=$!
pids+=("$server")
for _ in $(seq 1 300); do grep -q 'blegate-server listening on' "$work/server.log" && break; sleep 0.1; done
port="$(sed -n 's/.*blegate-server listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/server.log" | head -n 1)"
[ -n "$port" ] || { cat "$work/server.log" >&2; exit 1; }
url="http://127.0.0.1:$port"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The benchmark cluster's postmaster and its children only (not another PostgreSQL on the machine).
postmaster="$(head -n 1 "$socket/data/postmaster.pid")"
pg_ticks() { local t=0; for p in "$postmaster" $(pgrep -P "$postmaster" || true); do t=$((t + $(ticks "$p" 2>/dev/null || echo 0))); done; echo "$t"; }
hz="$(getconf CLK_TCK)"
echo "{\"machine\": \"$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)\", \"postgresql\": \"$(psql -tAc 'SHOW server_version' postgres)\"}"

knee=""
if [[ " $phases " == *" steady "* ]]; then
    head -n "$gateways" "$work/tokens" > "$work/steady-tokens"
    s0="$(ticks "$server")"; p0="$(pg_ticks)"; t0="$(date +%s.%N)"
    python3 scripts/bench-server-load.py steady "$url" "$work/steady-tokens" --straps "$straps" --seconds "$seconds" \
        --probe-dir "$probe_dir" > "$work/load.json"
    s1="$(ticks "$server")"; p1="$(pg_ticks)"; t1="$(date +%s.%N)"
    rss="$(awk '/VmRSS/ {print $2}' "/proc/$server/status")"; hwm="$(awk '/VmHWM/ {print $2}' "/proc/$server/status")"
    psql -q -d bench -c "VACUUM"
    sizes="$(psql -d bench -tAc "
        SELECT (SELECT coalesce(sum(cardinality(ids)), 0) FROM record_minutes),
               (SELECT count(*) FROM record_minutes),
               (SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_partition_tree('record_minutes')),
               (SELECT coalesce(sum(pg_relation_size(relid)), 0) FROM pg_partition_tree('record_minutes')),
               (SELECT coalesce(sum(pg_indexes_size(relid)), 0) FROM pg_partition_tree('record_minutes'))")"
    IFS='|' read -r rows minutes total heap indexes <<<"$sizes"
    python3 - "$work/load.json" "$s0" "$s1" "$p0" "$p1" "$t0" "$t1" "$hz" "$rss" "$hwm" "$rows" "$minutes" "$total" "$heap" "$indexes" "$gateways" "$straps" <<'PY'
import json, sys
load = json.load(open(sys.argv[1]))
s0, s1, p0, p1 = map(int, sys.argv[2:6]); t0, t1 = map(float, sys.argv[6:8]); hz = int(sys.argv[8])
rss, hwm, rows, minutes, total, heap, indexes, gws, straps = map(int, sys.argv[9:18])
wall = t1 - t0
print(json.dumps({"steady": {
    "gateways": gws, "straps_per_gateway": straps, "seconds": round(wall, 1),
    "records_sent": load["records"], "inserted": load["inserted"], "duplicates": load["duplicates"],
    "records_per_second": round(load["records"] / wall, 1), "requests": load["requests"], "failures": load["failures"],
    "latency_ms": load["latency_ms"], "disk_flush": load["disk_flush"],
    "server_cpu_percent_of_one_core": round(100 * (s1 - s0) / hz / wall, 1),
    "postgres_cpu_percent_of_one_core": round(100 * (p1 - p0) / hz / wall, 1),
    "server_rss_mib": round(rss / 1024, 1), "server_peak_rss_mib": round(hwm / 1024, 1),
    "stored_hr_seconds": rows, "minute_rows": minutes,
    "bytes_per_hr_second": round(total / max(rows, 1), 1),
    "of_which_heap": round(heap / max(rows, 1), 1), "of_which_indexes": round(indexes / max(rows, 1), 1),
    "of_which_toast": round((total - heap - indexes) / max(rows, 1), 1),
}}, indent=2))
PY
fi

if [[ " $phases " == *" ramp "* ]]; then
    if [ -n "${BENCH_PERF:-}" ]; then
        (sleep "$BENCH_PERF"
         perf record -q -F 199 -g -p "$server,$(pgrep -d, -P "$postmaster")" -o "$work/perf.data" -- sleep 20 >/dev/null 2>&1) &
        perf_job=$!
    fi
    python3 scripts/bench-server-load.py ramp "$url" "$work/tokens" --straps "$straps" --steps "$steps" \
        --step-seconds "$step_seconds" --server-pid "$server" --postmaster-pid "$postmaster" --probe-dir "$probe_dir" \
        | tee "$work/ramp.json"
    if [ -n "${BENCH_PERF:-}" ]; then
        wait "$perf_job" || true
        perf report -i "$work/perf.data" --no-children --sort comm,dso --stdio -g none 2>/dev/null | grep -v '^#' | grep . | head -n 12
        perf report -i "$work/perf.data" --no-children --sort comm,sym --stdio -g none 2>/dev/null | grep -v '^#' | grep . | head -n 60
    fi
    # PostgreSQL's write-ahead log since it started (every phase so far), per stored record,
    # and its flushes per request (the gateways' request counts).
    psql -d bench -tAc "SELECT json_build_object('wal', json_build_object('bytes_per_record',
        round(w.wal_bytes / greatest((SELECT sum(cardinality(ids)) FROM record_minutes), 1)), 'full_page_images', w.wal_fpi,
        'flushes_per_request', round(w.wal_sync::numeric / greatest((SELECT sum(requests) FROM gateways), 1), 2),
        'checkpoints', (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter))) FROM pg_stat_wal w"
    knee="$(tail -n 1 "$work/ramp.json" | python3 -c 'import json, sys; k = json.load(sys.stdin)["knee"]; print(k["records_per_s"] if k else 0)')"
fi

if [[ " $phases " == *" copy "* ]]; then
    # The same records as the load sends, a row each with the columns a record had, in COPY's text format.
    python3 - "$copy_rows" "$work/copy.txt" <<'PY'
import os, sys
sys.path.insert(0, "scripts")
loader = __import__("bench-server-load")
n, out = int(sys.argv[1]), open(sys.argv[2], "w")
base, k = 1764000000, 0
while k < n:
    g = (k // 40) % 1000
    for text in loader.records(g, 40, base + k // 40000, base + k // 40000 + 1):
        # id, gateway, member, device, source, time, hr, JSON: cut from the record's text.
        uid = text[7:43]
        client = text.split('"client_id":"')[1].split('"')[0]
        ts = text.split('"timestamp":"')[1].split('"')[0]
        dev = text.split('"device_id":"')[1].split('"')[0]
        hr = text.split('"hr":')[1].split(",")[0]
        out.write("%s\tgw-%d\t%s\t%s\tble_hrm\t%s\t%s\t%s\n" % (uid, g + 1, client, dev, ts, hr, text.replace("\\", "\\\\")))
        k += 1
PY
    chmod 644 "$work/copy.txt"
    psql -q -d bench -c "CREATE TABLE copy_plain (id uuid, gateway_id text, client_id text, device_id text, source text,
                                                  ts timestamptz, hr real, body jsonb)"
    c0="$(date +%s.%N)"
    psql -q -d bench -c "COPY copy_plain FROM '$work/copy.txt'"
    c1="$(date +%s.%N)"
    python3 - "$copy_rows" "$c0" "$c1" "$knee" <<'PY'
import json, sys
rows, c0, c1 = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
knee = float(sys.argv[4]) if sys.argv[4] else None
rate = rows / (c1 - c0)
print(json.dumps({"copy": {"rows": rows, "seconds": round(c1 - c0, 2), "rows_per_second": round(rate),
                           "knee_share_of_copy": round(knee / rate, 3) if knee else None}}))
PY
fi
