// A run in zstd's shape (benchmarks/detect/workloads/compress_jobs.c: 6 workers compress 8 blocks
// of 128 KiB that main fills and hands over through a job queue, each worker reading its block at
// scattered places) has 1.6 million accesses over 1.3 million shared objects, all ordered by
// happens-before but a dozen under the queue's lock: the queue's signal → wait, the job's done
// signal → main's wait. It is analysed under an address-space cap of 384 MiB (issue 14, zstd's
// 18 GiB): `ilgen detect --no-replay` held every access of every shared object and the decoded
// trace, and peaked at 1134 MiB of address space (VmPeak sampled every 5 ms); it now leaves the
// objects happens-before orders out of the model and holds the trace as its records: 98 MiB.
//
// RUN: %ilgen cc -g -O0 %S/../../benchmarks/detect/workloads/compress_jobs.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t 6 8 \
// RUN:   | FileCheck --check-prefix=OUT %s
// OUT: 8 blocks, 751422 bytes out, checksum 669fd6610a63bd27
// RUN: sh -c 'ulimit -v 393216 && %ilgen detect --no-replay %t.trace; echo "exit=$?"' 2>&1 \
// RUN:   | FileCheck %s --implicit-check-not="out of memory" --implicit-check-not="data race"
// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NEXT: trace: 7 threads, {{[0-9]+}} sync events, {{1[0-9][0-9][0-9][0-9][0-9][0-9]}} accesses
// CHECK-NEXT: shared objects: {{1[0-9][0-9][0-9][0-9][0-9][0-9]}} (0 without a conflicting pair, {{1[0-9][0-9][0-9][0-9][0-9][0-9]}} removed by happens-before, {{[0-9]+}} by lockset, 0 left)
// CHECK:      exit=0
