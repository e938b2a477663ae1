#!/usr/bin/env bash
# A throw-away PostgreSQL cluster from Debian's `postgresql` binaries, for tests and the
# server benchmark: initdb in a temp directory, listening on a unix socket there only
# (no TCP port to collide with), trust authentication, durability off (fsync) since
# the data dies with it; BLEGATE_PG_DURABLE=1 keeps PostgreSQL's defaults (benchmarks). Prints `READY <database URL>` once it accepts connections,
# then stays until process WATCH_PID (default: the caller) exits, and removes it all.
# As root, the cluster runs as the `postgres` user (initdb refuses root).
#   scripts/test-postgres.sh [WATCH_PID]
set -euo pipefail
watch="${1:-$PPID}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[ -x "$bin/initdb" ] || { echo "test-postgres: no /usr/lib/postgresql/*/bin/initdb: install postgresql (scripts/setup.sh with BLEGATE_SETUP_TESTS=1)" >&2; exit 1; }
dir="$(mktemp -d /tmp/blegate-pg.XXXXXX)"
chmod 755 "$dir"
as=()
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
    as=(runuser -u postgres --)
fi
cleanup() {
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 0' TERM INT
"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
options="-k $dir -c listen_addresses= -p 5432 -c max_connections=300"
[ "${BLEGATE_PG_DURABLE:-0}" = 1 ] || options+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$options" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
echo "READY postgres://postgres@/postgres?host=$dir"
while kill -0 "$watch" 2>/dev/null; do sleep 1; done
