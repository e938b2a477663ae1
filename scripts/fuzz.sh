#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Fuzz the GATT decoders with libFuzzer.
#
#   scripts/fuzz.sh [SECONDS] [decoder...]
#
# SECONDS per decoder (default 600). Decoders are the names of Fuzz/Fuzz<Name>.swift
# (e.g. HeartRateMeasurement RowerData); default: all of them, one after another, so
# the run uses one core. Each target is Sources/PrintableText, Sources/GATT and
# Fuzz/Support as one module plus its entry file, compiled with -sanitize=fuzzer,address into .build-fuzz/. Corpora persist in
# .build-fuzz/corpus/<name>, crash inputs land in .build-fuzz/artifacts/, logs in
# .build-fuzz/logs/. Exit status 1 if any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-600}
[[ $# -gt 0 ]] && shift
swiftc=${SWIFTC:-swiftc}
command -v "$swiftc" >/dev/null || swiftc=/opt/swift/usr/bin/swiftc
out=.build-fuzz
mkdir -p "$out/bin" "$out/corpus" "$out/artifacts" "$out/logs"

if [[ $# -gt 0 ]]; then
    decoders=("$@")
else
    decoders=()
    for f in Fuzz/Fuzz*.swift; do n=${f#Fuzz/Fuzz}; decoders+=("${n%.swift}"); done
fi

# The decoders, what they import of ours and the entries' shared code, as one module (so
# without `import PrintableText`).
src="$out/src"
rm -rf "$src" && mkdir -p "$src"
for f in Sources/PrintableText/*.swift Sources/GATT/*.swift Fuzz/Support/*.swift; do
    sed '/^import PrintableText$/d' "$f" > "$src/$(basename "$f")"
done

for d in "${decoders[@]}"; do
    [[ -f Fuzz/Fuzz$d.swift ]] || { echo "no such fuzz target: $d" >&2; exit 2; }
    bin="$out/bin/fuzz-$d"
    if [[ -x $bin && -z ${FUZZ_REBUILD:-} ]] && [[ -z $(find Sources/PrintableText Sources/GATT Fuzz/Support "Fuzz/Fuzz$d.swift" -newer "$bin" -name '*.swift' | head -1) ]]; then
        echo "== $d is up to date"
        continue
    fi
    echo "== build $d"
    "$swiftc" -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 \
        "$src"/*.swift "Fuzz/Fuzz$d.swift" -module-name GATTFuzz -o "$out/bin/fuzz-$d"
done

failed=()
for d in "${decoders[@]}"; do
    mkdir -p "$out/corpus/$d"
    echo "== run $d for ${seconds}s"
    start=$(date +%s)
    if "$out/bin/fuzz-$d" "$out/corpus/$d" -max_total_time="$seconds" -max_len=128 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/artifacts/$d-" \
        >"$out/logs/$d.log" 2>&1; then
        status=ok
    else
        status=CRASH
        failed+=("$d")
    fi
    end=$(date +%s)
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$out/logs/$d.log" | grep -Eo '[0-9]+$' || echo '?')
    echo "$d: $status, $((end - start))s, $runs executions (log: $out/logs/$d.log)"
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "crashed: ${failed[*]}" >&2
    exit 1
fi
echo "all ${#decoders[@]} fuzz targets ran ${seconds}s without a crash"
