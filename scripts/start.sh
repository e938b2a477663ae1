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
# (scripts/start-server.sh, docs/server.md) instead of the loopback test backend; one
# already answering on BLEGATE_SERVER_LISTEN (default 127.0.0.1:8090) is used as it is.
# It builds only what it runs (release): blegate, plus blegate-test-backend or
# blegate-server for the simulator.
# The wall's URL is printed once the wall answers, with the coach page's and its PIN
# ($BLEGATE_STATE_DIR/coach-pin, made once).
# While it runs, ${XDG_STATE_HOME:-~/.local/state}/blegate/demo-config holds the path of its
# configuration: `blegate status`, `class`, `workouts` and `export` find the gateway
# through it without --config (after $BLEGATE_CONFIG and /etc/blegate/blegate.toml).
# Ctrl-C stops everything.
# Extra arguments go to `blegate run` (e.g. --log-level debug).
set -euo pipefail
cd "$(dirname "$0")/.."

has_adapter() {
    command -v busctl >/dev/null 2>&1 || return 1
    busctl --system tree org.bluez 2>/dev/null | grep -q '/org/bluez/hci[0-9]'
}

uses_simulator=1
if has_adapter; then uses_simulator=0; fi
backend="${BLEGATE_BACKEND:-test}"
case "$backend" in
    test|server) ;;
    *) echo "start: BLEGATE_BACKEND must be test (the loopback test backend, default) or server (blegate-server), got \"$backend\"" >&2; exit 1 ;;
esac

# BLEGATE_BACKEND=server: a blegate-server already on the port is used (its /healthz
# answers "ok"); anything else there would leave a second one failing quietly on the busy
# port. Checked before building.
server_running=0
if [ "$uses_simulator" = 1 ] && [ "$backend" = server ]; then
    listen="${BLEGATE_SERVER_LISTEN:-127.0.0.1:8090}"
    command -v curl >/dev/null 2>&1 || { echo "start: BLEGATE_BACKEND=server needs curl (apt-get install curl)" >&2; exit 1; }
    health_rc=0
    health="$(curl -sS --max-time 3 -w '\n%{http_code}' "http://$listen/healthz" 2>/dev/null)" || health_rc=$?
    if [ "$health_rc" = 0 ] && [ "$(printf '%s\n' "$health" | head -n 1)" = ok ] && [ "$(printf '%s\n' "$health" | tail -n 1)" = 200 ]; then
        server_running=1
    elif [ "$health_rc" != 7 ]; then
        echo "start: something that is not blegate-server answers on $listen (GET /healthz: $(printf '%s\n' "$health" | tail -n 1 | sed 's/^000$/no HTTP answer/')); stop it, or set BLEGATE_SERVER_LISTEN=127.0.0.1:PORT" >&2
        exit 1
    fi
fi

BLEGATE_SKIP_BUILD=1 scripts/setup.sh
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
products=(blegate)
if [ "$uses_simulator" = 1 ]; then
    if [ "$backend" = server ]; then products+=(blegate-server); else products+=(blegate-test-backend); fi
fi
for product in "${products[@]}"; do
    echo "start: building $product (release)"
    swift build -c release --product "$product"
done
bindir="$(swift build -c release --show-bin-path)"
bin="$bindir/blegate"

# The wall's listen address from [display] listen: "host port", or nothing when it is off
# (default 0.0.0.0:8080; "" = off).
wall_listen() {
    local listen
    listen="$(awk '/^[[:space:]]*\[/ { s = $0; gsub(/[[:space:]\[\]]/, "", s) }
                   s == "display" && /^[[:space:]]*listen[[:space:]]*=/ { sub(/^[^=]*=[[:space:]]*"/, ""); sub(/".*/, ""); print "set:" $0; exit }' "$1" 2>/dev/null)"
    case "$listen" in
        "") listen="0.0.0.0:8080" ;;
        set:) return ;;
        *) listen="${listen#set:}" ;;
    esac
    echo "${listen%:*} ${listen##*:}"
}

