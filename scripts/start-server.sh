#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs blegate-server (docs/server.md) in the foreground against PostgreSQL.
#
# With BLEGATE_DATABASE_URL set: that database, nothing installed. Otherwise the machine's
# own PostgreSQL from Debian's `postgresql` package: installed when missing, its cluster
# started, and a role and database `blegate` created (the role's password is made once and
# kept in $BLEGATE_STATE_DIR/db-password, mode 0600). Schema migrations run on start.
#   BLEGATE_SERVER_LISTEN   host:port to serve on (default 127.0.0.1:8090)
#   BLEGATE_STATE_DIR       where the password and the database URL go (default ./.blegate)
#   BLEGATE_PG_CLUSTER      the cluster to use when pg_lsclusters shows several (a name or
#                           version/name; default the one named main)
# Then, in another terminal (with BLEGATE_DATABASE_URL="$(cat .blegate/database-url)"):
#   blegate-server gateway add room-1        # prints the gateway's token once
#   blegate-server staff add reception       # a token for the staff page, /staff
#   blegate-server pairing create --client-id c-48151623 --expires 24h
set -euo pipefail
cd "$(dirname "$0")/.."
BLEGATE_SKIP_BUILD=1 scripts/setup.sh
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift build -c release --product blegate-server >&2
bin="$(swift build -c release --show-bin-path)/blegate-server"
listen="${BLEGATE_SERVER_LISTEN:-127.0.0.1:8090}"
state="${BLEGATE_STATE_DIR:-$PWD/.blegate}"

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
as_postgres() { $sudo_cmd runuser -u postgres -- "$@"; }

if [ -z "${BLEGATE_DATABASE_URL:-}" ]; then
    if ! dpkg-query -W -f='${Status}' postgresql 2>/dev/null | grep -q "install ok installed"; then
        echo "start-server: installing postgresql" >&2
        $sudo_cmd apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq postgresql >/dev/null
    fi
    # The cluster named $BLEGATE_PG_CLUSTER (a name, or version/name) when set, else the
    # newest one named `main`, else the only one (pg_createcluster when there is none).
    # Several clusters and none of them `main`: say which there are rather than guess.
    clusters="$(pg_lsclusters --no-header 2>/dev/null | sort -V || true)"
    wanted="${BLEGATE_PG_CLUSTER:-}"
    if [ -n "$wanted" ]; then
        if [[ "$wanted" == */* ]]; then
            cluster="$(awk -v v="${wanted%%/*}" -v n="${wanted#*/}" '$1 == v && $2 == n' <<<"$clusters" | tail -n 1)"
        else
            cluster="$(awk -v n="$wanted" '$2 == n' <<<"$clusters" | tail -n 1)"
        fi
        [ -n "$cluster" ] || { echo "start-server: no PostgreSQL cluster $wanted (BLEGATE_PG_CLUSTER); pg_lsclusters shows:" >&2; pg_lsclusters >&2 || true; exit 1; }
    elif [ "$(grep -c . <<<"$clusters")" -gt 1 ]; then
        cluster="$(awk '$2 == "main"' <<<"$clusters" | tail -n 1)"
        [ -n "$cluster" ] || { echo "start-server: several PostgreSQL clusters and none named main; set BLEGATE_PG_CLUSTER to one of:" >&2; pg_lsclusters >&2; exit 1; }
    else
        cluster="$clusters"
    fi
    if [ -z "$cluster" ]; then
        version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
        $sudo_cmd pg_createcluster "$version" main >&2
        cluster="$(pg_lsclusters --no-header | sort -V | tail -n 1)"
    fi
    read -r version name port status _ <<<"$cluster"
    if [ "$status" != online ]; then
        echo "start-server: starting PostgreSQL $version/$name on port $port" >&2
        $sudo_cmd pg_ctlcluster "$version" "$name" start
    fi
    mkdir -p "$state"
    if [ ! -s "$state/db-password" ]; then
        (umask 077; head -c 24 /dev/urandom | base64 | tr -d '/+=\n' > "$state/db-password")
    fi
    password="$(cat "$state/db-password")"
    as_postgres psql -p "$port" -qtA -v ON_ERROR_STOP=1 -v pw="$password" postgres >/dev/null <<'SQL'
SELECT 'CREATE ROLE blegate LOGIN' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'blegate') \gexec
ALTER ROLE blegate PASSWORD :'pw';
SELECT 'CREATE DATABASE blegate OWNER blegate' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'blegate') \gexec
SQL
    export BLEGATE_DATABASE_URL="postgres://blegate:$password@127.0.0.1:$port/blegate"
    # For the admin commands (and scripts/start.sh): BLEGATE_DATABASE_URL="$(cat .../database-url)".
    (umask 077; printf '%s\n' "$BLEGATE_DATABASE_URL" > "$state/database-url")
    echo "start-server: database postgres://blegate@127.0.0.1:$port/blegate (password in $state/db-password)" >&2
fi
echo "start-server: admin commands: BLEGATE_DATABASE_URL=... $bin gateway add ID | staff add NAME | pairing create --client-id C" >&2
exec "$bin" serve --listen "$listen"
