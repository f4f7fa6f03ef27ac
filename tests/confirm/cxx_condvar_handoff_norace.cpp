// A std::condition_variable handoff: the consumer waits (std::condition_variable::wait is in
// libstdc++, which calls pthread_cond_wait), main writes data outside the lock, sets ready under
// it and notifies (notify_one is in libstdc++ too). The wait, the wake and the signal are
// recorded, so the consumer's increment of data is ordered after main's write: nothing is
// reported.
//
// RUN: %ilgen c++ -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

int data;
bool ready;
std::mutex m;
std::condition_variable cv;

void consumer() {
  std::unique_lock<std::mutex> lk(m);
  cv.wait(lk, [] { return ready; });
  data++;
}

int main() {
  std::thread t(consumer);
  // The consumer is waiting by now (timing only: the test checks that it did).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  data = 41;
  {
    std::lock_guard<std::mutex> g(m);
    ready = true;
  }
  cv.notify_one();
  t.join();
  return data == 42 ? 0 : 1;
}

// DUMP-NOT:  ilgen: warning
// DUMP:      T0 write data size=4 at {{.*}}cxx_condvar_handoff_norace.cpp:31:8 main
// DUMP:      T0 signal cv seq={{[0-9]+}}{{$}}
// DUMP:      T1 wait cv mutex=m seq={{[0-9]+}}{{$}}
// DUMP-NEXT: T1 wake cv mutex=m seq={{[0-9]+}}{{$}}
// DUMP:      T1 write data size=4 at {{.*}}cxx_condvar_handoff_norace.cpp:24:7 consumer()

// CHECK-NOT: ilgen: warning
// CHECK-NOT: WARNING
// CHECK:     ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK:     exit=0
