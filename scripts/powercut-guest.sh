#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Inside the power-cut VM (scripts/powercut-vm.sh starts it): the cache on an ext4 file
# system on dm-flakey over a loop device; the writer runs, and at a random instant it is
# frozen, every write to the device starts being dropped (dm-flakey drop_writes, the table
# switched without flushing anything) and the writer is killed: a power cut.
# Then the file system is unmounted (what the page cache held goes nowhere), the device
# made whole again, mounted, and the checker compares what is there with what the writer
# was told was committed.
#   powercut-guest.sh OUT BENCH ROUNDS [COMMIT_INTERVAL_MS=1000]
set -u
out=$1 bench=$2 rounds=$3 interval=${4:-1000}
log() { echo "[guest] $*"; }
modprobe loop 2>/dev/null; modprobe dm-mod 2>/dev/null; modprobe dm-flakey || { log "no dm-flakey"; echo "GUEST-RC=10"; exit 10; }
img=/tmp/powercut.img
truncate -s 512M "$img"
dev=$(losetup -f --show "$img") || { echo "GUEST-RC=11"; exit 11; }
sectors=$(blockdev --getsz "$dev")
dmsetup create flaky --table "0 $sectors linear $dev 0" || { echo "GUEST-RC=12"; exit 12; }
mkfs.ext4 -q /dev/mapper/flaky || { echo "GUEST-RC=13"; exit 13; }
mkdir -p /tmp/flaky
failed=0
for round in $(seq 1 "$rounds"); do
    mount /dev/mapper/flaky /tmp/flaky || { echo "GUEST-RC=14"; exit 14; }
    rm -f /tmp/flaky/cache.sqlite* /tmp/ack.log
    "$bench" powercut-writer --path /tmp/flaky/cache.sqlite --log /tmp/ack.log --interval-ms "$interval" > /tmp/writer.out 2>&1 &
    writer=$!
    # An arbitrary instant: 3 to 12 s after the start, to the millisecond.
    instant=$(printf '%d.%03d' $(( 3 + RANDOM % 10 )) $(( RANDOM % 1000 )))
    sleep "$instant"
    # The cut. The writer is frozen first (SIGSTOP takes effect at once), so nothing it
    # is told after this instant counts; then every write to the device is dropped,
    # nothing flushed first (dm-flakey reports dropped writes and flushes as done, so a
    # writer left running would be told of commits the device never got).
    kill -STOP "$writer"
    dmsetup suspend --nolockfs --noflush flaky
    dmsetup load flaky --table "0 $sectors flakey $dev 0 0 180 1 drop_writes"
    dmsetup resume flaky
    kill -KILL "$writer"; wait "$writer" 2>/dev/null
    umount /tmp/flaky
    dmsetup suspend --nolockfs --noflush flaky
    dmsetup load flaky --table "0 $sectors linear $dev 0"
    dmsetup resume flaky
    echo 3 > /proc/sys/vm/drop_caches
    mount /dev/mapper/flaky /tmp/flaky || { echo "GUEST-RC=15"; exit 15; }
    line=$("$bench" powercut-check --path /tmp/flaky/cache.sqlite --log /tmp/ack.log 2>&1) || failed=$((failed + 1))
    echo "round $round: cut at $instant s: $line" | tee -a "$out/powercut.log"
    umount /tmp/flaky
done
echo "rounds $rounds, failed $failed" | tee -a "$out/powercut.log"
rc=0; [ "$failed" = 0 ] || rc=1
echo "GUEST-RC=$rc"
exit "$rc"
