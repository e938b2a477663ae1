#!/usr/bin/env bash
# Runs blegate against the real bluetoothd 5.66 with two virtual controllers in the
# throw-away VM of ../shared/realbluez (as root; about 1-2 minutes). The gateway uses
# hci1; hci0 is the VM's heart-rate peripheral "HR-Sim".
#
# Checks now: `blegate scan --adapter hci1 --json` finds HR-Sim with the Heart Rate
# service. (`blegate stream` joins when it exists; then .ci/run calls this script.)
set -euo pipefail
cd "$(dirname "$0")/.."
realbluez=${REALBLUEZ:-../shared/realbluez}
[ -x "$realbluez/run-hr-demo.sh" ] || { echo "realbluez-check: $realbluez/run-hr-demo.sh not found" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "realbluez-check: needs root (the VM reads /boot/vmlinuz-*)" >&2; exit 2; }
BLEGATE_SKIP_BUILD=1 scripts/setup.sh
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift build --product blegate
bin="$(swift build --show-bin-path)/blegate"

out=$(mktemp -d /tmp/blegate-realbluez.XXXXXX)
RB_OUT="$out" "$realbluez/run-hr-demo.sh" -- "$bin" scan --adapter hci1 --json --timeout 10
# The command's own output inside the VM is in client.log.
line=$(grep '"name":"HR-Sim"' "$out/client.log" | head -n 1 || true)
echo "scan: ${line:-(nothing)}"
if [ -z "$line" ]; then
    echo "realbluez-check: FAILED: scan did not report HR-Sim (logs in $out)" >&2
    exit 1
fi
case "$line" in
    *'"adapter":"hci1"'*'0000180d-0000-1000-8000-00805f9b34fb'*|*'0000180d-0000-1000-8000-00805f9b34fb'*'"adapter":"hci1"'*) ;;
    *) echo "realbluez-check: FAILED: HR-Sim seen without the Heart Rate service on hci1: $line" >&2; exit 1 ;;
esac
echo "realbluez-check: scan found HR-Sim on hci1 through the real bluetoothd: 1 passed, 0 failed"
