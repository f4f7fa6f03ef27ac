// A C++ program that includes <iostream>, as most do. libstdc++ builds its locales at start-up
// and calls pthread_once for them only once the process has threads (it reads glibc's
// __libc_single_threaded), so the trace holds main's once-locks of a single-threaded start-up.
// A replay that started a thread of its own at start-up (the watchdog) made those calls take the
// multi-threaded path: main's operations before its first fork were more than recorded, and every
// schedule left at that fork ("expects T0 operation #28 to be fork, but it is lock"). The race
// on hits between main and its lambda thread is confirmed only by a replay that stays
// single-threaded until main creates its thread.
//
// RUN: %ilgen c++ -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,DYN
// RUN: %ilgen c++ -g -O0 -static %s -o %t.static
// RUN: rm -rf %t.static.trace && env ILGEN_OPTIONS=trace_dir=%t.static.trace %t.static | FileCheck %s --check-prefix=OUT
// RUN: sh -c '%ilgen detect %t.static.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,STA
#include <iostream>
#include <thread>

int main() {
  long hits = 0;
  std::thread t([&hits] { hits++; });
  hits++;
  t.join();
  std::cout << "hits=" << hits << std::endl;
  return 0;
}

// OUT: hits=2

// CHECK-NOT:  ilgen: warning
// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:      #0 main::$_0::operator()() const /{{.*}}cxx_iostream_race.cpp:21:
// CHECK-DAG:      #0 main /{{.*}}cxx_iostream_race.cpp:22:
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}/replay-1):
// The once-locks of libstdc++'s start-up, one line for them all (linked in statically, the once
// control is named, and the place is libstdc++'s function, not the user's file):
// DYN:            {{[0-9]+}}-{{[0-9]+}}. T0 lock/unlock 0x{{[0-9a-f]+}} (recorded address) at std::locale::facet::_S_get_c_locale() (libstdc++.so.6+0x{{[0-9a-f]+}}) ({{[0-9]+}} steps)
// STA:            {{[0-9]+}}-{{[0-9]+}}. T0 lock/unlock 'std::locale::facet::_S_once' at std::locale::facet::_S_get_c_locale() (cxx_iostream_race.cpp.tmp.static+0x{{[0-9a-f]+}}) ({{[0-9]+}} steps)
// CHECK-NEXT:     T0 fork T1 at /{{.*}}cxx_iostream_race.cpp:21
// CHECK:      SUMMARY: ilgen: data race /{{.*}}cxx_iostream_race.cpp:{{21|22}} in
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
