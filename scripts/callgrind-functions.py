#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The functions of BINARY that a callgrind profile saw execute, one name a line, sorted.

    scripts/callgrind-functions.py PROFILE BINARY

PROFILE must be written with --dump-instr=yes --compress-pos=no --compress-strings=no
--demangle=no. A function is listed when callgrind names it (fn=) and the binary defines
that name, or when one of its instructions executed (the address looked up in BINARY's
symbol table), which also lists code callgrind credits to an alias of another name. On
`blegate-stream stream --help` the two ways agree on all but 2 of 516 functions. Used by
scripts/gen-symbol-order.sh.
"""
import bisect
import os
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    profile, binary = sys.argv[1], sys.argv[2]
    syms = []
    nm = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True)
    for line in nm.stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTwW":
            syms.append((int(f[0], 16), int(f[1], 16), f[3]))
    syms.sort()
    starts = [s[0] for s in syms]
    defined = {s[2] for s in syms}
    target = os.path.basename(binary)
    names, addresses = set(), set()
    ours = False
    with open(profile, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                ours = os.path.basename(line[3:].strip()) == target
            elif line.startswith("fn="):
                if ours:
                    name = line[3:].strip()
                    if name in defined:
                        names.add(name)
            elif ours and line.startswith("0x"):
                addresses.add(int(line.split(None, 1)[0], 16))
    for a in addresses:
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and a < syms[i][0] + max(syms[i][1], 1):
            names.add(syms[i][2])
    for name in sorted(names):
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
