// std::async(std::launch::async): the task runs on a thread libstdc++ creates, and future::get()
// joins it (through call_once) before returning the value. Fork, join and the once are recorded,
// so main's writes before and after are ordered with the task's: nothing is reported.
//
// RUN: %ilgen c++ -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s
#include <future>

int shared;

int work() {
  shared += 10;
  return shared;
}

int main() {
  shared = 1;
  std::future<int> f = std::async(std::launch::async, work);
  int r = f.get();
  shared++;
  return r == 11 && shared == 12 ? 0 : 1;
}

// DUMP-NOT:  ilgen: warning
// DUMP:      T0 write shared size=4 at {{.*}}cxx_async_norace.cpp:19:10 main
// DUMP:      T0 fork T1
// DUMP:      T0 join T1
// DUMP:      T0 write shared size=4 at {{.*}}cxx_async_norace.cpp:22:9 main
// DUMP:      T1 thread parent=T0 child=0
// DUMP:      T1 write shared size=4 at {{.*}}cxx_async_norace.cpp:14:10 work()

// CHECK-NOT: ilgen: warning
// CHECK-NOT: WARNING
// CHECK:     ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK:     exit=0
