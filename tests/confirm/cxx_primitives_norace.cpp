// The other C++ primitives, each ordering one variable between a worker and main: std::latch,
// std::barrier and std::counting_semaphore (C++20, atomics and futexes inlined from the headers: their atomic
// accesses are recorded and synchronize in replay; the futex waits are not recorded),
// std::shared_mutex (pthread_rwlock), std::timed_mutex::try_lock_for (pthread_mutex_clocklock),
// std::recursive_mutex and a release/acquire std::atomic flag. Nothing is reported, dynamic and
// -static; the timed lock shows in the trace.
//
// RUN: %ilgen c++ -std=c++20 -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace 2>&1; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen c++ -std=c++20 -g -O0 -static %s -o %t.static
// RUN: rm -rf %t.static.trace && env ILGEN_OPTIONS=trace_dir=%t.static.trace %t.static
// RUN: %ilgen dump %t.static.trace 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.static.trace 2>&1; echo "exit=$?"' | FileCheck %s
#include <atomic>
#include <barrier>
#include <chrono>
#include <latch>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <thread>

int a[2], b, c, d, e, f, g;
std::latch done(2);
std::barrier phase(2);
std::counting_semaphore<2> sem(0);
std::shared_mutex sm;
std::timed_mutex tm;
std::recursive_mutex rm;
std::atomic<int> flag;

void worker(int i) {
  a[i] = i + 1;
  done.count_down();
  if (i == 1)
    return;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  b = 1;
  sem.release();
  {
    std::unique_lock<std::shared_mutex> g(sm);
    c++;
  }
  {
    std::unique_lock<std::timed_mutex> g(tm, std::chrono::seconds(10));
    d++;
  }
  {
    std::lock_guard<std::recursive_mutex> g(rm);
    std::lock_guard<std::recursive_mutex> g2(rm);
    e++;
  }
  f = 1;
  flag.store(1, std::memory_order_release);
  g = 1;
  phase.arrive_and_wait();
}

int main() {
  std::thread t0(worker, 0), t1(worker, 1);
  done.wait();
  int s = a[0] + a[1];
  sem.acquire();
  s += b;
  {
    std::shared_lock<std::shared_mutex> g(sm);
    s += c == 0 || c == 1; // the worker's section may come first or not
  }
  {
    std::unique_lock<std::timed_mutex> g(tm, std::chrono::seconds(10));
    d++;
  }
  {
    std::lock_guard<std::recursive_mutex> g(rm);
    e++;
  }
  while (!flag.load(std::memory_order_acquire)) {
  }
  s += f;
  phase.arrive_and_wait();
  s += g;
  t0.join();
  t1.join();
  return s == 7 ? 0 : 1;
}

// DUMP-NOT: ilgen: warning
// DUMP:     T0 rdlock sm
// DUMP:     T0 timedlock tm acquired
// DUMP:     T1 wrlock sm
// DUMP:     T1 timedlock tm acquired

// CHECK-NOT: ilgen: warning
// CHECK-NOT: WARNING
// CHECK:     ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK:     exit=0
