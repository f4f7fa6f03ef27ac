// A program linked by hand, without `ilgen c++`'s link flags: std::thread's pthread_create runs in
// libstdc++ unseen, so the thread appears with no parent and its join is missing. dump and detect
// say so on stderr instead of ignoring it; the same program built with `ilgen c++` shows the fork.
//
// RUN: %clang --driver-mode=g++ -g -O0 -fpass-plugin=%plugin %s %rtlib -lpthread -ldl -lm -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace 2>&1 >/dev/null; echo "exit=$?"' | FileCheck %s --check-prefix=DETECT
// RUN: %ilgen c++ -g -O0 %s -o %t.cc
// RUN: rm -rf %t.cc.trace && env ILGEN_OPTIONS=trace_dir=%t.cc.trace %t.cc
// RUN: %ilgen dump %t.cc.trace 2>&1 | FileCheck %s --check-prefix=SEEN
#include <thread>

long total;

void add(long n) { total += n; }

int main() {
  std::thread t(add, 5);
  t.join();
  return total == 5 ? 0 : 1;
}

// DUMP:      ilgen: warning: thread T1 created outside instrumented code: results incomplete
// DUMP-NOT:  fork
// DUMP:      T1 thread parent=unknown (created outside instrumented code)
// DUMP-NEXT: T1 start

// DETECT:      ilgen: warning: thread T1 created outside instrumented code: results incomplete
// DETECT-NEXT: exit=0

// SEEN-NOT:  ilgen: warning
// SEEN:      T0 fork T1
// SEEN:      T0 join T1
// SEEN:      T1 thread parent=T0 child=0
