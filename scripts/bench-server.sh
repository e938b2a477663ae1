#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What one blegate-server does (docs/server.md, docs/benchmarks.md): BENCH_GATEWAYS gateways
# (default 20) of BENCH_STRAPS straps (40) at 1 Hz for BENCH_SECONDS (600), each sending a
# gzip batch every 5 s (scripts/bench-server-load.py), into one release blegate-server and a
# throw-away PostgreSQL with its durable defaults (scripts/test-postgres.sh). Reports
# request latency p50/p99, the server's CPU (% of one core) and RSS, PostgreSQL's CPU, and
# PostgreSQL bytes per stored record (records and record_seconds with their indexes, every month's partition).
#   scripts/bench-server.sh            # BENCH_SECONDS=60 for a quick look
set -euo pipefail
cd "$(dirname "$0")/.."
gateways="${BENCH_GATEWAYS:-20}" straps="${BENCH_STRAPS:-40}" seconds="${BENCH_SECONDS:-600}"
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift build -c release --product blegate-server >&2
bin="$(swift build -c release --show-bin-path)/blegate-server"
work="$(mktemp -d /tmp/blegate-bench-server.XXXXXX)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

sleep infinity & watch=$!
pids+=("$watch")
BLEGATE_PG_DURABLE=1 scripts/test-postgres.sh "$watch" > "$work/pg.out" 2>&1 &
for _ in $(seq 1 600); do grep -q '^READY ' "$work/pg.out" && break; sleep 0.1; done
admin="$(sed -n 's/^READY //p' "$work/pg.out")"
[ -n "$admin" ] || { cat "$work/pg.out" >&2; exit 1; }
socket="${admin##*host=}"
as=(); [ "$(id -u)" -eq 0 ] && as=(runuser -u postgres --)
"${as[@]}" psql -h "$socket" -U postgres -qc "CREATE DATABASE bench" postgres
export BLEGATE_DATABASE_URL="${admin%/postgres\?*}/bench?host=$socket"
"$bin" migrate >/dev/null
for i in $(seq 1 "$gateways"); do echo "gw-$i $("$bin" gateway add "gw-$i")"; done > "$work/tokens"

"$bin" serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 > "$work/server.log" 2>&1 &
server=$!
pids+=("$server")
for _ in $(seq 1 300); do grep -q 'blegate-server listening on' "$work/server.log" && break; sleep 0.1; done
port="$(sed -n 's/.*blegate-server listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/server.log" | head -n 1)"
[ -n "$port" ] || { cat "$work/server.log" >&2; exit 1; }

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The benchmark cluster's postmaster and its children only (not another PostgreSQL on the machine).
postmaster="$(head -n 1 "$socket/data/postmaster.pid")"
pg_ticks() { local t=0; for p in "$postmaster" $(pgrep -P "$postmaster" || true); do t=$((t + $(ticks "$p" 2>/dev/null || echo 0))); done; echo "$t"; }
hz="$(getconf CLK_TCK)"
s0="$(ticks "$server")"; p0="$(pg_ticks)"; t0="$(date +%s.%N)"
python3 scripts/bench-server-load.py "http://127.0.0.1:$port" "$work/tokens" --straps "$straps" --seconds "$seconds" > "$work/load.json"
s1="$(ticks "$server")"; p1="$(pg_ticks)"; t1="$(date +%s.%N)"
rss="$(awk '/VmRSS/ {print $2}' "/proc/$server/status")"; hwm="$(awk '/VmHWM/ {print $2}' "/proc/$server/status")"
sizes="$("${as[@]}" psql -h "$socket" -U postgres -d bench -tAc "
    SELECT (SELECT count(*) FROM records),
           (SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_partition_tree('records')),
           (SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_partition_tree('record_seconds'))")"
IFS='|' read -r rows records_bytes seconds_bytes <<<"$sizes"
python3 - "$work/load.json" "$s0" "$s1" "$p0" "$p1" "$t0" "$t1" "$hz" "$rss" "$hwm" "$rows" "$records_bytes" "$seconds_bytes" "$gateways" "$straps" <<'PY'
import json, sys
load = json.load(open(sys.argv[1]))
s0, s1, p0, p1 = map(int, sys.argv[2:6]); t0, t1 = map(float, sys.argv[6:8]); hz = int(sys.argv[8])
rss, hwm, rows, rb, sb, gws, straps = map(int, sys.argv[9:16])
wall = t1 - t0
print(json.dumps({
    "gateways": gws, "straps_per_gateway": straps, "seconds": round(wall, 1),
    "records_sent": load["records"], "inserted": load["inserted"], "duplicates": load["duplicates"],
    "records_per_second": round(load["records"] / wall, 1), "requests": load["requests"], "failures": load["failures"],
    "latency_ms": load["latency_ms"],
    "server_cpu_percent_of_one_core": round(100 * (s1 - s0) / hz / wall, 1),
    "postgres_cpu_percent_of_one_core": round(100 * (p1 - p0) / hz / wall, 1),
    "server_rss_mib": round(rss / 1024, 1), "server_peak_rss_mib": round(hwm / 1024, 1),
    "stored_records": rows, "bytes_per_record": round((rb + sb) / max(rows, 1), 1),
    "bytes_per_record_records_table": round(rb / max(rows, 1), 1),
}, indent=2))
PY
