// Names in C++ reports: a race between two calls of Account::deposit(long) on one account: the
// balance update after the std::lock_guard section is unguarded, and the recorded run saw the two
// deposits 200 ms apart (task sleeps first), so it never met the race. The report names the member
// function demangled, `Account::deposit(long)`, never `_ZN7Account7depositEl`, and every `#0`
// frame is the user's line, its callers below it (the same at -O0 and at -O2, inlined or not). At -O2 the lock_guard, std::mutex::lock and gthr-default.h's
// __gthread_mutex_lock are inlined into deposit: the lock's site is the lock_guard line, with the
// three header frames below it (JSON `inlined`). At -O0 they are real calls into header functions,
// so the pthread call's own line (gthr-default.h) is all the pass can know: its caller exists only
// on the run-time stack.
//
// RUN: %ilgen c++ -g -O0 %s -o %t.O0
// RUN: rm -rf %t.O0.trace && env ILGEN_OPTIONS=trace_dir=%t.O0.trace %t.O0
// RUN: sh -c '%ilgen detect %t.O0.trace 2>&1; echo "exit=$?"' | FileCheck %s --implicit-check-not=_Z
//
// RUN: %ilgen c++ -g -O2 %s -o %t.O2
// RUN: rm -rf %t.O2.trace && env ILGEN_OPTIONS=trace_dir=%t.O2.trace %t.O2
// RUN: sh -c '%ilgen detect %t.O2.trace 2>&1; echo "exit=$?"' | FileCheck %s --implicit-check-not=_Z --implicit-check-not=gthr-default.h
// RUN: sh -c '%ilgen detect --format json %t.O2.trace > %t.O2.json; test $? = 66'
// RUN: FileCheck %s --check-prefix=JSON < %t.O2.json
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.O2.json | FileCheck %s --check-prefix=VALID
#include <chrono>
#include <mutex>
#include <thread>

struct Account {
  std::mutex m;
  long deposits = 0;
  long balance = 0;
  void deposit(long amount);
};

void Account::deposit(long amount) {
  {
    std::lock_guard<std::mutex> g(m);
    deposits++;
  }
  balance += amount;
}

Account account;

void task() {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  account.deposit(2);
}

int main() {
  std::thread t(task);
  account.deposit(1);
  t.join();
  return 0;
}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 8 at 0x[[A:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 Account::deposit(long) /{{.*}}cxx_account_race.cpp:37:11
// CHECK-NEXT:     #1 task() /{{.*}}cxx_account_race.cpp:44:11
// CHECK-NEXT:     #2 void std::__invoke_impl<{{.*}} /{{.*}}/bits/invoke.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK:          #6 std::thread::_State_impl<{{.*}}>::_M_run() /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:     #7 {{.*}} (libstdc++.so.6+0x{{[0-9a-f]+}})
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 8 at 0x[[A]] by main thread:
// CHECK-NEXT:     #0 Account::deposit(long) /{{.*}}cxx_account_race.cpp:37:11
// CHECK-NEXT:     #1 main /{{.*}}cxx_account_race.cpp:49:11
// CHECK-EMPTY:
// CHECK-NEXT:   Location is 48 bytes inside global 'account' of size 56 at 0x[[A]].
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}/replay-1):
// CHECK-NEXT:     1. T0 fork T1
// CHECK:          {{[0-9]}}. T0 lock 'account' at /{{.*}}cxx_account_race.cpp:34
// CHECK:          {{[0-9]}}. T0 unlock 'account' at /{{.*}}cxx_account_race.cpp:36
// CHECK:      SUMMARY: ilgen: data race /{{.*}}cxx_account_race.cpp:37 in Account::deposit(long)
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// VALID: valid: ilgen report, format version 11

// The lock's site: the lock_guard line, the header frames inlined there below it, from the call
// on the user's line inward; every function demangled, its linkage name kept as `symbol`.
// JSON:      "op": "lock",
// JSON:      "location": {
// JSON-NEXT:   "site": {{[0-9]+}},
// JSON-NEXT:   "file": "/{{.*}}cxx_account_race.cpp",
// JSON-NEXT:   "line": 34,
// JSON-NEXT:   "column": 33,
// JSON-NEXT:   "function": "Account::deposit(long)",
// JSON-NEXT:   "symbol": "_ZN7Account7depositEl",
// JSON-NEXT:   "inlined": [
// JSON-NEXT:     {
// JSON-NEXT:       "file": "/{{.*}}/bits/std_mutex.h",
// JSON-NEXT:       "line": {{[0-9]+}},
// JSON-NEXT:       "column": {{[0-9]+}},
// JSON-NEXT:       "function": "std::lock_guard<std::mutex>::lock_guard(std::mutex&)",
// JSON-NEXT:       "symbol": "_ZNSt10lock_guardISt5mutexEC2ERS0_"
// JSON-NEXT:     },
// JSON-NEXT:     {
// JSON-NEXT:       "file": "/{{.*}}/bits/std_mutex.h",
// JSON-NEXT:       "line": {{[0-9]+}},
// JSON-NEXT:       "column": {{[0-9]+}},
// JSON-NEXT:       "function": "std::mutex::lock()",
// JSON-NEXT:       "symbol": "_ZNSt5mutex4lockEv"
// JSON-NEXT:     },
// JSON-NEXT:     {
// JSON-NEXT:       "file": "/{{.*}}/gthr-default.h",
// JSON-NEXT:       "line": 749,
// JSON-NEXT:       "column": {{[0-9]+}},
// JSON-NEXT:       "function": "__gthread_mutex_lock(pthread_mutex_t*)",
// JSON-NEXT:       "symbol": "_ZL20__gthread_mutex_lockP15pthread_mutex_t"
// JSON-NEXT:     }
// JSON-NEXT:   ]
// JSON-NEXT: }
