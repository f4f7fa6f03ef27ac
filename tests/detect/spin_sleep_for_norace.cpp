// spin_sleep_rotated_norace.c in C++: the workers wait for each other with
// `std::this_thread::sleep_for`, which libstdc++ inlines into a loop retrying `nanosleep` while it
// fails with EINTR (reading errno through `__errno_location`). That inner loop only passes time:
// the loop around it is still a spin, whose test before it (rotated) is the first round the
// recorder keeps. Before, the outer loop was no spin (not innermost, and `__errno_location` an
// unknown call), and a candidate put main's read of the second worker's flag before its write.
//
// RUN: %ilgen c++ -g -O2 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "ilgen_test.h"

static int flag[2];
static std::atomic<int> count;
static std::mutex m;
static ilgen_test_barrier_t first_in;

static void worker(int id) {
  if (id == 1)
    __ilgen_testonly_barrier_wait(&first_in);
  flag[id] = 1;
  {
    std::lock_guard<std::mutex> g(m);
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  if (id == 0)
    __ilgen_testonly_barrier_wait(&first_in);
  while (count.load(std::memory_order_relaxed) != 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

int main() {
  __ilgen_testonly_barrier_init(&first_in, 2);
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  int seen = flag[1];
  b.join();
  return seen - 1;
}

// CHECK: ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK: exit=0
