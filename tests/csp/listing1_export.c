// Golden test of `ilgen export-csp` on the paper's Listing 1 (tests/detect/listing1_race.c,
// recorded in the order that hides its race). The whole model must be the golden file: the
// structure of the paper's Figure 1 (THREAD_1, THREAD_2, MUTEX_m, FORK_2, JOIN_2, PROGRAM), the
// PROCESS that lets no thread step after main's exit, and the RACE assertion of its Figure 3; only the first comment line, which names this machine's paths,
// is left out of the comparison. ilgen's own checker must then find the paper's counterexample
// for y (projected to sync events: fork, start, lock t2, unlock t2), none for the deadlock model,
// and a name that is no shared variable is an input error naming the trace.
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/../detect/listing1_race.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen export-csp %t.trace -o %t.csp
// RUN: grep -v '^-- ilgen reorder model of ' %t.csp | diff %S/Inputs/listing1.csp -
// RUN: %ilgen export-csp %t.trace > %t.stdout.csp && diff %t.csp %t.stdout.csp
// RUN: sh -c '%ilgen export-csp --var y --check %t.trace -o %t.y.csp; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=RACE %s
// RUN: sh -c '%ilgen export-csp --deadlock --check %t.trace -o %t.d.csp; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=DEADLOCK %s
// RUN: sh -c '%ilgen export-csp --var nosuch %t.trace; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=BADVAR %s

// RACE:      assertion 1 (race assertion): fails ({{[0-9]+}} states)
// RACE-NEXT:   counterexample: write.t1.y, fork.t1.t2, start.t2, lock.t2.m, unlock.t2.m, write.t1.y, write.t2.y, race
// RACE-NEXT:   sync events: fork.t1.t2, start.t2, lock.t2.m, unlock.t2.m
// RACE-NEXT: exit=66

// DEADLOCK:      assertion 1 (deadlock-freedom assertion): holds ({{[0-9]+}} states)
// DEADLOCK-NEXT: exit=0

// BADVAR: ilgen: error: no shared variable `nosuch` in the trace at {{.*}}.trace: name one that `ilgen detect` reports (or its address in hex)
// BADVAR-NEXT: exit=2
