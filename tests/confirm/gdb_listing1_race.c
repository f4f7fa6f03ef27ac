// `ilgen replay TRACE:N --gdb` runs gdb on the recorded program with the replay's ILGEN_OPTIONS and
// a breakpoint on the runtime's report hook; everything after `--` goes to gdb, here a batch
// script. The hook is called on the thread of the second access, so gdb stops in task, and
// `frame function task` lands on the racing `y++`. The program is listing1_race.c's, compiled from
// that file (LISTING1_REPLAY makes its test barrier harmless under replay).
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/listing1_race.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=DETECT
// RUN: env LISTING1_REPLAY=1 %ilgen replay %t.trace:1 --gdb -- -batch -x %S/Inputs/race.gdb 2>&1 | FileCheck %s
//
// Arguments for gdb without --gdb are a usage error.
// RUN: sh -c '%ilgen replay %t.trace:1 -- -batch; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=NO-GDB
// DETECT: exit=66

// CHECK:      Breakpoint 1 at {{.*}}
// CHECK:      hit Breakpoint 1, {{.*}}__ilgen_report_hook
// CHECK:      ILGEN_OPTIONS = mode=replay:schedule=/{{.*}}.trace/schedule-1.json:outcome_dir=/{{.*}}.trace/replay-gdb:replay_timeout_ms=3600000:verdict_grace_ms=0
// CHECK:      #0 {{.*}}__ilgen_report_hook
// CHECK:      #[[N:[0-9]+]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:55
// CHECK:      #[[N]] {{.*}} in task (arg={{.*}}) at {{.*}}listing1_race.c:55
// CHECK-NEXT: 55{{[[:space:]]+}}y++;

// NO-GDB: ilgen: error: arguments after `--` are for gdb; pass --gdb
// NO-GDB: exit=2

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
