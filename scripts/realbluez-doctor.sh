#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs `blegate doctor` against the real bluetoothd 5.66 in the throw-away VM of
# ../shared/realbluez (as root; about 1 minute). There, hci0 carries the VM's
# heart-rate peripheral and hci1 is free; both belong to one bluetoothd.
#
# Checks: bluetoothd found with its version and running, the D-Bus policy lets root
# call it, hci0 and hci1 powered over D-Bus and up in the kernel (HCI ioctls), and
# the battery plugin seen on bluetoothd's command line. Prints what doctor printed.
set -euo pipefail
cd "$(dirname "$0")/.."
realbluez=${REALBLUEZ:-../shared/realbluez}
[ -x "$realbluez/run-hr-demo.sh" ] || { echo "realbluez-doctor: $realbluez/run-hr-demo.sh not found" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "realbluez-doctor: needs root (the VM reads /boot/vmlinuz-*)" >&2; exit 2; }
BLEGATE_SKIP_BUILD=1 scripts/setup.sh
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift build --product blegate
bin="$(swift build --show-bin-path)/blegate"

out=$(mktemp -d /tmp/blegate-realbluez-doctor.XXXXXX)
status=0
RB_OUT="$out" "$realbluez/run-hr-demo.sh" -- "$bin" doctor --state-directory /tmp || status=$?
echo "--- blegate doctor in the VM (exit $status):"
sed -n '/^\(ok\|warn\|fail\|      fix:\|[0-9]* ok,\)/p' "$out/client.log"

passed=0; failed=0
expect() {
    if grep -qE "$1" "$out/client.log"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "realbluez-doctor: missing: $1" >&2; fi
}
expect '^ok    bluetoothd: BlueZ 5\.[0-9]+'
expect '^ok    bluetoothd running: org\.bluez is owned by :[0-9.]+, pid [0-9]+ \(bluetoothd\)'
expect '^ok    D-Bus policy: '
expect '^ok    adapter hci0: 00:AA:01:00:00:00'
expect '^ok    adapter hci1: 00:AA:01:01:00:01'
expect '^ok    kernel hci1: 00:AA:01:01:00:01 up'
expect '^ok    bluetoothd battery plugin: loaded'
expect '^[0-9]+ ok, [0-9]+ warn, 0 fail$'
[ "$status" -eq 0 ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "realbluez-doctor: doctor exited $status" >&2; }
echo "realbluez-doctor: $passed passed, $failed failed (logs in $out)"
[ "$failed" -eq 0 ]
