// Issue 14's probe (benchmarks/detect/workloads/probe.c) at 10^6 sections a thread: 10^7 events,
// 4*10^6 of them lock operations, 6*10^6 accesses to a shared sum and a 4096-bucket histogram,
// every one under the lock. The screen (analysis/src/screen.rs) clears the run without a model,
// and each thread file (over 8 MiB) is read in pieces, never held (trace/src/events.rs): detect
// runs under an address-space cap of 128 MiB. Before the screen it took 640 MiB resident at this
// size (and ran out of memory under the cap), growing with the trace; now about 19 MiB, and 20 MiB
// at 2.5*10^8 events.
//
// RUN: %ilgen cc -g -O2 %S/../../benchmarks/detect/workloads/probe.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t 2 1000000 > /dev/null
// RUN: sh -c 'ulimit -v 131072 && %ilgen detect --no-replay %t.trace; echo "exit=$?"' 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not="out of memory"
// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NEXT: trace: 3 threads, 4000009 sync events, 6002057 accesses (6004100 kept on shared objects)
// CHECK-NEXT: shared objects: 4098 (0 without a conflicting pair, 1 removed by happens-before, 4097 by lockset, 0 left)
// CHECK:      exit=0
