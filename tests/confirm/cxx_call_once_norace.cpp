// std::call_once: two threads call it, one runs init (the write of config), both read config
// after. libstdc++ inlines call_once into the program as pthread_once; the runtime records it as
// a lock of the once flag around init, so both reads are ordered after the write: the candidate
// the lock model predicts (the other thread first) replays without a race, nothing is reported.
//
// RUN: %ilgen c++ -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s
#include <mutex>
#include <thread>

int config;
std::once_flag flag;

void init() { config = 42; }

void worker(int *out) {
  std::call_once(flag, init);
  *out = config;
}

int main() {
  int a = 0, b = 0;
  std::thread t1(worker, &a);
  std::thread t2(worker, &b);
  t1.join();
  t2.join();
  return a + b == 84 ? 0 : 1;
}

// Exactly one thread runs init, inside the once flag's lock.
// Whichever thread runs the init, its write is inside that thread's lock/unlock of the flag.
// DUMP:      lock flag seq={{[0-9]+}} at {{.*}}gthr-default.h
// DUMP:      write config size=4 at {{.*}}cxx_call_once_norace.cpp:16:22 init()
// DUMP-NEXT: unlock flag
// DUMP-NOT: write config

// CHECK-NOT: ilgen: warning
// CHECK-NOT: WARNING
// CHECK:     ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK-NOT: WARNING
// CHECK:     exit=0
