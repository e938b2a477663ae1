#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs inside the realbluez VM (see scripts/realbluez-check.sh): blegate scan, stream
# (AcquireNotify, then StartNotify) and doctor against the real bluetoothd 5.66, on hci1,
# with the VM's heart-rate peripheral "HR-Sim" on hci0; then blegate run on hci3 and hci4.
# Every line is tagged so the host can check it in client.log.
#   realbluez-guest.sh BLEGATE REALBLUEZ-DIR
bin=$1
tag() { sed -u "s/^/$1 /"; }
# The VM's own parts after each stage: its emulated controllers live in one btvirt process,
# and if that process ends every adapter leaves bluetoothd at once (controllers: the
# kernel's; adapters: bluetoothd's on D-Bus). The "VM fell apart" line is what tells the
# host such a collapse of the VM apart from a failure of blegate.
vm() {
    local controllers adapters btvirt bluetoothd
    controllers=$(ls /sys/class/bluetooth 2>/dev/null | grep -cE '^hci[0-9]+$')
    adapters=$(busctl call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects 2>/dev/null \
        | grep -o '"org.bluez.Adapter1"' | wc -l)
    btvirt=$(pgrep -x btvirt >/dev/null && echo up || echo gone)
    bluetoothd=$(pgrep -x bluetoothd >/dev/null && echo up || echo gone)
    echo "VM $1 btvirt=$btvirt bluetoothd=$bluetoothd controllers=$controllers adapters=$adapters"
    # Nothing after this could pass: end here so the host can boot a fresh VM sooner.
    if [ "$btvirt" = gone ] || [ "$bluetoothd" = gone ] || [ "$controllers" = 0 ] || [ "$adapters" = 0 ]; then
        echo "VM fell apart after $1: stopping"
        exit 1
    fi
}
vm start

echo "GUEST scan"
"$bin" scan --adapter hci1 --json --timeout 10 2>&1 | tag SCAN
echo "GUEST scan exit ${PIPESTATUS[0]}"
vm scan

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
    vm "stream-$notify"
    sleep 1
done

echo "GUEST doctor"
"$bin" doctor --state-directory /tmp 2>&1 | tag DOCTOR
echo "GUEST doctor exit ${PIPESTATUS[0]}"
vm doctor

# blegate run with three adapters (hci3, hci4, hci5) following two heart-rate peripherals
# of its own (HR-Sim-2 on hci1, HR-Sim-3 on hci2; HR-Sim, whose demo peripheral ends with
# the stream checks, is denied). btvirt's emulated controller holds one LE link as a
# central (a second one connects, but its GATT never resolves), so `max_links = 1`. An
# adapter holding a link is powered off (btvirt keeps every controller in one process,
# so the VM cannot unplug one): its strap moves to the free adapter. It is powered on
# again and the other one off: the strap moves back, so the returned adapter is used.
realbluez=$2
py=/usr/bin/python3
for p in 2:hci1 3:hci2; do
    "$py" -u "$realbluez/hr-peripheral.py" --adapter "${p#*:}" --name "HR-Sim-${p%%:*}" --lifetime 900 > "/tmp/periph${p%%:*}.log" 2>&1 &
done
for _ in $(seq 1 60); do
    [ "$(cat /tmp/periph[23].log 2>/dev/null | grep -c 'advertisement registered')" -ge 2 ] && break
    sleep 1
done
echo "RUN peripherals: $(cat /tmp/periph[23].log | grep -c 'advertisement registered') registered"
# btvirt brings its six controllers up one after another; under a slow emulator the last
# ones can take a while to reach bluetoothd.
present() { for a in hci3 hci4 hci5; do busctl get-property org.bluez "/org/bluez/$a" org.bluez.Adapter1 Address >/dev/null 2>&1 && printf '%s ' "$a"; done; }
for _ in $(seq 1 60); do [ "$(present)" = "hci3 hci4 hci5 " ] && break; sleep 1; done
echo "RUN adapters present: $(present)"
state=$(mktemp -d /tmp/blegate-run.XXXXXX)
cat > "$state/blegate.toml" <<TOML
[gateway]
id = "realbluez"
state_directory = "$state"
[bluetooth]
adapters = ["hci3", "hci4", "hci5"]
max_links = 1
deny = ["HR-Sim"]
[status]
socket = "$state/status.sock"
TOML
"$bin" run --config "$state/blegate.toml" > >(tag RUNLOG) 2>&1 &
runpid=$!
status() { "$bin" status --json --config "$state/blegate.toml" 2>/dev/null; }
# The gateway answers on its status socket once it runs ("source":"service"); one that
# ends before that says why in RUNLOG.
for _ in $(seq 1 60); do
    status | grep -q '"source":"service"' && break
    kill -0 "$runpid" 2>/dev/null || break
    sleep 1
done
if kill -0 "$runpid" 2>/dev/null; then echo "RUN answering on its status socket"; else wait "$runpid"; echo "RUN ended at start: exit $?"; fi
# "N ADAPTERS": straps streaming and the adapters they stream on.
streaming() { status | "$py" -c '
import json, sys
r = json.load(sys.stdin)
on = sorted(d["adapter"] for d in r["devices"] if d["state"] == "streaming")
print(len(on), " ".join(on))' 2>/dev/null || echo "0"; }
wait_until() { # seconds, then a condition on $(streaming): prints the seconds it took
    local limit=$1 start=$SECONDS; shift
    while [ $((SECONDS - start)) -lt "$limit" ]; do
        local now; now=$(streaming)
        if "$@" "$now"; then echo $((SECONDS - start)); return 0; fi
        sleep 1
    done
    return 1
}
two() { [ "${1%% *}" = 2 ]; }
powered() { busctl set-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Powered b "$2"; }
t=$(wait_until 120 two) && echo "RUN two streaming after ${t} s: $(streaming)" || echo "RUN two streaming: no ($(streaming))"
status | tag RUN-STATUS1
before=$(streaming)
first=$(awk '{print $2}' <<<"$before")
free=$(comm -23 <(printf 'hci3\nhci4\nhci5\n') <(tr ' ' '\n' <<<"${before#* }" | sort))
echo "RUN powering off $first (free: $free)"
powered "$first" false
on_free() { two "$1" && [[ " ${1#* } " == *" $free "* ]]; }
t=$(wait_until 30 on_free) && echo "RUN after power-off of $first: moved to $free after ${t} s: $(streaming)" \
    || echo "RUN after power-off of $first: not moved ($(streaming))"
status | tag RUN-STATUS2
powered "$first" true
sleep 5
echo "RUN powering $first on, and off $free"
powered "$free" false
on_first() { two "$1" && [[ " ${1#* } " == *" $first "* ]]; }
t=$(wait_until 45 on_first) && echo "RUN back on $first after ${t} s: $(streaming)" || echo "RUN back on $first: no ($(streaming))"
status | tag RUN-STATUS3
powered "$free" true
kill -TERM "$runpid"
wait "$runpid"
echo "RUN exit $?"
vm run
