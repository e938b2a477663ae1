#!/usr/bin/env bash
# Sets up, builds and runs every test. Tests start the dbus-daemons, simulators and
# servers they need themselves; nothing on the machine's own buses is touched.
# Then the release binaries (scripts/build-release.sh), which are what ships, go through
# the suites that run blegate as a process: run, status, pair, stream, scan, deployment.
#   scripts/test.sh [swift test flags]   # BLEGATE_SKIP_RELEASE=1: the debug build only
set -euo pipefail
cd "$(dirname "$0")/.."
BLEGATE_SKIP_BUILD=1 BLEGATE_SETUP_TESTS=1 scripts/setup.sh
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift build --build-tests
# The 20,000-object crowd (RunTests.BusObjectsTests) times the gateway's status answers and
# its stop while the bus floods: it runs alone after the rest, so that the load it measures
# is its own and not the other suites' (beside them a debug run took 7 s to stop, alone 4).
crowd='RunTests\.BusObjectsTests'
swift test --skip-build --skip "$crowd" "$@"
swift test --skip-build --filter "$crowd" "$@"
[ "${BLEGATE_SKIP_RELEASE:-0}" = 1 ] && exit 0

release="$(scripts/build-release.sh | tail -n 1)"
echo "test: the process-level suites against the release binaries in $release"
BLEGATE_BIN_DIR="$release" swift test --skip-build \
    --filter 'RunTests\.' \
    --filter 'StrapLinksTests\.StreamEndToEndTests' \
    --filter 'BlueZTests\.ScanCommandTests' \
    --filter 'DeploymentTests\.' \
    --skip "$crowd"
BLEGATE_BIN_DIR="$release" swift test --skip-build --filter "$crowd"
