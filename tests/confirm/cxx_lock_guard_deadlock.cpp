// A lock-order inversion between two std::lock_guard pairs, built -O2, that the recorded run got
// through (the test barrier holds the thread back until main has released both mutexes; under
// replay, DEADLOCK_REPLAY set, it is skipped). The report's frames are the user's: each blocked
// lock and each held one at its lock_guard line in bank::credit_then_debit() or
// bank::debit_then_credit() (demangled, inlined into their callers), and below it as #1, #2, #3
// the header code inlined there, from the guard's constructor in to gthr-default.h's
// __gthread_mutex_lock, where the pthread call is.
//
// RUN: %ilgen c++ -g -O2 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env DEADLOCK_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s --implicit-check-not=_Z
#include <cstdlib>
#include <mutex>
#include <thread>

#include "ilgen_test.h"

std::mutex a, b;
ilgen_test_barrier_t main_done;
bool replaying;

namespace bank {
void debit_then_credit() {
  std::lock_guard<std::mutex> first(a);
  std::lock_guard<std::mutex> second(b);
}

void credit_then_debit() {
  std::lock_guard<std::mutex> first(b);
  std::lock_guard<std::mutex> second(a);
}
} // namespace bank

void other() {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_done);
  bank::credit_then_debit();
}

int main() {
  replaying = std::getenv("DEADLOCK_REPLAY") != nullptr;
  __ilgen_testonly_barrier_init(&main_done, 2);
  std::thread t(other);
  bank::debit_then_credit();
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_done);
  t.join();
  return 0;
}

// CHECK:      WARNING: ilgen: lock-order-inversion (deadlock) (pid={{[0-9]+}})
// CHECK-NEXT:   Cycle of threads waiting for locks: main thread => thread T1 => main thread
// CHECK-EMPTY:
// CHECK-NEXT:   Main thread is blocked in lock of 'b' (0x[[B:[0-9a-f]+]]), held by thread T1:
// CHECK-NEXT:     #0 bank::debit_then_credit() /{{.*}}cxx_lock_guard_deadlock.cpp:25:31
// CHECK-NEXT:     #1 std::lock_guard<std::mutex>::lock_guard(std::mutex&) /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:     #2 std::mutex::lock() /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:     #3 __gthread_mutex_lock(pthread_mutex_t*) /{{.*}}/bits/gthr-default.h:749:{{[0-9]+}}
// CHECK-NEXT:     #4 main /{{.*}}cxx_lock_guard_deadlock.cpp:44:3
// CHECK-NEXT:     holding 'a' (0x[[A:[0-9a-f]+]]), acquired at:
// CHECK-NEXT:       #0 bank::debit_then_credit() /{{.*}}cxx_lock_guard_deadlock.cpp:24:31
// CHECK-NEXT:       #1 std::lock_guard<std::mutex>::lock_guard(std::mutex&) /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #2 std::mutex::lock() /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #3 __gthread_mutex_lock(pthread_mutex_t*) /{{.*}}/bits/gthr-default.h:749:{{[0-9]+}}
// CHECK-NEXT:       #4 main /{{.*}}cxx_lock_guard_deadlock.cpp:44:3
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 is blocked in lock of 'a' (0x[[A]]), held by main thread:
// CHECK-NEXT:     #0 bank::credit_then_debit() /{{.*}}cxx_lock_guard_deadlock.cpp:30:31
// CHECK-NEXT:     #1 std::lock_guard<std::mutex>::lock_guard(std::mutex&) /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:     #2 std::mutex::lock() /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:     #3 __gthread_mutex_lock(pthread_mutex_t*) /{{.*}}/bits/gthr-default.h:749:{{[0-9]+}}
// CHECK-NEXT:     #4 other() /{{.*}}cxx_lock_guard_deadlock.cpp:37:3
// CHECK-NEXT:     #5 void std::__invoke_impl<{{.*}}
// CHECK:          #9 std::thread::_State_impl<{{.*}}>::_M_run() /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:     #10 {{.*}} (libstdc++.so.6+0x{{[0-9a-f]+}})
// CHECK-NEXT:     holding 'b' (0x[[B]]), acquired at:
// CHECK-NEXT:       #0 bank::credit_then_debit() /{{.*}}cxx_lock_guard_deadlock.cpp:29:31
// CHECK-NEXT:       #1 std::lock_guard<std::mutex>::lock_guard(std::mutex&) /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #2 std::mutex::lock() /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #3 __gthread_mutex_lock(pthread_mutex_t*) /{{.*}}/bits/gthr-default.h:749:{{[0-9]+}}
// CHECK-NEXT:       #4 other() /{{.*}}cxx_lock_guard_deadlock.cpp:37:3
// CHECK-NEXT:       #5 void std::__invoke_impl<{{.*}}
// CHECK:            #9 std::thread::_State_impl<{{.*}}>::_M_run() /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #10 {{.*}} (libstdc++.so.6+0x{{[0-9a-f]+}})
// CHECK-EMPTY:
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK-NEXT:     1. T0 fork T1
// Whether T1 started before main took a depends on the recorded run: the schedule keeps it.
// CHECK-DAG:      {{[23]}}. T0 lock 'a' at /{{.*}}cxx_lock_guard_deadlock.cpp:24
// CHECK-DAG:      {{[23]}}. T1 start
// CHECK-NEXT:     4. T1 lock 'b' at /{{.*}}cxx_lock_guard_deadlock.cpp:29
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: lock-order-inversion /{{.*}}cxx_lock_guard_deadlock.cpp:25 in bank::debit_then_credit()
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// `deadlock:` hides it by any frame of its stacks: `other` is no blocked line, only T1's caller.
// `race:` does not apply to a deadlock.
// RUN: printf 'deadlock:^other()$\n' > %t.supp
// RUN: env DEADLOCK_REPLAY=1 sh -c '%ilgen detect --suppressions %t.supp %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=SUPP
// RUN: printf 'race:^other()$\n' > %t.race
// RUN: env DEADLOCK_REPLAY=1 sh -c '%ilgen detect --suppressions %t.race %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=RACE
// SUPP-NOT:  WARNING: ilgen
// SUPP:      ilgen: suppressed: 1 (by pattern deadlock:^other()$)
// SUPP:      exit=0
// RACE:      WARNING: ilgen: lock-order-inversion (deadlock)
// RACE:      exit=66
