#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# blegate against the real bluetoothd 5.66 with two virtual LE controllers, in the
# throw-away VM of ../shared/realbluez (as root; about 4 minutes). scan and stream use hci1;
# hci0 is the VM's heart-rate peripheral "HR-Sim" (notifies 0x2A37 at 1 Hz); then
# `blegate run` follows two more peripherals (on hci1 and hci2) with hci3, hci4 and hci5,
# one link each (btvirt's limit as a central); adapters are powered off and on again.
#
# Checks, all through org.bluez on the real daemon:
#   scan    finds HR-Sim with the Heart Rate service on hci1;
#   stream  connects, subscribes via AcquireNotify and again via StartNotify, prints
#           Heart Rate records for HR-Sim, and exits 0 with no malformed payloads, having
#           been handed over to the lean blegate-stream executable;
#   doctor  sees bluetoothd, its version and both adapters, with no failed check;
#   run     two straps on three adapters; an adapter holding one powered off: its strap
#           followed on the free one within 20 s; back on and the other off: the strap
#           back on it within 30 s; SIGTERM exits 0.
# If the VM's own Bluetooth stack falls apart during the run (its btvirt emulator or
# bluetoothd ends, or the controllers leave), the script shows the VM's logs and boots a
# fresh VM once.
set -euo pipefail
cd "$(dirname "$0")/.."
realbluez=${REALBLUEZ:-../shared/realbluez}
[ -x "$realbluez/run-hr-demo.sh" ] || { echo "realbluez-check: $realbluez/run-hr-demo.sh not found" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "realbluez-check: needs root (the VM reads /boot/vmlinuz-*)" >&2; exit 2; }
# BLEGATE_BIN=DIR/blegate checks those binaries (blegate-stream beside it) instead of the
# debug build: the shipped build of scripts/build-release.sh, for one.
if [ -n "${BLEGATE_BIN:-}" ]; then
    bin="$(realpath "$BLEGATE_BIN")"
    [ -x "$bin" ] && [ -x "$(dirname "$bin")/blegate-stream" ] \
        || { echo "realbluez-check: no $bin with blegate-stream beside it" >&2; exit 2; }
else
    BLEGATE_SKIP_BUILD=1 scripts/setup.sh
    command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
    swift build --product blegate
    swift build --product blegate-stream
    bin="$(swift build --show-bin-path)/blegate"
fi

# One VM run; its client.log is what the checks below read.
boot() {
    out=$(mktemp -d /tmp/blegate-realbluez.XXXXXX)
    # Six controllers: hci0 the demo peripheral, hci1 the scan/stream central, then hci1 and
    # hci2 heart-rate peripherals and hci3, hci4 and hci5 for blegate run.
    RB_OUT="$out" CLIENT_TIMEOUT=420 BTVIRT_OPTS="-L -l6" "$realbluez/run-hr-demo.sh" -- \
        bash "$PWD/scripts/realbluez-guest.sh" "$bin" "$(realpath "$realbluez")" || true
    log="$out/client.log"
    [ -s "$log" ] || { echo "realbluez-check: FAILED: no client.log from the VM (logs in $out)" >&2; exit 1; }
}
# The VM itself fell apart: its btvirt process (every emulated controller) or bluetoothd
# ended, or every controller left the kernel or bluetoothd, while blegate was being
# checked. Nothing blegate does through org.bluez or its HCI ioctls ends either process or
# removes a controller, so such a run says nothing about blegate: show what the VM logged,
# and boot a fresh VM once.
# The guest decides (realbluez-guest.sh, `vm`) and says so in one line.
collapsed() { grep -q '^VM fell apart after ' "$log"; }
evidence() {
    {
        echo "realbluez-check: the VM's Bluetooth stack fell apart during the run (logs in $out):"
        grep '^VM ' "$log" | sed 's/^/    /'
        echo "  btvirt.log (tail):"; tail -n 5 "$out/btvirt.log" 2>/dev/null | sed 's/^/    /'
        echo "  bluetoothd.log, adapters leaving:"
        grep -E 'index_removed|adapter_remove\(\)|Terminating|Exit' "$out/bluetoothd.log" 2>/dev/null | tail -n 8 | sed 's/^/    /'
        echo "  dmesg, Bluetooth (tail):"
        grep -iE 'bluetooth|hci|vhci|segfault' "$out/dmesg.log" 2>/dev/null | tail -n 8 | sed 's/^/    /'
    } >&2 || true
}
boot
if collapsed; then
    evidence
    echo "realbluez-check: booting a fresh VM for a second run" >&2
    boot
    if collapsed; then evidence; fi
