#!/usr/bin/env bash
# Installs what blegate needs on Debian/Raspberry Pi OS and builds it.
# Idempotent: apt runs only when a package is missing, and `apt-get update` once.
set -euo pipefail
cd "$(dirname "$0")/.."

# systemd: systemd-analyze and systemctl --root for the deployment tests; zlib for gzip;
# g++ for the static libstdc++ archive scripts/build-release.sh links (and a C compiler);
# tzdata for the local clock of class timetables (Classes.ZoneCalendar reads its files);
# ca-certificates for the system trust roots an https backend's certificate is checked against.
packages=(libdbus-1-dev libbluetooth-dev libsqlite3-dev zlib1g-dev dbus pkg-config systemd g++ tzdata ca-certificates)
# With BLEGATE_SETUP_TESTS=1 (scripts/test.sh): chromium, chromium-driver, python3-selenium
# and fonts-dejavu-core for the wall's browser tests and benchmark (headless Chromium
# driven by Tests/WallTests/wall_browser.py); python3-venv and libxml2-utils (xmllint)
# for the workout export checks (below); postgresql for blegate-server's tests, which
# start their own cluster with its binaries (scripts/test-postgres.sh); openssl makes the
# self-signed certificates of the backend client's TLS tests; prometheus scrapes a gateway
# and blegate-server in PrometheusScrapeTests, and its promtool checks and tests the alert
# rules (PrometheusRulesTests); haproxy and pgbouncer put three blegate-server instances
# on one database in ManyInstancesTests. A gateway never needs them.
if [ "${BLEGATE_SETUP_TESTS:-0}" = 1 ]; then
    packages+=(chromium chromium-driver python3-selenium fonts-dejavu-core python3-venv libxml2-utils postgresql openssl prometheus haproxy pgbouncer)
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

# The workout export checks (Tests/WorkoutsTests, scripts/check_fit.py): Garmin's FIT SDK
# for Python (PyPI garmin-fit-sdk) in a venv under .build, since Debian's python3 refuses
# `pip install` into the system (PEP 668); and Garmin's TCX v2 schema, which Debian ships
# only inside pytrainer: its package is downloaded and the one file taken out of it, so the
# GTK application and its dependencies are not installed.
if [ "${BLEGATE_SETUP_TESTS:-0}" = 1 ]; then
    venv=.build/test-python
    if ! "$venv/bin/python" -c 'import garmin_fit_sdk' 2>/dev/null; then
        echo "setup: installing garmin-fit-sdk into $venv"
        mkdir -p .build
        /usr/bin/python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check 'garmin-fit-sdk==21.218.0'
    fi
    # schemathesis (PyPI) runs generated requests against blegate-server from the
    # contract (SchemathesisTests).
    if ! "$venv/bin/schemathesis" --version >/dev/null 2>&1; then
        echo "setup: installing schemathesis into $venv"
        "$venv/bin/pip" install -q --disable-pip-version-check 'schemathesis==4.32.5'
    fi
    xsd=.build/test-schemas/TrainingCenterDatabasev2.xsd
    if [ ! -s "$xsd" ]; then
        echo "setup: taking $xsd out of Debian's pytrainer package"
        mkdir -p "$(dirname "$xsd")"
        tmp="$(mktemp -d)" && chmod 755 "$tmp"   # readable by apt's _apt user
        # Package lists may be missing (no package was installed above): update once then.
        (cd "$tmp" && apt-get download -qq pytrainer >/dev/null 2>&1) || {
            sudo_cmd=""
            [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
            $sudo_cmd apt-get update -qq
            (cd "$tmp" && apt-get download -qq pytrainer >/dev/null)
        }
        dpkg-deb --fsys-tarfile "$tmp"/pytrainer_*.deb \
            | tar -xO ./usr/share/pytrainer/schemas/GarminTrainingCenterDatabase_v2.xsd >"$xsd.tmp"
        rm -rf "$tmp"
        mv "$xsd.tmp" "$xsd"
    fi
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
