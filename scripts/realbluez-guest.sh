#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs inside the realbluez VM (see scripts/realbluez-check.sh): blegate scan, stream
# (AcquireNotify, then StartNotify) and doctor against the real bluetoothd 5.66, on hci1,
# with the VM's heart-rate peripheral "HR-Sim" on hci0. Every line is tagged so the host
# can check it in client.log.
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