# The URL to ask the wall at.
wall_probe_url() {
    case "$1" in
        0.0.0.0|"[::]"|::) echo "http://localhost:$2/" ;;
        *) echo "http://$1:$2/" ;;
    esac
}

# Whether something answers at the URL (curl; without it, whether host:port takes a TCP connection).
answers() {
    if command -v curl >/dev/null 2>&1; then
        curl -sS --max-time 2 -o /dev/null "$1" 2>/dev/null
    else
        local hostport="${1#http://}"
        hostport="${hostport%/}"
        timeout 2 bash -c "exec 3<>/dev/tcp/${hostport%:*}/${hostport##*:}" 2>/dev/null
    fi
}

# Before the gateway starts: another program already answering on the wall's port would
# be taken for the wall.
check_wall_port() {
    local hp host port
    hp="$(wall_listen "$1")"
    [ -n "$hp" ] || return 0
    read -r host port <<<"$hp"
    if answers "$(wall_probe_url "$host" "$port")"; then
        echo "start: something already answers on port $port before the gateway starts; the wall cannot listen there (stop it, or set [display] listen in the configuration)" >&2
    fi
}

# Prints the wall's URL once it answers (within 60 s), or says that it does not; then the
# coach page's, when the configuration has a coach PIN (and the PIN, for the demo's).
announce_wall() {
    local hp host port url shown
    hp="$(wall_listen "$1")"
    if [ -z "$hp" ]; then
        echo "start: the wall is off ([display] listen = \"\")"
        return
    fi
    read -r host port <<<"$hp"
    url="$(wall_probe_url "$host" "$port")"
    shown="$url"
    case "$host" in
        0.0.0.0|"[::]"|::) shown="$url (on the gym's network: http://$( (hostname -I 2>/dev/null || true) | awk '{print $1}'):$port/)" ;;
    esac
    local deadline=$((SECONDS + 60))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if answers "$url"; then
            echo "start: the wall: $shown"
            if grep -q '^[[:space:]]*pin_file[[:space:]]*=' "$1" 2>/dev/null; then
                if [ -n "${2:-}" ]; then
                    echo "start: the coach page: ${url}coach (PIN $(cat "$2"), kept in $2)"
                else
                    echo "start: the coach page: ${url}coach (the PIN is in [coach] pin_file)"
                fi
            fi
            return
        fi
        sleep 0.5
    done
    echo "start: the wall does not answer on $url after 60 s; \`$bin status\` says why under ERRORS" >&2
}

