#!/usr/bin/env bash
# Sets up, builds and runs every test. Tests start the dbus-daemons, simulators and
# servers they need themselves; nothing on the machine's own buses is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
BLEGATE_SKIP_BUILD=1 scripts/setup.sh
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
swift build --build-tests
swift test --skip-build "$@"
