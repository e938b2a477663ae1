#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs inside the realbluez VM (see scripts/realbluez-check.sh): blegate scan, stream
# (AcquireNotify, then StartNotify) and doctor against the real bluetoothd 5.66, on hci1,
# with the VM's heart-rate peripheral "HR-Sim" on hci0; then blegate run on hci3 and hci4.
# Every line is tagged so the host can check it in client.log.
#   realbluez-guest.sh BLEGATE REALBLUEZ-DIR
bin=$1
tag() { sed -u "s/^/$1 /"; }

echo "GUEST scan"
"$bin" scan --adapter hci1 --json --timeout 10 2>&1 | tag SCAN
echo "GUEST scan exit ${PIPESTATUS[0]}"

for notify in acquire start; do
    echo "GUEST stream $notify"
    "$bin" stream --adapter hci1 --device HR-Sim --notify "$notify" --duration 20 \
        > >(tag "STREAM-$notify") 2> >(tag "STREAMERR-$notify" >&2) &
    pid=$!
    sleep 5
    # blegate hands stream to blegate-stream beside it: same pid, that image.
    echo "IMAGE-$notify $(readlink "/proc/$pid/exe")"
    wait "$pid"
    echo "GUEST stream $notify exit $?"
    sleep 1
done

echo "GUEST doctor"
"$bin" doctor --state-directory /tmp 2>&1 | tag DOCTOR
echo "GUEST doctor exit ${PIPESTATUS[0]}"

# blegate run with two adapters (hci3, hci4; at most 2 links each) following three
# heart-rate peripherals of its own (HR-Sim-2 on hci1, HR-Sim-3 on hci2, HR-Sim-4 on hci5;
# HR-Sim, whose demo peripheral ends with the stream checks, is denied). Then the adapter
# holding two links is powered off (btvirt keeps every controller in one process, so the
# VM cannot unplug one) and on again. Status snapshots are tagged RUN-*.
realbluez=$2
py=/usr/bin/python3
for p in 2:hci1 3:hci2 4:hci5; do
    "$py" -u "$realbluez/hr-peripheral.py" --adapter "${p#*:}" --name "HR-Sim-${p%%:*}" --lifetime 900 > "/tmp/periph${p%%:*}.log" 2>&1 &
done
for _ in $(seq 1 60); do
    [ "$(cat /tmp/periph[234].log 2>/dev/null | grep -c 'advertisement registered')" -ge 3 ] && break
    sleep 1
done
echo "RUN peripherals: $(cat /tmp/periph[234].log | grep -c 'advertisement registered') registered"
state=$(mktemp -d /tmp/blegate-run.XXXXXX)
cat > "$state/blegate.toml" <<TOML
[gateway]
id = "realbluez"
state_directory = "$state"
[bluetooth]
adapters = ["hci3", "hci4"]
max_links = { hci3 = 2, hci4 = 2 }
deny = ["HR-Sim"]
[status]
socket = "$state/status.sock"
TOML
"$bin" run --config "$state/blegate.toml" > >(tag RUNLOG) 2>&1 &
runpid=$!
status() { "$bin" status --json --config "$state/blegate.toml" 2>/dev/null; }
# Prints "N ADAPTER" : links streaming, and the adapter holding two of them.
streaming() { status | "$py" -c '
import json, sys
r = json.load(sys.stdin)
on = [d["adapter"] for d in r["devices"] if d["state"] == "streaming" and (d.get("name") or "").startswith("HR-Sim-")]
two = [a for a in set(on) if on.count(a) == 2]
print(len(on), two[0] if two else "-", " ".join(sorted(on)))' 2>/dev/null || echo "0 -"; }
wait_streaming() { # N, timeout: seconds until N straps stream, or nothing
    local start=$SECONDS
    while [ $((SECONDS - start)) -lt "$2" ]; do
        set -- "$1" "$2" $(streaming)
        [ "$3" = "$1" ] && { echo $((SECONDS - start)); return 0; }
        sleep 1
    done
    return 1
}
t=$(wait_streaming 3 90) && echo "RUN three streaming after ${t} s: $(streaming)" || echo "RUN three streaming: no ($(streaming))"
status | tag RUN-STATUS1
full=$(streaming | awk '{print $2}')
echo "RUN powering off $full"
busctl set-property org.bluez "/org/bluez/$full" org.bluez.Adapter1 Powered b false
# Its two straps: one moves to the other adapter (one free link), one waits for a link.
t=$(wait_streaming 2 30) && echo "RUN after power-off: two streaming again after ${t} s: $(streaming)" || echo "RUN after power-off: no ($(streaming))"
sleep 3
status | tag RUN-STATUS2
busctl set-property org.bluez "/org/bluez/$full" org.bluez.Adapter1 Powered b true
t=$(wait_streaming 3 45) && echo "RUN after power-on: three streaming after ${t} s: $(streaming)" || echo "RUN after power-on: no ($(streaming))"
status | tag RUN-STATUS3
kill -TERM "$runpid"
wait "$runpid"
echo "RUN exit $?"
