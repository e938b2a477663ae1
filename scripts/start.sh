#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs the blegate gateway (`blegate run`) in the foreground.
#
# With a Bluetooth adapter under BlueZ: the gateway on it, with BLEGATE_CONFIG (default
# /etc/blegate/blegate.toml when present; else every heart-rate strap seen, cache only, state
# in ./.blegate).
# Without one: the built-in BlueZ simulator on a private bus and the loopback test backend,
# so the whole path runs on any machine: straps → gateway → SQLite cache → backend. The
# simulated room is a class bigger than its links: BLEGATE_STRAPS straps (default 16) on
# two adapters that hold 4 and 7 links (the gateway is not told: it learns them), a
# quarter of the straps Polars that advertise heart rate (half of those only advertise).
# With BLEGATE_BACKEND=server the simulated gym sends to blegate-server on PostgreSQL
# (scripts/start-server.sh, docs/server.md) instead of the loopback test backend.
# Ctrl-C stops everything.
# Extra arguments go to `blegate run` (e.g. --log-level debug).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -c release
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
bindir="$(swift build -c release --show-bin-path)"
bin="$bindir/blegate"

has_adapter() {
    command -v busctl >/dev/null 2>&1 || return 1
    busctl --system tree org.bluez 2>/dev/null | grep -q '/org/bluez/hci[0-9]'
}

# The wall's address from [display] listen (default 0.0.0.0:8080; "" = off).
wall_url() {
    local listen
    listen="$(awk '/^[[:space:]]*\[/ { s = $0; gsub(/[[:space:]\[\]]/, "", s) }
                   s == "display" && /^[[:space:]]*listen[[:space:]]*=/ { sub(/^[^=]*=[[:space:]]*"/, ""); sub(/".*/, ""); print "set:" $0; exit }' "$1" 2>/dev/null)"
    case "$listen" in
        "") listen="0.0.0.0:8080" ;;
        set:) echo "start: the wall is off ([display] listen = \"\")"; return ;;
        *) listen="${listen#set:}" ;;
    esac
    local host="${listen%:*}" port="${listen##*:}"
    case "$host" in
        0.0.0.0|"[::]"|::)
            echo "start: the wall: http://localhost:$port/ (on the gym's network: http://$(hostname -I 2>/dev/null | awk '{print $1}'):$port/)" ;;
        *) echo "start: the wall: http://$host:$port/" ;;
    esac
}

state="${BLEGATE_STATE_DIR:-$PWD/.blegate}"
mkdir -p "$state"

if has_adapter; then
    config="${BLEGATE_CONFIG:-/etc/blegate/blegate.toml}"
    if [ ! -r "$config" ]; then
        config="$state/blegate.toml"
        cat > "$config" <<TOML
# Written by scripts/start.sh: every heart-rate strap seen, cache only (add [backend] to sync).
[gateway]
state_directory = "$state"
[status]
socket = "$state/status.sock"
TOML
    fi
    echo "start: a BlueZ adapter is present: blegate run --config $config"
    echo "start: in another terminal: $bin status --config $config"
    wall_url "$config"
    exec "$bin" run --config "$config" "$@"
fi

if [ "${BLEGATE_BACKEND:-test}" = server ]; then
    echo "start: no Bluetooth adapter: the built-in BlueZ simulator stands in, sending to blegate-server"
else
    echo "start: no Bluetooth adapter: the built-in BlueZ simulator and the loopback test backend stand in"
fi
demo="$state/demo"
rm -rf "$demo"
mkdir -p "$demo"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

straps="${BLEGATE_STRAPS:-16}"
advertising=$(( straps / 4 ))
"$bin" simulate --private-bus --straps "$straps" --adapters 2 --link-limits 4,7 \
    --advertising "$advertising" --advertising-only $(( advertising / 2 )) > "$demo/simulate.out" 2> "$demo/simulate.err" &
pids+=($!)
token="demo-token"
if [ "${BLEGATE_BACKEND:-test}" = server ]; then
    listen="${BLEGATE_SERVER_LISTEN:-127.0.0.1:8090}"
    BLEGATE_SERVER_LISTEN="$listen" BLEGATE_STATE_DIR="$state" scripts/start-server.sh > "$demo/server.out" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 6000); do
        curl -fsS "http://$listen/healthz" >/dev/null 2>&1 && break
        kill -0 "${pids[-1]}" 2>/dev/null || { cat "$demo/server.out" >&2; exit 1; }
        sleep 0.1
    done
    server_bin="$(swift build -c release --show-bin-path)/blegate-server"
    url_db="${BLEGATE_DATABASE_URL:-$(cat "$state/database-url")}"
    BLEGATE_DATABASE_URL="$url_db" "$server_bin" gateway revoke start-demo >/dev/null 2>&1 || true
    token="$(BLEGATE_DATABASE_URL="$url_db" "$server_bin" gateway add start-demo)"
    echo "listening on http://$listen" > "$demo/backend.out"
else
    "$bindir/blegate-test-backend" --port 0 --token demo-token --data "$demo/backend.jsonl" > "$demo/backend.out" 2>&1 &
    pids+=($!)
fi
for _ in $(seq 1 300); do
    grep -q '^DBUS_SYSTEM_BUS_ADDRESS=' "$demo/simulate.out" 2>/dev/null \
        && grep -q '^listening on' "$demo/backend.out" 2>/dev/null && break
    sleep 0.1
done
bus="$(sed -n 's/^DBUS_SYSTEM_BUS_ADDRESS=//p' "$demo/simulate.out")"
url="$(sed -n 's/^listening on //p' "$demo/backend.out")"
if [ -z "$bus" ] || [ -z "$url" ]; then
    echo "start: the simulator or the test backend did not start:" >&2
    cat "$demo"/*.out "$demo"/*.err >&2 2>/dev/null || true
    exit 1
fi
umask 077
printf '%s\n' "$token" > "$demo/token"
umask 022
cat > "$demo/blegate.toml" <<TOML
# Written by scripts/start.sh for the simulator demo.
[gateway]
id = "start-demo"
state_directory = "$demo"
[backend]
url = "$url"
token_file = "$demo/token"
[status]
socket = "$demo/status.sock"
TOML
echo "start: simulator on $bus ($straps straps, $advertising advertising heart rate; hci0 holds 4 links, hci1 7), backend at $url"
echo "start: in another terminal: $bin status --config $demo/blegate.toml"
if [ "${BLEGATE_BACKEND:-test}" = server ]; then
    echo "start:                      BLEGATE_DATABASE_URL=\"\$(cat $state/database-url)\" $server_bin gateway list"
else
    echo "start:                      curl -s $url/_admin/records | head -c 600"
fi
wall_url "$demo/blegate.toml"
"$bin" run --config "$demo/blegate.toml" --bus "$bus" "$@"
