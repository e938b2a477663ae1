#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a blegate binary's page faults land, by kind: code in the symbol order, code
outside it, code with no symbol (named by its input section from lld's map), and data by
section. Each first touch of a file page maps the 64 KiB around it, so every code fault
outside the ordered region keeps about that much resident: the list says which code to
place (scripts/symbol-order.txt, scripts/release-layout.ld).

    BLEGATE_LINK_MAP=/tmp/maps scripts/build-release.sh
    perf record -e page-faults -c 1 -d -o pf.data BIN/blegate run --config ...
    perf script -i pf.data -F addr,ip,sym,dso > pf.txt
    scripts/fault-map.py pf.txt BIN/blegate /tmp/maps/blegate.map [--order scripts/symbol-order.txt]

Used for docs/run.md, "Memory (session 7)".
"""
import bisect
import collections
import re
import subprocess
import sys

LINE = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s+\(([^)]*)\)\s+([0-9a-f]+)\s+(.*?)\s+\(([^)]*)\)\s*$")
MAP = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+ (\S.*|\s{8}\S.*)$")


def link_map(path):
    """Output sections and input sections of lld's -Map, as sorted (address, size, name)."""
    outs, ins = [], []
    loaded = False
    with open(path) as f:
        for line in f:
            m = MAP.match(line)
            if not m:
                continue
            addr, size, rest = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
            if not rest.startswith(" "):
                # Sections not loaded (debug information) start at address 0.
                loaded = addr != 0
                if loaded:
                    outs.append((addr, size, rest.strip()))
            elif loaded and not rest.startswith(" " * 9):
                ins.append((addr, size, rest.strip()))
    return sorted(outs), sorted(ins)


def lookup(table, starts, addr):
    i = bisect.bisect_right(starts, addr) - 1
    if i >= 0 and addr < table[i][0] + max(table[i][1], 1):
        return table[i][2]
    return None


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    faults, binary, map_path = args[:3]
    order_path = args[args.index("--order") + 1] if "--order" in args else "scripts/symbol-order.txt"
    order = {line.strip() for line in open(order_path)}
    outs, ins = link_map(map_path)
    out_starts, in_starts = [o[0] for o in outs], [i[0] for i in ins]
    nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    start_vaddr = next(int(l.split()[0], 16) for l in nm.splitlines() if l.endswith(" _start"))

    rows = []
    bias = None
    for line in open(faults):
        m = LINE.match(line)
        if not m:
            continue
        addr, sym, dso, ip = m.group(1), m.group(2), m.group(3), m.group(4)
        rows.append((int(addr, 16), sym, dso, int(ip, 16)))
        if bias is None and dso == binary and sym == "_start":
            bias = int(addr, 16) - start_vaddr
    if bias is None:
        print("no fault in _start of that binary: is it the one perf ran?", file=sys.stderr)
        return 1

    kinds = collections.Counter()
    unordered = collections.Counter()
    nosym = collections.Counter()
    for addr, sym, dso, ip in rows:
        if dso != binary:
            kinds["other mappings: " + dso.rsplit("/", 1)[-1]] += 1
            continue
        vaddr = addr - bias
        if addr != ip:
            kinds["data: " + (lookup(outs, out_starts, vaddr) or "?")] += 1
            continue
        name = sym.split("+")[0]
        if name == "[unknown]":
            kinds["code: no symbol"] += 1
            section = lookup(ins, in_starts, vaddr) or "?"
            nosym[re.sub(r"^.*/", "", section)] += 1
        elif name in order:
            kinds["code: in the symbol order"] += 1
        else:
            kinds["code: not in the symbol order"] += 1
            unordered[name] += 1
    for kind, n in kinds.most_common():
        print(f"{n:6d}  {kind}")
    if unordered:
        print("code faults outside the order, by symbol:")
        for name, n in unordered.most_common(40):
            print(f"{n:6d}  {name[:150]}")
    if nosym:
        print("code faults with no symbol, by input section:")
        for name, n in nosym.most_common(60):
            print(f"{n:6d}  {name[:150]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
