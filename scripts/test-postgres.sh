#!/usr/bin/env bash
# A throw-away PostgreSQL cluster from Debian's `postgresql` binaries, for tests and the
# server benchmark: initdb in a temp directory, listening on a unix socket there only
# (no TCP port to collide with), trust authentication, durability off (fsync) since
# the data dies with it; BLEGATE_PG_DURABLE=1 keeps PostgreSQL's defaults (benchmarks). Prints `READY <database URL>` once it accepts connections,
# then stays until process WATCH_PID (default: the caller) exits, and removes it all.
# As root, the cluster runs as the `postgres` user (initdb refuses root).
# BLEGATE_PG_TLS=1 also listens on 127.0.0.1 (a free port) with ssl = on, its certificate
# for localhost and 127.0.0.1 signed by a throw-away authority, and prints
# `TLS <port> <that authority's PEM> <another authority's PEM>` before READY (the server's
# sslmode tests).
# BLEGATE_PG_STANDBY_OF=SOCKET_DIR makes a streaming standby of the cluster listening there
# instead of a new cluster: `pg_basebackup -R` copies it and the copy replays its WAL,
# read-only (the server's read replica tests).
# BLEGATE_PG_TMPDIR=DIR puts the cluster under DIR instead of /tmp (the benchmark's
# /dev/shm); BLEGATE_PG_OPTIONS adds server options (`-c log_lock_waits=on ...`).
#   scripts/test-postgres.sh [WATCH_PID]
set -euo pipefail
watch="${1:-$PPID}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[ -x "$bin/initdb" ] || { echo "test-postgres: no /usr/lib/postgresql/*/bin/initdb: install postgresql (scripts/setup.sh with BLEGATE_SETUP_TESTS=1)" >&2; exit 1; }
dir="$(mktemp -d "${BLEGATE_PG_TMPDIR:-/tmp}/blegate-pg.XXXXXX")"
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
if [ -n "${BLEGATE_PG_STANDBY_OF:-}" ]; then
    "${as[@]}" "$bin/pg_basebackup" -h "$BLEGATE_PG_STANDBY_OF" -U postgres -D "$dir/data" -R -X stream -c fast --no-sync \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
else
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
fi
options="-k $dir -c listen_addresses= -p 5432 -c max_connections=300"
[ "${BLEGATE_PG_DURABLE:-0}" = 1 ] || options+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
options+=" ${BLEGATE_PG_OPTIONS:-}"
if [ "${BLEGATE_PG_TLS:-0}" = 1 ]; then
    tls="$dir/tls"
    mkdir "$tls"
    key=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${key[@]}" -keyout "$tls/ca.key" -out "$tls/ca.pem" -days 2 -subj /CN=blegate-test-ca 2>/dev/null
    openssl req -x509 "${key[@]}" -keyout "$tls/other.key" -out "$tls/other.pem" -days 2 -subj /CN=blegate-other-ca 2>/dev/null
    openssl req "${key[@]}" -keyout "$tls/server.key" -out "$tls/server.csr" -subj /CN=localhost 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$tls/ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
        -extfile "$tls/ext" -out "$tls/server.pem" 2>/dev/null
    chmod 600 "$tls/server.key"
    [ "$(id -u)" -ne 0 ] || chown -R postgres: "$tls"
    tls_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    options="${options/listen_addresses= -p 5432/listen_addresses=127.0.0.1 -p $tls_port}"
    options+=" -c ssl=on -c ssl_cert_file=$tls/server.pem -c ssl_key_file=$tls/server.key"
fi
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$options" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
if [ -n "${tls_port:-}" ]; then
    echo "TLS $tls_port $tls/ca.pem $tls/other.pem"
    echo "READY postgres://postgres@/postgres?host=$dir&port=$tls_port"
else
    echo "READY postgres://postgres@/postgres?host=$dir"
fi
while kill -0 "$watch" 2>/dev/null; do sleep 1; done
