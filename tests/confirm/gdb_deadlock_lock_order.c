// `ilgen replay --gdb` on a deadlock candidate: the replay stops when the last thread blocked (the
// runtime's deadlock watch reports it), gdb lists every blocked thread with the lock it waits for
// and where it is in the program, and selects the user's frame of the last one. The program is
// deadlock_lock_order.c's (DEADLOCK_REPLAY makes its test barrier harmless under replay).
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/deadlock_lock_order.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace > /dev/null; test $? = 66'
// RUN: env DEADLOCK_REPLAY=1 %ilgen replay %t.trace:1 --gdb -- -batch -ex frame -ex 'ilgen schedule' 2>&1 | FileCheck %s
//
// --stop-at first needs the two accesses of a race.
// RUN: sh -c '%ilgen replay %t.trace:1 --gdb --stop-at first; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=FIRST

// CHECK:      ilgen: candidate 1: deadlock
// CHECK-NEXT:   T0 blocked in lock of b ({{.*}}) at {{.*}}deadlock_lock_order.c:47 in main
// CHECK-NEXT:   T1 blocked in lock of a ({{.*}}) at {{.*}}deadlock_lock_order.c:35 in other
// CHECK-NEXT:   schedule step 4 of 4 taken
// CHECK-NEXT: ilgen: every thread is blocked:
// CHECK-NEXT:   T0 (thread 1) blocked in lock of b ({{.*}}) at {{.*}}deadlock_lock_order.c:47 in main
// CHECK-NEXT:       now at {{.*}}deadlock_lock_order.c:47 in main
// CHECK-NEXT:   T1 (thread 3) blocked in lock of a ({{.*}}) at {{.*}}deadlock_lock_order.c:35 in other
// CHECK-NEXT:       now at {{.*}}deadlock_lock_order.c:35 in other
// CHECK-NEXT: #[[N:[0-9]+]] {{.*}} in other (arg={{.*}}) at {{.*}}deadlock_lock_order.c:35
// CHECK-NEXT: 35{{[[:space:]]+}}pthread_mutex_lock(&a);
// CHECK-NEXT: #[[N]] {{.*}} in other (arg={{.*}}) at {{.*}}deadlock_lock_order.c:35
// CHECK-NEXT: 35{{[[:space:]]+}}pthread_mutex_lock(&a);
// CHECK-NEXT: ilgen: schedule step 4 of 4 taken
// CHECK-NEXT:    step 1: T0 fork thread 1 at {{.*}}deadlock_lock_order.c:45 in main
// CHECK:         step 4: T1 lock b ({{.*}}) at {{.*}}deadlock_lock_order.c:34 in other
// CHECK-NEXT: => (schedule finished: the threads run free)

// FIRST: ilgen: error: candidate 1 is a deadlock: --stop-at first needs a race (a deadlock replay stops when the last thread blocks)
// FIRST: exit=2
