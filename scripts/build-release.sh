#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The release build that ships: `blegate` and `blegate-stream` (which `blegate` hands scan
# and stream to), with the Swift runtime linked in (--static-swift-stdlib), so the target
# needs only system libraries. Built in .build-static, apart from the debug build's flags.
# Prints the directory that holds both binaries on its last line. The binaries export no
# symbols of their own (scripts/release-symbols.map).
#   scripts/build-release.sh [extra swift build flags]
# With the toolchain's lld and glibc 2.36 or later (Debian 12, Raspberry Pi OS bookworm),
# relative relocations are packed (DT_RELR): at start ld.so reads a few KiB instead of
# about 1 MiB of .rela.dyn, which stays out of the gateway's resident memory. Such a
# binary needs glibc 2.36 on the target too; BLEGATE_PLAIN_RELOCS=1 builds without it.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"
# Every function in a section of its own (Swift and C, ours and the packages'): without
# it each object file's code is one .text section, which the linker can only move whole,
# so the symbol order below placed barely a third of the functions it names.
flags=(-c release --static-swift-stdlib --scratch-path .build-static
       -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcc -fdata-sections
       -Xlinker --version-script="$PWD/scripts/release-symbols.map")
# libstdc++ linked in as well: the static Swift runtime's link arguments name -lstdc++,
# which finds the shared library first, and a process that maps it keeps 1.4 MiB of it
# resident (relocations, locale set-up) for the few functions the runtime calls. A
# directory holding only libstdc++.a, searched before the compiler's own, makes that
# -lstdc++ the archive: only what is called is linked, in the order below. (The GCC
# Runtime Library Exception allows this for any licence.)
stdcxx="$(gcc -print-file-name=libstdc++.a 2>/dev/null || true)"
if [ "${BLEGATE_SHARED_LIBSTDCXX:-0}" != 1 ] && [ -f "$stdcxx" ]; then
    mkdir -p .build-static/libstdcxx
    ln -sf "$stdcxx" .build-static/libstdcxx/libstdc++.a
    flags+=(-Xswiftc -Xclang-linker -Xswiftc "-L$PWD/.build-static/libstdcxx")
fi
glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
if [ "${BLEGATE_PLAIN_RELOCS:-0}" != 1 ] && command -v ld.lld >/dev/null 2>&1 \
    && [ -n "$glibc" ] && printf '2.36\n%s\n' "$glibc" | sort -V -C; then
    flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
    # Identical functions folded into one (as Apple's linker does for Swift by default):
    # Swift emits weak copies of value witnesses and other helpers in every object file
    # that needs them. Folding shrank .text by 1.2 MiB and the peak RSS of `blegate run`
    # at 2 minutes from 26.5 to 25.6 MiB (session 6). What the order cannot reach still:
    # code with no symbol (key path helpers and other local functions in sections named
    # .L...), 62 of 153 code page faults of `blegate run` (perf record -e page-faults -d).
    flags+=(-Xlinker --icf=all)
    # The functions stream and run execute, first and together in .text
    # (scripts/gen-symbol-order.sh made the list; names it lacks are placed after).
    if [ -s scripts/symbol-order.txt ]; then
        flags+=(-Xlinker --symbol-ordering-file="$PWD/scripts/symbol-order.txt" -Xlinker --no-warn-symbol-ordering)
    fi
fi
# Link afresh every time: SwiftPM does not see a changed symbol-order.txt.
out="$(swift build "${flags[@]}" "$@" --show-bin-path)"
rm -f "$out/blegate" "$out/blegate-stream"
for product in blegate blegate-stream; do
    swift build "${flags[@]}" --product "$product" "$@" >&2
done
echo "$out"
