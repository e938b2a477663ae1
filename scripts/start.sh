#!/usr/bin/env bash
# Sets up, builds and runs blegate. With a Bluetooth adapter under BlueZ it runs
# against it; without one it starts the built-in BlueZ simulator on a private bus
# and shows its virtual straps live, so the whole path runs on any machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -c release
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
bin="$(swift build -c release --show-bin-path)/blegate"

has_adapter() {
    command -v busctl >/dev/null 2>&1 || return 1
    busctl --system tree org.bluez 2>/dev/null | grep -q '/org/bluez/hci[0-9]'
}

# The gateway service (`blegate run`) is not built yet; until it is, start.sh shows
# the simulator and its straps live, also on machines that do have an adapter.
if has_adapter; then
    echo "start: a BlueZ adapter is present; the gateway that uses it is not built yet, so the simulator runs on a private bus"
else
    echo "start: no Bluetooth adapter: running the built-in BlueZ simulator on a private bus"
fi
exec "$bin" simulate --private-bus --live "$@"
