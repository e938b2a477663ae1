#!/usr/bin/env bash
# Builds release binaries and prints the measured figures (never asserted).
#   scripts/bench.sh dbus [--rate 30000,0] [--count 300000]   D-Bus layer + simulator emit path,
#                                                              against a plain C libdbus receiver
#   scripts/bench.sh simulator [--straps 10] [--rate 50,3000]   the simulator's emit rate and CPU per notification
#   scripts/bench.sh decode                                    decode+normalize, HRV per beat
#   scripts/bench.sh contract-parse [BATCHES]                  blegate-server's parse and checks of a 200-record
#                                                              batch (JSONDecoder against ContractJSONReader), µs/record
#   scripts/bench.sh cache [--records 200000] [--rate 2000] [--seconds 10]
#                                                              cache insert rate (clear, AES-GCM), append cost,
#                                                              append→committed latency p50/p99
#   blegate-bench cache-backlog --path FILE                    216,000 pending records (60 devices × 1 h at 1 Hz)
#   scripts/bench.sh sync [--records 216000] [--batch 500,1000,5000]   sync engine → loopback TestBackend, records/s
#   scripts/bench.sh catchup [--devices 60] [--seconds 3600] [--batch 500,1000,5000]
#                                                              a real cache's backlog drained into the TestBackend
#   scripts/bench.sh latency [--straps 10] [--seconds 60] [--commit-interval 1000]
#                                                              notification → committed, through blegate run's runtime
#   scripts/bench-rss.sh SECONDS [STRAPS]                      peak RSS of the blegate run process
#   scripts/bench.sh stream [--total 500,50] [--straps 10] [--clients acquire,start,bleak,run] [--seconds 20]
#                                                              at real arrival times (every strap on its own clock):
#                                                              blegate stream (AcquireNotify, StartNotify), bleak and
#                                                              blegate run as processes: CPU µs, wake-ups and context
#                                                              switches per notification, peak RSS, losses, ratio to bleak
#   scripts/bench.sh run                                       catch-up and latency, then blegate run per record at
#                                                              real arrival times (stream --clients run)
#   scripts/bench.sh wall [SECONDS=60] [STRAPS=40] [SCREENS=10]   the wall (shipped blegate run) in headless Chromium:
#                                                              notification → DOM p50/p99, gateway CPU and peak RSS
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh -c release --product blegate-bench
# The stream benchmark runs blegate as it ships (scripts/build-release.sh: static Swift
# runtime, the lean blegate-stream beside it) for the simulator and the gateway, each a process.
case "${1:-all}" in stream|run|wall|all) shipped="$(scripts/build-release.sh | tail -n 1)" ;; esac
# bleak (PyPI) for the stream benchmark, in a venv of its own: Debian's python3 refuses
# `pip install` into the system (PEP 668).
bleak_python=.build/bench-python/bin/python
case "${1:-all}" in stream|all)
    if ! "$bleak_python" -c 'import bleak' 2>/dev/null; then
        echo "bench: installing bleak into .build/bench-python"
        /usr/bin/python3 -m venv .build/bench-python
        .build/bench-python/bin/pip install -q --disable-pip-version-check 'bleak==3.1.0'
    fi ;;
esac
bin="$(swift build -c release --show-bin-path)"
what="${1:-all}"; shift || true
case "$what" in
    dbus|all)
        ref="$bin/dbus-receive-c"
        gcc -O2 -o "$ref" Benchmarks/c-reference/dbus-receive.c $(pkg-config --cflags --libs dbus-1)
        "$bin/blegate-bench" dbus --c-reference "$ref" "$@"
        ;;&
    simulator|all)
        "$bin/blegate-bench" simulator "$@"
        ;;&
    decode|all)
        "$bin/blegate-bench" decode
        ;;&
    contract-parse|all)
        "$bin/blegate-bench" contract-parse "$@"
        ;;&
    cache|all)
        if [ "$what" = all ]; then "$bin/blegate-bench" cache; else "$bin/blegate-bench" cache "$@"; fi
        ;;&
    sync|all)
        if [ "$what" = all ]; then "$bin/blegate-bench" sync; else "$bin/blegate-bench" sync "$@"; fi
        ;;&
    catchup|run|all)
        if [ "$what" = catchup ]; then "$bin/blegate-bench" catchup "$@"; else "$bin/blegate-bench" catchup; fi
        ;;&
    latency|run|all)
        if [ "$what" = latency ]; then "$bin/blegate-bench" latency "$@"; else "$bin/blegate-bench" latency; fi
        ;;&
    run)
        "$bin/blegate-bench" stream --blegate "$shipped/blegate" --clients run
        ;;&
    stream|all)
        if [ "$what" = all ]; then set --; fi
        "$bin/blegate-bench" stream --blegate "$shipped/blegate" --python "$bleak_python" \
            --bleak-script Benchmarks/bleak/bleak_stream.py "$@"
        ;;&
    wall|all)
        swift build -c release --product blegate-test-backend
        wallbin="$(mktemp -d /tmp/blegate-wallbin.XXXXXX)"
        ln -s "$shipped/blegate" "$wallbin/blegate"
        ln -s "$bin/blegate-test-backend" "$wallbin/blegate-test-backend"
        if [ "$what" = all ]; then BLEGATE_BIN_DIR="$wallbin" scripts/bench-wall.sh; else BLEGATE_BIN_DIR="$wallbin" scripts/bench-wall.sh "$@"; fi
        rm -rf "$wallbin"
        ;;
esac
