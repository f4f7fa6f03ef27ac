#!/usr/bin/env python3
"""Reads `ilgen dump` on stdin; prints `reused N address(es)`: how many block addresses thread
FREER freed (`free` or `unmap`) and thread ALLOCATOR allocated again (`alloc` or `map`) afterwards
(by sequence number).

usage: ilgen dump DIR | reused.py FREER ALLOCATOR"""
import re
import sys

freer, allocator = sys.argv[1], sys.argv[2]
frees = {}
allocs = []
for line in sys.stdin:
    m = re.match(r"(T\d+) (alloc|free|map|unmap) (0x[0-9a-f]+) size=\d+ seq=(\d+)", line)
    if not m:
        continue
    tid, op, addr, seq = m.group(1), m.group(2), m.group(3), int(m.group(4))
    if op in ("free", "unmap") and tid == freer:
        frees.setdefault(addr, []).append(seq)
    elif op in ("alloc", "map") and tid == allocator:
        allocs.append((addr, seq))
reused = {a for a, s in allocs if any(f < s for f in frees.get(a, []))}
print(f"reused {len(reused)} address(es)")
