// `ilgen replay --lldb` (lldb-19, installed by `make deps`): the same landing as --gdb in the user's
// frame of the racing second access, the finding printed, and ilgen's lldb commands
// (tools/debug/ilgen_lldb.py). The program is listing1_race.c's, as in gdb_listing1_race.c.
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/listing1_race.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace > /dev/null; test $? = 66'
// RUN: env LISTING1_REPLAY=1 %ilgen replay %t.trace:1 --lldb -- -b -o 'frame info' -o 'ilgen schedule' -o 'ilgen threads' 2>&1 | FileCheck %s
//
// --stop-at first: before main's `y++`, in the main thread.
// RUN: env LISTING1_REPLAY=1 %ilgen replay %t.trace:1 --lldb --stop-at first -- -b -o 'frame info' -o 'thread info' 2>&1 | FileCheck %s --check-prefix=FIRST
//
// --stop-at start, then `ilgen step-sync` twice: T1's lock of m is taken, step 4 is next.
// RUN: env LISTING1_REPLAY=1 %ilgen replay %t.trace:1 --lldb --stop-at start -- -b -o 'ilgen step-sync' -o 'ilgen step-sync' -o 'frame info' -o 'ilgen schedule' 2>&1 | FileCheck %s --check-prefix=START

// CHECK:      ilgen: candidate 1: data race on y ({{.*}}) (4 bytes)
// CHECK-NEXT:   first access:  write by thread T0 at {{.*}}listing1_race.c:65 in main
// CHECK-NEXT:   second access: write by thread T1 at {{.*}}listing1_race.c:55 in task
// CHECK-NEXT:   schedule step 4 of 4 taken
// CHECK-NEXT: frame #[[N:[0-9]+]]: {{.*}}listing1_race.c:55 in task
// CHECK:      (lldb) frame info
// CHECK-NEXT: frame #[[N]]: {{.*}}`task(arg={{.*}}) at listing1_race.c:55
// CHECK:      (lldb) ilgen schedule
// CHECK-NEXT: ilgen: schedule step 4 of 4 taken
// CHECK-NEXT:    step 1: T0 fork thread 1 at {{.*}}listing1_race.c:64 in main
// CHECK:      => (schedule finished: the threads run free)
// CHECK:      (lldb) ilgen threads
// CHECK-NEXT:   1      T0   main thread
// CHECK:        3      T1   created by T0 at {{.*}}listing1_race.c:64 in main; now at {{.*}}listing1_race.c:55 in task

// FIRST:      ilgen: stopped before the first access: write by thread T0 at {{.*}}listing1_race.c:65 in main
// FIRST:      (lldb) frame info
// FIRST-NEXT: frame #{{[0-9]+}}: {{.*}}`main at listing1_race.c:65
// FIRST:      (lldb) thread info
// FIRST-NEXT: thread #1:

// START:      ilgen: took step 1: T0 fork thread 1 at {{.*}}listing1_race.c:64 in main
// START:      ilgen: took step 2: T1 start
// START-NEXT: ilgen: thread 3 is in no function of the program yet
// START:      ilgen: took step 3: T1 lock m ({{.*}}) at {{.*}}listing1_race.c:50 in task
// START:      (lldb) frame info
// START-NEXT: frame #{{[0-9]+}}: {{.*}}`task(arg={{.*}}) at listing1_race.c:50
// START:      (lldb) ilgen schedule
// START-NEXT: ilgen: schedule step 3 of 4 taken
// START:      => step 4: T1 unlock m
