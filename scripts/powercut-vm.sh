#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The power-cut test: boots Debian's kernel in a throw-away QEMU VM (virtme-ng, the host's
# root file system read-only inside) and runs scripts/powercut-guest.sh there: ROUNDS cuts
# at random instants of the cache on dm-flakey, each checked. Needs root (the kernel image
# in /boot is mode 0600), qemu-system-x86, a kernel with dm-flakey.ko, and virtme-ng
# (`vng`, on PATH or in $RB_VENV, default /opt/realbluez-venv; pip install virtme-ng==1.42).
#   scripts/powercut-vm.sh [ROUNDS=20] [COMMIT_INTERVAL_MS=1000]   (1000: blegate run's group commit)
# BLEGATE_BENCH picks blegate-bench (default: the debug build's). Prints one line per round
# and "rounds N, failed M"; exit status 0 when every round passed.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-20}"
interval="${2:-1000}"
bench="${BLEGATE_BENCH:-$(swift build --show-bin-path)/blegate-bench}"
[ -x "$bench" ] || { echo "powercut: no $bench (swift build --product blegate-bench)" >&2; exit 1; }
vng="$(command -v vng || echo "${RB_VENV:-/opt/realbluez-venv}/bin/vng")"
[ -x "$vng" ] || { echo "powercut: no vng (pip install virtme-ng==1.42)" >&2; exit 1; }
export PATH="$(dirname "$vng"):$PATH"
kernel=""
for k in $(ls -1v /boot/vmlinuz-* 2>/dev/null | tac); do
    v=${k#/boot/vmlinuz-}
    if ls /lib/modules/"$v"/kernel/drivers/md/dm-flakey.ko* >/dev/null 2>&1; then kernel=$k; break; fi
done
[ -n "$kernel" ] || { echo "powercut: no kernel in /boot with dm-flakey.ko (apt-get install linux-image-amd64)" >&2; exit 1; }
out="$(mktemp -d /tmp/blegate-powercut.XXXXXX)"
echo "powercut: $rounds rounds, commits every $interval ms, in a VM ($kernel, QEMU TCG), $bench; logs in $out"
timeout "${POWERCUT_TIMEOUT:-3600}" "$vng" --disable-kvm --force-9p -r "$kernel" --memory 2G --cpus 2 --rwdir "$out" \
    --exec "$(printf '%q ' "$PWD/scripts/powercut-guest.sh" "$out" "$bench" "$rounds" "$interval")" < /dev/null > "$out/console.log" 2>&1 || true
grep -E '^(round|rounds) ' "$out/console.log" || { echo "powercut: the guest did not finish; console tail:" >&2; tail -30 "$out/console.log" >&2; exit 1; }
grep -q '^GUEST-RC=0' "$out/console.log"
