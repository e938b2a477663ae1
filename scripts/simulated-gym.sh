# SPDX-License-Identifier: MIT
# Sourced by scripts that need a simulated gym: `blegate simulate` on a private bus and the
# loopback test backend, each in the background, stopped (with the work directory removed)
# when the sourcing script exits.
#
#   source scripts/simulated-gym.sh
#   simulated_gym BLEGATE BACKEND TAG SIMULATE-ARGS...
#
# Sets: work (a scratch directory), bus (the simulator's D-Bus address), url (the
# backend's), token_file (TAG, mode 0600, the backend's token), pids (to stop at exit).
pids=()
work="$(mktemp -d "/tmp/blegate-gym.XXXXXX")"
simulated_gym_cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap simulated_gym_cleanup EXIT

simulated_gym() {
    local blegate=$1 backend=$2 tag=$3; shift 3
    "$blegate" simulate --private-bus "$@" > "$work/sim.out" 2>&1 &
    pids+=($!)
    "$backend" --port 0 --token "$tag" > "$work/backend.out" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 300); do
        grep -q '^ready:' "$work/sim.out" 2>/dev/null && grep -q '^listening on' "$work/backend.out" 2>/dev/null && break
        sleep 0.1
    done
    bus="$(sed -n 's/^DBUS_SYSTEM_BUS_ADDRESS=//p' "$work/sim.out")"
    url="$(sed -n 's/^listening on //p' "$work/backend.out")"
    [ -n "$bus" ] && [ -n "$url" ] || { echo "simulated gym: simulator or backend did not start" >&2; cat "$work"/*.out >&2; exit 1; }
    token_file="$work/token"
    printf '%s\n' "$tag" > "$token_file"; chmod 600 "$token_file"
}

# A TCP port free on loopback now (the kernel's pick), for a listener a script starts.
free_port() {
    /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Writes $work/blegate.toml for `blegate run` against this gym: gateway ID, state and
# status socket in $work, the backend with its token; then any further TOML lines given.
gateway_config() {
    local id=$1; shift
    {
        printf '[gateway]\nid = "%s"\nstate_directory = "%s"\n' "$id" "$work"
        printf '[backend]\nurl = "%s"\ntoken_file = "%s"\n' "$url" "$token_file"
        printf '[status]\nsocket = "%s"\n' "$work/status.sock"
        # Off unless a benchmark asks for it (BENCH_METRICS_LISTEN=127.0.0.1:PORT).
        printf '[metrics]\nlisten = "%s"\n' "${BENCH_METRICS_LISTEN:-}"
        for line in "$@"; do printf '%s\n' "$line"; done
    } > "$work/blegate.toml"
}
