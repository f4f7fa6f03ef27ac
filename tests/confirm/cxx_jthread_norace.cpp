// std::jthread: main writes counter, the jthread increments it, the jthread's destructor joins,
// main increments it again. The fork and the join (both in libstdc++) order the three writes:
// nothing is reported, in a dynamic and a -static build.
//
// RUN: %ilgen c++ -std=c++20 -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen c++ -std=c++20 -g -O0 -static %s -o %t.static
// RUN: rm -rf %t.static.trace && env ILGEN_OPTIONS=trace_dir=%t.static.trace %t.static
// RUN: %ilgen dump %t.static.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.static.trace 2>&1; echo "exit=$?"' | FileCheck %s
#include <thread>

int counter;

int main() {
  counter = 1;
  {
    std::jthread t([] { counter++; });
  }
  counter++;
  return counter == 3 ? 0 : 1;
}

// DUMP-NOT:  ilgen: warning
// DUMP:      T0 write counter size=4 at {{.*}}cxx_jthread_norace.cpp:18:11 main
// DUMP:      T0 fork T1
// DUMP:      T0 join T1
// DUMP:      T0 write counter size=4 at {{.*}}cxx_jthread_norace.cpp:22:10 main
// DUMP:      T1 thread parent=T0 child=0
// DUMP:      T1 write counter size=4 at {{.*}}cxx_jthread_norace.cpp:20:32

// CHECK-NOT: ilgen: warning
// CHECK-NOT: WARNING
// CHECK:     ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK:     exit=0
