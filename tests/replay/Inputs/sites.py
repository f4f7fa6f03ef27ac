#!/usr/bin/env python3
"""Copies stdin to stdout, writing `site N` as `site N (file:line)` from BINARY's site table.

usage: sites.py BINARY < report
The runtime prints site ids only (trace/src/sites.rs: the `ilgen_sites` section, 16-byte units,
one blob per module: a header unit "ILGS" | version u16 | 0 u16 | n_sites u32 | n_units u32, then
one unit per site: line, column, file offset, function offset as u32 from the blob's start; a
site's id is its unit's index in the section). Tests read the lines back with this filter."""
import os
import re
import struct
import subprocess
import sys
import tempfile

binary = sys.argv[1]
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "sites")
    # GNU objcopy: llvm-objcopy 19 refuses static executables (their .rela.plt names no symtab).
    subprocess.run(["objcopy", "-O", "binary", "--only-section=ilgen_sites", binary, out],
                   check=True)
    data = open(out, "rb").read()


def cstr(at):
    return data[at:data.index(b"\0", at)].decode()


sites = {}
pos = 0
while pos + 16 <= len(data):
    magic, _version, _zero, n_sites, n_units = struct.unpack("<4sHHII", data[pos:pos + 16])
    if magic != b"ILGS" or n_units == 0:
        break
    for k in range(1, n_sites + 1):
        line, _col, file_off, _fn_off = struct.unpack("<4I", data[pos + 16 * k:pos + 16 * k + 16])
        sites[pos // 16 + k] = "%s:%d" % (os.path.basename(cstr(pos + file_off)), line)
    pos += 16 * n_units

for text in sys.stdin:
    sys.stdout.write(re.sub(r"site (\d+)",
                            lambda m: "site %s (%s)" % (m.group(1), sites.get(int(m.group(1)), "?")),
                            text))
