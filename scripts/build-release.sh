#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The release build that ships: `blegate` and `blegate-stream` (which `blegate` hands scan
# and stream to), built in .build-static apart from the debug build's flags. Prints the
# directory that holds both binaries on its last line.
#   scripts/build-release.sh [extra swift build flags]
# Needs lld, glibc 2.36 or later (Debian 12, Raspberry Pi OS bookworm) and the static
# archives of libstdc++, libdbus-1, SQLite and zlib (scripts/setup.sh installs them); it
# stops with an error naming what is missing rather than build a different binary.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null 2>&1 || export PATH="/opt/swift/usr/bin:$PATH"

fail() { echo "build-release: $*" >&2; exit 1; }

command -v swift >/dev/null 2>&1 || fail "no swift on PATH"
command -v ld.lld >/dev/null 2>&1 || fail "no ld.lld on PATH (the Swift toolchain ships it)"
cc_bin="$(command -v gcc || command -v cc || command -v clang || true)"
[ -n "$cc_bin" ] || fail "no C compiler (gcc, cc or clang) to find the static archives and build scripts/libdbus-no-systemd.c"
command -v pkg-config >/dev/null 2>&1 || fail "no pkg-config (apt-get install pkg-config)"
glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
[ -n "$glibc" ] || fail "cannot read the glibc version (getconf GNU_LIBC_VERSION)"
printf '2.36\n%s\n' "$glibc" | sort -V -C || fail "glibc $glibc is older than 2.36, which packed relative relocations (DT_RELR) need"

# The Swift runtime linked in (--static-swift-stdlib), so the target needs no Swift
# installation. The binaries export none of their own symbols (scripts/release-symbols.map).
# Swift code optimised for size (-Osize, every Swift target and dependency): a process's
# resident code is the 64 KiB windows of the binary its calls touch (the kernel maps a
# read fault's whole window: fault-around), so smaller code is fewer windows; it costs
# `blegate run` no measurable CPU (docs/benchmarks.md, "Where the resident pages are").
# Every function in a section of its own, so that identical code folding below and the
# linker's garbage collection work per function rather than per object file.
flags=(-c release --static-swift-stdlib --scratch-path .build-static
       -Xswiftc -Osize
       -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections -Xcc -fdata-sections
       -Xlinker --version-script="$PWD/scripts/release-symbols.map")

# Libraries linked from their static archives, each found through a directory holding
# only the archive, searched before the system's (only what is called is linked), so the
# target loads only libc, libm and libgcc_s:
# - libstdc++: the static Swift runtime's link arguments name -lstdc++, and a process that
#   maps the shared library keeps over 1 MiB of it resident for the few functions the
#   runtime calls. (The GCC Runtime Library Exception allows this for any licence.)
# - libdbus-1, SQLite and zlib (libdbus-1-dev, libsqlite3-dev and zlib1g-dev ship the
#   archives). libdbus's shared library drags in libsystemd and five more libraries for
#   socket activation, which only a bus daemon uses; scripts/libdbus-no-systemd.c answers
#   those two calls instead. libdbus is dual-licensed AFL-2.1 or GPL-2+; linked under the
#   AFL, as SQLite (public domain) and zlib (zlib licence) allow.
rm -rf .build-static/syslibs
mkdir -p .build-static/syslibs/pkgconfig
for lib in stdc++ dbus-1 sqlite3 z; do
    archive="$("$cc_bin" -print-file-name="lib$lib.a")"
    [ -f "$archive" ] || fail "no static archive lib$lib.a ($cc_bin -print-file-name=lib$lib.a found none; scripts/setup.sh installs the -dev packages)"
    ln -sf "$archive" ".build-static/syslibs/lib$lib.a"
done
# CDBus names the package dbus-1, whose -L of the system's library directory would
# otherwise come first and find the shared library: its pkg-config file (and sqlite3's, for
# anything that asks) is rewritten to point at the directory above. GRDB's SQLite module
# links -lsqlite3 plainly, which the -L below resolves to the static archive.
for pc in dbus-1:libdbus-1-dev sqlite3:libsqlite3-dev; do
    name="${pc%%:*}"
    src="$(pkg-config --variable=pcfiledir "$name" || true)/$name.pc"
    [ -f "$src" ] || fail "no $name.pc (apt-get install ${pc#*:})"
    sed -e "s|^Libs:.*|Libs: -L$PWD/.build-static/syslibs -l${name#lib}|" -e '/^Libs.private:/d' \
        "$src" > ".build-static/syslibs/pkgconfig/$name.pc"
done
"$cc_bin" -O2 -fPIC -ffunction-sections -c scripts/libdbus-no-systemd.c -o .build-static/syslibs/no-systemd.o \
    || fail "scripts/libdbus-no-systemd.c did not compile"
export PKG_CONFIG_PATH="$PWD/.build-static/syslibs/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags+=(-Xlinker "$PWD/.build-static/syslibs/no-systemd.o"
        -Xswiftc -Xclang-linker -Xswiftc "-L$PWD/.build-static/syslibs")

# lld packs relative relocations (DT_RELR): at start ld.so reads a few KiB instead of about
# 1 MiB of .rela.dyn. The target needs glibc 2.36 as well.
flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
# Identical functions folded into one: Swift emits weak copies of value witnesses and other
# helpers in every object file that needs them. Only functions whose address is never
# taken are folded (--icf=safe): C code in the static archives may compare function
# addresses, which folding them would break.
flags+=(-Xlinker --icf=safe)

out="$(swift build "${flags[@]}" "$@" --show-bin-path)"
for product in blegate blegate-stream; do
    swift build "${flags[@]}" --product "$product" "$@" >&2
    [ -x "$out/$product" ] || fail "swift build made no $out/$product"
done
echo "$out"
