#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a running blegate's resident memory is: every resident page of its executable,
attributed to the ELF section and to the module of the symbol it holds, plus the other
mappings (heap, stacks, shared libraries) from /proc/PID/smaps.

    scripts/rss-map.py PID [--top N] [--symbols]

Reads /proc/PID/pagemap (run as root or as the process's user), `readelf` and `nm`.
Module names come from Swift's mangling ($s4GRDB... is GRDB) and from the prefixes
of C symbols (CCryptoBoringSSL_, CNIOBoringSSL_); what has no symbol counts as
"(between symbols)". Used for docs/run.md and docs/benchmarks.md, "Memory".
"""
import bisect
import collections
import os
import re
import struct
import subprocess
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")


def mappings(pid):
    out = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            out.append((start, end, parts[1], int(parts[2], 16), path))
    return out


def resident(pid, start, end):
    """Addresses of the pages of [start, end) that are present (in RAM)."""
    pages = []
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek(start // PAGE * 8)
        data = f.read((end - start) // PAGE * 8)
    for i in range(len(data) // 8):
        (entry,) = struct.unpack_from("<Q", data, i * 8)
        if entry >> 63 & 1:
            pages.append(start + i * PAGE)
    return pages


def load_segments(binary):
    segs = []
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16), int(f[5], 16)))  # offset, vaddr, filesz, memsz
    return segs


def sections(binary):
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout
    secs = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and int(m.group(3), 16):
            secs.append((int(m.group(3), 16), int(m.group(3), 16) + int(m.group(5), 16), m.group(1)))
    secs.sort()
    return secs


def symbols(binary):
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4:
            syms.append((int(f[0], 16), int(f[1], 16), f[3]))
    syms.sort()
    return syms


def module(name):
    for prefix, mod in (("CCryptoBoringSSL", "BoringSSL (swift-crypto)"), ("CNIOBoringSSL", "BoringSSL (swift-nio-ssl)"),
                        ("swift_", "Swift runtime"), ("_swift", "Swift runtime"), ("__swift", "Swift runtime")):
        if name.startswith(prefix):
            return mod
    m = re.match(r"^(?:\$s|_T0|\$S)(\d+)([A-Za-z_][A-Za-z0-9_]*)", name)
    if m:
        return m.group(2)[: int(m.group(1))]
    if name.startswith("$s"):
        return "Swift (stdlib)"
    if name.startswith("_Z"):
        return "C++"
    return "C"


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    pid = int(args[0])
    top = int(args[args.index("--top") + 1]) if "--top" in args else 15
    binary = os.readlink(f"/proc/{pid}/exe")
    maps = mappings(pid)
    segs = load_segments(binary)
    secs = sections(binary)
    syms = symbols(binary)
    sym_addrs = [s[0] for s in syms]
    sec_addrs = [s[0] for s in secs]

    # The executable's mappings, each with its own bias (runtime address - vaddr): the
    # segments' file offsets and virtual addresses differ by a different amount each.
    exe = [m for m in maps if m[4] == binary]
    if not exe:
        print("cannot find the executable's mappings", file=sys.stderr)
        return 1

    def bias_of(start, off):
        for s_off, s_vaddr, filesz, memsz in segs:
            if s_off // PAGE * PAGE <= off < s_off + max(filesz, 1):
                return start - (s_vaddr - s_off + off)
        return None

    # .bss and the rest of the last segment are anonymous, right after its mapping.
    lo = min(m[0] for m in exe)
    last = max(exe, key=lambda m: m[0])
    last_bias = bias_of(last[0], last[3])
    hi = max(s_vaddr + memsz for _, s_vaddr, _, memsz in segs) + (last_bias or 0)
    by_section = collections.Counter()
    by_module = collections.Counter()
    by_symbol = collections.Counter()
    for start, end, perms, off, path in maps:
        if end <= lo or start >= hi:
            continue
        bias = bias_of(start, off) if path == binary else last_bias
        if bias is None:
            continue
        for page in resident(pid, start, end):
            v = page - bias
            i = bisect.bisect_right(sec_addrs, v) - 1
            sec = secs[i][2] if i >= 0 and v < secs[i][1] else "(no section)"
            by_section[sec] += 1
            # Every symbol that overlaps the page shares it, by bytes.
            j = max(bisect.bisect_right(sym_addrs, v) - 1, 0)
            covered = 0
            while j < len(syms) and syms[j][0] < v + PAGE:
                s_start, s_size, name = syms[j]
                a, b = max(s_start, v), min(s_start + max(s_size, 1), v + PAGE)
                if b > a:
                    by_module[(sec, module(name))] += (b - a) / PAGE
                    by_symbol[name] += (b - a) / PAGE
                    covered += b - a
                j += 1
            if covered < PAGE:
                by_module[(sec, "(between symbols)")] += (PAGE - covered) / PAGE
    kib = PAGE / 1024
    total = sum(by_section.values())
    print(f"{binary}: {total * kib / 1024:.1f} MiB resident")
    print("by section:")
    for sec, n in by_section.most_common():
        if n * kib >= 16:
            print(f"  {n * kib / 1024:7.2f} MiB  {sec}")
    print("by section and module:")
    for (sec, mod), n in by_module.most_common(top):
        print(f"  {n * kib / 1024:7.2f} MiB  {sec:22} {mod}")
    if "--symbols" in args:
        print("largest symbols:")
        for name, n in by_symbol.most_common(top):
            print(f"  {n * kib:7.0f} KiB  {name[:110]}")

    # Everything else, from smaps.
    other = collections.Counter()
    cur = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split(None, 5)
                path = parts[5].strip() if len(parts) > 5 else "[anonymous]"
                cur = os.path.basename(path) if path.startswith("/") else path
            elif line.startswith("Rss:") and cur is not None:
                other[cur] += int(line.split()[1])
    print("all mappings (smaps Rss):")
    for name, k in other.most_common(top):
        if k >= 64:
            print(f"  {k / 1024:7.2f} MiB  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
