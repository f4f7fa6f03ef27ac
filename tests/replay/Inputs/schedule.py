#!/usr/bin/env python3
"""Writes a schedule (trace/src/schedule.rs, version 4) for a recorded trace, on stdout.

usage: schedule.py TRACE_DIR [--build-id ID] (STEP... | --recorded)
where STEP is TID:INDEX:OP (a thread's INDEX-th sync record, 0-based, of kind OP as
`SyncOp::name` spells it); --recorded takes every completed sync record of the trace in sequence
order (the order the recorded run obeyed). The build id comes from TRACE_DIR/meta.json unless
--build-id overrides it; every thread of the trace is listed with its (parent, child_index) from its
file header.

Thread file (trace/src/format.rs, trace/src/codec.rs): magic, header (version, tid, parent,
child_index: u32 LE), then compact records, each a tag (0 ends them) and LEB128 fields: an access
(0x40..0x53), a sync record (0x80: seq delta, site delta, bincode varint SyncOp with its objects),
a heap record (0x81: seq delta, site delta, bincode varint HeapOp), a window of accesses
(0x84..0x87: address delta, mask, site delta), an atomic record (0x88..0x8a:
seq delta, site delta, address delta) or a slot (0x82: a length byte and the fixed-int bincode
Event: u32 variant 1, seq u64, site u32, the SyncOp's u32 variant)."""
import glob
import json
import os
import struct
import sys

args = sys.argv[1:]
trace = args.pop(0)
build_id = json.load(open(os.path.join(trace, "meta.json")))["build_id"]
if args and args[0] == "--build-id":
    build_id = args[1]
    args = args[2:]
# SyncOp's variants in declaration order (trace/src/event.rs), as SyncOp::name spells them.
OPS = ["start", "end", "fork", "join", "detach", "lock", "trylock", "timedlock", "unlock",
       "rdlock", "wrlock", "tryrdlock", "trywrlock", "rwunlock", "wait", "wake", "signal",
       "broadcast", "barrier_enter", "barrier_exit", "spin_lock", "spin_trylock", "spin_unlock",
       "sem_wait", "sem_trywait", "sem_post", "waitloop_enter", "waitloop_exit", "exit",
       "sem_init", "sem_timedwait", "sem_destroy", "mutex_destroy", "cond_destroy",
       "rwlock_destroy", "barrier_destroy", "tx_begin", "tx_end", "channel_write", "channel_read"]
PENDING = 2**64 - 1
# NO_THREAD and NO_SITE of trace/src/event.rs: a schedule writes them as null.
ABSENT = 2**32 - 1

# Fields of each SyncOp after its variant: (varint numbers, whether a bool follows); the others
# hold one object address.
FIELDS = {"start": (0, False), "end": (0, False), "exit": (0, False), "tx_begin": (0, False),
          "tx_end": (0, False), "wait": (2, True), "wake": (2, True), "sem_init": (2, False),
          "channel_write": (2, False), "channel_read": (2, False)}
FIELDS.update({op: (1, True) for op in ["trylock", "timedlock", "tryrdlock", "trywrlock",
                                        "barrier_exit", "spin_trylock", "sem_trywait",
                                        "sem_timedwait"]})


def leb(data, pos):
    value, shift = 0, 0
    while True:
        byte, pos = data[pos], pos + 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def skip_leb(data, pos):
    return leb(data, pos)[1]


def zigzag(z):
    return (z >> 1) ^ -(z & 1)


def varint(data, pos):
    """A bincode varint: below 251 one byte, else 251/252/253 and a u16/u32/u64."""
    first = data[pos]
    if first < 251:
        return first, pos + 1
    width = {251: 2, 252: 4, 253: 8}[first]
    return int.from_bytes(data[pos + 1:pos + 1 + width], "little"), pos + 1 + width


def skip_varint(data, pos):
    return varint(data, pos)[1]


threads = []
recorded = []
for path in sorted(glob.glob(os.path.join(trace, "t*.trace"))):
    data = open(path, "rb").read()
    _version, tid, parent, child_index = struct.unpack("<4I", data[8:24])
    threads.append({"tid": tid, "parent": None if parent == ABSENT else parent,
                    "child_index": child_index})
    pos, index, seq, site = 24, 0, 0, 0
    while pos < len(data) and data[pos] != 0:
        tag, pos = data[pos], pos + 1
        if tag == 0x82:
            n = data[pos]
            op_seq, op_site, op = struct.unpack("<QII", data[pos + 5:pos + 21])
            pos += 1 + n
        elif tag < 0x80:
            pos = skip_leb(data, skip_leb(data, pos))
            if (tag >> 2) & 0xF == 4:
                pos = skip_leb(data, pos)
            continue
        elif 0x84 <= tag <= 0x87:
            # A window of strided accesses (address delta, mask, site delta): no sync record.
            pos = skip_leb(data, skip_leb(data, skip_leb(data, pos)))
            continue
        else:
            d, pos = leb(data, pos)
            seq = (seq + zigzag(d)) % 2**64
            d, pos = leb(data, pos)
            site = (site + zigzag(d)) % 2**32
            if 0x88 <= tag <= 0x8A:
                # An atomic record (its address delta follows): no sync record, no step.
                pos = skip_leb(data, pos)
                continue
            op, pos = varint(data, pos)
            if tag == 0x81:
                pos = skip_varint(data, skip_varint(data, pos))
                continue
            words, flag = FIELDS.get(OPS[op], (1, False))
            for _ in range(words):
                pos = skip_varint(data, pos)
            pos += flag
            op_seq, op_site = seq, site
        if op_seq != PENDING:
            recorded.append((op_seq, {"tid": tid, "index": index, "op": OPS[op],
                                      "site": None if op_site == ABSENT else op_site}))
        index += 1
steps = [s for _, s in sorted(recorded, key=lambda r: r[0])] if args == ["--recorded"] else []
for s in args if args != ["--recorded"] else []:
    tid, index, op = s.split(":")
    # No site: the replay compares a step's site only when the schedule has one.
    steps.append({"tid": int(tid), "index": int(index), "op": op, "site": None})
json.dump({"format_version": 4, "build_id": build_id, "threads": threads, "steps": steps},
          sys.stdout, indent=1)
print()
