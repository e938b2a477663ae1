#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a running process's resident pages of its own executable are.

    scripts/rss-pages.py PID [--top 12] [--symbols N] [--map LINKER-MAP]

Reads /proc/PID/maps and /proc/PID/pagemap (root: the kernel hides page frames, not
presence, from others) for the mappings of /proc/PID/exe, and puts each resident page
in the ELF section and the library or Swift module of the symbols it holds (from the
binary's symbol table, `nm`; or, with --map, from lld's map of the same link,
`-Xlinker -Map=FILE`, by the object file or static library each input section came from,
which also places generic specialisations in the module that emitted them). A page
shared by several symbols is split by their bytes.
Pages written since the mapping (relocated data, .bss) are counted apart as anonymous.
Prints, per mapping, how many of its 64 KiB windows hold resident pages (the kernel maps
a read fault's whole 64 KiB window of a file already in the page cache: fault-around),
then KiB per section and per module within each section. Measures only.
"""
import argparse
import bisect
import os
import re
import struct
import subprocess
import sys
from collections import defaultdict

PAGE = os.sysconf("SC_PAGE_SIZE")


def sections(binary):
    out = subprocess.run(["readelf", "-SW", binary], check=True, capture_output=True, text=True).stdout
    result = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
        if not m:
            continue
        name, addr, size, flags = m.group(1), int(m.group(2), 16), int(m.group(3), 16), m.group(4)
        if addr and size and "A" in flags:
            result.append((addr, addr + size, name))
    return sorted(result)


def symbols(binary):
    out = subprocess.run(["nm", "-n", "-S", "--defined-only", binary], check=True, capture_output=True, text=True).stdout
    starts, ends, names = [], [], []
    for line in out.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) != 4:
            continue
        addr, size, _kind, name = int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]
        if size == 0:
            continue
        starts.append(addr)
        ends.append(addr + size)
        names.append(name)
    return starts, ends, names


SWIFT_MODULE = re.compile(r"^_?\$s(?:So)?(\d+)([A-Za-z_][A-Za-z0-9_]*)")


def module(name):
    """The library or Swift module a symbol comes from, by its name."""
    m = SWIFT_MODULE.match(name)
    if m:
        n = int(m.group(1))
        mod = m.group(2)[:n]
        if len(mod) == n:
            return "swift:" + mod
    if name.startswith("$ss") or name.startswith("_swift_") or name.startswith("swift_") or "_ZN5swift" in name or name.startswith("_swift_stdlib"):
        return "swift:Swift(runtime+stdlib)"
    if "icu_" in name or name.startswith("icudt") or re.match(r"^u[a-z]+_\w+_\d+$", name) or name.startswith("_ZL") and "icu" in name.lower():
        return "ICU"
    for prefix, lib in (("sqlite3", "SQLite"), ("dbus_", "libdbus"), ("_dbus", "libdbus"), ("bus_", "libdbus"),
                        ("CNIOBoringSSL", "BoringSSL"), ("CCryptoBoringSSL", "BoringSSL(crypto)"),
                        ("_dispatch", "libdispatch"), ("dispatch_", "libdispatch"), ("_CF", "CoreFoundation"),
                        ("__CF", "CoreFoundation"), ("CF", "CoreFoundation"), ("c_nio", "NIO(C)"), ("CNIO", "NIO(C)"),
                        ("llhttp", "NIO(C llhttp)"), ("toml", "TOML(C++)"), ("_ZN4toml", "TOML(C++)"),
                        ("deflate", "zlib"), ("inflate", "zlib"), ("crc32", "zlib"), ("_tr_", "zlib"),
                        ("_ZNSt", "libstdc++"), ("_ZSt", "libstdc++"), ("__cxa", "libstdc++"), ("_ZN9__gnu", "libstdc++"),
                        ("_ZN4bssl", "BoringSSL")):
        if name.startswith(prefix):
            return lib
    return "other(C)"


def map_ranges(path):
    """Input sections of an lld map as symbols named after the module they came from."""
    starts, ends, names = [], [], []
    line_re = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+(\S.*):\(")
    with open(path) as f:
        for line in f:
            m = line_re.match(line)
            if not m:
                continue
            addr, size, origin = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
            if size == 0:
                continue
            starts.append(addr)
            ends.append(addr + size)
            names.append(origin_module(origin))
    order = sorted(range(len(starts)), key=starts.__getitem__)
    return [starts[i] for i in order], [ends[i] for i in order], [names[i] for i in order]


def origin_module(origin):
    """`.../GRDB.build/Row.swift.o` → GRDB; `.../libswiftCore.a(x.o)` → libswiftCore."""
    m = re.search(r"/([^/]+)\.build/[^/]+$", origin)
    if m:
        return m.group(1)
    m = re.search(r"/(lib[^/(]+)\.a\(", origin)
    if m:
        return m.group(1)
    return os.path.basename(origin)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pid", type=int)
    ap.add_argument("--top", type=int, default=12, help="modules listed per section")
    ap.add_argument("--symbols", type=int, default=0, help="also list the N symbols with most resident bytes")
    ap.add_argument("--map", help="lld's map file of the same link: attribute by object file and library")
    args = ap.parse_args()
    exe = os.path.realpath(f"/proc/{args.pid}/exe")
    maps = []
    with open(f"/proc/{args.pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and os.path.realpath(parts[5]) == exe:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                maps.append((lo, hi, int(parts[2], 16), parts[1]))
    if not maps:
        sys.exit(f"rss-pages: no mapping of {exe} in /proc/{args.pid}/maps")
    # A position-independent executable: the mapping of file offset 0 is the load address.
    bias = min(lo - off for lo, _hi, off, _perm in maps)
    # The last writable segment's .bss continues past the file in an anonymous mapping.
    secs = sections(exe)
    starts, ends, names = map_ranges(args.map) if args.map else symbols(exe)
    classify = (lambda n: n) if args.map else module
    sec_starts = [s[0] for s in secs]
    bss_end = max(e for _s, e, _n in secs) + bias
    with open(f"/proc/{args.pid}/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if len(parts) == 5 and any(lo == m[1] for m in maps) and lo < bss_end:
                maps.append((lo, hi, None, parts[1]))
    by_section = defaultdict(lambda: [0, 0])           # section → [file KiB, anon KiB]
    by_module = defaultdict(lambda: defaultdict(float))  # section → module → bytes
    by_symbol = defaultdict(float)
    fd = os.open(f"/proc/{args.pid}/pagemap", os.O_RDONLY)
    windows = []
    for lo, hi, off, perm in sorted(maps):
        count = (hi - lo) // PAGE
        data = os.pread(fd, count * 8, (lo // PAGE) * 8)
        present = defaultdict(int)
        for i in range(count):
            entry = struct.unpack_from("<Q", data, i * 8)[0]
            if not entry >> 63 & 1:
                continue
            present[(lo + i * PAGE) // 65536] += 1
            file_page = entry >> 61 & 1
            va = lo + i * PAGE - bias
            k = bisect.bisect_right(sec_starts, va) - 1
            sec = secs[k][2] if k >= 0 and va < secs[k][1] else "(between sections)"
            by_section[sec][0 if file_page else 1] += PAGE // 1024
            # Bytes of the page per symbol overlapping it; symbols are sorted by start and
            # rarely longer than a few pages, so the search starts a little before the page.
            j = max(0, bisect.bisect_right(starts, va) - 64)
            covered = 0
            page_end = va + PAGE
            while j < len(starts) and starts[j] < page_end:
                a, b = max(starts[j], va), min(ends[j], page_end)
                if b > a:
                    by_module[sec][classify(names[j])] += b - a
                    by_symbol[names[j]] += b - a
                    covered += b - a
                j += 1
            if covered < PAGE:
                by_module[sec]["(no symbol)"] += max(0, PAGE - covered)
        full = sum(1 for n in present.values() if n == 65536 // PAGE)
        where = "anonymous (.bss)" if off is None else f"file offset {off:#x}"
        windows.append(f"  {perm} {where}: {(hi - lo) // 1024} KiB mapped, {sum(present.values()) * PAGE // 1024} KiB resident"
                       f" in {len(present)} of {-(-(hi - lo) // 65536)} windows of 64 KiB ({full} whole)")
    os.close(fd)
    total_file = sum(v[0] for v in by_section.values())
    total_anon = sum(v[1] for v in by_section.values())
    print(f"{exe}: resident {total_file + total_anon} KiB ({total_file} file-backed, {total_anon} anonymous)")
    print("\n".join(windows))
    for sec, (fk, ak) in sorted(by_section.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
        print(f"  {sec:<32} {fk:>7} KiB file {ak:>6} KiB anon")
        mods = by_module[sec]
        scale = (fk + ak) * 1024 / max(1, sum(mods.values()))
        for mod, b in sorted(mods.items(), key=lambda kv: -kv[1])[: args.top]:
            print(f"      {b * scale / 1024:>9.1f} KiB  {mod}")
    if args.symbols:
        print("symbols with most resident bytes:")
        for name, b in sorted(by_symbol.items(), key=lambda kv: -kv[1])[: args.symbols]:
            print(f"  {b / 1024:>9.1f} KiB  {name[:140]}")


if __name__ == "__main__":
    main()
