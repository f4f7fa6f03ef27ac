// Stacks in a race report, as TSan numbers them, for both accesses: Account::audit() reads the
// balance without the lock that Account::deposit(long) writes it under; the recorded run saw the
// audit 200 ms before the deposit (the teller sleeps first), so it never met the race. Each
// access's `#0` is the user's line, demangled, and its callers follow; the deposit is reported
// holding the account's mutex, acquired at the std::lock_guard line: at -O0 the guard, mutex and
// gthr-default.h are real calls below it (#1..#3), at -O2 they are inlined there; the same frames.
//
// RUN: %ilgen c++ -g -O0 %s -o %t.O0
// RUN: rm -rf %t.O0.trace && env ILGEN_OPTIONS=trace_dir=%t.O0.trace %t.O0
// RUN: sh -c '%ilgen detect %t.O0.trace 2>&1; echo "exit=$?"' | FileCheck %s --implicit-check-not=_Z
// RUN: %ilgen c++ -g -O2 %s -o %t.O2
// RUN: rm -rf %t.O2.trace && env ILGEN_OPTIONS=trace_dir=%t.O2.trace %t.O2
// RUN: sh -c '%ilgen detect %t.O2.trace 2>&1; echo "exit=$?"' | FileCheck %s --implicit-check-not=_Z
// RUN: sh -c '%ilgen detect --format json %t.O2.trace > %t.O2.json; test $? = 66'
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.O2.json | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.O2.json
// RUN: sh -c '%ilgen detect --format sarif %t.O2.trace > %t.O2.sarif; test $? = 66'
// RUN: FileCheck %s --check-prefix=SARIF < %t.O2.sarif
// The #0 frames are never a libstdc++ header.
// RUN: sh -c '%ilgen detect %t.O0.trace 2>&1; true' | FileCheck %s --check-prefix=NOHEADER
#include <chrono>
#include <mutex>
#include <thread>

struct Account {
  std::mutex m;
  long balance = 0;
  void deposit(long amount);
  long audit() const;
};

void Account::deposit(long amount) {
  std::lock_guard<std::mutex> g(m);
  balance += amount;
}

long Account::audit() const { return balance; }

Account account;

void teller() {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  account.deposit(2);
}