# The path of the configuration in use, for the commands run in other terminals
# (Config's ConfigLookup reads it); removed on exit.
pointer=""
state_home="${XDG_STATE_HOME:-}"
case "$state_home" in
    /*) ;;
    *) state_home="${HOME:+$HOME/.local/state}" ;;
esac
[ -z "$state_home" ] || pointer="$state_home/blegate/demo-config"
publish_config() {
    [ -n "$pointer" ] || return 0
    if mkdir -p "$(dirname "$pointer")" 2>/dev/null && printf '%s\n' "$1" 2>/dev/null > "$pointer"; then
        published="$1"
    else
        echo "start: cannot write $pointer: the commands below need BLEGATE_CONFIG" >&2
    fi
}
published=""

# What to type in another terminal for the running gateway.
print_commands() {
    local config="$1"
    echo "start: in another terminal:"
    # The commands look at $BLEGATE_CONFIG and /etc/blegate/blegate.toml before the pointer.
    local export_needed=0
    if [ "$config" != /etc/blegate/blegate.toml ]; then
        [ -z "$published" ] && export_needed=1
        [ -e /etc/blegate/blegate.toml ] && export_needed=1
        [ -n "${BLEGATE_CONFIG:-}" ] && [ "$BLEGATE_CONFIG" != "$config" ] && export_needed=1
    fi
    [ "$export_needed" = 0 ] || echo "start:   export BLEGATE_CONFIG=$config"
    echo "start:   $bin status"
    echo "start:   $bin workouts"
}

state="${BLEGATE_STATE_DIR:-$PWD/.blegate}"
mkdir -p "$state"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ -n "$published" ] && [ "$(cat "$pointer" 2>/dev/null)" = "$published" ]; then rm -f "$pointer"; fi
}
trap cleanup EXIT

if [ "$uses_simulator" = 0 ]; then
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
    [ "$config" = /etc/blegate/blegate.toml ] || publish_config "$config"
    echo "start: a BlueZ adapter is present: blegate run --config $config"
    print_commands "$config"
    check_wall_port "$config"
    announce_wall "$config" &
    pids+=($!)
    "$bin" run --config "$config" "$@"
    exit
fi

if [ "$backend" = server ]; then
    echo "start: no Bluetooth adapter: the built-in BlueZ simulator stands in, sending to blegate-server"
else
    echo "start: no Bluetooth adapter: the built-in BlueZ simulator and the loopback test backend stand in"
fi
demo="$state/demo"
rm -rf "$demo"
mkdir -p "$demo"

straps="${BLEGATE_STRAPS:-16}"
advertising=$(( straps / 4 ))
"$bin" simulate --private-bus --straps "$straps" --adapters 2 --link-limits 4,7 \
    --advertising "$advertising" --advertising-only $(( advertising / 2 )) > "$demo/simulate.out" 2> "$demo/simulate.err" &
pids+=($!)
token="demo-token"
if [ "$backend" = server ]; then
    server_bin="$bindir/blegate-server"
    if [ "$server_running" = 1 ]; then
        echo "start: blegate-server already answers on http://$listen: using it"
    else
        BLEGATE_SERVER_LISTEN="$listen" BLEGATE_STATE_DIR="$state" scripts/start-server.sh > "$demo/server.out" 2>&1 &
        pids+=($!)
        for _ in $(seq 1 6000); do
            curl -fsS --max-time 2 "http://$listen/healthz" >/dev/null 2>&1 && break
            kill -0 "${pids[-1]}" 2>/dev/null || { cat "$demo/server.out" >&2; exit 1; }
            sleep 0.1
        done
    fi
    if [ -z "${BLEGATE_DATABASE_URL:-}" ] && [ ! -r "$state/database-url" ]; then
        echo "start: blegate-server's database is not known here: set BLEGATE_DATABASE_URL to the database the server on $listen uses (or stop that server and start again)" >&2
        exit 1
    fi
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
# The coach PIN stays the same from one start to the next.
[ -s "$state/coach-pin" ] || printf '%06d\n' $(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 )) > "$state/coach-pin"
chmod 600 "$state/coach-pin"
umask 022
# Four members for the coach page to assign straps to: at blegate-server, or in the
# configuration for the test backend (which keeps none).
demo_members=("demo-ana:Ana" "demo-ben:Ben" "demo-chloe:Chloé" "demo-dev:Dev")
member_tables=""
for m in "${demo_members[@]}"; do
    if [ "$backend" = server ]; then
        BLEGATE_DATABASE_URL="$url_db" "$server_bin" member add "${m#*:}" --client-id "${m%%:*}" >/dev/null 2>&1 || true
    else
        member_tables+=$'\n'"[members.\"${m%%:*}\"]"$'\n'"name = \"${m#*:}\""
    fi
done
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
[display]
room = "Demo studio"
[coach]
pin_file = "$state/coach-pin"
$member_tables
TOML
publish_config "$demo/blegate.toml"
echo "start: simulator on $bus ($straps straps, $advertising advertising heart rate; hci0 holds 4 links, hci1 7), backend at $url"
print_commands "$demo/blegate.toml"
if [ "$backend" = server ]; then
    echo "start:   BLEGATE_DATABASE_URL=\"\$(cat $state/database-url)\" $server_bin gateway list"
else
    echo "start:   curl -s $url/_admin/records | head -c 600"
fi
check_wall_port "$demo/blegate.toml"
announce_wall "$demo/blegate.toml" "$state/coach-pin" &
pids+=($!)
"$bin" run --config "$demo/blegate.toml" --bus "$bus" "$@"
