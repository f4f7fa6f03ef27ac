// The thread-pool benchmark app (benchmarks/apps/app_tpool.c), small: submitters malloc tasks
// and payloads, workers free them, and malloc hands the freed blocks to the next tasks (issue 11).
// Replay reported a "data race on freed memory" between two workers' frees of two different
// payloads at one address: an allocation reset the shadow over the bytes it was asked for, a free
// wrote over the block's usable size, so the block's last bytes kept the first payload's free.
// Allocations now reset the replay's shadow over the usable size too. Race-free: nothing may be confirmed, whatever the
// candidates' verdicts.
//
// RUN: %ilgen cc -g -O2 %S/../../benchmarks/apps/app_tpool.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t -n 2 -t 4 -e 64 | FileCheck %s --check-prefix=APP
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect --all-sites %t.trace; echo "exit=$?"' | FileCheck %s
//
// APP: OK
// A payload of 64 words is asked as 256 bytes, a block of 264 usable bytes, which its free covers.
// DUMP-DAG: alloc {{0x[0-9a-f]+}} size=256 seq={{[0-9]+}} at {{.*}}app_tpool.c:241:{{[0-9]+}} submitter_main
// DUMP-DAG: free {{0x[0-9a-f]+}} size=264 seq={{[0-9]+}} at {{.*}}app_tpool.c:146:{{[0-9]+}} pool_worker
// CHECK-NOT: WARNING: ilgen
// CHECK: ilgen: 0 finding(s) confirmed
// CHECK-NOT: WARNING: ilgen
// CHECK: exit=0
