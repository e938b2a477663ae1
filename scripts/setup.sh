#!/usr/bin/env bash
# Installs what blegate needs on Debian/Raspberry Pi OS and builds it.
# Idempotent: apt runs only when a package is missing, and `apt-get update` once.
set -euo pipefail
cd "$(dirname "$0")/.."

# systemd: systemd-analyze and systemctl --root for the deployment tests; zlib for gzip;
# g++ for the static libstdc++ archive scripts/build-release.sh links (and a C compiler).
packages=(libdbus-1-dev libbluetooth-dev libsqlite3-dev zlib1g-dev dbus pkg-config systemd g++)
# With BLEGATE_SETUP_TESTS=1 (scripts/test.sh): chromium, chromium-driver, python3-selenium
# and fonts-dejavu-core for the wall's browser tests and benchmark (headless Chromium
# driven by Tests/WallTests/wall_browser.py). A gateway never needs them. postgresql for
# blegate-server's tests, which start their own cluster with its binaries
# (scripts/test-postgres.sh); the package's own cluster is not used by them.
if [ "${BLEGATE_SETUP_TESTS:-0}" = 1 ]; then
    packages+=(chromium chromium-driver python3-selenium fonts-dejavu-core postgresql)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    echo "setup: installing ${missing[*]}"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    for d in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$d/swift" ] && export PATH="$d:$PATH" && break
    done
fi
command -v swift >/dev/null 2>&1 || {
    echo "setup: no Swift toolchain found: install Swift 6 (https://www.swift.org/install/linux/) and put it on PATH" >&2
    exit 1
}

if [ "${BLEGATE_SKIP_BUILD:-0}" != 1 ]; then
    swift build "$@"
fi
