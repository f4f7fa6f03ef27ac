// The paper's Listing 1 in C++: std::thread, std::mutex and std::lock_guard. The thread is
// created inside libstdc++ (std::thread's constructor is compiled into the library, not the
// program), so its fork and join reach the runtime only through the interposed pthread_create and
// pthread_join; the lock_guard sections are the program's own (inlined) pthread calls. The race on
// y is hidden in the recorded run by timing (task sleeps before taking m); detect predicts the
// order in which task takes m first, replays it and confirms it. The same program built -static
// (the calls routed with the linker's --wrap) gives the same finding.
//
// RUN: %ilgen c++ -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,DYN
//
// RUN: %ilgen c++ -g -O0 -static %s -o %t.static
// RUN: llvm-readelf --program-headers %t.static | FileCheck %s --check-prefix=STATIC
// RUN: rm -rf %t.static.trace && env ILGEN_OPTIONS=trace_dir=%t.static.trace %t.static
// RUN: %ilgen dump %t.static.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.static.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,STA
#include <chrono>
#include <mutex>
#include <thread>

int x, y;
std::mutex m;

void task() {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  {
    std::lock_guard<std::mutex> g(m);
    x++;
  }
  y++;
}

int main() {
  y++;
  std::thread t(task);
  y++;
  {
    std::lock_guard<std::mutex> g(m);
    x++;
  }
  t.join();
  return 0;
}

// DUMP-NOT:  ilgen: warning
// DUMP:      T0 fork T1 seq={{[0-9]+}}{{$}}
// DUMP:      T0 join T1 seq={{[0-9]+}}{{$}}
// DUMP:      T1 thread parent=T0 child=0
// DUMP-NEXT: T1 start

// CHECK-NOT:  ilgen: warning
// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 4 at 0x[[Y:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 task() /{{.*}}cxx_listing1_race.cpp:32:4
// CHECK-NEXT:     #1 void std::__invoke_impl<{{.*}} /{{.*}}/bits/invoke.h:{{[0-9]+}}:{{[0-9]+}}
// CHECK:          #5 std::thread::_State_impl<{{.*}}>::_M_run() /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// DYN-NEXT:       #6 {{.*}} (libstdc++.so.6+0x{{[0-9a-f]+}})
// STA-NEXT:       #6 execute_native_thread_routine (cxx_listing1_race.cpp.tmp.static+0x{{[0-9a-f]+}})
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x[[Y]] by main thread:
// CHECK-NEXT:     #0 main /{{.*}}cxx_listing1_race.cpp:38:4
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'y' of size 4 at 0x[[Y]].
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 (tid=1) created by main thread at:
// CHECK-NEXT:     #0 main /{{.*}}cxx_listing1_race.cpp:37:15
// CHECK-NEXT:     #1 std::thread::thread<{{.*}} /{{.*}}/bits/std_thread.h:{{[0-9]+}}:{{[0-9]+}}
// DYN-NEXT:       #2 std::thread::_M_start_thread({{.*}}) (libstdc++.so.6+0x{{[0-9a-f]+}})
// STA-NEXT:       #2 std::thread::_M_start_thread({{.*}}) (cxx_listing1_race.cpp.tmp.static+0x{{[0-9a-f]+}})
// CHECK-EMPTY:
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}/replay-1):
// A static executable also registers its unwind tables (libgcc's object_mutex) before main.
// STA-NEXT:       1. T0 lock 'object_mutex'
// STA-NEXT:       2. T0 unlock 'object_mutex'
// STA-NEXT:       3. T0 fork T1
// STA-NEXT:       4. T1 start
// STA-NEXT:       5. T1 lock 'm' at /{{.*}}cxx_listing1_race.cpp:29
// STA-NEXT:       6. T1 unlock 'm' at /{{.*}}cxx_listing1_race.cpp:31
// DYN-NEXT:       1. T0 fork T1 at /{{.*}}cxx_listing1_race.cpp:37
// DYN-NEXT:       2. T1 start
// DYN-NEXT:       3. T1 lock 'm' at /{{.*}}cxx_listing1_race.cpp:29
// DYN-NEXT:       4. T1 unlock 'm' at /{{.*}}cxx_listing1_race.cpp:31
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: data race /{{.*}}cxx_listing1_race.cpp:32 in task()
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// STATIC: Program Headers:
// STATIC-NOT: INTERP
