// A run of 10^7 events (benchmarks/detect/workloads/locked_racy.c: 2 threads, 975610 locked
// updates each, an unlocked update of `racy` every 8th iteration) is recorded in compact records
// (under 5 bytes per event: 42 MB for its two worker files, 266 MB in format 4) and analysed under
// an address-space cap of 1 GiB, finding the one race on `racy` (and, as its fallbacks, two other
// instances of its two sites) and nothing else. The cap guards the analysis's memory (issue 14):
// `ilgen detect --no-replay` on this trace peaked at 2001 MiB of address space (VmPeak), now at
// 713 MiB (/proc/PID/status sampled every 2 ms; it passes under `ulimit -v 737280`): the decoded
// trace is dropped as the model is built, a model event takes 16 bytes instead of 72 (per-job
// copies share the recorded operations), malloc keeps one arena.
//
// RUN: %ilgen cc -g -O0 %S/../../benchmarks/detect/workloads/locked_racy.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t 2 975610 > /dev/null
// RUN: sh -c 'cat %t.trace/t*.trace | wc -c' | FileCheck --check-prefix=BYTES %s
// BYTES: {{^[1-4][0-9]{7}$}}
// RUN: sh -c 'ulimit -v 1048576 && %ilgen detect --no-replay %t.trace; echo "exit=$?"' 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not="candidate 4" --implicit-check-not="out of memory"
// CHECK:      ilgen: 3 candidate(s): 1 race(s), 0 deadlock(s), 2 fallback(s) of race candidates
// CHECK-NEXT: trace: 3 threads, 3902449 sync events, 6097572 accesses
// CHECK:      candidate 1: data race on racy
// CHECK-NEXT:   write by thread 1 at {{.*}}locked_racy.c:25 in worker
// CHECK-NEXT:   write by thread 2 at {{.*}}locked_racy.c:25 in worker
// CHECK:      candidate 2: data race on racy {{.*}}, fallback of candidate 1
// CHECK:      candidate 3: data race on racy {{.*}}, fallback of candidate 1
// CHECK:      exit=66
