// `ilgen replay TRACE:N --gdb` runs gdb on the recorded program with the replay's ILGEN_OPTIONS and
// ilgen's gdb commands (tools/debug/ilgen_gdb.py); everything after `--` goes to gdb, here batch
// commands. `run` stops in the user's frame of the racing second access (T1's `y++` in task), not
// in the runtime (gdb prints no runtime frame, and `bt` hides them), with both accesses and the
// schedule step printed. The program is
// listing1_race.c's, compiled from that file (LISTING1_REPLAY makes its test barrier harmless
// under replay).
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/listing1_race.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=DETECT
// RUN: env LISTING1_REPLAY=1 %ilgen replay %t.trace:1 --gdb -- -batch -ex 'show environment ILGEN_OPTIONS' -ex frame -ex 'ilgen finding' -ex 'ilgen schedule' -ex 'ilgen threads' -ex bt 2>&1 | FileCheck %s
//
// --stop-at first: before main's `y++` (the first access, in T0); `continue` reaches T1's.
// RUN: env LISTING1_REPLAY=1 %ilgen replay %t.trace:1 --gdb --stop-at first -- -batch -ex frame -ex 'info threads' -ex continue -ex frame 2>&1 | FileCheck %s --check-prefix=FIRST
//
// --stop-at start: when step 1 is taken; each `ilgen step-sync` takes one more step, in its thread.
// RUN: env LISTING1_REPLAY=1 %ilgen replay %t.trace:1 --gdb --stop-at start -- -batch -ex 'ilgen step-sync' -ex 'ilgen step-sync' -ex frame -ex 'ilgen schedule' 2>&1 | FileCheck %s --check-prefix=START
//
// --print-env: what reproduces the replay elsewhere; the options carry the first access's stop.
// RUN: %ilgen replay %t.trace:1 --print-env --stop-at first | FileCheck %s --check-prefix=ENV
//
// Arguments for a debugger without one, and --stop-at without one, are usage errors.
// RUN: sh -c '%ilgen replay %t.trace:1 -- -batch; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=NO-GDB
// RUN: sh -c '%ilgen replay %t.trace:1 --stop-at first; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=NO-DEBUGGER
// DETECT: exit=66

// CHECK:      [New Thread
// CHECK-NOT:  __ilgen
// CHECK:      ilgen: candidate 1: data race on y ({{.*}}) (4 bytes)
// CHECK-NEXT:   first access:  write by thread T0 at {{.*}}listing1_race.c:65 in main
// CHECK-NEXT:   second access: write by thread T1 at {{.*}}listing1_race.c:55 in task
// CHECK-NEXT:   schedule step 4 of 4 taken
// CHECK-NEXT: #[[N:[0-9]+]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:55
// CHECK-NEXT: 55{{[[:space:]]+}}y++;
// CHECK:      ILGEN_OPTIONS = mode=replay:schedule=/{{.*}}.trace/schedule-1.json:outcome_dir=/{{.*}}.trace/replay-gdb:replay_timeout_ms=3600000
// CHECK-NEXT: #[[N]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:55
// CHECK-NEXT: 55{{[[:space:]]+}}y++;
// CHECK-NEXT: ilgen: candidate 1: data race on y
// CHECK:      ilgen: schedule step 4 of 4 taken
// CHECK-NEXT:    step 1: T0 fork thread 1 at {{.*}}listing1_race.c:64 in main (site {{[0-9]+}})
// CHECK-NEXT:    step 2: T1 start
// CHECK-NEXT:    step 3: T1 lock m ({{.*}}) at {{.*}}listing1_race.c:50 in task
// CHECK-NEXT:    step 4: T1 unlock m ({{.*}}) at {{.*}}listing1_race.c:52 in task
// CHECK-NEXT: => (schedule finished: the threads run free)
// CHECK-NEXT:   1      T0   main thread; now at {{.*}}listing1_race.c:{{[0-9]+}} in main
// CHECK-NEXT:   2      (not an ilgen thread)
// CHECK-NEXT:   3      T1   created by T0 at {{.*}}listing1_race.c:64 in main; now at {{.*}}listing1_race.c:55 in task
// CHECK-NEXT: #[[N]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:55
// CHECK-NOT:  ilgen_rt
// CHECK:      in start_thread

// FIRST:      ilgen: stopped before the first access: write by thread T0 at {{.*}}listing1_race.c:65 in main
// FIRST-NEXT:   (`continue` runs to the second: write by thread T1 at {{.*}}listing1_race.c:55 in task)
// FIRST-NEXT: #{{[0-9]+}} {{.*}} in main () at {{.*}}listing1_race.c:65
// FIRST-NEXT: 65{{[[:space:]]+}}y++;
// FIRST-NEXT: #{{[0-9]+}} {{.*}} in main () at {{.*}}listing1_race.c:65
// FIRST:      * 1 {{.*}}__ilgen_stop_hook
// FIRST:      second access: write by thread T1 at {{.*}}listing1_race.c:55 in task
// FIRST:      #[[M:[0-9]+]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:55
// FIRST-NEXT: 55{{[[:space:]]+}}y++;
// FIRST-NEXT: #[[M]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:55

// START:      ilgen: took step 1: T0 fork thread 1 at {{.*}}listing1_race.c:64 in main
// START-NEXT: #{{[0-9]+}} {{.*}} in main () at {{.*}}listing1_race.c:64
// START:      ilgen: took step 2: T1 start
// START-NEXT: ilgen: thread 3 is in no function of the program yet
// START:      ilgen: took step 3: T1 lock m ({{.*}}) at {{.*}}listing1_race.c:50 in task
// START-NEXT: #[[K:[0-9]+]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:50
// START-NEXT: 50{{[[:space:]]+}}pthread_mutex_lock(&m);
// START-NEXT: #[[K]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:50
// START-NEXT: 50{{[[:space:]]+}}pthread_mutex_lock(&m);
// START-NEXT: ilgen: schedule step 3 of 4 taken
// START-NEXT:    step 1: T0 fork
// START-NEXT:    step 2: T1 start
// START-NEXT:    step 3: T1 lock m
// START-NEXT: => step 4: T1 unlock m

// ENV:      cd /{{.*}}
// ENV-NEXT: ILGEN_OPTIONS=mode=replay:schedule=/{{.*}}.trace/schedule-1.json:outcome_dir=/{{.*}}.trace/replay-gdb:replay_timeout_ms=3600000:verdict_grace_ms=0:stop_at={{[0-9]+}},0
// ENV-NEXT: export ILGEN_OPTIONS
// ENV-NEXT: /{{.*}}gdb_listing1_race.c.tmp
// ENV-NEXT: # under gdb: source /{{.*}}.trace/replay-gdb/ilgen_gdb.py and `ilgen load /{{.*}}.trace/replay-gdb/session.json`

// NO-GDB: ilgen: error: arguments after `--` are for gdb or lldb; pass --gdb or --lldb
// NO-GDB: exit=2
// NO-DEBUGGER: ilgen: error: --stop-at is for a debugger; pass --gdb, --lldb or --print-env
// NO-DEBUGGER: exit=2

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
