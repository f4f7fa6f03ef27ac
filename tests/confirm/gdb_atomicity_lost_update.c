// `ilgen replay TRACE:N --gdb` on an atomicity violation: the replay stops on the transaction's
// thread right before e2, once e1 and the other thread's f ran in that order (the runtime's report
// hook), in the user's frame of e2, with e1, f and e2 printed. There the lost update is visible:
// the check saw 100, the other customer has already withdrawn (balance 70), and `continue` writes
// the stale 70 back (the program prints it). `--stop-at first` stops before e1 instead, and
// `continue` runs to e2. The program is atomicity_lost_update.c's, compiled from that file
// (WITHDRAW_REPLAY makes its test barrier harmless under replay).
//
// RUN: %ilgen cc -g -O0 -I %testinc %S/atomicity_lost_update.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace > /dev/null; echo "exit=$?"' | FileCheck %s --check-prefix=DETECT
// RUN: env WITHDRAW_REPLAY=1 %ilgen replay %t.trace:1 --gdb -- -batch -ex frame -ex 'print seen' -ex 'print balance' -ex 'ilgen threads' -ex continue 2>&1 | FileCheck %s
// RUN: env WITHDRAW_REPLAY=1 %ilgen replay %t.trace:1 --gdb --stop-at first -- -batch -ex 'print balance' -ex continue -ex 'print seen' -ex 'print balance' 2>&1 | FileCheck %s --check-prefix=FIRST
// DETECT: exit=66

// CHECK:      ilgen: candidate 1: atomicity violation on balance ({{.*}}) (4 bytes), read-write-write
// CHECK-NEXT:   e1 (transaction): read by thread T1 at {{.*}}atomicity_lost_update.c:63 in withdraw
// CHECK-NEXT:   f (other thread): write by thread T2 at {{.*}}atomicity_lost_update.c:68 in withdraw
// CHECK-NEXT:   e2 (transaction): write by thread T1 at {{.*}}atomicity_lost_update.c:68 in withdraw
// CHECK-NEXT:   schedule step [[N:[0-9]+]] of [[N]] taken
// CHECK-NEXT: #[[F:[0-9]+]] {{.*}} in withdraw (amount=30) at {{.*}}atomicity_lost_update.c:68
// CHECK-NEXT: 68{{[[:space:]]+}}balance = seen - amount; // the update
// CHECK-NEXT: #[[F]] {{.*}} in withdraw (amount=30) at {{.*}}atomicity_lost_update.c:68
// CHECK-NEXT: 68{{[[:space:]]+}}balance = seen - amount; // the update
// CHECK-NEXT: $1 = 100
// CHECK-NEXT: $2 = 70
// CHECK:      T1   created by T0 at {{.*}}atomicity_lost_update.c:{{[0-9]+}} in main; now at {{.*}}atomicity_lost_update.c:68 in withdraw
// CHECK:      balance 70
// CHECK:      exited normally

// FIRST:      ilgen: stopped before the first access: read by thread T1 at {{.*}}atomicity_lost_update.c:63 in withdraw
// FIRST-NEXT:   (`continue` runs to the second: write by thread T1 at {{.*}}atomicity_lost_update.c:68 in withdraw)
// FIRST-NEXT: #{{[0-9]+}} {{.*}} in withdraw (amount=30) at {{.*}}atomicity_lost_update.c:63
// FIRST-NEXT: 63{{[[:space:]]+}}int seen = balance; // the check
// FIRST-NEXT: $1 = 100
// FIRST:      ilgen: candidate 1: atomicity violation on balance
// FIRST:      #{{[0-9]+}} {{.*}} in withdraw (amount=30) at {{.*}}atomicity_lost_update.c:68
// FIRST:      $2 = 100
// FIRST-NEXT: $3 = 70
