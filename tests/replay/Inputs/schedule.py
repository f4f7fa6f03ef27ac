#!/usr/bin/env python3
"""Writes a schedule (trace/src/schedule.rs, version 3) for a recorded trace, on stdout.

usage: schedule.py TRACE_DIR [--build-id ID] (STEP... | --recorded)
where STEP is TID:INDEX:OP (a thread's INDEX-th sync record, 0-based, of kind OP as
`SyncOp::name` spells it); --recorded takes every completed sync record of the trace in sequence
order (the order the recorded run obeyed). The build id comes from TRACE_DIR/meta.json unless
--build-id overrides it; every thread of the trace is listed with its (parent, child_index) from its
file header.

Thread file (trace/src/format.rs): magic, header (version, tid, parent, child_index: u32 LE),
then records: a length byte (0 ends them) and bincode fixed-int little-endian `Event`: u32
variant (0 Access, 1 Sync); a Sync is seq u64, site u32, then the SyncOp's u32 variant."""
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
       "rwlock_destroy", "barrier_destroy", "tx_begin", "tx_end"]
PENDING = 2**64 - 1
# NO_THREAD and NO_SITE of trace/src/event.rs: a schedule writes them as null.
ABSENT = 2**32 - 1

threads = []
recorded = []
for path in sorted(glob.glob(os.path.join(trace, "t*.trace"))):
    data = open(path, "rb").read()
    _version, tid, parent, child_index = struct.unpack("<4I", data[8:24])
    threads.append({"tid": tid, "parent": None if parent == ABSENT else parent,
                    "child_index": child_index})
    pos, index = 24, 0
    while pos < len(data) and data[pos] != 0:
        n = data[pos]
        payload = data[pos + 1:pos + 1 + n]
        if struct.unpack("<I", payload[:4])[0] == 1:
            seq, site, op = struct.unpack("<QII", payload[4:20])
            if seq != PENDING:
                recorded.append((seq, {"tid": tid, "index": index, "op": OPS[op],
                                 "site": None if site == ABSENT else site}))
            index += 1
        pos += 1 + n
steps = [s for _, s in sorted(recorded, key=lambda r: r[0])] if args == ["--recorded"] else []
for s in args if args != ["--recorded"] else []:
    tid, index, op = s.split(":")
    steps.append({"tid": int(tid), "index": int(index), "op": op, "site": 0})
json.dump({"format_version": 3, "build_id": build_id, "threads": threads, "steps": steps},
          sys.stdout, indent=1)
print()
