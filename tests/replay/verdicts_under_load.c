// Verdicts by state, not by clock: the confirm tests' programs (a lock-order deadlock, a missed
// signal, Listing 1's race, a candidate that replays to no error) are recorded, then `ilgen
// detect` replays each 20 times while two CPU-burning processes (`yes > /dev/null`) load both
// cores: every run gives the first run's verdicts. (tests/replay/diverged.c and
// deadlock_lock_order.c show a divergence and a deadlock decided with the clock far away.)
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/../confirm/deadlock_lock_order.c -o %t.lock
// RUN: rm -rf %t.lock.trace && env ILGEN_OPTIONS=trace_dir=%t.lock.trace %t.lock
// RUN: %ilgen cc -g -O0 -I %testinc %S/../confirm/missed_signal_deadlock.c -o %t.cond
// RUN: rm -rf %t.cond.trace && env ILGEN_OPTIONS=trace_dir=%t.cond.trace %t.cond
// RUN: %ilgen cc -g -O0 -I %testinc %S/../confirm/listing1_race.c -o %t.race
// RUN: rm -rf %t.race.trace && env ILGEN_OPTIONS=trace_dir=%t.race.trace %t.race
// RUN: %ilgen cc -g -O0 -I %testinc %S/../confirm/flag_branch_norace.c -o %t.branch
// RUN: rm -rf %t.branch.trace && env ILGEN_OPTIONS=trace_dir=%t.branch.trace %t.branch
// RUN: python3 %S/Inputs/under_load.py %ilgen 20 lock=DEADLOCK_REPLAY:%t.lock.trace \
// RUN:   cond=MISSED_REPLAY:%t.cond.trace race=LISTING1_REPLAY:%t.race.trace \
// RUN:   branch=BRANCH_REPLAY:%t.branch.trace | FileCheck %s

// CHECK:      lock: 20/20 same: exit=66 candidates=1 confirmed_deadlocks=1 deadlock@{{[0-9]+}},{{[0-9]+}}
// CHECK-NEXT: cond: 20/20 same: exit=66 candidates=1 confirmed_deadlocks=1 deadlock@{{[0-9]+}},{{[0-9]+}}
// CHECK-NEXT: race: 20/20 same: exit=66 candidates=1 confirmed_races=1 race@{{[0-9]+}},{{[0-9]+}}
// CHECK-NEXT: branch: 20/20 same: exit=0 candidates=1 no_error=1
// CHECK-NOT:  differs