int main() {
  std::thread t(teller);
  long seen = account.audit();
  t.join();
  return seen == 99;
}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Write of size 8 at 0x[[A:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 Account::deposit(long) /{{.*}}cxx_stacks_race.cpp:34:11
// CHECK-NEXT:     #1 teller() /{{.*}}cxx_stacks_race.cpp:43:11
// CHECK-NEXT:     #2 void std::__invoke_impl<{{.*}} /{{.*}}/bits/invoke.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK:          #6 std::thread::_State_impl<{{.*}}>::_M_run() /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// libstdc++'s thread trampoline, uninstrumented: named when its symbols are installed.
// CHECK-NEXT:     #7 {{.*}} (libstdc++.so.6+0x{{[0-9a-f]+}})
// CHECK-NEXT:     holding 'account' (0x{{[0-9a-f]+}}), acquired at:
// CHECK-NEXT:       #0 Account::deposit(long) /{{.*}}cxx_stacks_race.cpp:33:31
// CHECK-NEXT:       #1 std::lock_guard<std::mutex>::lock_guard(std::mutex&) /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #2 std::mutex::lock() /{{.*}}/bits/std_mutex.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #3 __gthread_mutex_lock(pthread_mutex_t*) /{{.*}}/bits/gthr-default.h:749:{{[0-9]+}}
// CHECK-NEXT:       #4 teller() /{{.*}}cxx_stacks_race.cpp:43:11
// CHECK:            #9 std::thread::_State_impl<{{.*}}>::_M_run() /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:       #10 {{.*}} (libstdc++.so.6+0x{{[0-9a-f]+}})
// CHECK-EMPTY:
// CHECK-NEXT:   Previous read of size 8 at 0x[[A]] by main thread:
// CHECK-NEXT:     #0 Account::audit() const /{{.*}}cxx_stacks_race.cpp:37:38
// CHECK-NEXT:     #1 main /{{.*}}cxx_stacks_race.cpp:48:23
// CHECK-EMPTY:
// CHECK-NEXT:   Location is 40 bytes inside global 'account' of size 48 at 0x[[A]].
// Forked inside libstdc++, below the std::thread the user's line constructed; nothing below main.
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 (tid=1) created by main thread at:
// CHECK-NEXT:     #0 main /{{.*}}cxx_stacks_race.cpp:47:15
// CHECK-NEXT:     #1 std::thread::thread<{{.*}} /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK-NEXT:     #2 std::thread::_M_start_thread({{.*}}) (libstdc++.so.6+0x{{[0-9a-f]+}})
// CHECK-EMPTY:
// Each step at the user's line it was taken from: the lock at the lock_guard line at -O0 too.
// CHECK-NEXT:   Schedule that exposed it (candidate 1, replayed in /{{.*}}/replay-1):
// CHECK-NEXT:     1. T0 fork T1 at /{{.*}}cxx_stacks_race.cpp:47
// CHECK-NEXT:     2. T1 start
// CHECK-NEXT:     3. T1 lock 'account' at /{{.*}}cxx_stacks_race.cpp:33
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: data race /{{.*}}cxx_stacks_race.cpp:34 in Account::deposit(long)
// CHECK:      exit=66

// NOHEADER-NOT: #0 {{.*}}/usr/{{.*}}.h:
// NOHEADER: SUMMARY: ilgen: data race

// VALID: valid: ilgen report, format version 11

// JSON:      "current": {
// JSON:        "location": {
// JSON:          "line": 34,
// JSON:          "function": "Account::deposit(long)",
// JSON:        "stack": [
// JSON-NEXT:     {
// JSON-NEXT:       "site": {{[0-9]+}},
// JSON-NEXT:       "file": "/{{.*}}cxx_stacks_race.cpp",
// JSON-NEXT:       "line": 43,
// JSON-NEXT:       "column": 11,
// JSON-NEXT:       "function": "teller()",
// JSON-NEXT:       "symbol": "_Z6tellerv"
// JSON:        "locks": [
// JSON-NEXT:     {
// JSON-NEXT:       "object": {{[0-9]+}},
// JSON-NEXT:       "object_name": {
// JSON-NEXT:         "name": "account",
// JSON:            "location": {
// JSON-NEXT:         "site": {{[0-9]+}},
// JSON-NEXT:         "file": "/{{.*}}cxx_stacks_race.cpp",
// JSON-NEXT:         "line": 33,
// JSON:      "previous": {
// JSON:        "stack": [
// JSON-NEXT:     {
// JSON-NEXT:       "site": {{[0-9]+}},
// JSON-NEXT:       "file": "/{{.*}}cxx_stacks_race.cpp",
// JSON-NEXT:       "line": 48,
// JSON-NEXT:       "column": 23,
// JSON-NEXT:       "function": "main"
// JSON:        "created_stack": [
// JSON-NEXT:     {
// JSON-NEXT:       "site": null,
// JSON-NEXT:       "native": {
// JSON-NEXT:         "module": "/{{.*}}libstdc++.so.6",
// JSON-NEXT:         "offset": {{[0-9]+}},
// JSON-NEXT:         "function": "std::thread::_M_start_thread({{.*}})",
// JSON-NEXT:         "symbol": "_ZNSt6thread15_M_start_thread{{.*}}"
// JSON:        "op": "lock",
// JSON:        "location": {
// JSON-NEXT:     "site": {{[0-9]+}},
// JSON-NEXT:     "file": "/{{.*}}cxx_stacks_race.cpp",
// JSON-NEXT:     "line": 33,

// SARIF:          "text": "'account' held by T1 at the write, acquired here"
// SARIF:      "stacks": [
// SARIF-NEXT:   {
// SARIF-NEXT:     "frames": [
// SARIF:              "name": "Account::deposit(long)"
// SARIF:              "startLine": 34
// SARIF:              "name": "teller()"
// SARIF:              "startLine": 43
// SARIF:              "relativeAddress": {{[0-9]+}}
// SARIF:            "module": "libstdc++.so.6"
// SARIF:          "message": {
// SARIF-NEXT:       "text": "write of size 8 by T1"
// SARIF:          "frames": [
// SARIF:              "name": "Account::audit() const"
// SARIF:              "startLine": 37
// SARIF:              "name": "main"
// SARIF:              "startLine": 48
// SARIF:          "message": {
// SARIF-NEXT:       "text": "previous read of size 8 by T0"
// SARIF:              "startLine": 33
// SARIF:            "module": "libstdc++.so.6"
// SARIF:          "message": {
// SARIF-NEXT:       "text": "'account' held by T1 at the write, acquired here"