fi
grep '^VM ' "$log" || true

passed=0; failed=0; failures=()
check() { # description, then a command that must succeed
    local what=$1; shift
    if "$@"; then passed=$((passed + 1)); echo "ok    $what"; else failed=$((failed + 1)); failures+=("$what"); echo "FAIL  $what" >&2; fi
}
has() { grep -qE "$1" "$log"; }
count() { grep -cE "$1" "$log" || true; }

scanline=$(grep '^SCAN {' "$log" | grep '"name":"HR-Sim"' | head -n 1 || true)
echo "scan: ${scanline:-(nothing)}"
check "scan found HR-Sim on hci1 with the Heart Rate service" \
    bash -c '[[ "$1" == *"\"adapter\":\"hci1\""* && "$1" == *0000180d-0000-1000-8000-00805f9b34fb* ]]' _ "$scanline"
check "scan exited 0" has '^GUEST scan exit 0$'

address=$(sed -n 's/.*"address":"\([0-9A-F:]*\)".*/\1/p' <<<"$scanline")
for notify in acquire start; do
    via=$([ $notify = acquire ] && echo AcquireNotify || echo StartNotify)
    n=$(count "^STREAM-$notify \{.*\"device_id\":\"$address\",\"source\":\"ble_hrm\".*\"sensor_contact\"")
    echo "stream --notify $notify: $n heart-rate records; stderr:"
    grep "^STREAMERR-$notify " "$log" | sed 's/^/    /' || true
    check "stream --notify $notify connected via $via" has "^STREAMERR-$notify blegate stream: connected HR-Sim .* on hci1, notifications via $via"
    check "stream --notify $notify printed at least 8 heart-rate records for HR-Sim ($n)" test "$n" -ge 8
    check "stream --notify $notify counted every notification, none malformed" \
        has "^STREAMERR-$notify blegate stream: HR-Sim \($address\): $n notifications, 0 malformed"
    check "stream --notify $notify exited 0" has "^GUEST stream $notify exit 0$"
    check "stream --notify $notify ran in blegate-stream (the hand-over)" has "^IMAGE-$notify .*/blegate-stream$"
done
check "doctor: bluetoothd and its version" has '^DOCTOR ok +bluetoothd: BlueZ 5\.[0-9]+'
check "doctor: hci1 over D-Bus" has '^DOCTOR ok +adapter hci1: '
check "doctor: no failed check" has '^DOCTOR [0-9]+ ok, [0-9]+ warn, 0 fail$'

grep '^RUN ' "$log" || true
check "run: two straps streaming, one per adapter" has '^RUN two streaming after [0-9]+ s: 2 hci[345] hci[345]$'
check "run: an adapter powered off: its strap followed on the free adapter within 20 s" \
    bash -c 'grep -qE "^RUN after power-off of hci[345]: moved to hci[345] after ([0-9]|1[0-9]|20) s" "$1"' _ "$log"
check "run: the adapter powered on again is used again (within 30 s of the other going off)" \
    bash -c 'grep -qE "^RUN back on hci[345] after ([0-9]|[12][0-9]|30) s" "$1"' _ "$log"
check "run: the denied demo strap, if heard, is listed as denied by configuration" \
    bash -c '! grep "^RUN-STATUS1 " "$1" | grep -q "\"name\":\"HR-Sim\"" || grep "^RUN-STATUS1 " "$1" | grep -q "\"reason\":\"denied by configuration\""' _ "$log"
check "run: SIGTERM, exit 0" has '^RUN exit 0$'

# What blegate run said and saw, when one of its checks failed: the lines CI shows last.
if printf '%s\n' "${failures[@]}" | grep -q '^run: '; then
    echo "run's first and last log lines:"
    grep '^RUNLOG ' "$log" | head -n 8 | cut -c 1-240 || true
    echo "    ..."
    grep '^RUNLOG ' "$log" | tail -n 20 | cut -c 1-240 || true
    grep '^RUN-STATUS1 ' "$log" | cut -c 1-900 || true
fi
echo "realbluez-check: $passed passed, $failed failed (logs in $out)"
[ "$failed" -eq 0 ]
