#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The release build that ships: `blegate` and `blegate-stream` (which `blegate` hands scan
# and stream to), with the Swift runtime linked in (--static-swift-stdlib), and libstdc++,
# libdbus-1, SQLite and zlib as well (below), so the target needs only glibc (libc, libm)
# and libgcc_s. Built in .build-static, apart from the debug build's flags.
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
# Libraries linked from their static archives, each found through a directory holding
# only the archive, searched before the system's (only what is called is linked, and
# placed by the symbol order below):
# - libstdc++: the static Swift runtime's link arguments name -lstdc++, which found the
#   shared library, and a process that maps it keeps 1.4 MiB of it resident (relocations,
#   locale set-up) for the few functions the runtime calls. (The GCC Runtime Library
#   Exception allows this for any licence.) BLEGATE_SHARED_LIBSTDCXX=1 links it shared.
# - libdbus-1, SQLite and zlib (libdbus-1-dev, libsqlite3-dev and zlib1g-dev ship the
#   archives): their hot functions join the symbol order instead of faulting in 64 KiB
#   windows of three more libraries, and libdbus no longer drags in libsystemd and its
#   five libraries for socket activation, which only a bus daemon uses
#   (scripts/libdbus-no-systemd.c). Side by side at 150 s with 50 straps: docs/run.md,
#   "Memory (session 7)". libdbus is dual-licensed AFL-2.1 or GPL-2+; linked under the
#   AFL, as SQLite (public domain) and zlib (zlib licence) allow.
#   BLEGATE_SHARED_SYSLIBS=1 links these three shared.
static_libs=()
[ "${BLEGATE_SHARED_LIBSTDCXX:-0}" = 1 ] || static_libs+=(stdc++)
[ "${BLEGATE_SHARED_SYSLIBS:-0}" = 1 ] || static_libs+=(dbus-1 sqlite3 z)
cc_bin="$(command -v gcc || command -v cc || command -v clang || true)"
dbus_pc="$(pkg-config --variable=pcfiledir dbus-1 2>/dev/null || true)/dbus-1.pc"
rm -rf .build-static/syslibs .build-static/libstdcxx
mkdir -p .build-static/syslibs/pkgconfig
for lib in "${static_libs[@]}"; do
    [ -n "$cc_bin" ] || break
    archive="$("$cc_bin" -print-file-name="lib$lib.a" 2>/dev/null || true)"
    [ -f "$archive" ] || continue
    # libdbus needs the two stand-ins, and its pkg-config file rewritten: CDBus names the
    # package dbus-1, whose -L of the system's library directory would otherwise come
    # first and find the shared library.
    if [ "$lib" = dbus-1 ]; then
        [ -f "$dbus_pc" ] || continue
        "$cc_bin" -O2 -fPIC -ffunction-sections -c scripts/libdbus-no-systemd.c \
            -o .build-static/syslibs/no-systemd.o || continue
        sed -e "s|^Libs:.*|Libs: -L$PWD/.build-static/syslibs -ldbus-1|" -e '/^Libs.private:/d' \
            "$dbus_pc" > .build-static/syslibs/pkgconfig/dbus-1.pc
        export PKG_CONFIG_PATH="$PWD/.build-static/syslibs/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
        flags+=(-Xlinker "$PWD/.build-static/syslibs/no-systemd.o")
    fi
    ln -sf "$archive" ".build-static/syslibs/lib$lib.a"
done
flags+=(-Xswiftc -Xclang-linker -Xswiftc "-L$PWD/.build-static/syslibs")
glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
if [ "${BLEGATE_PLAIN_RELOCS:-0}" != 1 ] && command -v ld.lld >/dev/null 2>&1 \
    && [ -n "$glibc" ] && printf '2.36\n%s\n' "$glibc" | sort -V -C; then
    flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
    # Identical functions folded into one (as Apple's linker does for Swift by default):
    # Swift emits weak copies of value witnesses and other helpers in every object file
    # that needs them. Folding shrank .text by 1.2 MiB and the peak RSS of `blegate run`
    # at 2 minutes from 26.5 to 25.6 MiB (session 6).
    flags+=(-Xlinker --icf=all)
    # The functions stream and run execute, first and together in .text
    # (scripts/gen-symbol-order.sh made the list; names it lacks are placed after).
    # Functions with no symbol, which the order cannot name, together just before it
    # (scripts/release-layout.ld): 2.2 MiB less at 150 s with 50 straps (session 7).
    flags+=(-Xlinker -T -Xlinker "$PWD/scripts/release-layout.ld")
    if [ -s scripts/symbol-order.txt ]; then
        flags+=(-Xlinker --symbol-ordering-file="$PWD/scripts/symbol-order.txt" -Xlinker --no-warn-symbol-ordering)
    fi
fi
# Link afresh every time: SwiftPM does not see a changed symbol-order.txt.
out="$(swift build "${flags[@]}" "$@" --show-bin-path)"
rm -f "$out/blegate" "$out/blegate-stream"
# BLEGATE_LINK_MAP=DIR writes lld's map of each binary to DIR/PRODUCT.map (the input
# section behind every address, for scripts/fault-map.py); the layout is the same.
for product in blegate blegate-stream; do
    map=()
    if [ -n "${BLEGATE_LINK_MAP:-}" ]; then
        mkdir -p "$BLEGATE_LINK_MAP"
        map=(-Xlinker "-Map=$(cd "$BLEGATE_LINK_MAP" && pwd)/$product.map")
    fi
    swift build "${flags[@]}" --product "$product" "${map[@]}" "$@" >&2
done
echo "$out"
